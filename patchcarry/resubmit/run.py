"""Runs resubmit for the selected entries. Each entry's journey: observe (reads, once) ->
build (local git) -> decide (pure); then the gate judges every plan at once before the first
write, and only then does execute write, entry by entry. Returns what to print."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

from patchcarry import cachedir, manifest, tokens
from patchcarry import upstream as upstream_mod
from patchcarry.check.run import run_checks
from patchcarry.errors import ExitCode
from patchcarry.manifest import Entry
from patchcarry.resubmit import build, decide, execute, gate, observe
from patchcarry.resubmit import offline as offline_mod
from patchcarry.resubmit.landed import landed_journey
from patchcarry.resubmit.live import Cache
from patchcarry.resubmit.options import Options
from patchcarry.resubmit.plan import PLANNED, REFUSED, EntryPlan
from patchcarry.resubmit.reads import Reads

if TYPE_CHECKING:
    from patchcarry.github import GitHub


@dataclasses.dataclass
class Outcome:
    plans: list[EntryPlan]
    dry_run: bool
    headline: str
    exit_code: int


def token_from_env() -> str | None:
    """The token for GH_HOST's API host, as gh reads it (`patchcarry.tokens`)."""
    return tokens.token()


def resubmit(
    entries: list[Entry],
    opts: Options,
    *,
    offline: bool,
    make_github: Callable[[str | None], GitHub],
    say: Callable[[str], None],
) -> Outcome:
    example = opts.manifest_path is not None and manifest.is_example(opts.manifest_path)
    token = None if example else token_from_env()  # the user's token never acts on the example
    dry_run = opts.dry_run or token is None
    if not dry_run and opts.manifest_path is not None:
        manifest.check_writable(opts.manifest_path)  # before any read: it records the PR
    if offline:
        report = run_checks(entries, offline=True)
        code = ExitCode.OK if report.ok else report.exit_code
        return Outcome(offline_mod.offline_plan(entries, report), True, offline_mod.HEADLINE, code)
    gh = make_github(token)
    reads = Reads(gh)
    facts = observe.observe_run(entries, opts, gh, reads, token=token)
    with contextlib.ExitStack() as stack:
        # Live branches are fetched into the check's cache and patched there: hold its lock
        # until the last write, so a second run waits instead of racing on the same repo.
        stack.enter_context(cachedir.locked(facts.cache))
        journeys = []
        for entry in entries:
            if (landed := landed_journey(facts.report.entry(entry.name), entry)) is not None:
                journeys.append(landed)  # landed upstream: no reads, never pushed
                continue
            seen = observe.observe_entry(reads, facts, entry, opts)
            built = build.build_entry(seen, facts, opts, stack)
            journeys.append((seen, decide.decide(seen, built, opts, today=facts.today)))
        cost = _cost(gh, facts)
        plans = gate.gate(journeys, facts, opts)
        if dry_run or any(p.action == REFUSED for p in plans):
            return _unwritten(plans, cost, opts, token is not None)
        ctx = execute.Context(gh, opts, facts.login, facts.upstream_url, Cache(facts.cache), say)
        shown = [
            execute.execute(ctx, p).shown(cost) if p.executable else p.shown(cost, [])
            for p in plans
        ]
    total = sum(len(p.writes) for p in shown)
    return Outcome(shown, False, f"DONE: {total} write(s) made.", ExitCode.OK)


def _cost(gh: GitHub, facts: observe.RunFacts) -> dict[str, int]:
    """The run's API reads, and what the check fetched plus what reading the live branches
    added since."""
    report = facts.report
    fetched = upstream_mod.object_bytes(facts.cache) - (report.cache_bytes or 0)
    return {"api_reads": gh.reads, "bytes_fetched": (report.bytes_fetched or 0) + fetched}


def _unwritten(
    plans: list[decide.Plan], cost: dict[str, int], opts: Options, token: bool
) -> Outcome:
    """A dry run, or a run a refusal stopped before its first write: the plans, printed."""
    shown = []
    for plan in plans:
        unverified = []
        if not token:
            unverified.append(f"that a token for {plan.entry.fork_owner} can write (no token used)")
        shown.append(plan.shown(cost, unverified))
    refused = any(p.action == REFUSED for p in plans)
    why = "--dry-run" if opts.dry_run else f"no {tokens.variable()} set"
    head = f"DRY RUN ({why}): every read was made; nothing was written."
    if refused and not opts.dry_run and token:
        head = "REFUSED: a preflight failed, so nothing was written (see reasons)."
    return Outcome(shown, True, head, ExitCode.FAILED if refused else ExitCode.OK)


__all__ = ["Outcome", "PLANNED", "resubmit"]
