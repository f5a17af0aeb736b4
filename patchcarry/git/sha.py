"""A commit's id as the tool's own value: `Sha` is the full hex name git gave, `short` its
one short form (every message, PR body and report cuts a sha the same way, here)."""

from __future__ import annotations

SHORT = 12  # long enough to stay unique in upstream's history for years, short enough to read


class Sha(str):
    """A full commit id (what `git rev-parse` prints); `.short` is how people see it."""

    __slots__ = ()

    @property
    def short(self) -> str:
        return short(self)


def short(rev: str) -> str:
    """`rev`'s short form: a sha cut to `SHORT`, anything else (a label, a ref) as is when
    short already."""
    return rev[:SHORT]
