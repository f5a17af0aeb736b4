"""List your PRs on upstream that GitHub closed because their fork left the fork network, and
whether each was re-submitted (named in the manifest's `supersedes`, or cross-linked).

Needs GITHUB_TOKEN (to know who you are) or --author. Exit 0 when every one found is
re-submitted, 1 when some are not, 6 on a GitHub API error.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from patchcarry.manifest import DEFAULT_MANIFEST

    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument(
        "--upstream",
        metavar="OWNER/NAME",
        help="repository to scan (default: the manifest's upstream)",
    )
    parser.add_argument(
        "--author", metavar="LOGIN", help="whose PRs (default: the GITHUB_TOKEN's user)"
    )
    parser.add_argument(
        "--all", action="store_true", help="also list the ones already re-submitted"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per PR per line")
    parser.add_argument(
        "--manifest",
        type=Path,
        default=DEFAULT_MANIFEST,
        help="manifest whose `supersedes` count as re-submitted",
    )


def run(args: argparse.Namespace) -> int:
    from patchcarry import manifest
    from patchcarry.errors import ExitCode, FatalError
    from patchcarry.github import GitHub
    from patchcarry.resubmit.run import token_from_env
    from patchcarry.resubmit.scan import scan

    loaded = manifest.load(args.manifest)
    upstream = args.upstream or loaded.entries[0].upstream
    known: dict[int, tuple[str, int | None]] = {
        int(n): (e.name, e.pr) for e in loaded.entries for n in e.supersedes
    }
    token = token_from_env()
    gh = GitHub(token=token)
    login = gh.user().get("login") if token else None  # whose cross-link comments count
    author = args.author or login
    if not author:
        raise FatalError("scan needs GITHUB_TOKEN (to know whose PRs) or --author LOGIN")
    found = scan(gh, upstream, author, known, trusted=login)
    pending = [f for f in found if f.resubmitted_by is None]
    shown = found if args.all else pending
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
            print(f"  #{item.item.number} {item.title}  [{status}]")
            print("\n".join(f"      - {line}" for line in item.item.evidence))
    return int(ExitCode.FAILED if pending else ExitCode.OK)
