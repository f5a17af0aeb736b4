"""retire: stop carrying a landed entry; --comment first (by its marker), so a re-run resumes."""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Callable
from pathlib import Path
from typing import Any

from patchcarry import display, manifest, manifest_edit, tokens
from patchcarry.check import render
from patchcarry.check.landing import NOT_LANDED, SUPERSEDED, UNDONE
from patchcarry.check.report import Landing
from patchcarry.check.run import run_checks
from patchcarry.errors import BadInputError, FatalError, UsageError
from patchcarry.github_types import Forge
from patchcarry.manifest import Entry
from patchcarry.markers import marker
from patchcarry.pulls.ownership import marked

MARKER = marker("landed", "entry={name}")


@dataclasses.dataclass
class Options:
    manifest_path: Path
    upstream: str
    work_dir: Path | None = None
    dry_run: bool = False
    comment: bool = False
    moot: bool = False  # a superseded fix may be retired: the user judged it no longer needed


def record(landing: Landing, today: datetime.date) -> dict[str, Any]:
    """The manifest's `landed = {...}` for `landing`."""
    assert landing.commit is not None
    fields: dict[str, Any] = {"verdict": landing.verdict, "commit": landing.commit.sha,
                              "date": landing.commit.date,
                              "retired": today.isoformat()}  # fmt: skip
    if landing.commit.pr:
        fields["pr"] = landing.commit.pr
    fields["subject"] = display.line(landing.commit.subject)  # any bytes: text a file holds
    return fields


def comment_body(entry: Entry, landing: Landing) -> str:
    assert landing.commit is not None
    c = landing.commit
    subject = display.line(c.subject).replace("`", "'")  # outside text: one code span
    where = f"{c.sha} (`{subject}`{f', #{c.pr}' if c.pr else ''})"
    if landing.verdict == SUPERSEDED:  # not landed: upstream removed what the fix changes
        said = f"The code this change fixes was rewritten or removed upstream in {where}. "
    else:
        said = f"This change has {landing.verdict} upstream in {where}. "
    return (
        f"{MARKER.format(name=entry.name)}\n{said}"
        "There is nothing left to carry: patchcarry no longer refreshes this pull request."
    )


def _judge(entry: Entry, opts: Options, say: Callable[[str], None]) -> Landing:
    report = run_checks([entry], upstream=opts.upstream, work_dir=opts.work_dir)
    say(render.table(report))
    landing = report.entries[0].landing
    if landing is not None and landing.verdict == UNDONE:  # it landed, and is gone again
        raise FatalError(
            f"{entry.name}: {landing.next or 'landed, then undone upstream'}; nothing to retire"
        )
    if landing is None or landing.verdict == NOT_LANDED or landing.commit is None:
        raise FatalError(
            f"{entry.name}: check does not find its fix landed upstream: nothing to retire "
            "(keep carrying it; `resubmit` refreshes its PR)"
        )
    if landing.verdict == SUPERSEDED and not opts.moot:
        raise FatalError(
            f"{entry.name}: superseded upstream by {render.commit_words(landing)}, not landed: "
            "retire it with --moot once you have judged the fix no longer needed"
        )
    return landing


def _comment_needed(gh: Forge, entry: Entry, say: Callable[[str], None]) -> bool:
    """Whether the open PR still lacks the tool's landing comment (reads only)."""
    if entry.pr is None:
        raise BadInputError(f"{entry.name}: no `pr` recorded, so there is no PR to comment on")
    login = gh.user().login
    pull = gh.pull(entry.upstream, entry.pr)
    if pull.state != "open":
        say(f"#{entry.pr} is {pull.state}: no comment")
        return False
    if marked(gh.issue_comments(entry.upstream, entry.pr), MARKER.format(name=entry.name), login):
        say(f"#{entry.pr} already has the landing comment: not posted again")
        return False
    return True


def retire(
    entry: Entry, opts: Options, make_github: Callable[[], Forge | None],
    say: Callable[[str], None],
) -> int:  # fmt: skip
    landing = _judge(entry, opts, say)
    fields = record(landing, datetime.datetime.now(datetime.UTC).date())
    gh = None
    if opts.comment:
        gh = make_github()
        if gh is None:
            need = tokens.variable()
            raise UsageError(f"--comment needs {need} (the comment is written as its user)")
    post = gh is not None and _comment_needed(gh, entry, say)
    shown = ", ".join(f"{k} = {v!r}" for k, v in fields.items())
    if opts.dry_run:
        say(f"DRY RUN: would record in {opts.manifest_path} [{entry.name}]: landed = {{{shown}}}")
        if post:
            say(f"DRY RUN: would comment once on #{entry.pr}")
        return 0
    if post and gh is not None and entry.pr is not None:
        gh.create_comment(entry.upstream, entry.pr, comment_body(entry, landing))
        say(f"commented on #{entry.pr}: {render.commit_words(landing)}")
    manifest_edit.record_landed(
        opts.manifest_path, entry.name, fields,
        validate=lambda tmp: manifest.load(opts.manifest_path, text=tmp.read_text()),
    )  # fmt: skip
    say(f"retired {entry.name}: recorded in {opts.manifest_path}: landed = {{{shown}}}")
    say("it stays in the manifest as a record; no command carries it any more")
    return 0
