"""Check that each manifest entry's patch applies upstream (pinned base and branch tip),
whether upstream drifted under it, and whether it is the change of the PRs it supersedes.

Exit codes: 0 all apply; 1 a patch does not apply (conflict); 4 upstream unreachable or a
ref/commit missing there; 5 bad patch or manifest (or unsafe input: a path outside the
entry's `paths`, a URL with credentials, a --work-dir this tool did not make); 7 a git read
failed mid-run (a lazy blob fetch): nothing was judged from it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from patchcarry.manifest import DEFAULT_MANIFEST
    from patchcarry.upstream import DEFAULT_UPSTREAM

    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument(
        "entries", nargs="*", metavar="ENTRY", help="entries to check (default all)"
    )
    parser.add_argument(
        "--upstream",
        default=DEFAULT_UPSTREAM,
        help="URL or local path of the upstream repo (default %(default)s)",
    )
    parser.add_argument(
        "--offline",
        action="store_true",
        help="apply check only, against the installed megatron-core source",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    parser.add_argument(
        "--manifest",
        type=Path,
        default=DEFAULT_MANIFEST,
        help="manifest to read (default %(default)s)",
    )
    parser.add_argument(
        "--work-dir",
        type=Path,
        default=None,
        help="scratch repo for the partial fetch "
        "(default $XDG_CACHE_HOME/patchcarry/upstream/<hash>)",
    )


def run(args: argparse.Namespace) -> int:
    from patchcarry import manifest
    from patchcarry.check import render
    from patchcarry.check.run import run_checks
    from patchcarry.display import escape

    entries = manifest.load(args.manifest).select(args.entries)
    report = run_checks(
        entries, upstream=args.upstream, offline=args.offline, work_dir=args.work_dir
    )
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(escape(render.table(report)))  # it quotes git's messages and PR titles
    return report.exit_code
