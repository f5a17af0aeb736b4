"""Renders the PR body from `templates/pr_body.md`, and the cross-link comment.

Both carry a hidden HTML-comment marker so a re-run finds what this tool wrote. The body is a
pure function of its inputs (no timestamps), so an unchanged input never causes a PATCH.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from pathlib import Path

from patchcarry.manifest import Entry
from patchcarry.resubmit.classify import DETACHED, Classification

TEMPLATE = Path(__file__).resolve().parent.parent / "templates" / "pr_body.md"


def body_marker(entry_name: str) -> str:
    return f"<!-- patchcarry:resubmit entry={entry_name} -->"


# Every cross-link comment starts with this; `scan` looks for it to count a PR as re-submitted.
LINK_PREFIX = "<!-- patchcarry:cross-link "


def link_marker(entry_name: str, superseded: int) -> str:
    return f"{LINK_PREFIX}entry={entry_name} supersedes={superseded} -->"


def has_marker(text: str | None, marker: str) -> bool:
    return bool(text) and marker in str(text)


def normalize(text: str | None) -> str:
    """Compare bodies as GitHub stores them: CRLF folded, trailing blanks ignored."""
    lines = (text or "").replace("\r\n", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines).strip()


def _refs(numbers: Sequence[int]) -> str:
    return ", ".join(f"#{n}" for n in numbers)


def render(
    entry: Entry,
    *,
    superseded: Sequence[Classification],
    check_lines: Sequence[str],
    evidence_markdown: str | None,
    base: str | None = None,
    template: Path = TEMPLATE,
) -> str:
    """The PR body for `entry`."""
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
        parts = ["## Why the original PR closed", ""]
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
    values = {
        "marker": body_marker(entry.name),
        "summary": entry.fix.message or entry.title,
        "resubmission": resubmission,
        "linked": linked,
        "closed_section": closed,
        "checks": "\n".join(f"- {line}" for line in check_lines) or "- (no check results)",
        "evidence": evidence.strip(),
        "tests_box": "x" if entry.tests and entry.include_tests else " ",
    }
    text = string.Template(template.read_text()).safe_substitute(values)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


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
