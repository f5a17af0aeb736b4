"""A PR found on the fork's branch is the tool's own only when the token's user opened it:
anyone can open a PR from a public fork's branch. Real git, the loopback GitHub, the CLI."""

from __future__ import annotations

from testing import github_scenarios as sc
from tests import test_resubmit
from tests.test_resubmit import ENTRY, PULLS, World

template_upstream = test_resubmit.template_upstream  # the fixtures, shared
world = test_resubmit.world

STRANGER = "mallory"
THEIRS = "A stranger's body.\n"


def _strangers_pull(w: World) -> int:
    w.state.add_user(STRANGER)
    pull = w.state.add_pull(sc.UPSTREAM, title="someone else's", user=STRANGER,
                            head_ref=sc.CHECKPOINT_BRANCH, head_repo=sc.NEW_FORK,
                            base_ref="dev", body=THEIRS)  # fmt: skip
    return pull.number


def _untouched(w: World, number: int) -> None:
    after = w.state.pulls[(sc.UPSTREAM, number)]
    assert after.body == THEIRS and after.title == "someone else's"
    assert "pr = " not in w.manifest.read_text()
    assert not any("/comments" in path for _, path in w.writes())  # no cross-link to it


def test_a_strangers_pr_on_the_fork_branch_is_refused_before_any_write(world, capsys):
    w: World = world()
    number = _strangers_pull(w)
    assert w.run(ENTRY) == 1  # refused before any write: the plan says why
    said = "".join(capsys.readouterr())
    assert f"#{number}" in said and f"opened by {STRANGER}" in said and sc.OWNER in said
    assert w.writes() == [] and w.fork_branch() is None  # nothing pushed either
    _untouched(w, number)


def test_a_strangers_pr_met_in_the_422_race_is_refused_not_adopted(world, capsys):
    w: World = world()
    number = _strangers_pull(w)
    w.state.hidden_from_lists[(sc.UPSTREAM, number)] = 1  # opened after the tool's read
    assert w.run(ENTRY) == 1
    err = capsys.readouterr().err
    assert f"#{number}" in err and f"opened by {STRANGER}" in err
    assert [r for r in w.gh.writes() if r.method == "PATCH"] == []
    assert ("POST", PULLS) in w.writes()  # the create met the stranger's PR
    _untouched(w, number)


def test_a_recorded_pr_a_stranger_opened_on_the_fork_branch_is_refused_too(world, capsys):
    from patchcarry import manifest

    w: World = world()
    number = _strangers_pull(w)
    manifest.record_pr(w.manifest, ENTRY, number)
    assert w.run(ENTRY) == 1
    assert f"opened by {STRANGER}" in "".join(capsys.readouterr())
    assert w.writes() == [] and w.fork_branch() is None
