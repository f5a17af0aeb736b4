"""The PR body: this tool owns only its section, between its own markers; the rest of the
body (a hand-written description, upstream's checklist, every box a person ticked) is kept byte
for byte. Also the cross-link comment and the revision comment.

The section's begin marker records what the tool last published that is not on the branch:
the hash of the title it set (so a maintainer's rename is never undone; the title changes only
when the manifest's title did) and whether the section carries the description. The section
is a pure function of its inputs (no timestamps beyond the revision list), so an unchanged
input never causes a PATCH.
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


def body_marker(entry_name: str) -> str:
    """The marker of bodies written before sections existed (kept as hand-written text)."""
    return f"<!-- patchcarry:resubmit entry={entry_name} -->"


def section_end(entry_name: str) -> str:
    return f"<!-- patchcarry:end entry={entry_name} -->"


def section_begin(entry_name: str, *, title: str, summary: bool) -> str:
    flag = "yes" if summary else "no"
    return f"<!-- patchcarry:begin entry={entry_name} title={title_hash(title)} summary={flag} -->"


def title_hash(title: str) -> str:
    return hashlib.sha256(title.encode()).hexdigest()[:12]


# One anchored pattern per marker; the entry name is escaped where it is used.
_BEGIN_RE = (
    r"<!-- patchcarry:begin entry={name} title=(?P<title>[0-9a-f]+) summary=(?P<summary>yes|no) -->"
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


def find_section(body: str | None, entry_name: str) -> Section | None:
    text = body or ""
    begin = re.search(_BEGIN_RE.format(name=re.escape(entry_name)), text)
    if begin is None:
        return None
    end_marker = section_end(entry_name)
    end = text.find(end_marker, begin.end())
    if end < 0:
        return None
    inner = text[begin.start() : end + len(end_marker)]
    revisions = tuple(m.group("line") for m in _REVISION_RE.finditer(inner.replace("\r\n", "\n")))
    return Section(
        begin.start(),
        end + len(end_marker),
        begin.group("title"),
        begin.group("summary") == "yes",
        revisions,
        inner,
    )


def merge(existing: str | None, section: str, entry_name: str) -> str:
    """`existing` with this tool's section replaced by `section` (or appended after the
    text already there); every byte outside the section is kept."""
    text = existing or ""
    found = find_section(text, entry_name)
    if found is not None:
        return text[: found.start] + section + text[found.end :]
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
    summary: bool = True,
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
    closed = ""
    if superseded:
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
        closed = "\n".join(parts) + "\n"
    evidence = evidence_markdown or (
        "No evidence file was given (`--evidence PATH`), so this body states no measured numbers."
    )
    trail = " → ".join(history)
    lines = ([f"PRs: {trail}"] if trail else []) + [f"- {line}" for line in revisions]
    values = {
        "begin": section_begin(entry.name, title=title or entry.title, summary=summary),
        "end": section_end(entry.name),
        "summary": f"# What does this PR do?\n\n{entry.fix.message or entry.title}"
        if summary
        else "",
        "resubmission": resubmission,
        "linked": linked,
        "closed_section": closed,
        "checks": "\n".join(f"- {line}" for line in check_lines) or "- (no check results)",
        "evidence": evidence.strip(),
        "revisions": "\n".join(lines) or "- (none pushed by this tool yet)",
    }
    text = string.Template(template.read_text()).safe_substitute(values)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def render_checklist(entry: Entry, template: Path = CHECKLIST) -> str:
    """Upstream's checklist: written once when the PR is created, then left to people."""
    box = "x" if entry.tests and entry.include_tests else " "
    return string.Template(template.read_text()).safe_substitute({"tests_box": box}).strip()


def render(entry: Entry, **kwargs: Any) -> str:
    """The whole body of a PR this tool opens: its section, then upstream's checklist."""
    section = render_section(entry, **kwargs)
    return section + "\n\n" + render_checklist(entry) + "\n"


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
