"""The text the tool writes on GitHub, pure in its inputs: an unchanged input never PATCHes."""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from patchcarry import carried_tests
from patchcarry import pr_template as templates
from patchcarry.git.sha import short
from patchcarry.github_types import PullRef
from patchcarry.manifest import Entry
from patchcarry.measure.impact import Impact
from patchcarry.pulls.classify import Classification, PullState
from patchcarry.pulls.ownership import link_marker, revision_marker
from patchcarry.resubmit import inert
from patchcarry.resubmit import section as sections
from patchcarry.resubmit.ci_gate import ok_to_test
from patchcarry.resubmit.inert import reflow
from patchcarry.resubmit.revisions import Revision, Revisions
from patchcarry.resubmit.section import section_begin, section_end, section_id

TEMPLATE = Path(__file__).resolve().parent.parent / "templates" / "pr_body.md"


# A byte figure as people write one ("0.27 GB", "268,435,456 B"), or a measured-impact heading
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
    entry: Entry, *, superseded: Sequence[Classification], check_lines: Sequence[str],
    impact: Impact | None, test_command: str | None = None, handwritten: str | None = None,
    base: str | None = None, title: str | None = None, summary: bool = False,
    revisions: Revisions | None = None, history: Sequence[str] = (), template: Path = TEMPLATE,
    own: frozenset[str] | None = None,
) -> str:  # fmt: skip
    """This tool's section of `entry`'s PR body, markers included. `handwritten`: a person's
    description around it (None: the tool's), to which it adds only what that lacks."""
    said = handwritten or ""
    numbers = [c.number for c in superseded if not mentions(said, c.number)]
    unsaid = [c for c in superseded if c.number in numbers]
    resubmission = _resubmission(entry, unsaid, base or entry.base_commit)
    trail = " → ".join(history)
    lines = ([f"PRs: {trail}"] if trail else []) + (revisions.lines() if revisions else [])
    measured = "" if impact and states_impact(said) else _impact(impact)
    pair = "" if _WHY_BOTH_RE.search(said) else _pair(impact)
    placeholder = "\x00begin\x00"
    values = {
        "begin": placeholder,
        "end": section_end(entry.name),
        "summary": render_description(entry, own) if summary else "",
        "resubmission": resubmission,
        "impact": "\n\n".join(part for part in (measured, pair) if part),
        "reproduce": _reproduce(test_command, impact, carried_tests.needs(entry.upstream)),
        # the check's sentences quote upstream's commit subjects: other people's words
        "checks": inert.body_text("\n".join(f"- {line}" for line in check_lines))[0]
        or "- (no check results)",
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
    """One line per superseded PR: what this PR is and why the original closed."""
    if not superseded:
        return ""
    parts = []
    for item in superseded:
        why = f"its state: {item.state}"
        if item.state == PullState.DETACHED:
            why = "GitHub closed it when its fork left the fork network; it was not withdrawn"
        parts.append(
            f"Re-submission of #{item.number} ({why}), from an attached fork, {entry.fork}, "
            f"on `{entry.base_branch}` at {short(base)}."
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
    quote = f"\n\n{impact.quote}" if impact.quote else ""
    return f"### Measured impact\n\n{impact.figures.strip()}{quote}"


# A description that already answers why there are two PRs.
_WHY_BOTH_RE = re.compile(r"^#*\s*why both\b", re.IGNORECASE | re.MULTILINE)


def _pair(impact: Impact | None) -> str:
    """What this fix frees alone and with the other merged, when the evidence holds the pair."""
    return f"### Why both PRs?\n\n{impact.pair}" if impact and impact.pair else ""


def _reproduce(test_command: str | None, impact: Impact | None, needs: str | None) -> str:
    """How a reviewer checks it: upstream's own test this PR adds, then the measurement."""
    parts = []
    if test_command:
        where = f" It needs {needs}." if needs else ""
        parts.append(
            f"The test this PR adds, in upstream's own suite:\n\n```sh\n{test_command}\n```"
            f"\n\nExpected: it fails without this PR's fix and passes with it.{where}"
        )
    if impact is not None and impact.sources:
        parts.append(impact.source)
    return "### How to reproduce\n\n" + "\n\n".join(parts) if parts else ""


def render_description(entry: Entry, own: frozenset[str] | None = None) -> str:
    """A new PR's description: outside the tool's section, so a maintainer's edit stands."""
    return f"# What does this PR do?\n\n{_summary(entry, own)}"


def _summary(entry: Entry, own: frozenset[str] | None = None) -> str:
    """The fix's message, inert unless the token's user wrote it (`own`), with no section marker."""
    if len(entry.fixes) == 1:
        text = _theirs(entry.fix, reflow(entry.fix.message), own) or pr_title(entry, own)
    else:
        parts = [
            _theirs(f, f"**{f.subject}**\n\n{reflow(f.message)}".strip(), own) for f in entry.fixes
        ]
        text = f"{pr_title(entry, own)}, in {len(parts)} commits:\n\n" + "\n\n".join(parts)
    return sections.defuse(text)


def _theirs(fix: Any, text: str, own: frozenset[str] | None) -> str:
    return text if inert.is_own(fix.author_email, own) else inert.body_text(text)[0]


def pr_title(entry: Entry, own: frozenset[str] | None = None) -> str:
    """The manifest's title, inert unless the fix's author is the token's user."""
    if inert.is_own(entry.fix.author_email, own):
        return entry.title
    return inert.title_text(entry.title)[0]


def neutralised(entry: Entry, own: frozenset[str] | None) -> list[str]:
    """For each fix commit whose text is someone else's, what was made inert, and why."""
    lines = []
    for fix in entry.fixes:
        if inert.is_own(fix.author_email, own):
            continue
        said = inert.body_text(f"{fix.subject}\n{fix.message}")[1]
        if fix is entry.fix:
            said += [f"{s} in the title" for s in inert.title_text(entry.title)[1]]
        if said:
            whose = "its author's email is not the token user's"
            if own is None:
                whose = "no token user to compare with"
            lines.append(f"body: the message of {fix.name} is someone else's ({whose}): "
                         f"{', '.join(said)} made inert before posting")  # fmt: skip
    return lines


def carries_unit_tests(entry: Entry) -> bool:
    """Whether the PR adds unit tests: test patches it carries that add a test."""
    return entry.include_tests and carried_tests.command(entry.tests) is not None


def render(entry: Entry, *, pr_template: str | None = None, **kwargs: Any) -> str:
    """The whole body of a PR this tool opens."""
    section = render_section(entry, **kwargs)
    return render_new(entry, section, pr_template, kwargs.get("own"))


def render_new(entry: Entry, section: str, pr_template: str | None = None,
               own: frozenset[str] | None = None) -> str:  # fmt: skip
    """A new PR's body around `section`: upstream's template filled, else description + section."""
    if pr_template is None or not pr_template.strip():
        return f"{render_description(entry, own)}\n\n{section}\n"
    ticks = ["unit tests"] if carries_unit_tests(entry) else []
    filled = templates.fill(pr_template, "\x00what\x00", ticks=ticks, linked=linked(entry))
    filled = sections.defuse(filled)
    return filled.replace("\x00what\x00", f"{_summary(entry, own)}\n\n{section}", 1)


def linked(entry: Entry) -> str:
    """The template's "Linked issue:" as the author would fill it ("Related to #6117")."""
    return f"Related to {', '.join(f'#{n}' for n in entry.supersedes)}" if entry.supersedes else ""


def revision_comment(
    entry: Entry, *, head: str, old: str | None, kind: str, diff: str,
    moved: tuple[str, str] | None = None, ci_gate: bool = True,
) -> str:  # fmt: skip
    """The one comment per changed revision (`moved`: the old and new base of a rebuilt
    branch, the diff then of the PR's own commits; `ci_gate`: say what copy-pr-bot needs)."""
    since = f" since `{short(old)}`" if old else ""
    if moved is not None:
        since += (
            f", rebuilt on `{entry.base_branch}` at {short(moved[1])} (was {short(moved[0])}). "
            "Below: `git range-diff` of this PR's own commits, old against new (upstream's "
            "commits between the two bases are not this PR's change)"
        )
    shown = diff if len(diff) < 60000 else diff[:60000] + "\n... (cut at 60000 characters)"
    # CommonMark closes a fence only with a run at least as long: one longer than any inside
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall("`+", shown)), default=0))
    gate = f" Upstream CI needs a maintainer's {ok_to_test(head)} for this head." if ci_gate else ""
    return (f"{revision_marker(entry.name, head)}\n"
            f"New revision `{short(head)}` ({kind}){since}.{gate}"
            f"\n\n{fence}diff\n{shown.rstrip()}\n{fence}")  # fmt: skip


def cross_link(
    entry: Entry, *, superseded: int, new_pr: int, new_url: str, fork: str | None = None,
    detached: bool = True,
) -> str:  # fmt: skip
    """The comment left once on a superseded PR (the detachment sentence only when it was)."""
    why = "This change is "
    if detached:
        why = "This PR was closed automatically when its fork left the fork network; it is "
    return (
        f"{link_marker(entry.name, superseded)}\n"
        f"{why}re-submitted as #{new_pr} ({new_url}) from an attached fork ({fork or entry.fork})."
    )


def compose(
    entry: Entry, existing: PullRef | None, *, superseded: Sequence[Classification],
    check_lines: Sequence[str], impact: Impact | None, pr_template: str | None,
    revision: Revision | None, own: frozenset[str] | None = None,
) -> tuple[str | None, str, str, str]:  # fmt: skip
    """(title to set or None, body, section, why the body is left alone or "")."""
    found = sections.locate(existing.body if existing else None, entry.name)
    old = found.section
    revisions = old.revisions if old else Revisions()
    revisions = revisions._replace(listed=(*revisions.listed, *([revision] if revision else [])))
    history = [*(f"#{c.number}" for c in superseded), "this PR"]
    title: str | None = pr_title(entry, own)
    if existing is not None:
        if old is None:  # first refresh of a PR someone wrote: keep their title
            title = None
        elif old.title_hash == sections.title_hash(entry.title):
            title = None  # unchanged in the manifest: a maintainer's rename stands
        if title is not None and existing.title == title:
            title = None
    made: dict[str, str] = {}
    test_command = carried_tests.command(entry.tests) if entry.include_tests else None
    # a person's description: a body first found without the section, or whose section says so
    person = existing is not None and (old.person if old else True)
    handwritten = sections.outside(existing.body, old) if person and existing else None

    def make(listed: Revisions) -> str:
        section = made["last"] = render_section(
            entry, superseded=superseded, check_lines=check_lines, impact=impact,
            test_command=test_command, handwritten=handwritten, base=entry.base_commit,
            title=entry.title, summary=old is not None and old.summary, revisions=listed,
            history=history, own=own,
        )  # fmt: skip
        if existing is None:
            return render_new(entry, section, pr_template, own)
        return sections.merge(existing.body, section, entry.name)

    current = existing.body if existing else None
    body = sections.fit(make, revisions, what=f"{entry.name}'s PR body", current=current)
    return title, body, made["last"], found.problem
