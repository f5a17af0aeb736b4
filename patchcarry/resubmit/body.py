"""The text the tool writes on GitHub: a pure function of its inputs, so an unchanged input
never causes a PATCH. Where the section sits in a body: section.py."""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from patchcarry.github_types import Pull
from patchcarry.manifest import Entry
from patchcarry.pulls.classify import Classification, PullState
from patchcarry.pulls.ownership import link_marker, revision_marker
from patchcarry.resubmit import section as sections
from patchcarry.resubmit.section import section_begin, section_end, section_id

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
TEMPLATE = TEMPLATES / "pr_body.md"
CHECKLIST = TEMPLATES / "pr_checklist.md"


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
            if item.state == PullState.DETACHED
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


def compose(
    entry: Entry,
    existing: Pull | None,
    *,
    superseded: Sequence[Classification],
    check_lines: Sequence[str],
    evidence_markdown: str | None,
    revision: str | None,
) -> tuple[str | None, str, str, str]:
    """(title to set or None, body, the tool's section, why the body is left alone or ""):
    only the tool's section changes; the title only when the manifest's title changed since
    the tool last set it. A body whose section cannot be told apart is left as it is."""
    found = sections.locate(existing.get("body") if existing else None, entry.name)
    old = found.section
    revisions = [*(old.revisions if old else ()), *([revision] if revision else [])]
    history = [*(f"#{c.number}" for c in superseded), "this PR"]
    title: str | None = entry.title
    if existing is not None:
        if old is None:  # first refresh of a PR someone wrote: keep their title
            title = None
        elif old.title_hash == sections.title_hash(entry.title):
            title = None  # unchanged in the manifest: a maintainer's rename stands
        if title is not None and existing.get("title") == title:
            title = None
    made: dict[str, str] = {}

    def make(listed: list[str]) -> str:
        section = made["last"] = render_section(
            entry, superseded=superseded, check_lines=check_lines,
            evidence_markdown=evidence_markdown, base=entry.base_commit, title=entry.title,
            summary=old is not None and old.summary, revisions=listed, history=history,
        )  # fmt: skip
        if existing is None:
            return render_new(entry, section)
        return sections.merge(existing.get("body"), section, entry.name)

    body = sections.fit(
        make, revisions, left_out=sections.earlier(old.text if old else None),
        what=f"{entry.name}'s PR body", current=existing.get("body") if existing else None,
    )  # fmt: skip
    return title, body, made["last"], found.problem
