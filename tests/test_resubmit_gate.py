"""The gate's run-wide checks at the command line: a token that is not the forks' owner's
stops the run before any write (real git repos, the loopback GitHub)."""

from __future__ import annotations

import pytest

from testing import github_scenarios as sc
from tests import test_resubmit
from tests.test_resubmit import ENTRY, World

template_upstream = test_resubmit.template_upstream  # the fixtures, shared
world = test_resubmit.world


def test_a_token_of_another_user_than_the_forks_owner_stops_the_run(
    world, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    w: World = world()
    w.state.add_token("ghp_someoneelse", "someone-else")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_someoneelse")
    assert w.run(ENTRY) == 1  # a local check, not an API refusal (6)
    err = capsys.readouterr().err
    assert f"GITHUB_TOKEN belongs to someone-else, but {ENTRY}'s fork is {sc.NEW_FORK}" in err
    assert "--fork" not in err and "--force" not in err  # never toward someone else's fork
    assert w.writes() == [] and w.pulls_from(sc.CHECKPOINT_BRANCH) == []
