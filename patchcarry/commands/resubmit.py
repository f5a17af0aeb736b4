"""Open or refresh each entry's upstream PR from an attached fork.

Per entry: preflight, an attached fork, the branch updated without dropping anyone's commit,
a draft PR opened or refreshed, superseded PRs cross-linked, the PR number recorded. Nothing is
written before every preflight passes; without a token it is a dry run (README: Resubmit).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from patchcarry.commands import argtypes
from patchcarry.limits import FORK_WAIT_S


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("entries", nargs="*", metavar="ENTRY",
                        help="manifest entries to re-submit (default: all)")  # fmt: skip
    switches = (
        ("--dry-run", "read all, print each write, write nothing (default without a token)"),
        ("--json", "one JSON object per entry per line"),
        ("--force", "re-submit over a PR a maintainer or its author closed, or an open one"),
        ("--rewrite", "replace a fork branch holding others' commits (the plan names them)"),
        ("--update-live", "also push onto an open PR whose head holds the fix (CI re-vetting)"),
        ("--allow-default-branch", "allow pushing the fork's default branch as head_branch"),
        ("--rebase", "build on the base branch's tip instead of the pinned base_commit"),
        ("--offline", "no GitHub reads: the plan the manifest implies, marked unverified"),
    )
    for flag, what in switches:
        parser.add_argument(flag, action="store_true", help=what)
    parser.add_argument(
        "--upstream-url", metavar="URL",
        help="git URL or path to fetch upstream from (default: its clone_url)",
    )  # fmt: skip
    argtypes.add_upstream_repo(parser, "every entry's upstream repository", url=True)
    parser.add_argument("--fork", metavar="OWNER/NAME", type=argtypes.repo,
                        help="every entry's fork (the PR's head repository)")  # fmt: skip
    parser.add_argument(
        "--maintainer-edits", action=argparse.BooleanOptionalAction, default=None,
        help='"Allow edits by maintainers", which grants "edits and access to secrets by '
        "maintainers\" (default: the entry's maintainer_can_modify, else off)",
    )  # fmt: skip
    parser.add_argument(
        "--evidence", type=Path, metavar="PATH",
        help="evidence JSON from `measure`: its numbers go in the PR body",
    )  # fmt: skip
    argtypes.add_manifest(parser)
    parser.add_argument(
        "--fork-wait", type=float, default=FORK_WAIT_S, metavar="SECONDS",
        help="wait this long for a new fork to appear (default %(default)s)",
    )  # fmt: skip
    parser.add_argument(
        "--max-rate-wait", type=float, default=60.0, metavar="SECONDS",
        help="wait this long for a rate-limit reset (default %(default)s)",
    )  # fmt: skip


PLAN_WIDTH = 120  # columns: the printed plan fits a terminal whatever its entries hold


def _entries(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    import dataclasses

    from patchcarry import manifest

    entries = manifest.load(args.manifest).select(args.entries)
    up, fork = args.upstream_repo, args.fork  # OWNER/NAME both, checked as argparse read them
    edits = args.maintainer_edits  # the flag states the choice for every entry
    return [
        dataclasses.replace(
            e, upstream=up or e.upstream, fork=fork or e.fork,
            maintainer_can_modify=e.maintainer_can_modify if edits is None else edits,
        )
        for e in entries
    ]  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from patchcarry import error_handler, manifest
    from patchcarry.display import columns, escape, fit

    args.manifest = manifest.find(args.manifest)
    argtypes.refuse_url(args.upstream_url, "--upstream-url", offline=args.offline)
    entries = _entries(args)
    error_handler.note_offline_checks([e.upstream for e in entries if not e.offline])
    example = manifest.is_example(args.manifest)
    if example:  # never acted on as the user's: planned without their token, nothing written
        print(f"note: {args.manifest} is the example manifest inside the installed package "
              "(this repository's Megatron-LM fixes), not yours: its plan follows and nothing is "
              f"written. {manifest.make_your_own()[0].upper()}{manifest.make_your_own()[1:]}; "
              "`patchcarry scan --all` lists your closed PRs",
              file=sys.stderr)  # fmt: skip
    if args.evidence is not None:  # refused before any read; rendered where used, after checks
        from patchcarry.measure import impact

        impact.check_file(args.evidence)
    # the GitHub client and the planner after the inputs are checked: a refused input is said
    # without importing them (ghapi's API description alone is a large import)
    from patchcarry.github import GitHub
    from patchcarry.resubmit import model
    from patchcarry.resubmit import run as runner
    from patchcarry.resubmit.model import Action, Options

    opts = Options(
        dry_run=args.dry_run or example, force=args.force, rebase=args.rebase, rewrite=args.rewrite,
        update_live=args.update_live, upstream_url=args.upstream_url, evidence=args.evidence,
        manifest_path=args.manifest, example=example,
        allow_default_branch=args.allow_default_branch, fork_wait=args.fork_wait,
        progress=None if args.json else lambda text: print(escape(text), file=sys.stderr),
    )  # fmt: skip

    def say(line: str) -> None:
        print(escape(line), file=sys.stderr)  # it quotes commit subjects, names, comments

    outcome = runner.resubmit(
        entries, opts, offline=args.offline, say=say,
        make_github=lambda token: GitHub(token=token, max_rate_wait=args.max_rate_wait),
    )  # fmt: skip
    if args.json:
        sys.stdout.write(model.render_json(outcome.plans))
    else:
        text = model.render_text(outcome.plans, dry_run=outcome.dry_run, headline=outcome.headline)
        sys.stdout.write(fit(escape(text), columns(PLAN_WIDTH)))
        for made in outcome.plans:
            if made.action == Action.CREATED and made.url:
                print(escape(_next_step(made.pr, made.url)))
    return outcome.exit_code


def _next_step(pr: int | None, url: str) -> str:
    """What the author does next: the PR is a draft (upstream's template), unread until ready."""
    return (
        f"next: #{pr} is a draft: tick the boxes of its description that hold (the self-review "
        f'among them), then click "Ready for review": {url}'
    )
