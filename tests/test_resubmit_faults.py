"""resubmit when GitHub misbehaves as it really does: lost answers, lagging lists and forks,
secondary rate limits, shared missing forks, stale manifest numbers, 422s a re-run cannot fix.
Real git repos and the loopback fake GitHub (its fault-injection knobs); assertions on the
server's state and log."""

from __future__ import annotations

import json

from testing import github_scenarios as sc
from tests import test_resubmit
from tests.test_resubmit import ENTRY, PULLS, World

template_upstream = test_resubmit.template_upstream  # the fixtures, shared
world = test_resubmit.world

HC = "hc-mlp-norm-manager"


def _result(out: str) -> dict:  # type: ignore[type-arg]
    return json.loads(out.strip().splitlines()[-1])


def test_create_applied_but_answer_lost_is_reported_created_with_its_write(world, capsys):
    w: World = world()
    w.gh.fail_after_apply("POST", r"/pulls$", 502)
    assert w.run("--json", ENTRY) == 0
    result = _result(capsys.readouterr().out)
    assert result["action"] == "created"
    assert f"POST {PULLS}" in result["writes"]
    (number,) = w.pulls_from(sc.CHECKPOINT_BRANCH)
    assert result["pr"] == number


def test_lost_create_not_yet_listed_says_it_may_exist_and_a_rerun_finds_it(world, capsys):
    w: World = world()
    w.gh.fail_after_apply("POST", r"/pulls$", 502)
    w.state.list_lag = 1  # the new PR is missing from the next list request
    assert w.run(ENTRY) == 6
    err = capsys.readouterr().err
    assert "may have been created" in err and "re-run finds it" in err
    assert "no PR was created" not in err and err.count("\n") == 1
    (number,) = w.pulls_from(sc.CHECKPOINT_BRANCH)  # it exists
    w.state.list_lag = 0
    assert w.run("--json", ENTRY) == 0
    assert _result(capsys.readouterr().out)["pr"] == number
    assert w.pulls_from(sc.CHECKPOINT_BRANCH) == [number]  # found, never a second one
    assert sum(1 for r in w.gh.requests if (r.method, r.path) == ("POST", PULLS)) == 1


def test_shared_missing_fork_is_created_once_per_run(world):
    w: World = world(new_fork="none")
    assert w.run() == 0  # both entries use htesd/Megatron-LM-oss, which does not exist yet
    forks = [r for r in w.gh.writes() if r.path == f"/repos/{sc.UPSTREAM}/forks"]
    assert len(forks) == 1
    assert len(w.pulls_from(sc.CHECKPOINT_BRANCH)) == 1 and len(w.pulls_from(sc.HC_BRANCH)) == 1


def test_secondary_rate_limit_on_a_write_waits_and_is_never_a_scope_error(world, capsys):
    w: World = world()
    w.gh.secondary_rate_limit_next("POST", r"/pulls$", retry_after=3600)
    assert w.run(ENTRY) == 6
    err = capsys.readouterr().err
    assert "secondary rate limit" in err and "scope" not in err
    assert w.pulls_from(sc.CHECKPOINT_BRANCH) == []
    assert w.run(ENTRY) == 0  # a re-run resumes
    assert len(w.pulls_from(sc.CHECKPOINT_BRANCH)) == 1
