"""The README's live-refresh demo: the real #6339/#6338 state from the mirror, run twice plain,
then once with --update-live."""

from __future__ import annotations

import pytest

from testing import demo_live_refresh as demo


@pytest.mark.skipif(not demo.MIRROR.is_dir(), reason="no local mirror of NVIDIA/Megatron-LM")
def test_real_state_plain_runs_push_nothing_and_the_opt_in_adds_the_tests(capsys, tmp_path):
    demo.main([])
    out = " ".join(capsys.readouterr().out.split())  # the plan's lines wrap at 120 columns
    assert "every earlier commit still on its branch: True" in out
    assert "hand-written bodies kept: True" in out
    first, rest = out.split("# second run")
    second, opted = rest.split("# opted in")
    # the carried commits are the PRs' own: identical, and already on both heads
    assert first.count("check: identical to #") == 2
    assert first.count("branch: UNCHANGED: the PR's head") == 2
    assert first.count("Held back until you pass --update-live") == 2
    assert first.count("`/ok to test ") == 2  # the cost, named
    # only the missing cross-links are written: no push, no body edit, no PR comment
    assert "DONE: 2 write(s) made." in first
    assert first.count("/comments") == 2 and "issues/6117/comments" in first
    assert "issues/6017/comments" in first and "git push" not in first and "PATCH" not in first
    assert "DONE: 0 write(s) made." in second
    # opted in: the tests go on top of each head, and the plan says the vetting starts over
    assert opted.count("branch: FAST-FORWARD:") == 2 and opted.count("git push") == 2
    assert opted.count("needs a maintainer's `/ok to test") == 2
    assert "test_random.py" in out and "test_hyper_connection_layer_retention.py" in out
