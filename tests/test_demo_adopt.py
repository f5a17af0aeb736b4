"""The README's adopt demo: from an empty manifest, adopt #6117 and #6017, then resubmit.

The demo runs once per test run, as `scripts/demo-adopt` runs it (its own process): this test
reads the same output tests/test_docs_outputs.py compares with docs/adopt.md's block."""

from __future__ import annotations

import re

import pytest

from testing.shared_outputs import printed


def test_adopt_twice_then_resubmit_opens_two_cross_linked_drafts(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    out = printed(tmp_path_factory, "scripts/demo-adopt")
    assert "Traceback" not in out
    assert out.count("[exit 0]") == 3  # adopt, adopt, resubmit: the demo's own exit is their max
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
