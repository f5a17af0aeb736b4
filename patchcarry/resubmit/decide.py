"""Phase 3 (run.py): pure, from what was observed and built to writes or a refusal."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from patchcarry import install
from patchcarry.check import render
from patchcarry.check.report import EntryResult
from patchcarry.git.sha import short
from patchcarry.manifest import Entry
from patchcarry.pulls import classify, locked, maintainer_edits, ownership
from patchcarry.resubmit import body as bodies
from patchcarry.resubmit import branch as branches
from patchcarry.resubmit import fork
from patchcarry.resubmit.build import Built
from patchcarry.resubmit.ci_gate import gate_branch, ok_to_test
from patchcarry.resubmit.model import (
    CreateFork,
    CreatePull,
    EditPull,
    Options,
    Outlook,
    Plan,
    PostComment,
    PullWrite,
    Push,
    PushBranch,
    Refusal,
    Write,
)  # fmt: skip
from patchcarry.resubmit.observe import Observed, Vetting
from patchcarry.resubmit.revisions import Revision
from patchcarry.resubmit.section import TooLong, normalize

MAX_TITLE = 256  # GitHub's limit on a PR's title, in characters


def decide(seen: Observed, built: Built | None, opts: Options, *, today: str) -> Plan:
    """The plan for one entry from its reads and its branch work, or its refusal."""
    entry = seen.entry
    plan = Plan(entry, tuple(f"check: {line}" for line in seen.check_lines))
    if not seen.applies:
        return _refuse(plan, f"check failed: run {install.command('check')} {entry.name}")
    plan = dataclasses.replace(plan, superseded=seen.superseded)
    settled = seen.settled
    if settled is not None and settled.merged is not None:
        pr, url = settled.merged.number, settled.merged.url
        return dataclasses.replace(plan, merged=settled.reason, pr=pr, url=url)
    if settled is not None:
        return _refuse(plan, settled.reason)
    status = seen.fork
    assert status is not None  # read whenever the entry is not settled
    plan = _add(dataclasses.replace(plan, fork=status),
                facts=[f"fork: {status.describe(entry.upstream)}"])  # fmt: skip
    if status.kind == fork.ForkKind.DETACHED:
        return _refuse(plan, str(fork.refuse_detached(status, entry.upstream)))
    assert built is not None  # built whenever the fork is not detached
    if status.kind == fork.ForkKind.MISSING:
        plan = _add(plan, writes=[CreateFork(entry.upstream, entry.fork)])
    plan = _branch_facts(plan, seen, built)
    if built.branch.kind == branches.BranchKind.REFUSED:
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


def _add(plan: Plan, *, facts: Sequence[str | Outlook] = (), writes: Sequence[Write] = ()) -> Plan:
    return dataclasses.replace(plan, facts=(*plan.facts, *facts), writes=(*plan.writes, *writes))


def vetting_line(vetting: Vetting | None, head: str | None) -> str:
    """Whether upstream's CI gate (copy-pr-bot's branch for the PR) vetted `head`."""
    if vetting is None or head is None:
        return "CI gate: no PR head to vet yet"
    gate = gate_branch(vetting.pr)
    if not vetting.readable:
        return f"CI gate: could not read upstream's {gate}"
    if vetting.vets(head):
        return f"CI gate: head {short(head)} is vetted (upstream's {gate} points at it)"
    if vetting.sha:
        return (f"CI gate: head {short(head)} is NOT vetted ({gate} is at "
                f"{short(vetting.sha)}); a maintainer must comment {ok_to_test(head)}")  # fmt: skip
    return f"CI gate: head {short(head)} is NOT vetted (no {gate} on upstream yet)"


def _branch_facts(plan: Plan, seen: Observed, built: Built) -> Plan:
    decided = built.branch
    facts: list[str] = []
    if decided.kind != branches.BranchKind.REFUSED:  # a refusal's reason is printed once
        facts.append(f"branch: {decided.kind.upper()}: {decided.reason}")
    if seen.ci_gate is not False:  # copy-pr-bot's words only where upstream has it
        facts.append(vetting_line(seen.vetting, seen.live))
    live, published = seen.live, seen.published
    facts.append(f"fork has {short(live) if live else 'no such branch'}; this tool last published "
                 f"{short(published) if published else 'nothing there (no record)'}")  # fmt: skip
    facts.extend(decided.dropped_lines())
    made = built.assembled
    if made is not None and decided.kind != branches.BranchKind.REFUSED:
        facts.append(f"branch: {short(made.commit)} = {built.base_label} {short(made.base)} + "
                     f"{made.patches} patch(es)")  # fmt: skip
    return dataclasses.replace(_add(plan, facts=facts), branch=decided.to_json())


def _duplicate(seen: Observed, owner: str, force: bool) -> str:
    """Why a new PR would duplicate the manifest's open one ("" when it would not)."""
    current, existing = seen.current, seen.pull
    if current is None or current.state != classify.PullState.OPEN or force:
        return ""
    if existing is not None and existing.number == current.number:
        return ""
    return (
        f"the manifest's pr #{current.number} is open from {current.head_label}, "
        f"not {owner}:{seen.entry.head_branch}; a new PR would duplicate it: fix `pr`, "
        "`fork` or `head_branch` in the manifest, or pass --force"
    )


def _push(plan: Plan, seen: Observed, built: Built, today: str) -> tuple[Plan, Revision | None]:
    """The push write with its leases, and the revision line it records (None: no push)."""
    entry, decided, target = seen.entry, built.branch, built.target
    if target is None or built.push_from is None or plan.fork is None:
        return plan, None
    live = decided.live
    revision = Revision(today, target, decided.kind, live or "")
    write = PushBranch(plan.fork.full_name, entry.head_branch, target, live)
    facts: list[str | Outlook] = []
    if seen.pull is not None and seen.ci_gate is not False:
        facts.append(Outlook(f"after the push: the new head needs {ok_to_test(target)}"))
        if seen.vetting is not None and seen.vetting.vets(seen.live):
            facts.append(f"this {decided.kind} throws away the vetting of {live or ''}"[:200])
    push = Push(target, built.push_from, live, decided.published,
                seen.publishers.get(entry.name), decided.kind, built.workflow,
                ci_gate=seen.ci_gate is not False)  # fmt: skip
    return dataclasses.replace(_add(plan, facts=facts, writes=[write]), push=push), revision


def _pull(plan: Plan, seen: Observed, opts: Options, revision: Revision | None, owner: str) -> Plan:
    """The PR's create, or the edit of only what changed, and the revision comment."""
    entry, existing = seen.entry, seen.pull
    try:
        title, body, section, problem = bodies.compose(
            entry, existing, superseded=seen.superseded, check_lines=seen.review_lines,
            impact=seen.impact, pr_template=seen.pr_template,
            revision=revision, own=seen.own_emails,
        )  # fmt: skip
    except TooLong as exc:
        return _refuse(plan, str(exc))
    if existing is None or title is not None:  # the description and title posted now
        plan = _add(plan, facts=bodies.neutralised(entry, seen.own_emails))
    if title is not None and len(title) > MAX_TITLE:
        return _refuse(plan, f"title: {len(title)} characters; GitHub refuses a PR title over "
                       f'{MAX_TITLE} (422 "title is too long (maximum is {MAX_TITLE} '
                       'characters)"): shorten the entry\'s title in the manifest')  # fmt: skip
    plan = _add(plan, facts=[f"body: {problem}"] if problem else [])
    edits_change = maintainer_edits.change(existing, entry)
    if existing is None or edits_change is not None:
        plan = _add(plan, facts=[maintainer_edits.line(entry)])
    kept = branches.keep_body(
        existing.body if existing else None, entry, pushing=plan.push is not None,
        ours=seen.live is not None and seen.live == seen.published, opt_in=opts.update_live,
    )  # fmt: skip
    if existing is not None and kept:
        plan = _add(plan, facts=[kept])
        title, body = None, existing.body or ""
    is_locked = bool(existing is not None and existing.locked)
    pull = PullWrite(existing, title, body, section, maintainer_edits.wanted(entry), edits_change,
                     is_locked)  # fmt: skip
    if existing is None:
        create = CreatePull(entry.upstream, f"{owner}:{entry.head_branch}", entry.base_branch)
        return dataclasses.replace(_add(plan, writes=[create]), pull=pull)
    pr = existing.number
    changed = ["title"] if title is not None else []
    if normalize(existing.body) != normalize(body):
        changed.append("body (the tool's section only)")
    if edits_change is not None:
        changed.append(f"maintainer edits {'on' if edits_change else 'off'}")
    writes: list[Write] = []
    if changed:
        writes.append(EditPull(entry.upstream, pr, tuple(changed)))
    if plan.push is not None and is_locked:
        plan = _add(plan, facts=[locked.skipped("revision comment", pr)])
    elif plan.push is not None:
        writes.append(PostComment(entry.upstream, pr, "revision"))
    plan = dataclasses.replace(plan, pr=pr, url=existing.html_url, pull=pull)
    return _add(plan, writes=writes)


def _links(plan: Plan, seen: Observed, force: bool) -> Plan:
    """A cross-link on each superseded PR that may get one and does not hold it yet."""
    entry = seen.entry
    wanted = [c.number for c in seen.superseded if c.number not in seen.linked
              and (c.state == classify.PullState.DETACHED or force)]  # fmt: skip
    needed = tuple(n for n in wanted if n not in seen.locked)
    plan = _add(plan, facts=[locked.skipped("cross-link", n) for n in wanted
                             if n in seen.locked])  # fmt: skip
    writes = [PostComment(entry.upstream, n, "cross-link") for n in needed]
    return dataclasses.replace(_add(plan, writes=writes), links=needed)


def landed_journey(result: EntryResult, entry: Entry) -> tuple[Observed, Plan] | None:
    """The (observed, plan with nothing to write) of `entry` when check found its fix landed."""
    landing = result.landing
    if landing is None or not landing.landed:
        return None
    lines = tuple(render.sentences(result, entry))
    reason = f"{landing.verdict} upstream as {render.commit_words(landing)}: nothing is pushed; "
    reason += landing.next
    facts = tuple(f"check: {line}" for line in lines)
    return Observed(entry, lines, True), Plan(entry, facts, pr=entry.pr, merged=reason)
