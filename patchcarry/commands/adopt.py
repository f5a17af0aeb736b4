"""Adopt an upstream PR (one GitHub closed when its fork left the fork network, say) as
carried patches: its own commits become `git format-patch` files beside the manifest
(authorship and sign-offs as they were) and a new [[entry]] (supersedes = [N]); then `check`
runs on it. --dry-run runs every rule and the check, writes nothing, and exits as it would.

Works on any GitHub repository (a token is optional for public ones). Without --manifest the
manifest is patches/series.toml here or in a parent, else $XDG_CONFIG_HOME/patchcarry/
series.toml (created when missing). Exit 0 when adopted, 1 when refused (merged PR) or the
check failed. Next: `patchcarry resubmit --dry-run NAME`.
"""

from __future__ import annotations

import argparse

from patchcarry.commands import argtypes


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("pull", metavar="OWNER/REPO#N", type=argtypes.pull, help="the PR to adopt")
    parser.add_argument(
        "--name", help="entry name (default: from the PR's head branch, e.g. fix/x-y -> x-y)"
    )
    parser.add_argument(
        "--fork",
        metavar="OWNER/REPO",
        type=argtypes.repo,
        help="fork the new PR will come from (default: the manifest's, else AUTHOR/REPO)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="show the patches and the entry; write nothing"
    )
    argtypes.add_manifest(parser)
    parser.add_argument(
        "--paths",
        nargs="+",
        metavar="GLOB",
        help="the entry's `paths` (default: the directories the PR's commits touch, as DIR/**)",
    )
    parser.add_argument(
        "--upstream-url",
        metavar="URL",
        help="git URL or path to fetch the PR from (default: the repository's clone_url)",
    )


def run(args: argparse.Namespace) -> int:
    from patchcarry import hosts, manifest
    from patchcarry.adopt import pull
    from patchcarry.adopt.run import Options, adopt
    from patchcarry.display import escape
    from patchcarry.github import GitHub, token_from_env

    target = pull.parse_target(args.pull)
    if args.upstream_url:  # before any read: a URL that cannot be used stops the run first
        hosts.refuse_url_credentials(args.upstream_url, "--upstream-url")
    opts = Options(
        name=args.name,
        fork=manifest.check_repo(args.fork, "--fork") if args.fork is not None else None,
        dry_run=args.dry_run,
        manifest_path=manifest.find(args.manifest),
        paths=args.paths,
        upstream_url=args.upstream_url,
    )
    return adopt(target, opts, GitHub(token=token_from_env()), lambda text: print(escape(text)))
