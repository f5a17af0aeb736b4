"""A fix that has landed upstream is never pushed again: the plan for such an entry writes
nothing and says where it landed and what to do (retire it). Decided from the check report
alone, before any of the entry's reads or writes."""

from __future__ import annotations

from patchcarry.check.render import commit_words
from patchcarry.check.report import EntryResult
from patchcarry.manifest import Entry
from patchcarry.resubmit.plan import MERGED, EntryPlan


def landed_plan(result: EntryResult, entry: Entry, lines: list[str]) -> EntryPlan | None:
    """The plan for `entry` when check found its fix landed (None otherwise): no write."""
    landing = result.landing
    if landing is None or not landing.landed:
        return None
    target = f"{entry.upstream} {entry.base_branch} <- {entry.fork}:{entry.head_branch}"
    plan = EntryPlan(entry.name, target, action=MERGED)
    plan.facts.extend(f"check: {x}" for x in lines)
    plan.pr = entry.pr
    plan.reason = (
        f"{landing.verdict} upstream as {commit_words(landing)}: nothing is pushed; {landing.next}"
    )
    return plan
