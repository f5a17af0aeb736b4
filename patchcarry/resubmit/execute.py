"""Phase 5 of an entry's journey: the plan's writes, in order, each guarded by what was
observed (the push's leases, the comments' markers, the 422 lookup), then the record: the PR
number in the manifest and what was written, a value of its own (the plan is not rewritten).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

from patchcarry import git
from patchcarry.github import GitHub
from patchcarry.manifest import record_pr
from patchcarry.resubmit import branch_refs, fork, newfork, pull_writes, push
from patchcarry.resubmit.backoff import Backoff
from patchcarry.resubmit.decide import Plan, Push, push_call
from patchcarry.resubmit.live import Cache
from patchcarry.resubmit.options import Options
from patchcarry.resubmit.plan import CREATED, REFRESHED, UNCHANGED, EntryPlan, Write


@dataclasses.dataclass(frozen=True)
class Record:
    """What the write phase did for one entry, after its writes succeeded."""

    plan: Plan
    action: str  # CREATED, REFRESHED or UNCHANGED
    pr: int
    url: str | None
    made: tuple[str, ...]  # the write calls made, in order
    facts: tuple[str, ...]
    rules: dict[str, Any] | None

    def shown(self, cost: dict[str, int] | None) -> EntryPlan:
        plan = self.plan
        return EntryPlan(
            plan.entry.name, plan.target(), action=self.action, pr=self.pr, url=self.url,
            superseded=list(plan.superseded), facts=list(self.facts),
            writes=[Write(call, "") for call in self.made], branch=plan.branch, cost=cost,
            token=plan.token, rules=self.rules,
        )  # fmt: skip


@dataclasses.dataclass
class Context:
    """The run's write-side state shared by its entries."""

    gh: GitHub
    opts: Options
    login: str
    upstream_url: str
    cache: Cache
    say: Callable[[str], None]
    forks: dict[str, fork.ForkStatus] = dataclasses.field(default_factory=dict)


def _ensure_fork(ctx: Context, plan: Plan) -> tuple[fork.ForkStatus, list[str]]:
    """The fork, created at most once per run even when several entries share it, and the
    note a created fork leaves in the record."""
    status, entry = plan.fork, plan.entry
    assert status is not None
    if status.kind != fork.MISSING:
        return status, []
    key, notes = entry.fork.lower(), []
    if key not in ctx.forks:
        wait = Backoff(ctx.opts.fork_wait, ctx.opts.sleep or time.sleep,
                       progress=ctx.opts.progress, what=f"{entry.fork} to appear")  # fmt: skip
        ctx.forks[key] = newfork.create(ctx.gh, entry.fork, entry.upstream, login=ctx.login,
                                        wait=wait)  # fmt: skip
        ctx.forks[key].waited = wait.spent
        if ctx.forks[key].note:
            ctx.say(f"{entry.name}: {ctx.forks[key].note}")
            notes.append(f"fork: {ctx.forks[key].note}")
    return ctx.forks[key], notes


def _push(ctx: Context, plan: Plan, step: Push, status: fork.ForkStatus) -> None:
    """Branch and publication record in one atomic push, each leased on what was read. A
    fork's git side lags its API right after creation: bounded back-off before giving up."""
    branch, opts = plan.entry.head_branch, ctx.opts
    updates = [
        (step.target, f"refs/heads/{branch}", step.live),
        (step.target, branch_refs.record_ref(branch), step.published),
        (step.target, branch_refs.publisher_ref(plan.entry.name, branch), step.own_record),
    ]
    what = f"git to accept pushes to {status.full_name}"
    wait = Backoff(opts.fork_wait, opts.sleep or time.sleep, first=2.0, spent=status.waited,
                   progress=opts.progress, what=what)  # fmt: skip
    while True:
        accepted, message = git.push_refs_with_lease(
            str(status.clone_url), updates, cwd=step.push_from
        )
        if not accepted and "shallow update not allowed" in message:
            git.unshallow(ctx.upstream_url, cwd=step.push_from)
            continue
        if accepted:
            return
        lagging = "not found" in message.lower() or "could not read" in message.lower()
        if not lagging or not wait.wait():
            break
    push.raise_push_failure(message, branch, step.live, lagging=lagging)


def execute(ctx: Context, plan: Plan) -> Record:
    """Make the planned writes for one entry, in order; record the PR in the manifest."""
    entry, step = plan.entry, plan.push
    assert plan.pull is not None
    before = len(ctx.gh.writes)
    status, facts = _ensure_fork(ctx, plan)
    made: list[str] = []
    if step is not None:
        _push(ctx, plan, step, status)
        made.append(push_call(status.full_name, entry, step.target))
    owner = status.full_name.split("/")[0]
    pull, created = pull_writes.open_or_refresh(ctx.gh, entry, plan.pull, owner, ctx.login)
    number, url = pull["number"], pull.get("html_url")
    if step is not None and plan.pull.existing is not None:
        pull_writes.revision_comment(
            ctx.gh, entry, number, login=ctx.login, cache=ctx.cache,
            clone_url=str(status.clone_url), old=step.live, new=step.target, kind=step.kind,
        )  # fmt: skip
    pull_writes.cross_links(
        ctx.gh, entry, plan.links, plan.superseded, login=ctx.login, pr=number,
        url=url or "", fork=status.full_name,
    )  # fmt: skip
    made.extend(ctx.gh.writes[before:])
    return _record(ctx, plan, [*plan.facts, *facts], made, number, url, created)


def _record(
    ctx: Context, plan: Plan, facts: list[str], made: list[str], number: int,
    url: str | None, created: bool,
) -> Record:  # fmt: skip
    """After every write: the manifest's record, and the head's DCO result read once."""
    entry, step, rules = plan.entry, plan.push, plan.rules
    if step is not None:  # what the plan said would follow the push has happened
        facts = [f for f in facts if not f.startswith("after the push:")]
        facts.append(f"CI gate: the new head {step.target[:12]} needs a maintainer's "
                     f"`/ok to test {step.target}`")  # fmt: skip
    action = CREATED if created else (REFRESHED if made else UNCHANGED)
    if ctx.opts.manifest_path is not None and number != entry.pr:
        record_pr(ctx.opts.manifest_path, entry.name, number)
        facts.append(f"manifest: recorded pr = {number}")
    if step is not None:  # after every write and the record: read once, a report
        shown, line = pull_writes.dco_result(ctx.gh, entry.upstream, step.target)
        rules = {**(rules or {}), "after_push": shown}
        facts.append(line)
    return Record(plan, action, number, url, tuple(made), tuple(facts), rules)
