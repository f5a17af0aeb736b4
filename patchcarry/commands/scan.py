"""List your PRs on upstream that GitHub closed because their fork left the fork network, and
whether each was re-submitted (named in the manifest's `supersedes`, or cross-linked).

With --all: your closed, unmerged PRs on every repository (GitHub's search API), classified,
and for each one closed by fork detachment that no manifest entry carries yet, the exact
`adopt` command to run, or, when its change has landed on its base branch since (git's
verdict, as `check` gives it), the commit that landed it.

Needs a token (to know who you are: patchcarry help environment) or --author. Exit 0 when
every one found is re-submitted (with --all: carried), 1 when some are not, 6 when the list is
incomplete (GitHub left out organisations that enforce SAML SSO the token is not authorized
for, its search timed out or found more than it serves, or the rate limit ran out part-way:
it says which; what was found is listed).
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

    argtypes.add_upstream_repo(parser, "repository to scan (default: the manifest's upstream)")
    parser.add_argument("--author", metavar="LOGIN", help="whose PRs (default: the token's user)")
    parser.add_argument("--include-resubmitted", action="store_true",
                        help="also list the ones already re-submitted")  # fmt: skip
    parser.add_argument(
        "--all", action="store_true",
        help="your closed, unmerged PRs on every repository, each with its `adopt` command "
        "when it was closed by fork detachment and is not carried yet",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="one JSON object per PR per line")
    argtypes.add_manifest(parser)


def _landed_since(gh: GitHub) -> Judge:
    """(upstream, N, base branch) -> PR N's landing verdict, from GitHub's clone URL."""
    from patchcarry import hosts
    from patchcarry.adopt.landed import landing_since
    from patchcarry.errors import UpstreamError

    def judge(upstream: str, number: int, branch: str) -> Landing | None:
        repo = gh.repo(upstream)
        if repo is None:
            raise UpstreamError(f"{upstream}: not found on {gh.host}")
        url = hosts.answered_git_url(gh.host, upstream, repo.clone_url)
        return landing_since(upstream, number, branch, url)

    return judge


def _finish(gh: GitHub, code: int, *, json_mode: bool) -> int:
    """`code`, or GitHub's refusal code when the list is incomplete (SSO, search caps or
    timeouts, quota): then said."""
    from patchcarry.errors import ExitCode

    why = list(gh.partial)
    if gh.sso_left_out:
        why.append("GitHub left out the results of organisation(s) "
                   f"{', '.join(gh.sso_left_out)} (ids), which enforce SAML single sign-on and for "
                   "which the token is not authorized: authorize it for them (Settings > Developer "
                   "settings > your token > Configure SSO), then re-run")  # fmt: skip
    if not why:
        return code
    note = "this list is incomplete: " + "; ".join(why)
    print(line(note), file=sys.stderr if json_mode else sys.stdout)
    return int(ExitCode.GITHUB)


def _adopt_command(manifest_path: Path) -> tuple[str, ...]:
    """`adopt` as this install runs it; with no manifest of the user's, a note: it starts one."""
    from patchcarry import install, manifest

    command = install.command("adopt")
    example = manifest.is_example(manifest_path) or manifest_path == manifest.DEFAULT_MANIFEST
    if example and manifest.find_for_adding() is None:
        print(
            f"note: no manifest of yours here, above, or at {manifest.user_manifest()}: each "
            f"adopt command below, run here, starts {manifest.SEARCHED} in this folder",
            file=sys.stderr,
        )
    return (command,)


def _whose(author: str | None) -> tuple[GitHub, str | None, str]:
    """The client, the token's user (whose cross-link comments count) and whose PRs to list."""
    from patchcarry.errors import UsageError
    from patchcarry.github import GitHub

    token = tokens.token()
    gh = GitHub(token=token)
    login = gh.user().login if token else None
    if not (author or login):
        raise UsageError(f"scan needs {tokens.variable()} (to know whose PRs) or --author LOGIN")
    return gh, login, str(author or login)


def _run_all(args: argparse.Namespace) -> int:
    from patchcarry.adopt.run import existing
    from patchcarry.errors import ExitCode
    from patchcarry.scan import scan_all

    _, entries = existing(args.manifest)
    carried = {(e.upstream.lower(), int(n)): f"manifest entry {e.name}" for e in entries
               for n in e.supersedes}  # fmt: skip
    gh, login, author = _whose(args.author)
    adopt = _adopt_command(args.manifest)
    found = scan_all(gh, author, carried, {e.name for e in entries}, trusted=login,
                     landed_since=_landed_since(gh), adopt=adopt)  # fmt: skip
    todo = [c for c in found if c.adopt]
    if args.json:
        for closed in found:
            print(json.dumps(closed.to_json(), sort_keys=True))
        return _finish(gh, int(ExitCode.FAILED if todo else ExitCode.OK), json_mode=True)
    print(f"{line(author)}'s closed, unmerged PRs on every repository: {len(found)}; "
          f"closed by fork detachment and not carried: {len(todo)}")  # fmt: skip
    for closed in found:
        status = f"carried by {closed.carried_by}" if closed.carried_by else closed.item.state
        print(
            f"  {line(closed.upstream)}#{closed.item.number} {line(closed.title)}  [{line(status)}]"
        )
        print("\n".join(f"      - {line(text)}" for text in closed.item.evidence))
        if closed.landed:
            print(f"      {line(closed.landed)}: nothing to adopt")
        if closed.landing_note:
            print(f"      {line(closed.landing_note)}")
        if closed.adopt:
            print(f"      adopt: {line(closed.adopt)}")
    return _finish(gh, int(ExitCode.FAILED if todo else ExitCode.OK), json_mode=False)


def run(args: argparse.Namespace) -> int:
    from patchcarry import manifest
    from patchcarry.errors import ExitCode
    from patchcarry.scan import scan

    args.manifest = manifest.find(args.manifest)
    if args.all:
        return _run_all(args)
    loaded = manifest.load(args.manifest)
    upstream = args.upstream_repo or loaded.entries[0].upstream  # checked as argparse read it
    known: dict[int, tuple[str, int | None]] = {int(n): (e.name, e.pr) for e in loaded.entries
                                                if e.upstream.lower() == upstream.lower()
                                                for n in e.supersedes}  # fmt: skip
    gh, login, author = _whose(args.author)
    found = scan(gh, upstream, author, known, trusted=login)
    pending = [f for f in found if f.resubmitted_by is None]
    shown = found if args.include_resubmitted else pending
    if args.json:
        for item in shown:
            print(json.dumps(item.to_json(), sort_keys=True))
    else:
        print(f"{line(author)}'s PRs on {line(upstream)} closed by fork detachment: "
              f"{len(found)}, not re-submitted: {len(pending)}")  # fmt: skip
        for item in shown:
            if item.resubmitted_by:
                status = f"re-submitted as {item.resubmitted_by}"
            elif item.planned_in:
                status = f"NOT re-submitted; manifest entry {item.planned_in}: run resubmit"
            else:
                status = "NOT re-submitted; not in the manifest"
            print(f"  #{item.item.number} {line(item.title)}  [{line(status)}]")
            print("\n".join(f"      - {line(text)}" for text in item.item.evidence))
    return _finish(gh, int(ExitCode.FAILED if pending else ExitCode.OK), json_mode=args.json)
