"""A live PR whose head already holds the carried fix is left as its author left it.

#6339 and #6338 are byte-identical re-submissions waiting for a maintainer's vetting: every
push to their head starts the CI vetting over (copy-pr-bot's `/ok to test <sha>`, which only
upstream's PR vetters can give), and every edit of a hand-written description is a write on
someone else's text. So when an open PR's head holds every fix patch already (or an earlier
revision of it: the same code, only comments differ), what else the tool could add (the test
patches, its own revision of the fix, its section of the body) waits for an explicit
`--update-live`; the plan says what that would push and what it costs.
"""

from __future__ import annotations

import dataclasses

from patchcarry.manifest import Entry
from patchcarry.resubmit import body as bodies
from patchcarry.resubmit.branch import FAST_FORWARD, UNCHANGED, BranchPlan

FLAG = "--update-live"


def keep_live_head(decided: BranchPlan, entry: Entry, *, live_pr: bool, opt_in: bool) -> BranchPlan:
    """`decided` unchanged, or (an open PR whose head holds the fix, no `--update-live`) an
    `unchanged` plan naming what is held back and what pushing it would cost."""
    if not live_pr or opt_in:
        return decided
    if decided.rebuild_holds_fix:  # the tool's own publication: a rebuild is a force-push
        reason = (
            f"the PR's head {(decided.live or '')[:12]} is what this tool published and already "
            f"holds the carried fix; nothing is pushed. Held back until you pass {FLAG}: a "
            f"rebuild of the branch that adds {', '.join(decided.added)}. Its cost: the PR's "
            "head changes, so its CI vetting starts over; only one of upstream's PR vetters "
            "(a maintainer) can re-vet it, by commenting `/ok to test <new head>`"
        )
        return dataclasses.replace(
            decided, kind=UNCHANGED, reason=reason, target=None, added=[], held=decided.added
        )
    if decided.kind != FAST_FORWARD or decided.target is None:
        return decided
    fixes = {f.name for f in entry.fixes}
    if decided.revises is None and fixes & set(decided.added):
        return decided  # the head lacks the fix's code: carrying it is the job itself
    if decided.revises is not None:
        what = (
            f"an earlier revision of the fix ({decided.revises.why}) in {decided.revises.old[:12]}"
        )
    else:
        what = "every fix patch"
    held = ", ".join(decided.added)
    live = decided.live or ""
    reason = (
        f"the PR's head {live[:12]} already holds the carried fix ({what}); nothing is pushed. "
        f"Held back until you pass {FLAG}: one commit {decided.target[:12]} on top that adds "
        f"{held}. Its cost: the PR's head changes, so its CI vetting starts over; only one of "
        f"upstream's PR vetters (a maintainer) can re-vet it, by commenting "
        f"`/ok to test {decided.target}`"
    )
    return dataclasses.replace(
        decided, kind=UNCHANGED, reason=reason, target=None, added=[], held=decided.added
    )


def keep_body(
    existing_body: str | None, entry: Entry, *, ours: bool, pushing: bool, opt_in: bool
) -> str:
    """Why the PR's description is left alone ("" when the tool may write its section): on
    a head the tool did not publish (`ours` False), a body with no section of this tool is
    its author's text, and with nothing pushed there is no revision to record in it."""
    if pushing or opt_in or ours or bodies.locate(existing_body, entry.name).section is not None:
        return ""
    return (
        f"body: left as its author wrote it (no patchcarry section in it); {FLAG} adds the "
        "tool's section"
    )
