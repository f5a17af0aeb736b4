"""The tool's section of a PR body, between its markers, whose hash keeps hand edits intact."""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Callable, Sequence

from patchcarry import markers as mark
from patchcarry.errors import FatalError
from patchcarry.resubmit.revisions import MAX_BODY, Revisions, read


def section_end(entry_name: str) -> str:
    return mark.marker("end", f"entry={entry_name}")


def section_begin(
    entry_name: str, *, title: str, summary: bool, section_id: str = "", person: bool = False
) -> str:
    """`person`: the section sits in a person's description, so it says only what that lacks."""
    flag = "yes" if summary else "no"
    around = "around=person" if person else ""
    ident = f"id={section_id}" if section_id else ""
    fields = (f"entry={entry_name}", f"title={title_hash(title)}", f"summary={flag}")
    return mark.marker("begin", *fields, around, ident)


def title_hash(title: str) -> str:
    return hashlib.sha256(title.encode()).hexdigest()[:12]


def section_id(inner: str) -> str:
    """The id in a begin marker: a hash of the section after it (a hand edit no longer matches)."""
    return hashlib.sha256(normalize(inner).encode()).hexdigest()[:16]


# The entry name is escaped where it is used; bodies written before ids existed have none.
_BEGIN_RE = mark.pattern(
    "begin", r"entry={name} title=(?P<title>[0-9a-f]+) "
    r"summary=(?P<summary>yes|no)(?P<person> around=person)?(?: id=(?P<id>[0-9a-f]{{16}}))?",
)  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Section:
    """This tool's section as found in a body: where, and what it recorded."""

    start: int
    end: int  # index just past the end marker
    title_hash: str
    summary: bool
    revisions: Revisions  # what the tool pushed, as its list says
    text: str
    person: bool = False  # the body around it is a person's description


@dataclasses.dataclass(frozen=True)
class Found:
    """This tool's section in a body, and why the body must be left as it is (if it must)."""

    section: Section | None
    problem: str = ""


def _section(text: str, begin: re.Match[str], end: int, entry_name: str) -> Section:
    stop = end + len(section_end(entry_name))
    inner = text[begin.start() : stop]
    summary = begin.group("summary") == "yes"
    person = begin.group("person") is not None
    return Section(begin.start(), stop, begin.group("title"), summary, read(inner), inner, person)


def _positions(text: str, needle: str) -> list[int]:
    return [m.start() for m in re.finditer(re.escape(needle), text)]


def _adjacent(begins: Sequence[int], ends: Sequence[int]) -> list[tuple[int, int]]:
    """The (begin, end) marker positions with no other marker between them: they never
    overlap, so each character is hashed at most once (every pair took 13 s on 784 markers)."""
    events = sorted([(p, 0) for p in begins] + [(p, 1) for p in ends])
    pairs = zip(events, events[1:], strict=False)
    return [(a, b) for (a, ka), (b, kb) in pairs if (ka, kb) == (0, 1)]


def defuse(text: str) -> str:
    """Outside text (a commit message) with each section marker's colon an HTML entity."""
    for marker in _MARKER_STARTS:
        text = text.replace(marker, marker.replace(":", "&#58;", 1))
    return text


_MARKER_STARTS = (mark.start("begin"), mark.start("end"))


def locate(body: str | None, entry_name: str) -> Found:
    """The one begin/end pair of `entry_name` whose id matches the text between them; no
    marker: no section; anything else leaves the body alone, and `problem` says why."""
    text = body or ""
    begins = _positions(text, mark.start("begin", f"entry={entry_name}"))
    ends = _positions(text, section_end(entry_name))
    if not begins and not ends:
        return Found(None)
    strict = re.compile(_BEGIN_RE.format(name=re.escape(entry_name)))
    matches = [m for m in (strict.match(text, pos) for pos in begins) if m is not None]
    by_start = {m.start(): m for m in matches if m.group("id")}
    verified = [
        (m, end) for m, end in ((by_start.get(b), e) for b, e in _adjacent(begins, ends))
        if m is not None and end >= m.end() and section_id(text[m.end() : end]) == m.group("id")
    ]  # fmt: skip
    if len(verified) == 1:
        return Found(_section(text, *verified[0], entry_name))
    markers = f"`{mark.start('begin', f'entry={entry_name}')}… -->` … `{section_end(entry_name)}`"
    if len(verified) > 1:
        return Found(None, f"the body holds {len(verified)} copies of the tool's section: "
                     f"left as is; delete all but one (markers and what is between), "
                     "then re-run")  # fmt: skip
    if len(begins) == 1 and len(ends) == 1 and matches and ends[0] >= matches[0].end():
        found = _section(text, matches[0], ends[0], entry_name)
        if not matches[0].group("id"):
            return Found(found)  # written before ids: the body's only pair
        return Found(
            found, "the tool's section was edited by hand since its last publication: kept as is "
            "(not reverted); to let the tool write it again, move what should stay outside "
            f"its markers ({markers}), delete the section, then re-run",
        )  # fmt: skip
    if len(begins) > len(ends):
        what = "an end marker is missing"
    elif len(ends) > len(begins):
        what = "a begin marker is missing"
    else:
        what = "its markers are damaged, copied or out of order"
    return Found(
        None, f"the body holds {len(begins)} begin and {len(ends)} end marker(s) of the tool's "
        f"section ({what}): left as is; repair it by hand so exactly one pair {markers} "
        "remains (or delete every marker: the tool then appends a fresh section), then re-run",
    )  # fmt: skip


def outside(body: str | None, section: Section | None) -> str:
    """What people wrote: the body without the tool's section."""
    text = body or ""
    return text if section is None else text[: section.start] + text[section.end :]


def find_section(body: str | None, entry_name: str) -> Section | None:
    return locate(body, entry_name).section


def merge(existing: str | None, section: str, entry_name: str) -> str:
    """`existing` with the tool's section replaced by `section`, or appended; all else kept."""
    text = existing or ""
    found = locate(text, entry_name)
    if found.problem:
        return text
    if found.section is not None:
        return text[: found.section.start] + section + text[found.section.end :]
    if not text.strip():
        return section
    if text.endswith(("\n\n", "\r\n\r\n")):
        separator = ""
    else:
        separator = "\r\n" if text.endswith("\r\n") else ("\n" if text.endswith("\n") else "\n\n")
    return text + separator + section


def normalize(text: str | None) -> str:
    """Compare bodies as GitHub stores them: CRLF folded, trailing blanks ignored."""
    lines = (text or "").replace("\r\n", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines).strip()


class TooLong(FatalError):
    """A body GitHub would refuse even with no revision listed."""


def fit(
    make: Callable[[Revisions], str], revisions: Revisions, *, what: str = "the PR body",
    current: str | None = None, limit: int = MAX_BODY,
) -> str:  # fmt: skip
    """`make(listed)` for the longest tail of `revisions` within `limit`; `current` if same."""
    while True:
        body = make(revisions)
        if len(body) <= limit or normalize(body) == normalize(current):
            return body
        if not revisions.listed:
            raise TooLong(
                f"{what} would be {len(body):,} characters, over GitHub's {limit:,} even with "
                'no revision listed (GitHub answers 422 "body is too long"): shorten the '
                "text outside the tool's section, then re-run"
            )
        revisions = Revisions(revisions.listed[1:], revisions.earlier + 1)
