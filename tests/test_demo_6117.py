"""The README's dry-run demo runs, plans both entries and writes nothing."""

from __future__ import annotations

import os

from testing import demo_6117


def test_demo_plans_both_entries_with_zero_writes(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert demo_6117.main([]) == 0
    assert "GITHUB_TOKEN" not in os.environ  # the demo's fake token does not leak
    out, err = capsys.readouterr()
    assert out.startswith("SYNTHETIC WORLD: ")  # its fixture base is not Megatron-LM's
    assert "checkpoint-grad: PLANNED" in out and "hc-mlp-norm-manager: PLANNED" in out
    assert "#6117: closed-by-fork-detachment" in out
    assert "POST /repos/NVIDIA/Megatron-LM/pulls" in out
    assert "(write calls seen by the loopback server: 0)" in err
