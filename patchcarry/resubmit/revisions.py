"""The section's list of what the tool pushed, as data: one anchored render/read pair."""

from __future__ import annotations

import itertools
import re
from typing import NamedTuple

from patchcarry.git.sha import short

MAX_BODY = 65_536  # GitHub's limit on a PR body, in characters

_LINE = re.compile(r"^- (?P<date>\d{4}-\d{2}-\d{2}) `(?P<head>[0-9a-f]{7,40})` (?P<kind>[a-z-]+)"
                   r"(?: on `(?P<on>[0-9a-f]{7,40})`)?[ \t]*$")  # fmt: skip
_EARLIER = re.compile(r"^- \((?P<count>\d+) earlier revisions? not listed: ")


class Revision(NamedTuple):
    """One push of the branch: when, its head, what it did (`BranchKind`), on which head."""

    date: str
    head: str
    kind: str
    on: str = ""  # the live head it was pushed on ("" for a new branch)

    def line(self) -> str:
        on = f" on `{short(self.on)}`" if self.on else ""
        return f"{self.date} `{short(self.head)}` {self.kind}{on}"


class Revisions(NamedTuple):
    """The revisions listed, oldest first, and how many older ones are left out."""

    listed: tuple[Revision, ...] = ()
    earlier: int = 0

    def lines(self) -> list[str]:
        plural = "s" * (self.earlier != 1)
        left_out = f"- ({self.earlier} earlier revision{plural} not listed: GitHub holds a PR "
        left_out += f"body to {MAX_BODY:,} characters; each has its revision comment on this PR)"
        return [left_out] * bool(self.earlier) + [f"- {r.line()}" for r in self.listed]


def read(section: str) -> Revisions:
    """The list right above the section's end marker, read upwards (elsewhere: someone's text)."""
    above_end = section.replace("\r\n", "\n").rstrip().split("\n")[-2::-1]
    block = list(itertools.takewhile(lambda line: _LINE.match(line) or _EARLIER.match(line),
                                     above_end))[::-1]  # fmt: skip
    found = [Revision(m["date"], m["head"], m["kind"], m["on"] or "")
             for m in map(_LINE.match, block) if m]  # fmt: skip
    left_out = [int(m["count"]) for m in map(_EARLIER.match, block) if m]
    return Revisions(tuple(found), sum(left_out[:1]))
