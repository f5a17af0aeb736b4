"""The README's adopt demo: from an empty manifest, adopt #6117 and #6017, then resubmit."""

from __future__ import annotations

import os
import re

import pytest

from testing import demo_adopt


def test_adopt_twice_then_resubmit_opens_two_cross_linked_drafts(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert demo_adopt.main([]) == 0
    assert "GITHUB_TOKEN" not in os.environ  # the demo's fake token does not leak
    out = capsys.readouterr().out
    assert out.count("[exit 0]") == 3
    assert "wrote 1 patch(es) and entry 'checkpoint-detached-grad-retention'" in out
    assert "dropped" in out and "merges dev into the PR" in out
    assert "identity  #6017" in out and "identical (same git patch-id)" in out
    assert len(re.findall(r"patch-id (\w+); #\d+ head \w+ patch-id \1: equal", out)) == 2
    drafts = re.findall(r"NVIDIA/Megatron-LM#(5\d\d) open draft htesd:(\S+) -> dev", out)
    assert sorted(b for _, b in drafts) == [
        "fix/checkpoint-detached-grad-retention",
        "fix/hc-mlp-norm-manager-retention",
    ]
    for number, _ in drafts:  # recorded in the manifest
        assert f"pr = {number}" in out
    # each old PR got its cross-link (the bot's comment was already there)
    assert "#6117 closed unmerged" in out and re.search(r"#6117 .*\n.*\n    2 comments", out)
    assert re.search(r"#6017 .*\n.*\n    3 comments", out)
