"""List your PRs on upstream that GitHub closed because their fork left the fork network, and
whether each was re-submitted (named in the manifest's `supersedes`, or cross-linked).

With --all: your closed, unmerged PRs on every repository (GitHub's search API), classified,
and for each one closed by fork detachment that no manifest entry carries yet, the exact
`adopt` command to run, or, when its change has landed on its base branch since (git's
verdict, as `check` gives it), the commit that landed it.

Needs a token (to know who you are: patchcarry help environment) or --author. Exit 0 when
every one found is re-submitted (with --all: carried), 1 when some are not.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from patchcarry import tokens
from patchcarry.commands import argtypes
from patchcarry.display import line

if TYPE_CHECKING:
    from patchcarry.adopt.landed import Judge
    from patchcarry.check.report import Landing
    from patchcarry.github import GitHub


def add_arguments(parser: argparse.ArgumentParser) -> None:

    parser.add_argument(
        "--upstream",
        metavar="OWNER/NAME",
        type=argtypes.repo,
        help="repository to scan (default: the manifest's upstream)",
    )
    parser.add_argument("--author", metavar="LOGIN", help="whose PRs (default: the token's user)")
    parser.add_argument(
        "--include-resubmitted",
        action="store_true",
        help="also list the ones already re-submitted",
    )
    parser.add_argument(
        "--all",
        action="store_true",
        help="your closed, unmerged PRs on every repository, each with its `adopt` command "
        "when it was closed by fork detachment and is not carried yet",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per PR per line")
    parser.add_argument(
        "--manifest",
        type=Path,
        default=None,
        help="manifest whose `supersedes` count as re-submitted "
        "(default: patches/series.toml here or in a parent, "
        "else $XDG_CONFIG_HOME/patchcarry/series.toml)",
    )


def _landed_since(gh: GitHub) -> Judge:
    """(upstream, N, base branch) -> the landing verdict of PR N's change, from the clone URL
    GitHub gives for the upstream."""
    from patchcarry.adopt.landed import landing_since
    from patchcarry.errors import UpstreamError

    def judge(upstream: str, number: int, branch: str) -> Landing | None:
        repo = gh.repo(upstream)
        if repo is None or not repo.get("clone_url"):
            raise UpstreamError(f"{upstream}: no clone_url on {gh.host}")
        return landing_since(upstream, number, branch, str(repo["clone_url"]))

    return judge


def _adopt_command(manifest_path: Path) -> tuple[str, ...]:
    """`adopt` as this install runs it; with no manifest of the user's (the example found
    instead), it makes theirs here, and a note on stderr says so."""
    from patchcarry import install, manifest

    command = install.command("adopt")
    if not manifest.is_example(manifest_path):
        return (command,)
    print(
        f"note: no manifest of yours here, above, or at {manifest.user_manifest()}: each adopt "
        f"command below makes {manifest.SEARCHED} in this folder",
        file=sys.stderr,
    )
    return (command, "--manifest", str(manifest.SEARCHED))


def _run_all(args: argparse.Namespace) -> int:
    from patchcarry.adopt.run import existing
    from patchcarry.errors import ExitCode, UsageError
    from patchcarry.github import GitHub, token_from_env
    from patchcarry.scan import scan_all

    _, entries = existing(args.manifest)
    carried = {
        (e.upstream.lower(), int(n)): f"manifest entry {e.name}"
        for e in entries
        for n in e.supersedes
    }
    token = token_from_env()
    gh = GitHub(token=token)
    login = gh.user().get("login") if token else None  # whose cross-link comments count
    author = args.author or login
    if not author:
        raise UsageError(f"scan needs {tokens.variable()} (to know whose PRs) or --author LOGIN")
    adopt = _adopt_command(args.manifest)
    found = scan_all(gh, author, carried, {e.name for e in entries}, trusted=login,
                     landed_since=_landed_since(gh), adopt=adopt)  # fmt: skip
    todo = [c for c in found if c.adopt]
    if args.json:
        for closed in found:
            print(json.dumps(closed.to_json(), sort_keys=True))
        return int(ExitCode.FAILED if todo else ExitCode.OK)
    print(
        f"{author}'s closed, unmerged PRs on every repository: {len(found)}; "
        f"closed by fork detachment and not carried: {len(todo)}"
    )
    for closed in found:
        status = f"carried by {closed.carried_by}" if closed.carried_by else closed.item.state
        print(f"  {line(closed.upstream)}#{closed.item.number} {line(closed.title)}  [{status}]")
        print("\n".join(f"      - {line(text)}" for text in closed.item.evidence))
        if closed.landed:
            print(f"      {line(closed.landed)}: nothing to adopt")
        if closed.landing_note:
            print(f"      {line(closed.landing_note)}")
        if closed.adopt:
            print(f"      adopt: {line(closed.adopt)}")
    return int(ExitCode.FAILED if todo else ExitCode.OK)


def run(args: argparse.Namespace) -> int:
    from patchcarry import manifest
    from patchcarry.errors import ExitCode, UsageError
    from patchcarry.github import GitHub, token_from_env
    from patchcarry.scan import scan

    args.manifest = manifest.find(args.manifest)
    if args.all:
        return _run_all(args)
    loaded = manifest.load(args.manifest)
    upstream = (
        manifest.check_repo(args.upstream, "--upstream")
        if args.upstream
        else loaded.entries[0].upstream
    )
    known: dict[int, tuple[str, int | None]] = {
        int(n): (e.name, e.pr)
        for e in loaded.entries
        if e.upstream.lower() == upstream.lower()
        for n in e.supersedes
    }
    token = token_from_env()
    gh = GitHub(token=token)
    login = gh.user().get("login") if token else None  # whose cross-link comments count
    author = args.author or login
    if not author:
        raise UsageError(f"scan needs {tokens.variable()} (to know whose PRs) or --author LOGIN")
    found = scan(gh, upstream, author, known, trusted=login)
    pending = [f for f in found if f.resubmitted_by is None]
    shown = found if args.include_resubmitted else pending
    if args.json:
        for item in shown:
            print(json.dumps(item.to_json(), sort_keys=True))
    else:
        print(
            f"{author}'s PRs on {upstream} closed by fork detachment: {len(found)}, "
            f"not re-submitted: {len(pending)}"
        )
        for item in shown:
            if item.resubmitted_by:
                status = f"re-submitted as {item.resubmitted_by}"
            elif item.planned_in:
                status = f"NOT re-submitted; manifest entry {item.planned_in}: run resubmit"
            else:
                status = "NOT re-submitted; not in the manifest"
            print(f"  #{item.item.number} {line(item.title)}  [{status}]")
            print("\n".join(f"      - {line(text)}" for text in item.item.evidence))
    return int(ExitCode.FAILED if pending else ExitCode.OK)
