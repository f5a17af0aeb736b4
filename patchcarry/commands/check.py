"""Check that each manifest entry's patch applies upstream (pinned base and branch tip),
whether upstream drifted under it, and whether it is the change of the PRs it supersedes.
--offline reads nothing remote: it checks NVIDIA/Megatron-LM entries against the installed
megatron-core's source, and says the others (no offline source) were not checked. Exit 0
when all apply, 1 when a patch does not apply.
"""

from __future__ import annotations

import argparse
import json

from patchcarry.commands import argtypes


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("entries", nargs="*", metavar="ENTRY",
                        help="entries to check (default all)")  # fmt: skip
    argtypes.add_upstream(parser)
    parser.add_argument(
        "--offline", action="store_true",
        help="read nothing remote: apply check of Megatron-LM entries against the installed "
        "megatron-core source; other entries are not checked",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    argtypes.add_manifest(parser)
    argtypes.add_work_dir(parser)


def run(args: argparse.Namespace) -> int:
    from patchcarry import error_handler, manifest
    from patchcarry.check import render
    from patchcarry.check.run import run_checks
    from patchcarry.display import UNBOUNDED, columns, escape, fit
    from patchcarry.upstream import url_for_entries

    argtypes.refuse_url(args.upstream, "--upstream", offline=args.offline)
    entries = manifest.load(manifest.find(args.manifest)).select(args.entries)
    error_handler.note_offline_checks([e.upstream for e in entries if not e.offline])
    # offline reads no upstream: the entries' own (one URL for them all) is not needed
    upstream = "" if args.offline else (args.upstream or url_for_entries(entries))
    report = run_checks(entries, upstream=upstream, offline=args.offline, work_dir=args.work_dir)
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        # it quotes git's messages and PR titles; wrapped only where a width is asked for
        print(fit(escape(render.table(report)), columns(UNBOUNDED)))
    return report.exit_code
