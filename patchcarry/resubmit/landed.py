"""A fix that has landed upstream is never pushed again: its journey stops at the check
report, with no read and no write, and its plan says where it landed and what to do (retire
it). Decided from the check report alone."""

from __future__ import annotations

from patchcarry.check import render
from patchcarry.check.report import EntryResult
from patchcarry.manifest import Entry
from patchcarry.resubmit.decide import Plan
from patchcarry.resubmit.observe import Observed


def landed_journey(result: EntryResult, entry: Entry) -> tuple[Observed, Plan] | None:
    """The (observed, plan) of `entry` when check found its fix landed (None otherwise): a
    plan with nothing to write, whose reason names the landing commit."""
    landing = result.landing
    if landing is None or not landing.landed:
        return None
    lines = tuple(render.sentences(result, entry))
    reason = (
        f"{landing.verdict} upstream as {render.commit_words(landing)}: nothing is pushed; "
        f"{landing.next}"
    )
    facts = tuple(f"check: {line}" for line in lines)
    return Observed(entry, lines, True), Plan(entry, facts, pr=entry.pr, merged=reason)
