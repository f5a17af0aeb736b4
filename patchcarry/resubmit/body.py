"""The text the tool writes on GitHub: a pure function of its inputs, so an unchanged input
never causes a PATCH. Where the section sits in a body: section.py."""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from patchcarry import carried_tests
from patchcarry import pr_template as templates
from patchcarry.github_types import Pull
from patchcarry.manifest import Entry
from patchcarry.measure.impact import Impact
from patchcarry.pulls.classify import Classification, PullState
from patchcarry.pulls.ownership import link_marker, revision_marker
from patchcarry.resubmit import section as sections
from patchcarry.resubmit.section import section_begin, section_end, section_id

TEMPLATE = Path(__file__).resolve().parent.parent / "templates" / "pr_body.md"


# A byte figure as people write one ("0.27 GB", "131 kB", "268,435,456 B"), or a heading
# that says the description already measures something.
_FIGURE_RE = re.compile(
    r"\b\d[\d,]*(?:\.\d+)?\s?(?:[kKMGT]i?B|B)\b|^#*\s*measured impact\b",
    re.IGNORECASE | re.MULTILINE,
)


def mentions(text: str, number: int) -> bool:
    """Whether `text` refers to PR #number (not #numberN)."""
    return re.search(rf"#{number}(?!\d)", text) is not None


def states_impact(text: str) -> bool:
    """Whether a description already states a measured impact (a byte figure or its heading)."""
    return _FIGURE_RE.search(text) is not None


def render_section(
    entry: Entry,
    *,
    superseded: Sequence[Classification],
    check_lines: Sequence[str],
    impact: Impact | None,
    test_command: str | None = None,
    handwritten: str | None = None,
    base: str | None = None,
    title: str | None = None,
    summary: bool = False,
    revisions: Sequence[str] = (),
    history: Sequence[str] = (),
    template: Path = TEMPLATE,
) -> str:
    """This tool's section of `entry`'s PR body, markers included. `title` is the title the
    tool stands behind (recorded as a hash); `summary` puts the patch's description in it
    (off when a person wrote the description); `history` lists earlier PRs then this one.
    `handwritten`: the description a person wrote around the section (None: the tool wrote
    the body); the section then adds only what it lacks: no re-submission line when it names
    the superseded PRs, no figures when it states an impact (only where the evidence lives
    and how to reproduce it)."""
    said = handwritten or ""
    numbers = [c.number for c in superseded if not mentions(said, c.number)]
    resubmission = _resubmission(
        entry, [c for c in superseded if c.number in numbers], base or entry.base_commit
    )
    trail = " → ".join(history)
    lines = ([f"PRs: {trail}"] if trail else []) + [f"- {line}" for line in revisions]
    placeholder = "\x00begin\x00"
    values = {
        "begin": placeholder,
        "end": section_end(entry.name),
        "summary": render_description(entry) if summary else "",
        "resubmission": resubmission,
        "impact": "" if impact and states_impact(said) else _impact(impact),
        "reproduce": _reproduce(test_command, impact if states_impact(said) else None),
        "checks": "\n".join(f"- {line}" for line in check_lines) or "- (no check results)",
        "revisions": "\n".join(lines) or "- (none pushed by this tool yet)",
    }
    values.update({k: sections.defuse(v) for k, v in values.items() if k not in _OWN})
    text = string.Template(template.read_text()).safe_substitute(values)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    inner = text[text.index(placeholder) + len(placeholder) : text.rindex(values["end"])]
    begin = section_begin(
        entry.name, title=title or entry.title, summary=summary, section_id=section_id(inner),
        person=handwritten is not None,
    )  # fmt: skip
    return text.replace(placeholder, begin, 1)


_OWN = ("begin", "end")  # the section's own markers; every other value may hold outside text


def _resubmission(entry: Entry, superseded: Sequence[Classification], base: str) -> str:
    """One line per superseded PR: what this PR is and why the original closed; how that
    was told from a withdrawal, folded away."""
    if not superseded:
        return ""
    parts = []
    for item in superseded:
        why = (
            "GitHub closed it when its fork left the fork network; it was not withdrawn"
            if item.state == PullState.DETACHED
            else f"its state: {item.state}"
        )
        parts.append(
            f"Re-submission of #{item.number} ({why}), from an attached fork, {entry.fork}, "
            f"on `{entry.base_branch}` at {base[:7]}."
        )
        if item.evidence:
            facts = "\n".join(f"- {line}" for line in item.evidence)
            parts.append(
                f"<details><summary>How #{item.number}'s close was read</summary>\n\n"
                f"{facts}\n\n</details>"
            )
    return "\n\n".join(parts)


def _impact(impact: Impact | None) -> str:
    if impact is None:
        return (
            "### Measured impact\n\nNo evidence file was given (`--evidence PATH`), so this "
            "body states no measured numbers."
        )
    return f"### Measured impact\n\n{impact.markdown().strip()}"


def _reproduce(test_command: str | None, impact: Impact | None) -> str:
    """How a reviewer checks it: the carried test's one line; with `impact` (a description
    that states the figures itself), where the measurement lives, without its numbers."""
    lines = [f"- The test this PR adds: `{test_command}`"] if test_command else []
    lines += [f"- {s.sentence()}" for s in (impact.sources if impact else ())]
    return "### How to reproduce\n\n" + "\n".join(lines) if lines else ""


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


def carries_unit_tests(entry: Entry) -> bool:
    """Whether the PR adds unit tests: test patches it carries that add a test."""
    return entry.include_tests and carried_tests.command(entry.tests) is not None


def render(entry: Entry, *, pr_template: str | None = None, **kwargs: Any) -> str:
    """The whole body of a PR this tool opens: upstream's template, the description and the
    tool's section under its "What does this PR do?" heading."""
    section = render_section(entry, **kwargs)
    return render_new(entry, section, pr_template)


def render_new(entry: Entry, section: str, pr_template: str | None = None) -> str:
    """A new PR's body around the tool's `section`: upstream's PR template as its default
    branch holds it (GitHub's own starting point), filled in; without one, the description
    and the section alone. The rest is people's from then on."""
    if pr_template is None or not pr_template.strip():
        return f"{render_description(entry)}\n\n{section}\n"
    ticks = ["unit tests"] if carries_unit_tests(entry) else []
    return templates.fill(pr_template, f"{_summary(entry)}\n\n{section}", ticks=ticks)


def revision_comment(
    entry: Entry, *, head: str, old: str | None, kind: str, diff: str, ci_gate: bool = True
) -> str:
    """The one comment per changed revision: what changed since the previous head (and, where
    upstream vets heads with copy-pr-bot, `ci_gate`, what the new one needs)."""
    since = f" since `{old[:12]}`" if old else ""
    shown = diff if len(diff) < 60000 else diff[:60000] + "\n... (cut at 60000 characters)"
    # CommonMark closes a fence only with a run at least as long: one longer than any inside
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall("`+", shown)), default=0))
    gate = (
        f" Upstream CI needs a maintainer's `/ok to test {head}` for this head." if ci_gate else ""
    )
    return (
        f"{revision_marker(entry.name, head)}\n"
        f"New revision `{head[:12]}` ({kind}){since}.{gate}"
        f"\n\n{fence}diff\n{shown.rstrip()}\n{fence}"
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
    impact: Impact | None,
    pr_template: str | None,
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
    test_command = carried_tests.command(entry.tests) if entry.include_tests else None
    # a person's description: a body the tool first found without its section, or one whose
    # section says so; a body the tool opened the PR with is its own
    person = existing is not None and (old.person if old else True)
    handwritten = sections.outside(existing.get("body"), old) if person and existing else None

    def make(listed: list[str]) -> str:
        section = made["last"] = render_section(
            entry, superseded=superseded, check_lines=check_lines, impact=impact,
            test_command=test_command, handwritten=handwritten, base=entry.base_commit,
            title=entry.title, summary=old is not None and old.summary, revisions=listed,
            history=history,
        )  # fmt: skip
        if existing is None:
            return render_new(entry, section, pr_template)
        return sections.merge(existing.get("body"), section, entry.name)

    body = sections.fit(
        make, revisions, left_out=sections.earlier(old.text if old else None),
        what=f"{entry.name}'s PR body", current=existing.get("body") if existing else None,
    )  # fmt: skip
    return title, body, made["last"], found.problem
