"""Open or refresh each entry's upstream PR from an attached fork.

Per entry: preflight (manifest, check at the pinned base and the branch tip, token owner);
classify the superseded PRs (merged -> done; closed by a maintainer -> refused without --force;
closed by fork detachment -> re-submit); make sure the fork is attached (create it if missing,
stop if detached); bring the fork branch up to date without dropping anyone's commit (fast-
forward only unless --rewrite; a branch holding only what this tool published is rebuilt; an
open PR whose head already holds the fix is left as it is unless --update-live), leased, with
the publication record refs/patchcarry/published/<branch>; open a draft PR, or PATCH only this
tool's section of its body (the title only when the manifest's title changed); cross-link each
superseded PR once; record the PR number in the manifest.
Nothing is written before every selected entry's preflight passes.

Without GITHUB_TOKEN it is a dry run. GH_HOST (a full URL, ghapi's convention) points at
another API host. Exit 0 when done or planned, 1 when refused or a check failed; the other
codes below.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:

    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument(
        "entries", nargs="*", metavar="ENTRY", help="manifest entries to re-submit (default: all)"
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="make every read, print each write it would make, write nothing "
        "(the default when GITHUB_TOKEN is unset)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per entry per line: action, pr, url, superseded, writes",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="re-submit even over a PR closed by a maintainer or its author, or still open",
    )
    parser.add_argument(
        "--rewrite",
        action="store_true",
        help="replace a fork branch that holds commits this tool did not publish (the plan "
        "names each commit it drops); without it a live branch only gets commits on top",
    )
    parser.add_argument(
        "--update-live",
        action="store_true",
        help="also change an open PR whose head already holds the fix: push the test patches "
        "or this repo's revision of the fix on top, and write the tool's section of its body "
        "(the head's CI vetting starts over: a maintainer must `/ok to test` the new head); "
        "without it such a PR only gets missing cross-links",
    )
    parser.add_argument(
        "--allow-default-branch",
        action="store_true",
        help="allow a head_branch that is the fork's default branch (refused otherwise: "
        "the push rewrites it)",
    )
    parser.add_argument(
        "--rebase",
        action="store_true",
        help="build the branch on the base branch's tip instead of the pinned base_commit",
    )
    parser.add_argument(
        "--offline",
        action="store_true",
        help="no GitHub API reads at all: offline check (installed "
        "megatron-core) and the plan the manifest implies, marked unverified",
    )
    parser.add_argument(
        "--upstream-url",
        metavar="URL",
        help="git URL or path to fetch upstream from (default: the upstream "
        "repository's clone_url from the API)",
    )
    parser.add_argument(
        "--upstream", metavar="OWNER/NAME", help="override every entry's upstream repository"
    )
    parser.add_argument(
        "--fork",
        metavar="OWNER/NAME",
        help="override every entry's fork (the PR's head repository)",
    )
    parser.add_argument(
        "--maintainer-edits",
        action=argparse.BooleanOptionalAction,
        default=None,
        help='tick (or untick) "Allow edits by maintainers" on the PR: upstream\'s '
        'maintainers may push to head_branch, which GitHub says grants "edits and access to '
        "secrets by maintainers\" (default: each entry's maintainer_can_modify, else off)",
    )
    parser.add_argument(
        "--evidence",
        type=Path,
        metavar="PATH",
        help="evidence file from scripts/measure; its numbers go in the PR body "
        "(without it the body states no numbers)",
    )
    parser.add_argument(
        "--manifest",
        type=Path,
        default=None,
        help="manifest to read and record the PR number in "
        "(default: patches/series.toml here or in a parent, "
        "else $XDG_CONFIG_HOME/patchcarry/series.toml)",
    )
    parser.add_argument(
        "--fork-wait",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="wait at most this long, backing off, for a fork GitHub is still creating "
        "(it creates forks asynchronously; default %(default)s: its documentation says to "
        "contact support after five minutes)",
    )
    parser.add_argument(
        "--max-rate-wait",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="wait for a rate-limit reset at most this long, else stop (default %(default)s)",
    )


def _entries(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    import dataclasses

    from patchcarry import manifest

    entries = manifest.load(args.manifest).select(args.entries)
    up, fork = (
        manifest.check_repo(value, flag) if value is not None else None
        for flag, value in (("--upstream", args.upstream), ("--fork", args.fork))
    )
    edits = args.maintainer_edits  # the flag states the choice for every entry
    return [
        dataclasses.replace(
            e, upstream=up or e.upstream, fork=fork or e.fork,
            maintainer_can_modify=e.maintainer_can_modify if edits is None else edits,
        )
        for e in entries
    ]  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from patchcarry import hosts, manifest
    from patchcarry.display import escape
    from patchcarry.github import GitHub
    from patchcarry.measure import impact
    from patchcarry.resubmit import model
    from patchcarry.resubmit import run as runner
    from patchcarry.resubmit.model import Options

    args.manifest = manifest.find(args.manifest)
    if args.upstream_url:  # refused even where it is not used: it would be printed
        hosts.refuse_url_credentials(args.upstream_url, "--upstream-url")
    if args.offline and args.upstream_url:
        print(
            f"note: --upstream-url {args.upstream_url} is ignored with --offline", file=sys.stderr
        )
    entries = _entries(args)
    opts = Options(
        dry_run=args.dry_run,
        force=args.force,
        rebase=args.rebase,
        rewrite=args.rewrite,
        update_live=args.update_live,
        upstream_url=args.upstream_url,
        impacts={
            e.name: impact.measured_impact(args.evidence, args.manifest, e.measure or "fix")
            for e in entries
        },  # fmt: skip
        manifest_path=args.manifest,
        allow_default_branch=args.allow_default_branch,
        fork_wait=args.fork_wait,
    )

    def say(line: str) -> None:
        print(escape(line), file=sys.stderr)  # it quotes commit subjects, names, comments

    outcome = runner.resubmit(
        entries,
        opts,
        offline=args.offline,
        say=say,
        make_github=lambda token: GitHub(token=token, max_rate_wait=args.max_rate_wait),
    )
    if args.json:
        sys.stdout.write(model.render_json(outcome.plans))
    else:
        text = model.render_text(outcome.plans, dry_run=outcome.dry_run, headline=outcome.headline)
        sys.stdout.write(escape(text))
    return outcome.exit_code
