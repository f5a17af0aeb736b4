"""What the superseded and recorded PRs alone settle for an entry, before its fork is read:
merged (nothing to do) or a decision someone else made (refused without --force). Pure: the
read phase stops reading an entry it settles, and `decide` turns the verdict into the plan."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from patchcarry.manifest import Entry
from patchcarry.resubmit import classify
from patchcarry.resubmit.classify import Classification

_BLOCKING = (classify.MAINTAINER, classify.AUTHOR, classify.UNKNOWN, classify.OPEN)


@dataclasses.dataclass(frozen=True)
class Settled:
    """The entry's outcome without any further read: merged (`merged` set) or refused."""

    reason: str
    merged: Classification | None = None


def history(
    entry: Entry, classes: Mapping[int, Classification]
) -> tuple[Classification | None, tuple[Classification, ...]]:
    """(the recorded PR if still open or merged, every PR this entry supersedes): a recorded PR
    that closed without merge is superseded too."""
    current = classes[entry.pr] if entry.pr else None
    superseded = [classes[n] for n in entry.supersedes]
    if current is not None and current.state not in (classify.OPEN, classify.MERGED):
        superseded.append(current)
    return current, tuple(superseded)


def settle(
    current: Classification | None, superseded: tuple[Classification, ...], *, force: bool
) -> Settled | None:
    """Merged / closed by someone / still open elsewhere; None when the entry goes on
    (`current`, `superseded`: as `history` gives them)."""
    if current is not None and current.state == classify.MERGED:
        return Settled(f"#{current.number} is merged: nothing to do", current)
    merged = [c for c in superseded if c.state == classify.MERGED]
    if merged:
        return Settled(f"#{merged[0].number} was merged: nothing to re-submit", merged[0])
    blocking = [c for c in superseded if c.state in _BLOCKING]
    if blocking and not force:
        return Settled(
            "; ".join(f"#{c.number} is {c.state}" for c in blocking)
            + ": re-submitting would override that decision; pass --force if you mean it"
        )
    return None
