"""`decide` as a table: plain values in (what was observed and built), a plan of writes or one
refusal out. No git, no HTTP: each row is a case a run meets on GitHub."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from patchcarry.github_types import PullRef, read
from patchcarry.manifest import Entry
from patchcarry.patchfile import Patch
from patchcarry.pulls import classify
from patchcarry.pulls.classify import Classification, PullState
from patchcarry.resubmit import body, decide, fork, model
from patchcarry.resubmit import branch as branches
from patchcarry.resubmit.build import Assembled, Built
from patchcarry.resubmit.model import Action, Options
from patchcarry.resubmit.observe import Observed, settle

LOGIN = "htesd"
FORK = "htesd/Megatron-LM-oss"
UPSTREAM = "NVIDIA/Megatron-LM"
OLD, NEW_PR = 6117, 6339
LIVE, TARGET, BASE = "a" * 40, "b" * 40, "c" * 40


FIX = Patch(
    name="0001-fix.patch", path=Path("0001-fix.patch"), text="", subject="Clear the grads",
    author="A U Thor <author@example.com>", author_name="A U Thor",
    author_email="author@example.com", date="Mon, 3 Aug 2026 10:00:00 +0000",
    message="Why it is right.", files=("megatron/core/tensor_parallel/random.py",), hunks=(),
    signoffs=("A U Thor <author@example.com>",),
)  # fmt: skip


def _entry(**changes: Any) -> Entry:
    """An entry as the manifest gives it, made of plain values (no patch file is read)."""
    entry = Entry(
        name="checkpoint-grad", title="Clear the grads", upstream=UPSTREAM, base_branch="dev",
        base_commit=BASE, fork=FORK, head_branch="fix/checkpoint-detached-grad-retention",
        fixes=(FIX,), tests=(), include_tests=False, supersedes=(OLD,), pr=None, offline=None,
    )  # fmt: skip
    return dataclasses.replace(entry, **changes)


def _pr(number: int, state: str, *, author: str = LOGIN, head: str = "") -> Classification:
    return Classification(
        number, state, f"https://github.com/{UPSTREAM}/pull/{number}", author,
        None if state in (PullState.OPEN, PullState.MERGED) else "2026-08-01T00:00:00Z",
        [f"{state} (evidence)"], head_label=head,
    )  # fmt: skip


def _seen(
    entry: Entry, *, current=None, superseded=(), status=None, force=False, **more: Any
) -> Observed:
    """What observe reads, with what it settles from the PRs (`--force` as `force`)."""
    status = status or fork.ForkStatus(
        fork.ForkKind.ATTACHED, FORK, "https://example.invalid/f.git"
    )
    return Observed(
        entry, ("applies at the pinned base",), True, token_login=LOGIN, current=current,
        superseded=tuple(superseded), settled=settle(current, tuple(superseded), force=force),
        fork=status, **more,
    )  # fmt: skip


def _new_branch() -> Built:
    plan = branches.BranchPlan(
        branches.BranchKind.NEW, "the fork has no such branch yet", None, None
    )
    made = Assembled(base=BASE, commit=TARGET, patches=2)
    return Built(plan, target=TARGET, push_from=Path("scratch"), assembled=made)


def _holds_carried() -> Built:
    reason = "the head is what this tool last published"
    return Built(branches.BranchPlan(branches.BranchKind.UNCHANGED, reason, LIVE, LIVE))


def _open_pull(number: int, *, author: str = LOGIN, body: str = "", title: str = "") -> PullRef:
    return read(PullRef, {
        "number": number, "html_url": f"https://github.com/{UPSTREAM}/pull/{number}",
        "user": {"login": author}, "body": body, "title": title,
        "head": {"label": f"{LOGIN}:fix/checkpoint-detached-grad-retention"},
    })  # fmt: skip


def _decide(seen: Observed, built: Built | None, **opts: Any) -> model.Plan:
    return decide.decide(seen, built, Options(dry_run=True, **opts), today="2026-12-04")


def _calls(plan: model.Plan) -> list[str]:
    return [w.call.split(" ")[0] + " " + w.call.split(" ")[1] for w in plan.writes]


DETACHED_OLD = _pr(OLD, classify.PullState.DETACHED)


def test_merged_recorded_pr_is_nothing_to_do():
    entry = _entry(pr=NEW_PR, supersedes=(OLD,))
    seen = _seen(entry, current=_pr(NEW_PR, classify.PullState.MERGED), superseded=[DETACHED_OLD])
    plan = _decide(seen, None)
    assert (plan.action, plan.pr, plan.writes) == (Action.MERGED, NEW_PR, ())
    assert plan.merged == f"#{NEW_PR} is merged: nothing to do" and plan.refusal is None


def test_merged_superseded_pr_is_nothing_to_resubmit():
    entry = _entry(pr=None, supersedes=(OLD,))
    plan = _decide(_seen(entry, superseded=[_pr(OLD, classify.PullState.MERGED)]), None)
    assert (
        plan.action == Action.MERGED and plan.merged == f"#{OLD} was merged: nothing to re-submit"
    )


@pytest.mark.parametrize(
    "state",
    [
        classify.PullState.MAINTAINER,
        classify.PullState.AUTHOR,
        classify.PullState.UNKNOWN,
        classify.PullState.OPEN,
    ],
)
def test_someone_elses_decision_is_refused_unless_forced(state: str):
    entry = _entry(pr=None, supersedes=(OLD,))
    plan = _decide(_seen(entry, superseded=[_pr(OLD, state)]), _new_branch())
    assert plan.action == Action.REFUSED and plan.writes == ()
    assert plan.refusal is not None
    assert plan.refusal.reason == (
        f"#{OLD} is {state}: re-submitting would override that decision; pass --force if "
        "you mean it"
    )
    seen = _seen(entry, superseded=[_pr(OLD, state)], force=True)  # observe settles it
    forced = _decide(seen, _new_branch(), force=True)
    assert forced.action == Action.PLANNED and forced.refusal is None


def test_maintainer_close_is_refused_before_the_fork_is_even_looked_at():
    entry = _entry(pr=None, supersedes=(OLD,))
    seen = dataclasses.replace(
        _seen(entry, superseded=[_pr(OLD, classify.PullState.MAINTAINER)]), fork=None
    )
    assert _decide(seen, None).action == Action.REFUSED


def test_a_second_open_pr_of_the_manifest_from_another_branch_is_refused():
    entry = _entry(pr=NEW_PR, supersedes=(OLD,))
    current = _pr(NEW_PR, classify.PullState.OPEN, head="someone:other-branch")
    seen = _seen(entry, current=current, superseded=[DETACHED_OLD])
    plan = _decide(seen, _new_branch())
    assert plan.action == Action.REFUSED and plan.refusal is not None
    assert plan.refusal.reason.startswith(
        f"the manifest's pr #{NEW_PR} is open from someone:other-branch, not {LOGIN}:"
    )
    assert "a new PR would duplicate it" in plan.refusal.reason
    assert _decide(seen, _new_branch(), force=True).action == Action.PLANNED


def test_detached_fork_is_refused_with_nothing_written():
    entry = _entry(pr=None, supersedes=(OLD,))
    status = fork.ForkStatus(
        fork.ForkKind.DETACHED, FORK, "https://example.invalid/f.git", "fork: false"
    )
    plan = _decide(_seen(entry, superseded=[DETACHED_OLD], status=status), None)
    assert plan.action == Action.REFUSED and plan.writes == () and plan.push is None
    assert plan.refusal is not None and "never pushing there" in plan.refusal.reason
    assert f"fork: {status.describe(UPSTREAM)}" in plan.facts


def test_missing_fork_plans_create_push_pr_and_cross_link_in_that_order():
    entry = _entry(pr=None, supersedes=(OLD,))
    status = fork.ForkStatus(fork.ForkKind.MISSING, FORK)
    plan = _decide(_seen(entry, superseded=[DETACHED_OLD], status=status), _new_branch())
    assert _calls(plan) == [
        f"POST /repos/{UPSTREAM}/forks",
        "git push",
        f"POST /repos/{UPSTREAM}/pulls",
        f"POST /repos/{UPSTREAM}/issues/{OLD}/comments",
    ]
    assert plan.push is not None and plan.push.live is None  # leased on "absent"
    assert plan.pull is not None and plan.pull.existing is None and plan.links == (OLD,)


def test_a_cross_link_already_there_is_not_planned_again():
    entry = _entry(pr=None, supersedes=(OLD,))
    seen = _seen(entry, superseded=[DETACHED_OLD], linked=frozenset({OLD}))
    plan = _decide(seen, _new_branch())
    assert plan.links == () and not any("/comments" in w.call for w in plan.writes)


def test_a_strangers_open_pr_on_the_fork_branch_is_refused():
    """Anyone can open a PR from a public fork's branch: one the token's user did not open is
    never refreshed, recorded or cross-linked (issue 28), --update-live or not."""
    entry = _entry(pr=None, supersedes=(OLD,))
    pull = _open_pull(7000, author="stranger", body="their words", title="their title")
    seen = _seen(entry, superseded=[DETACHED_OLD], pull=pull, live=LIVE, published=None)
    assert seen.pull.author == "stranger" != seen.token_login
    for update_live in (False, True):
        plan = _decide(seen, _holds_carried(), update_live=update_live)
        assert plan.action == Action.REFUSED and plan.refusal is not None and _calls(plan) == []
        assert "#7000" in plan.refusal.reason and "opened by stranger" in plan.refusal.reason


def test_the_users_own_pr_opened_by_hand_is_left_as_written_unless_update_live():
    """The token's user opened it by hand and the tool did not publish its head: the
    description is left as they wrote it (only the missing cross-link is written);
    --update-live appends the section and keeps the title."""
    entry = _entry(pr=None, supersedes=(OLD,))
    pull = _open_pull(7000, author=LOGIN, body="their words", title="their title")
    seen = _seen(entry, superseded=[DETACHED_OLD], pull=pull, live=LIVE, published=None)
    plan = _decide(seen, _holds_carried())
    assert plan.pr == 7000 and plan.pull is not None and plan.pull.title is None
    assert plan.pull.body == "their words"
    assert _calls(plan) == [f"POST /repos/{UPSTREAM}/issues/{OLD}/comments"]
    assert any("--update-live adds the tool's section" in f for f in plan.facts)
    plan = _decide(seen, _holds_carried(), update_live=True)
    assert plan.pull is not None and plan.pull.title is None
    assert plan.pull.body.startswith("their words")  # their text kept, the section appended
    assert _calls(plan)[0] == f"PATCH /repos/{UPSTREAM}/pulls/7000"


def test_a_pr_that_already_holds_the_carried_code_and_section_needs_no_write():
    entry = _entry(pr=NEW_PR, supersedes=(OLD,))
    current = _pr(NEW_PR, classify.PullState.OPEN, head=f"{LOGIN}:{entry.head_branch}")
    seen = _seen(
        entry, current=current, superseded=[DETACHED_OLD], live=LIVE, published=LIVE,
        linked=frozenset({OLD}), pull=_open_pull(NEW_PR, title=entry.title),
    )  # fmt: skip
    first = _decide(seen, _holds_carried())
    assert first.pull is not None
    written = _open_pull(NEW_PR, body=first.pull.body, title=entry.title)
    again = _decide(dataclasses.replace(seen, pull=written), _holds_carried())
    assert (again.action, again.writes, again.push) == (Action.UNCHANGED, (), None)
    assert not again.executable


def test_a_refused_branch_is_the_entrys_one_refusal():
    entry = _entry(pr=None, supersedes=(OLD,))
    why = "someone's commits would be dropped"
    built = Built(branches.BranchPlan(branches.BranchKind.REFUSED, why, LIVE, None))
    plan = _decide(_seen(entry, superseded=[DETACHED_OLD], live=LIVE), built)
    assert plan.refusal == model.Refusal(f"branch {entry.head_branch}: {why}")
    assert not any(f.startswith("branch: Action.REFUSED") for f in plan.facts)


def test_a_check_that_failed_refuses_before_anything_else():
    entry = _entry(pr=None, supersedes=(OLD,))
    seen = Observed(entry, ("does not apply",), False)
    plan = _decide(seen, None)
    assert plan.action == Action.REFUSED and plan.refusal is not None
    assert plan.refusal.reason.startswith("check failed: run ")
    assert plan.facts == ("check: does not apply",)


@pytest.mark.parametrize("gate", [True, False])
def test_copy_pr_bots_words_only_where_upstream_has_it(gate: bool) -> None:
    """A push onto an open PR: `/ok to test <sha>` (copy-pr-bot's gate) is said, and recorded
    in the push, only for an upstream that vets heads with it (read from its default branch)."""
    entry = _entry(pr=None, supersedes=(OLD,))
    pull = _open_pull(7000, author=LOGIN, title=entry.title)
    seen = _seen(entry, superseded=[DETACHED_OLD], pull=pull, live=LIVE, published=LIVE,
                 ci_gate=gate)  # fmt: skip
    plan = _decide(seen, _new_branch(), update_live=True)
    said = "\n".join(str(f) for f in plan.facts)
    assert plan.push is not None and plan.push.ci_gate is gate
    assert ("/ok to test" in said) is gate and ("CI gate" in said) is gate
    comment = body.revision_comment(entry, head=TARGET, old=LIVE, kind="new", diff="x",
                                    ci_gate=gate)  # fmt: skip
    assert ("/ok to test" in comment) is gate and "New revision" in comment


@pytest.mark.parametrize("gate", [True, False])
def test_a_held_back_push_names_copy_pr_bot_only_where_upstream_has_it(gate: bool) -> None:
    entry = _entry(pr=None, supersedes=(OLD,))
    rebuild = branches.BranchPlan(
        branches.BranchKind.REWRITE, "rebuild", LIVE, LIVE, target=None,
        added=["0003-tests.patch"], rebuild_holds_fix=True,
    )  # fmt: skip
    held = branches.keep_live_head(rebuild, entry, live_pr=True, opt_in=False, ci_gate=gate)
    assert held.kind == branches.BranchKind.UNCHANGED and "Its cost" in held.reason
    assert ("/ok to test" in held.reason) is gate
