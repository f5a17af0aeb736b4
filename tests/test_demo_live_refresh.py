"""The README's live-refresh demo: the real #6339/#6338 state from the mirror, run twice."""

from __future__ import annotations

import pytest

from testing import demo_live_refresh as demo


@pytest.mark.skipif(not demo.MIRROR.is_dir(), reason="no local mirror of NVIDIA/Megatron-LM")
def test_real_state_keeps_every_commit_and_line_and_the_rerun_is_a_noop(capsys, tmp_path):
    demo.main([])
    out = capsys.readouterr().out
    assert "every earlier commit still on its branch: True" in out
    assert "hand-written bodies kept: True" in out
    first = out.split("# second run")[0]
    # each branch holds an earlier revision of its fix: one commit on top updates it
    assert first.count("branch: FAST-FORWARD:") == 2
    assert first.count("holds an earlier revision of") == 2
    assert "16eb82ddb98b" in first and "13293025c306" in first  # the revisions it names
    # a classic public_repo token suffices, and both new heads pass upstream's DCO gate
    assert first.count("token: classic (scopes: public_repo)") == 2
    assert first.count("rules for dev: check DCO gate: satisfied") == 2
    assert first.count("DCO: DCO success, DCO gate success for") == 2
    second = out.split("# second run")[1]
    assert "would write: nothing" in second or "wrote: nothing" in second
