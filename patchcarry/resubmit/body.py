"""The PR body: this tool owns only its section, between its own markers; the rest of the
body (a hand-written description, upstream's checklist, every box a person ticked) is kept byte
for byte. Also the cross-link comment and the revision comment.

The section's begin marker records what the tool last published that is not on the branch:
the hash of the title it set (so a maintainer's rename is never undone; the title changes only
when the manifest's title did), whether the section carries the description (only sections
written before the description moved out of it do), and an id: the hash of the section's own
text. The section is edited only when the body holds exactly one begin/end pair whose id
matches what is between them; a marker quoted in hand-written text is not such a pair, and a
body with a marker missing or copied, or a section edited by hand, is left as it is and the
plan says why and how to repair it. The section is a pure function of its inputs (no
timestamps beyond the revision list), so an unchanged input never causes a PATCH.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import string
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from patchcarry.manifest import Entry
from patchcarry.resubmit.classify import DETACHED, Classification

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
TEMPLATE = TEMPLATES / "pr_body.md"
CHECKLIST = TEMPLATES / "pr_checklist.md"


def section_end(entry_name: str) -> str:
    return f"<!-- patchcarry:end entry={entry_name} -->"


def section_begin(entry_name: str, *, title: str, summary: bool, section_id: str = "") -> str:
    flag = "yes" if summary else "no"
    ident = f" id={section_id}" if section_id else ""
    return (
        f"<!-- patchcarry:begin entry={entry_name} title={title_hash(title)} summary={flag}"
        f"{ident} -->"
    )


def title_hash(title: str) -> str:
    return hashlib.sha256(title.encode()).hexdigest()[:12]


def section_id(inner: str) -> str:
    """The id in a begin marker: a hash of the section's text after it, as GitHub may store
    it (CRLF, trailing blanks). A quoted marker is not followed by that text, and a section
    edited by hand no longer hashes to it."""
    return hashlib.sha256(normalize(inner).encode()).hexdigest()[:16]


# One anchored pattern per marker; the entry name is escaped where it is used. Bodies written
# before ids existed have none (such a section is taken when it is the body's only pair).
_BEGIN_RE = (
    r"<!-- patchcarry:begin entry={name} title=(?P<title>[0-9a-f]+) "
    r"summary=(?P<summary>yes|no)(?: id=(?P<id>[0-9a-f]{{16}}))? -->"
)
_REVISION_RE = re.compile(r"^- (?P<line>\d{4}-\d{2}-\d{2} .*?)\s*$", re.MULTILINE)


@dataclasses.dataclass(frozen=True)
class Section:
    """This tool's section as found in a body: where, and what it recorded."""

    start: int
    end: int  # index just past the end marker
    title_hash: str
    summary: bool
    revisions: tuple[str, ...]  # "2026-08-10 `abc1234` fast-forward ..." lines, oldest first
    text: str


@dataclasses.dataclass(frozen=True)
class Found:
    """What a body holds of this tool's section: the section, and when the body must be left
    as it is, why (with how to repair it)."""

    section: Section | None
    problem: str = ""


def _section(text: str, begin: re.Match[str], end: int, entry_name: str) -> Section:
    stop = end + len(section_end(entry_name))
    inner = text[begin.start() : stop]
    revisions = tuple(m.group("line") for m in _REVISION_RE.finditer(inner.replace("\r\n", "\n")))
    summary = begin.group("summary") == "yes"
    return Section(begin.start(), stop, begin.group("title"), summary, revisions, inner)


def _positions(text: str, needle: str) -> list[int]:
    return [m.start() for m in re.finditer(re.escape(needle), text)]


def locate(body: str | None, entry_name: str) -> Found:
    """The tool's section of `entry_name` in `body`: the one begin/end pair whose id matches
    the text between them (a quoted marker never does). No marker at all: no section (one is
    appended). Anything else (a marker deleted or copied, a section edited by hand since the
    tool wrote it) leaves the body alone, and `problem` says why and how to repair it."""
    text = body or ""
    begins = _positions(text, f"<!-- patchcarry:begin entry={entry_name} ")
    ends = _positions(text, section_end(entry_name))
    if not begins and not ends:
        return Found(None)
    strict = re.compile(_BEGIN_RE.format(name=re.escape(entry_name)))
    matches = [m for m in (strict.match(text, pos) for pos in begins) if m is not None]
    verified = [
        (m, end)
        for m in matches
        if m.group("id")
        for end in ends
        if end >= m.end() and section_id(text[m.end() : end]) == m.group("id")
    ]
    if len(verified) == 1:
        return Found(_section(text, *verified[0], entry_name))
    markers = f"`<!-- patchcarry:begin entry={entry_name} … -->` … `{section_end(entry_name)}`"
    if len(verified) > 1:
        return Found(None, f"the body holds {len(verified)} copies of the tool's section: "
                     f"left as is; delete all but one (markers and what is between), "
                     "then re-run")  # fmt: skip
    if len(begins) == 1 and len(ends) == 1 and matches and ends[0] >= matches[0].end():
        found = _section(text, matches[0], ends[0], entry_name)
        if not matches[0].group("id"):
            return Found(found)  # written before ids: the body's only pair
        return Found(
            found,
            "the tool's section was edited by hand since its last publication: kept as is "
            "(not reverted); to let the tool write it again, move what should stay outside "
            f"its markers ({markers}), delete the section, then re-run",
        )
    if len(begins) > len(ends):
        what = "an end marker is missing"
    elif len(ends) > len(begins):
        what = "a begin marker is missing"
    else:
        what = "its markers are damaged, copied or out of order"
    return Found(
        None,
        f"the body holds {len(begins)} begin and {len(ends)} end marker(s) of the tool's "
        f"section ({what}): left as is; repair it by hand so exactly one pair {markers} "
        "remains (or delete every marker: the tool then appends a fresh section), then re-run",
    )


def find_section(body: str | None, entry_name: str) -> Section | None:
    return locate(body, entry_name).section


def merge(existing: str | None, section: str, entry_name: str) -> str:
    """`existing` with this tool's section replaced by `section` (or appended after the
    text already there); every byte outside the section is kept. A body `locate` finds a
    problem in is returned as it is."""
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


# Every cross-link comment starts with this; `scan` looks for it to count a PR as re-submitted.
LINK_PREFIX = "<!-- patchcarry:cross-link "


def link_marker(entry_name: str, superseded: int) -> str:
    return f"{LINK_PREFIX}entry={entry_name} supersedes={superseded} -->"


def revision_marker(entry_name: str, head: str) -> str:
    return f"<!-- patchcarry:revision entry={entry_name} head={head} -->"


def has_marker(text: str | None, marker: str) -> bool:
    return bool(text) and marker in str(text)


def normalize(text: str | None) -> str:
    """Compare bodies as GitHub stores them: CRLF folded, trailing blanks ignored."""
    lines = (text or "").replace("\r\n", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines).strip()


def _refs(numbers: Sequence[int]) -> str:
    return ", ".join(f"#{n}" for n in numbers)


def render_section(
    entry: Entry,
    *,
    superseded: Sequence[Classification],
    check_lines: Sequence[str],
    evidence_markdown: str | None,
    base: str | None = None,
    title: str | None = None,
    summary: bool = False,
    revisions: Sequence[str] = (),
    history: Sequence[str] = (),
    template: Path = TEMPLATE,
) -> str:
    """This tool's section of `entry`'s PR body, markers included. `title` is the title the
    tool stands behind (recorded as a hash); `summary` puts the patch's description in it
    (off when a person wrote the description); `history` lists earlier PRs then this one."""
    numbers = [c.number for c in superseded]
    if numbers:
        resubmission = (
            f"Re-submission of {_refs(numbers)} from an attached fork ({entry.fork}), "
            f"on `{entry.base_branch}` at {(base or entry.base_commit)[:7]}."
        )
        linked = f"This PR re-submits {_refs(numbers)}."
    else:
        resubmission, linked = "", ""
    closed = _closed_section(superseded)
    evidence = evidence_markdown or (
        "No evidence file was given (`--evidence PATH`), so this body states no measured numbers."
    )
    trail = " → ".join(history)
    lines = ([f"PRs: {trail}"] if trail else []) + [f"- {line}" for line in revisions]
    placeholder = "\x00begin\x00"
    values = {
        "begin": placeholder,
        "end": section_end(entry.name),
        "summary": render_description(entry) if summary else "",
        "resubmission": resubmission,
        "linked": linked,
        "closed_section": closed,
        "checks": "\n".join(f"- {line}" for line in check_lines) or "- (no check results)",
        "evidence": evidence.strip(),
        "revisions": "\n".join(lines) or "- (none pushed by this tool yet)",
    }
    text = string.Template(template.read_text()).safe_substitute(values)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    inner = text[text.index(placeholder) + len(placeholder) : text.rindex(values["end"])]
    begin = section_begin(
        entry.name, title=title or entry.title, summary=summary, section_id=section_id(inner)
    )
    return text.replace(placeholder, begin, 1)


def _closed_section(superseded: Sequence[Classification]) -> str:
    """Why each superseded PR closed, with its evidence ("" when none is superseded)."""
    if not superseded:
        return ""
    parts = ["### Why the original PR closed", ""]
    for item in superseded:
        why = (
            "it was auto-closed by GitHub when its fork left the fork network, not withdrawn"
            if item.state == DETACHED
            else f"state: {item.state}"
        )
        parts.append(f"#{item.number}: {why}. Evidence:")
        parts.extend(f"- {line}" for line in item.evidence)
        parts.append("")
    return "\n".join(parts) + "\n"


def render_description(entry: Entry) -> str:
    """The description of a PR the tool opens: outside its section, so a maintainer's edit
    of it stands (sections written before held it inside: `summary=yes`)."""
    return f"# What does this PR do?\n\n{_summary(entry)}"


def _summary(entry: Entry) -> str:
    """The fix's message; for a series of fix commits, each one's subject and message."""
    if len(entry.fixes) == 1:
        return entry.fix.message or entry.title
    parts = [f"**{f.subject}**\n\n{f.message}".strip() for f in entry.fixes]
    return f"{entry.title}, in {len(parts)} commits:\n\n" + "\n\n".join(parts)


def render_checklist(entry: Entry, template: Path = CHECKLIST) -> str:
    """Upstream's checklist: written once when the PR is created, then left to people."""
    box = "x" if entry.tests and entry.include_tests else " "
    return string.Template(template.read_text()).safe_substitute({"tests_box": box}).strip()


def render(entry: Entry, **kwargs: Any) -> str:
    """The whole body of a PR this tool opens: the description, its section, then upstream's
    checklist."""
    section = render_section(entry, **kwargs)
    return render_new(entry, section)


def render_new(entry: Entry, section: str) -> str:
    """A new PR's body around the tool's `section`: the rest is people's from then on."""
    return f"{render_description(entry)}\n\n{section}\n\n{render_checklist(entry)}\n"


def revision_comment(entry: Entry, *, head: str, old: str | None, kind: str, diff: str) -> str:
    """The one comment per changed revision: what changed since the previous head."""
    since = f" since `{old[:12]}`" if old else ""
    shown = diff if len(diff) < 60000 else diff[:60000] + "\n... (cut at 60000 characters)"
    # CommonMark closes a fence only with a run at least as long: one longer than any inside
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall("`+", shown)), default=0))
    return (
        f"{revision_marker(entry.name, head)}\n"
        f"New revision `{head[:12]}` ({kind}){since}. Upstream CI needs a maintainer's "
        f"`/ok to test {head}` for this head.\n\n{fence}diff\n{shown.rstrip()}\n{fence}"
    )


def cross_link(
    entry: Entry,
    *,
    superseded: int,
    new_pr: int,
    new_url: str,
    fork: str | None = None,
    detached: bool = True,
) -> str:
    """The comment left once on a superseded PR (the detachment sentence only when it was)."""
    why = (
        "This PR was closed automatically when its fork left the fork network; it is "
        if detached
        else "This change is "
    )
    return (
        f"{link_marker(entry.name, superseded)}\n"
        f"{why}re-submitted as #{new_pr} ({new_url}) from an attached fork ({fork or entry.fork})."
    )
