"""GitHub holds a PR body to 65,536 characters (422 "body is too long (maximum is 65536
characters)"), and the tool's revision list grows by one line with every push. The newest
revisions stay listed and the oldest give way, counted in one line (each still has its
revision comment on the PR); a body that cannot fit even with no revision listed is refused
before any write, never sent to be refused half-way through a run."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from patchcarry.errors import FatalError
from patchcarry.resubmit.body import normalize

MAX_BODY = 65_536


class TooLong(FatalError):
    """A body GitHub would refuse even with no revision listed."""


_EARLIER = re.compile(r"^- \((\d+) earlier revisions? not listed", re.MULTILINE)


def earlier(inner: str | None) -> int:
    """How many revisions an existing section already left out of its list."""
    found = _EARLIER.search(inner or "")
    return int(found.group(1)) if found else 0


def _omitted(count: int) -> str:
    plural = "s" if count != 1 else ""
    return (
        f"({count} earlier revision{plural} not listed: GitHub holds a PR body to "
        f"{MAX_BODY:,} characters; each has its revision comment on this PR)"
    )


def fit(
    make: Callable[[list[str]], str],
    revisions: Sequence[str],
    *,
    left_out: int = 0,
    what: str = "the PR body",
    current: str | None = None,
    limit: int = MAX_BODY,
) -> str:
    """`make(listed)` for the longest tail of `revisions` whose body fits in `limit`
    characters (an "N earlier revisions" line first when any are left out). A body equal to
    `current` (what the PR holds: nothing to write) is returned whatever its length."""
    kept = list(revisions)
    dropped = left_out
    while True:
        body = make(([_omitted(dropped)] if dropped else []) + kept)
        if len(body) <= limit or normalize(body) == normalize(current):
            return body
        if not kept:
            raise TooLong(
                f"{what} would be {len(body):,} characters, over GitHub's {limit:,} even with "
                'no revision listed (GitHub answers 422 "body is too long"): shorten the '
                "text outside the tool's section, then re-run"
            )
        kept.pop(0)
        dropped += 1
