"""resubmit per entry: observe -> build -> decide; the gate judges all before execute writes."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
from collections.abc import Callable

from patchcarry import cachedir, install, manifest, tokens
from patchcarry import upstream as upstream_mod
from patchcarry.check import render
from patchcarry.check.report import CheckReport
from patchcarry.check.run import run_checks
from patchcarry.errors import ExitCode
from patchcarry.github_types import Forge
from patchcarry.manifest import Entry
from patchcarry.pulls import renames
from patchcarry.pulls.reads import Reads
from patchcarry.resubmit import build, decide, execute, gate, observe
from patchcarry.resubmit.live import Cache
from patchcarry.resubmit.model import (
    Action,
    CreatePull,
    EditPull,
    EntryPlan,
    Options,
    Plan,
    PostComment,
    PushBranch,
)  # fmt: skip


@dataclasses.dataclass
class Outcome:
    plans: list[EntryPlan]
    dry_run: bool
    headline: str
    exit_code: int


def resubmit(
    entries: list[Entry], opts: Options, *, offline: bool,
    make_github: Callable[[str | None], Forge], say: Callable[[str], None],
) -> Outcome:  # fmt: skip
    token = None if opts.example else tokens.token()  # the user's token never acts on the example
    dry_run = opts.dry_run or token is None
    if not dry_run and opts.manifest_path is not None:
        manifest.check_writable(opts.manifest_path)  # before any read: it records the PR
    if offline:
        report = run_checks(entries, offline=True)
        code = ExitCode.OK if report.ok else report.exit_code
        return Outcome(offline_plan(entries, report), True, OFFLINE_HEADLINE, code)
    gh = make_github(token)
    reads = Reads(gh)
    entries, moved = renames.follow(reads, entries)
    for note in moved:
        say(note)
    facts = observe.observe_run(entries, opts, gh, reads, token=token)
    soon = expiry_warning(gh.token_expires, datetime.datetime.now(datetime.UTC))
    if soon:
        say(soon)  # before the first write: a token that expires mid-run fails after the push
    with contextlib.ExitStack() as stack:
        # the check's cache, where live branches are patched, is held until the last write
        stack.enter_context(cachedir.locked(facts.cache))
        journeys = []
        for entry in entries:
            if (landed := decide.landed_journey(facts.report.entry(entry.name), entry)) is not None:
                journeys.append(landed)  # landed upstream: no reads, never pushed
                continue
            seen = observe.observe_entry(reads, facts, entry, opts)
            built = build.build_entry(seen, facts, opts, stack)
            journeys.append((seen, decide.decide(seen, built, opts, today=facts.today)))
        cost = _cost(gh, facts)
        plans = gate.gate(journeys, facts, opts)
        if dry_run or any(p.action == Action.REFUSED for p in plans):
            return _unwritten(plans, cost, opts, token is not None)
        ctx = execute.Context(gh, opts, facts.login, facts.upstream_url, Cache(facts.cache), say)
        shown = [execute.execute(ctx, p).shown(cost) if p.executable else p.shown(cost, [])
                 for p in plans]  # fmt: skip
    total = sum(len(p.writes) for p in shown)
    return Outcome(shown, False, f"DONE: {total} write(s) made.", ExitCode.OK)


EXPIRY_MARGIN = datetime.timedelta(hours=1)  # a run with a slow fork wait takes minutes


def expiry_warning(expires: datetime.datetime | None, now: datetime.datetime) -> str:
    """The warning for a token GitHub says expires within `EXPIRY_MARGIN` ("" otherwise)."""
    if expires is None or expires - now > EXPIRY_MARGIN:
        return ""
    left = max((expires - now).total_seconds(), 0) / 60
    return (f"warning: {tokens.variable()} expires at {expires:%Y-%m-%d %H:%M} UTC (in {left:.0f} "
            "min, GitHub-Authentication-Token-Expiration): a run that outlives it fails part-way "
            "(a re-run resumes); renew the token first if this run may take long")  # fmt: skip


def _cost(gh: Forge, facts: observe.RunFacts) -> dict[str, int]:
    """The run's API reads, and the bytes the check and the live branches fetched."""
    report = facts.report
    fetched = upstream_mod.object_bytes(facts.cache) - (report.cache_bytes or 0)
    return {"api_reads": gh.reads, "bytes_fetched": (report.bytes_fetched or 0) + fetched}


def _unwritten(plans: list[Plan], cost: dict[str, int], opts: Options, token: bool) -> Outcome:
    """A dry run, or a run a refusal stopped before its first write: the plans, printed."""
    said = "that a token for {} can write (no token used)"
    shown = [p.shown(cost, [] if token else [said.format(p.entry.fork_owner)]) for p in plans]
    refused = any(p.action == Action.REFUSED for p in plans)
    why = "--dry-run" if opts.dry_run else f"no {tokens.variable()} set"
    head = f"DRY RUN ({why}): every read was made; nothing was written."
    if refused and not opts.dry_run and token:
        head = "REFUSED: a preflight failed, so nothing was written (see reasons)."
    return Outcome(shown, True, head, ExitCode.FAILED if refused else ExitCode.OK)


OFFLINE_HEADLINE = (
    "OFFLINE: no GitHub API reads were made; the plan below follows from the manifest "
    "alone and nothing was written."
)


def offline_plan(entries: list[Entry], report: CheckReport) -> list[EntryPlan]:
    """Per entry: the check's sentences, what could not be verified, the implied writes."""
    return [_entry(entry, report) for entry in entries]


def _entry(entry: Entry, report: CheckReport) -> EntryPlan:
    target = f"{entry.upstream} {entry.base_branch} <- {entry.fork}:{entry.head_branch}"
    plan = EntryPlan(entry.name, target)
    plan.facts.extend(f"check: {x}" for x in render.sentences(report.entry(entry.name), entry))
    plan.pr = entry.pr
    if not report.entry(entry.name).status.ok:
        plan.action = Action.REFUSED
        plan.reason = (
            f"its patch does not apply at {report.upstream}: `{install.command('check')} "
            f"{entry.name}` checks it against {entry.upstream}'s pinned base and tip"
        )
    numbers = ", ".join(f"#{n}" for n in (*entry.supersedes, *([entry.pr] if entry.pr else [])))
    plan.unverified = [
        f"state of {numbers} (open/merged/closed, and by whom)",
        f"that {entry.fork} exists and is an attached fork of {entry.upstream}",
        f"what the fork's {entry.head_branch} holds; the pinned base on {entry.upstream}",
    ]
    up = entry.upstream
    plan.writes.append(PushBranch(entry.fork, entry.head_branch, None, implied=True))
    if entry.pr:
        plan.writes.append(EditPull(up, entry.pr, implied=True))
    else:
        plan.writes.append(CreatePull(up, implied=True))
    plan.writes.extend(PostComment(up, n, "cross-link", implied=True) for n in entry.supersedes)
    return plan
