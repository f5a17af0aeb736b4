"""Phase 3 of an entry's journey: a pure function from what was observed and built to the
plan of writes (the push with its leases, the PR's create or edit, comments) or a refusal
with its reason. No git, no HTTP: every input is a plain value, so each rule is a table test.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from patchcarry import carried_tests, install
from patchcarry.github import Json
from patchcarry.manifest import Entry
from patchcarry.resubmit import body as bodies
from patchcarry.resubmit import body_limit, branch_refs, classify, fork, hold, ownership, verdict
from patchcarry.resubmit import branch as branches
from patchcarry.resubmit.build import Built
from patchcarry.resubmit.classify import Classification
from patchcarry.resubmit.observe import Observed, Vetting
from patchcarry.resubmit.options import Options
from patchcarry.resubmit.plan import MERGED, PLANNED, REFUSED, UNCHANGED, EntryPlan, Write


@dataclasses.dataclass(frozen=True)
class Refusal:
    """The one way an entry is refused: why, in one line (nothing of the run is written)."""

    reason: str


@dataclasses.dataclass(frozen=True)
class Push:
    """The atomic push of the branch and its publication record, leased on what was read."""

    target: str
    push_from: Path
    live: str | None  # lease of the branch (None: it must not exist)
    published: str | None  # lease of the publication record
    own_record: str | None  # lease of this entry's publisher ref
    kind: str  # the branch's change (branch.NEW, FAST_FORWARD, REWRITE)
    workflow: str | None  # why it needs the `workflow` scope


@dataclasses.dataclass(frozen=True)
class PullWrite:
    """The PR's create (`existing` None) or edit, and what goes in it."""

    existing: Json | None
    title: str | None  # None: the title is left as it is
    body: str
    section: str  # the tool's section alone (merged into a PR found after a create's 422)


@dataclasses.dataclass(frozen=True)
class Plan:
    """One entry's decision, printable before anything is written."""

    entry: Entry
    facts: tuple[str, ...]
    writes: tuple[Write, ...] = ()
    superseded: tuple[Classification, ...] = ()
    pr: int | None = None
    url: str | None = None
    refusal: Refusal | None = None
    merged: str = ""  # why there is nothing to do (a merged PR)
    branch: dict[str, Any] | None = None
    fork: fork.ForkStatus | None = None
    push: Push | None = None
    pull: PullWrite | None = None
    links: tuple[int, ...] = ()  # superseded PRs that get a cross-link
    token: dict[str, Any] | None = None  # set by the gate
    rules: dict[str, Any] | None = None  # set by the gate

    @property
    def action(self) -> str:
        if self.refusal is not None:
            return REFUSED
        if self.merged:
            return MERGED
        return PLANNED if self.writes else UNCHANGED

    @property
    def executable(self) -> bool:
        """Whether the write phase has anything to carry out."""
        return self.pull is not None and self.action == PLANNED

    def target(self) -> str:
        e = self.entry
        return f"{e.upstream} {e.base_branch} <- {e.fork}:{e.head_branch}"

    def shown(self, cost: dict[str, int] | None, unverified: list[str]) -> EntryPlan:
        """The printed plan (a dry run, a refusal, or an entry with nothing to write)."""
        return EntryPlan(
            self.entry.name, self.target(), action=self.action, pr=self.pr, url=self.url,
            superseded=list(self.superseded), facts=list(self.facts), unverified=unverified,
            writes=list(self.writes), reason=self.refusal.reason if self.refusal else self.merged,
            branch=self.branch, cost=cost, token=self.token, rules=self.rules,
        )  # fmt: skip


def push_call(fork_name: str, entry: Entry, commit: str) -> str:
    return f"git push {fork_name} {commit[:12]}:refs/heads/{entry.head_branch}"


def decide(seen: Observed, built: Built | None, opts: Options, *, today: str) -> Plan:
    """The plan for one entry from its reads and its branch work, or its refusal."""
    entry = seen.entry
    plan = Plan(entry, tuple(f"check: {line}" for line in seen.check_lines))
    if not seen.applies:
        return _refuse(plan, f"check failed: run {install.command('check')} {entry.name}")
    plan = dataclasses.replace(plan, superseded=seen.superseded)
    settled = verdict.settle(seen.current, seen.superseded, force=opts.force)
    if settled is not None and settled.merged is not None:
        return dataclasses.replace(
            plan, merged=settled.reason, pr=settled.merged.number, url=settled.merged.url
        )
    if settled is not None:
        return _refuse(plan, settled.reason)
    status = seen.fork
    assert status is not None  # read whenever the entry is not settled
    plan = dataclasses.replace(
        plan, fork=status, facts=(*plan.facts, f"fork: {status.describe(entry.upstream)}")
    )
    if status.kind == fork.DETACHED:
        return _refuse(plan, str(fork.refuse_detached(status, entry.upstream)))
    assert built is not None  # built whenever the fork is not detached
    if status.kind == fork.MISSING:
        create = Write(
            f"POST /repos/{entry.upstream}/forks", f"create {entry.fork}, default branch only"
        )
        plan = _add(plan, writes=[create])
    plan = _branch_facts(plan, seen, built)
    if built.branch.kind == branches.REFUSED:
        return _refuse(plan, f"branch {entry.head_branch}: {built.branch.reason}")
    owner = status.full_name.split("/")[0]
    if seen.pull is not None and not ownership.is_own_pr(seen.pull, seen.token_login):
        return _refuse(plan, ownership.stranger_reason(seen.pull, seen.token_login))
    duplicate = _duplicate(seen, owner, opts.force)
    if duplicate:
        return _refuse(plan, duplicate)
    plan, revision = _push(plan, seen, built, today)
    plan = _pull(plan, seen, opts, revision, owner)
    return _links(plan, seen, opts.force)


def _refuse(plan: Plan, reason: str) -> Plan:
    return dataclasses.replace(plan, refusal=Refusal(reason))


def _add(plan: Plan, *, facts: Sequence[str] = (), writes: Sequence[Write] = ()) -> Plan:
    return dataclasses.replace(plan, facts=(*plan.facts, *facts), writes=(*plan.writes, *writes))


def vetting_line(vetting: Vetting | None, head: str | None) -> str:
    """Whether upstream's CI gate (copy-pr-bot's `pull-request/<N>` branch) vetted `head`."""
    if vetting is None or head is None:
        return "CI gate: no PR head to vet yet"
    pr = vetting.pr
    if not vetting.readable:
        return f"CI gate: could not read upstream's pull-request/{pr}"
    if vetting.sha == head:
        return f"CI gate: head {head[:12]} is vetted (upstream's pull-request/{pr} points at it)"
    if vetting.sha:
        return (
            f"CI gate: head {head[:12]} is NOT vetted (pull-request/{pr} is at "
            f"{vetting.sha[:12]}); a maintainer must comment `/ok to test {head}`"
        )
    return f"CI gate: head {head[:12]} is NOT vetted (no pull-request/{pr} on upstream yet)"


def _branch_facts(plan: Plan, seen: Observed, built: Built) -> Plan:
    decided = built.branch
    facts = []
    if decided.kind != branches.REFUSED:  # a refusal's reason is printed once, as the reason
        facts.append(f"branch: {decided.kind.upper()}: {decided.reason}")
    facts.append(vetting_line(seen.vetting, seen.live))
    live, published = seen.live, seen.published
    facts.append(
        f"fork has {live[:12] if live else 'no such branch'}; this tool last published "
        f"{published[:12] if published else 'nothing there (no record)'}"
    )
    facts.extend(decided.dropped_lines())
    made = built.assembled
    if made is not None and decided.kind != branches.REFUSED:
        facts.append(
            f"branch: {made.commit[:12]} = {built.base_label} {made.base[:12]} + "
            f"{made.patches} patch(es)"
        )
    return dataclasses.replace(_add(plan, facts=facts), branch=decided.to_json())


def _duplicate(seen: Observed, owner: str, force: bool) -> str:
    """Why a new PR would duplicate the manifest's open one ("" when it would not)."""
    current, existing = seen.current, seen.pull
    if current is None or current.state != classify.OPEN or force:
        return ""
    if existing is not None and existing["number"] == current.number:
        return ""
    return (
        f"the manifest's pr #{current.number} is open from {current.head_label}, "
        f"not {owner}:{seen.entry.head_branch}; a new PR would duplicate it: fix `pr`, "
        "`fork` or `head_branch` in the manifest, or pass --force"
    )


def _push(plan: Plan, seen: Observed, built: Built, today: str) -> tuple[Plan, str | None]:
    """The push write with its leases, and the revision line it records (None: no push)."""
    entry, decided, target = seen.entry, built.branch, built.target
    if target is None or built.push_from is None or plan.fork is None:
        return plan, None
    live = decided.live
    on = f" on `{live[:12]}`" if live else ""
    revision = f"{today} `{target[:12]}` {decided.kind}{on}"
    record = branch_refs.record_ref(entry.head_branch)
    write = Write(
        push_call(plan.fork.full_name, entry, target),
        f"--atomic with {record}; lease: branch {live[:12] if live else 'absent'}",
    )
    facts = []
    if seen.pull is not None:
        facts.append(f"after the push: the new head needs `/ok to test {target}`")
        if any("is vetted" in f for f in plan.facts):
            facts.append(f"this {decided.kind} throws away the vetting of {live or ''}"[:200])
    push = Push(
        target, built.push_from, live, decided.published,
        seen.publishers.get(entry.name), decided.kind, built.workflow,
    )  # fmt: skip
    return dataclasses.replace(_add(plan, facts=facts, writes=[write]), push=push), revision


def _pull(plan: Plan, seen: Observed, opts: Options, revision: str | None, owner: str) -> Plan:
    """The PR's create, or the edit of only what changed, and the revision comment."""
    entry, existing = seen.entry, seen.pull
    try:
        title, body, section, problem = _body(seen, opts, revision)
    except body_limit.TooLong as exc:
        return _refuse(plan, str(exc))
    plan = _add(plan, facts=[f"body: {problem}"] if problem else [])
    kept = hold.keep_body(
        existing.get("body") if existing else None, entry, pushing=plan.push is not None,
        ours=seen.live is not None and seen.live == seen.published, opt_in=opts.update_live,
    )  # fmt: skip
    if existing is not None and kept:
        plan = _add(plan, facts=[kept])
        title, body = None, existing.get("body") or ""
    pull = PullWrite(existing, title, body, section)
    if existing is None:
        create = Write(
            f"POST /repos/{entry.upstream}/pulls",
            f"draft PR {owner}:{entry.head_branch} -> {entry.base_branch}",
        )
        return dataclasses.replace(_add(plan, writes=[create]), pull=pull)
    pr = existing["number"]
    changed = (["title"] if title is not None else []) + (
        ["body (the tool's section only)"]
        if bodies.normalize(existing.get("body")) != bodies.normalize(body)
        else []
    )
    writes = []
    if changed:
        writes.append(Write(f"PATCH /repos/{entry.upstream}/pulls/{pr}", " and ".join(changed)))
    if plan.push is not None:
        writes.append(
            Write(f"POST /repos/{entry.upstream}/issues/{pr}/comments", "revision comment")
        )
    plan = dataclasses.replace(plan, pr=pr, url=existing.get("html_url"), pull=pull)
    return _add(plan, writes=writes)


def _body(seen: Observed, opts: Options, revision: str | None) -> tuple[str | None, str, str, str]:
    """(title to set or None, body, the tool's section, why the body is left alone or ""):
    only the tool's section changes; the title only when the manifest's title changed since
    the tool last set it. A body whose section cannot be told apart is left as it is."""
    entry, existing = seen.entry, seen.pull
    found = bodies.locate(existing.get("body") if existing else None, entry.name)
    old = found.section
    revisions = [*(old.revisions if old else ()), *([revision] if revision else [])]
    history = [*(f"#{c.number}" for c in seen.superseded), "this PR"]
    title: str | None = entry.title
    if existing is not None:
        if old is None:  # first refresh of a PR someone wrote: keep their title
            title = None
        elif old.title_hash == bodies.title_hash(entry.title):
            title = None  # unchanged in the manifest: a maintainer's rename stands
        if title is not None and existing.get("title") == title:
            title = None
    sections: dict[str, str] = {}
    test_command = carried_tests.command(entry.tests) if entry.include_tests else None
    # a person's description: a body the tool first found without its section, or one whose
    # section says so; a body the tool opened the PR with is its own
    person = existing is not None and (old.person if old else True)
    handwritten = bodies.outside(existing.get("body"), old) if person and existing else None

    def make(listed: list[str]) -> str:
        section = sections["last"] = bodies.render_section(
            entry, superseded=seen.superseded, check_lines=seen.review_lines,
            impact=opts.impacts.get(entry.name), test_command=test_command,
            handwritten=handwritten, base=entry.base_commit, title=entry.title,
            summary=old is not None and old.summary, revisions=listed, history=history,
        )  # fmt: skip
        if existing is None:
            return bodies.render_new(entry, section, seen.pr_template)
        return bodies.merge(existing.get("body"), section, entry.name)

    body = body_limit.fit(
        make, revisions, left_out=body_limit.earlier(old.text if old else None),
        what=f"{entry.name}'s PR body", current=existing.get("body") if existing else None,
    )  # fmt: skip
    return title, body, sections["last"], found.problem


def _links(plan: Plan, seen: Observed, force: bool) -> Plan:
    """A cross-link on each superseded PR that may get one and does not hold it yet."""
    entry = seen.entry
    needed = tuple(
        c.number
        for c in seen.superseded
        if (c.state == classify.DETACHED or force) and c.number not in seen.linked
    )
    writes = [
        Write(f"POST /repos/{entry.upstream}/issues/{n}/comments", "cross-link to the new PR")
        for n in needed
    ]
    return dataclasses.replace(_add(plan, writes=writes), links=needed)
