"""resubmit when GitHub misbehaves as it really does: lost answers, lagging lists and forks,
secondary rate limits, shared missing forks, stale manifest numbers, 422s a re-run cannot fix.
Real git repos and the loopback fake GitHub (its fault-injection knobs); assertions on the
server's state and log."""

from __future__ import annotations

import json
import types

import pytest

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
    assert w.run("--json", ENTRY) == 0  # re-queried, found the PR it made, carried on
    result = _result(capsys.readouterr().out)
    assert result["action"] == "created"
    assert f"POST {PULLS}" in result["writes"]
    (number,) = w.pulls_from(sc.CHECKPOINT_BRANCH)  # found, not duplicated
    assert result["pr"] == number
    assert sum(1 for r in w.gh.requests if (r.method, r.path) == ("POST", PULLS)) == 1


def test_a_cross_link_whose_answer_was_lost_is_found_and_recorded_as_made(world, capsys):
    """The comment landed though its answer was lost (502 after it applied): its marker
    finds it, it is not posted again, and the record names it among the writes made (the
    record lists the writes the run made, not the calls the GitHub client saw succeed)."""
    w: World = world()
    w.gh.fail_after_apply("POST", r"/issues/\d+/comments$", 502)
    assert w.run("--json", ENTRY) == 0
    made = [c for c in _result(capsys.readouterr().out)["writes"] if c.endswith("/comments")]
    posted = [r.path for r in w.gh.requests if r.method == "POST" and r.path.endswith("/comments")]
    assert len(made) == 1 and made == [f"POST {path}" for path in posted]


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


def _lagging_fork(
    w: World,
    monkeypatch,
    catch_up_after: int | None,
    api_lag: int = 0,  # noqa: ANN001
) -> list[float]:
    """The new fork's git side appears only after `catch_up_after` back-off sleeps (None:
    not during this run); its API answers 404 to the first `api_lag` reads. The sleeps are
    recorded, never slept."""
    from patchcarry.resubmit import execute

    w.state.fork_git_lag = True
    w.state.fork_api_lag = api_lag
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        if catch_up_after is not None and len(sleeps) >= catch_up_after:
            w.state.materialize_forks()

    monkeypatch.setattr(execute, "time", types.SimpleNamespace(sleep=sleep))
    return sleeps


def test_new_fork_whose_git_side_lags_is_retried_with_bounded_back_off(world, monkeypatch):
    w: World = world(new_fork="none")
    sleeps = _lagging_fork(w, monkeypatch, catch_up_after=2)
    assert w.run(ENTRY) == 0
    push_sleeps = [s for s in sleeps if s >= 2.0]
    assert push_sleeps == [2.0, 4.0]  # two refused pushes, doubling, then it went through
    (number,) = w.pulls_from(sc.CHECKPOINT_BRANCH)
    assert w.state.pulls[(sc.UPSTREAM, number)].head_sha


def test_new_fork_still_lagging_says_retry_in_a_minute_without_the_git_command(
    world, monkeypatch, capsys
):
    w: World = world(new_fork="none")
    sleeps = _lagging_fork(w, monkeypatch, catch_up_after=None)
    assert w.run(ENTRY) == 1
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if not line.startswith("waiting for ")]
    assert len(errors) == 1 and "retry in a minute" in errors[0]  # after the wait's progress
    assert "git push" not in err and "fatal:" not in err
    assert 240 <= sum(sleeps) <= 300  # bounded: GitHub says to ask support after five minutes
    assert w.pulls_from(sc.CHECKPOINT_BRANCH) == []  # no PR from a branch that is not there
    w.state.materialize_forks()
    assert w.run(ENTRY) == 0  # a re-run resumes: the fork exists now, no second POST /forks
    assert len([r for r in w.gh.writes() if r.path.endswith("/forks")]) == 1


def test_recorded_pr_that_404s_names_the_manifest_line(world, capsys):
    w: World = world()
    text = w.manifest.read_text().replace(
        'name = "checkpoint-grad"', 'name = "checkpoint-grad"\npr = 6999'
    )
    w.manifest.write_text(text)
    line = text.splitlines().index("pr = 6999") + 1
    assert w.run(ENTRY) == 5
    err = capsys.readouterr().err
    assert f"{w.manifest}:{line}:" in err and "`pr` names #6999" in err
    assert "fix that line of the manifest" in err and w.writes() == []


@pytest.mark.parametrize(
    ("error", "says"),
    [
        (
            {"resource": "PullRequest", "code": "invalid", "field": "fork_collab"},
            "GitHub refuses `maintainer_can_modify` for this fork",
        ),
        (
            {"resource": "PullRequest", "code": "custom",
             "message": "Draft pull requests are not supported in this repository."},
            "does not allow draft PRs",
        ),
        (
            {"resource": "PullRequest", "code": "custom",
             "message": f"No commits between dev and {sc.OWNER}:{sc.CHECKPOINT_BRANCH}"},
            "holds nothing beyond the base branch",
        ),
    ],
)  # fmt: skip
def test_422_a_rerun_cannot_fix_gets_its_own_message(world, capsys, monkeypatch, error, says):
    from patchcarry.resubmit import execute

    w: World = world()
    body = {"message": "Validation Failed", "errors": [error],
            "documentation_url": "https://docs.github.com/rest/pulls/pulls"}  # fmt: skip
    # "No commits between" right after the push is re-checked a while (GitHub's lag): it lasts
    w.gh.fail_next("POST", r"/pulls$", 422, body=body, times=20)
    monkeypatch.setattr(execute, "time", types.SimpleNamespace(sleep=lambda s: None))
    assert w.run(ENTRY) == 6
    err = capsys.readouterr().err
    assert "422" in err and says in err and "re-run to try again" not in err
    assert w.pulls_from(sc.CHECKPOINT_BRANCH) == []


def test_422_race_with_a_pr_opened_by_hand_merges_only_the_tools_section(world, capsys):
    w: World = world()
    hand = "Opened by hand while the tool was reading.\r\n\r\n- [x] a box someone ticked\r\n"
    pull = w.state.add_pull(sc.UPSTREAM, title="A person's own title", user=sc.OWNER,
                            head_ref=sc.CHECKPOINT_BRANCH, head_repo=sc.NEW_FORK,
                            base_ref="dev", body=hand)  # fmt: skip
    w.state.hidden_from_lists[(sc.UPSTREAM, pull.number)] = 1  # opened after the tool's read
    assert w.run(ENTRY) == 0
    posts = [r for r in w.gh.requests if (r.method, r.path) == ("POST", PULLS)]
    assert len(posts) == 1 and w.pulls_from(sc.CHECKPOINT_BRANCH) == [pull.number]
    after = w.state.pulls[(sc.UPSTREAM, pull.number)]
    assert after.title == "A person's own title"
    assert (
        after.body.startswith(hand) and "<!-- patchcarry:begin entry=checkpoint-grad" in after.body
    )
    assert "# What does this PR do?" not in after.body  # the person's description stands
    assert "## Contribution process" not in after.body  # no second checklist either
    assert f"pr = {pull.number}" in w.manifest.read_text()


def test_a_fork_git_cannot_read_is_a_network_failure_in_one_line(world, capsys):
    """The API says the fork exists, its git side answers nothing: exit 4 (a failed network
    read, as for upstream), one line, no git command line, and --json says it on stdout."""
    w: World = world()
    w.fork_git.rename(w.tmp / "gone.git")
    assert w.run("--json", ENTRY) == 4
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and "could not read" in err and "--offline" in err
    assert "git -c" not in err and "ls-remote" not in err and "Traceback" not in err
    assert json.loads(out) == {"error": err.removeprefix("error: ").strip(), "exit_code": 4}
    assert w.writes() == []


def test_a_check_run_read_that_fails_after_the_writes_still_records_the_pr(world, capsys):
    """The DCO read after the push is a report: GitHub's 422 "No commit found for SHA" (a
    head the PR does not show yet) neither fails the run nor keeps `pr = N` out of the
    manifest."""
    w: World = world()
    missing = {"message": "No commit found for SHA: x", "documentation_url": ""}
    w.gh.fail_next("GET", r"/check-runs$", 422, body=missing)
    assert w.run("--json", ENTRY) == 0
    result = json.loads(capsys.readouterr().out)
    (pull,) = w.pulls_from(sc.CHECKPOINT_BRANCH)
    assert f"pr = {pull}" in w.manifest.read_text()
    assert result["rules"]["after_push"]["dco"] is None
    assert any(f.startswith("DCO: not read for") for f in result["facts"])


def test_an_atomic_push_quotes_the_refused_refs_reason_not_the_atomic_side_effect():
    from patchcarry import git
    from patchcarry import push_refusals as push

    out = (
        "To /fork.git\n"
        "!\trefs/heads/fix/x:refs/heads/fix/x\t[remote rejected] (atomic transaction failed)\n"
        "!\tabc:refs/pull/1/head\t[remote rejected] (deny updating a hidden ref)\n"
        "Done\n"
    )
    with pytest.raises(push.PushRefused, match="refs/pull/1/head: 'deny updating a hidden ref'"):
        push.raise_push_failure(git.read_push(1, out), "fix/x", None)


def test_a_fork_github_is_still_creating_is_awaited_with_back_off_up_to_five_minutes(
    world, monkeypatch, capsys
):
    """GitHub creates forks asynchronously: the new fork 404s for a while (here: its first
    12 reads, longer than ten one-second polls), then its git side lags too. Each wait says
    so on stderr first (a silent wait of minutes looks like a hang); --json keeps quiet."""
    w: World = world(new_fork="none")
    sleeps = _lagging_fork(w, monkeypatch, catch_up_after=14, api_lag=12)
    assert w.run(ENTRY) == 0
    assert sum(sleeps) <= 300 and max(sleeps) <= 30  # backed off, capped, bounded
    assert sleeps[:3] == [1.0, 2.0, 4.0]
    assert len(w.pulls_from(sc.CHECKPOINT_BRANCH)) == 1
    waits = [line for line in capsys.readouterr().err.splitlines() if "waiting for" in line]
    assert len(waits) == len(sleeps)
    assert waits[0] == (
        f"waiting for {sc.NEW_FORK} to appear (GitHub creates forks asynchronously): next try "
        "in 1 s, 0 of 300 s waited (--fork-wait)"
    )
    assert any("git to accept pushes" in line for line in waits)  # the git side's lag too


def test_a_fork_wait_is_quiet_under_json(world, monkeypatch, capsys):
    w: World = world(new_fork="none")
    sleeps = _lagging_fork(w, monkeypatch, catch_up_after=3, api_lag=2)
    assert w.run("--json", ENTRY) == 0 and sleeps
    assert "waiting for" not in capsys.readouterr().err


def test_a_short_configured_fork_wait_bounds_the_wait_and_a_rerun_resumes(
    world, monkeypatch, capsys
):
    w: World = world(new_fork="none")
    sleeps = _lagging_fork(w, monkeypatch, catch_up_after=None, api_lag=1000)
    assert w.run("--fork-wait", "5", ENTRY) == 6
    err = capsys.readouterr().err
    assert sum(sleeps) <= 5 and "asynchronously" in err and "5 s" in err
    assert w.pulls_from(sc.CHECKPOINT_BRANCH) == []
    w.state.api_hidden.clear()
    w.state.materialize_forks()
    assert w.run(ENTRY) == 0  # the fork is there now: no second POST /forks
    assert len([r for r in w.gh.writes() if r.path.endswith("/forks")]) == 1
