"""A commit's id as the tool's own value: `Sha`, and `short`, the one short form shown."""

from __future__ import annotations

SHORT = 12  # unique in upstream's history for years, short enough to read


class Sha(str):
    __slots__ = ()

    @property
    def short(self) -> str:
        return short(self)


def short(rev: str) -> str:
    return rev[:SHORT]
