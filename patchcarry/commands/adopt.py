"""Adopt an upstream PR (one GitHub closed when its fork left the fork network, say) as
carried patches: its own commits (merges of the base branch into it dropped) become
`git format-patch` files beside the manifest, authorship and sign-offs as they were, and a
new [[entry]] (supersedes = [N], its base commit, base branch, title and head branch) is
added to the manifest; then `check` runs on it. --dry-run shows both and writes nothing.

Reads the PR through the GitHub API (GITHUB_TOKEN optional for public repositories; GH_HOST
for another host) and its commits from refs/pull/N/head on the upstream repository.
Exit codes: 0 adopted (check passed); 1 refused (merged PR) or check failed; 4 upstream
unreachable or refs/pull/N/head gone; 5 bad name, name already in the manifest, bad manifest;
6 GitHub API error.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from patchcarry.manifest import DEFAULT_MANIFEST

    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("pull", metavar="OWNER/REPO#N", help="the PR to adopt")
    parser.add_argument(
        "--name", help="entry name (default: from the PR's head branch, e.g. fix/x-y -> x-y)"
    )
    parser.add_argument(
        "--fork",
        metavar="OWNER/REPO",
        help="fork the new PR will come from (default: the manifest's, else AUTHOR/REPO)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="show the patches and the entry; write nothing"
    )
    parser.add_argument(
        "--manifest",
        type=Path,
        default=DEFAULT_MANIFEST,
        help="manifest to add the entry to; patches go beside it (default %(default)s)",
    )
    parser.add_argument(
        "--upstream-url",
        metavar="URL",
        help="git URL or path to fetch the PR from (default: the repository's clone_url)",
    )


def run(args: argparse.Namespace) -> int:
    from patchcarry import manifest
    from patchcarry.adopt import pull
    from patchcarry.adopt.run import Options, adopt
    from patchcarry.display import escape
    from patchcarry.github import GitHub
    from patchcarry.resubmit.run import token_from_env

    target = pull.parse_target(args.pull)
    opts = Options(
        name=args.name,
        fork=manifest.check_repo(args.fork, "--fork") if args.fork is not None else None,
        dry_run=args.dry_run,
        manifest_path=args.manifest,
        upstream_url=args.upstream_url,
    )
    return adopt(target, opts, GitHub(token=token_from_env()), lambda text: print(escape(text)))
