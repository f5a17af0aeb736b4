"""Adopt an upstream PR (one GitHub closed when its fork left the fork network, say) as
carried patches: its own commits become `git format-patch` files beside the manifest
(authorship and sign-offs as they were) and a new [[entry]] (supersedes = [N]); then `check`
runs on it. --dry-run runs every rule and the check, writes nothing, and exits as it would.

Works on any GitHub repository (a token is optional for public ones). Without --manifest the
manifest is your own patches/series.toml here or in a parent, else $XDG_CONFIG_HOME/patchcarry/
series.toml when it exists; with neither, adopt starts patches/series.toml in this folder and
says so (the example manifest shipped with patchcarry is never written). Exit 0 when adopted,
1 when refused (merged PR) or the check failed. Next: `patchcarry resubmit --dry-run NAME`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from patchcarry.commands import argtypes


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "pull", metavar="OWNER/REPO#N", type=argtypes.pull,
        help="the PR to adopt, or its URL (https://HOST/OWNER/REPO/pull/N on GH_HOST's GitHub)",
    )  # fmt: skip
    parser.add_argument(
        "--name", help="entry name (default: from the PR's head branch, e.g. fix/x-y -> x-y)"
    )
    parser.add_argument(
        "--fork", metavar="OWNER/REPO", type=argtypes.repo,
        help="fork the new PR will come from (default: the manifest's, else AUTHOR/REPO)",
    )  # fmt: skip
    parser.add_argument("--dry-run", action="store_true",
                        help="show the patches and the entry; write nothing")  # fmt: skip
    argtypes.add_manifest(
        parser, default="yours, found as above, else a new patches/series.toml here (created)"
    )
    parser.add_argument(
        "--paths", nargs="+", metavar="GLOB",
        help="the entry's `paths` (default: the directories the PR's commits touch, as DIR/**)",
    )  # fmt: skip
    parser.add_argument(
        "--upstream-url", metavar="URL",
        help="git URL or path to fetch the PR from (default: the repository's clone_url)",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from patchcarry import manifest, tokens
    from patchcarry.adopt import pull
    from patchcarry.adopt.run import Options, adopt
    from patchcarry.display import UNBOUNDED, columns, escape, fit
    from patchcarry.github import GitHub

    target = pull.parse_target(args.pull)
    argtypes.refuse_url(args.upstream_url, "--upstream-url")  # before any read
    gh = GitHub(token=tokens.token())  # a value no token has is refused first
    path = manifest.find_for_adding(args.manifest)
    if path is None:  # the user has none: theirs starts here, never in the example
        path = Path.cwd() / manifest.SEARCHED
        print(f"note: no manifest of yours here, above, or at {manifest.user_manifest()}: "
              f"adopt starts {escape(str(path))}",
              file=sys.stderr)  # fmt: skip
    opts = Options(name=args.name,
                   fork=args.fork,
                   dry_run=args.dry_run, manifest_path=path, paths=args.paths,
                   upstream_url=args.upstream_url)  # fmt: skip
    width = columns(UNBOUNDED)  # wrapped only where COLUMNS or a terminal asks
    return adopt(target, opts, gh, lambda text: print(fit(escape(text), width)))
