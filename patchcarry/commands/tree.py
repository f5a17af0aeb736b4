"""Check out an upstream source tree at the manifest's pinned base (or the base branch's tip),
cheaply: a blob-less shallow fetch of that one commit and a sparse checkout of `megatron/`
and upstream's unit tests. Prints the tree's path, ready to be used as MEGATRON_SRC.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from patchcarry.commands import argtypes
from patchcarry.git.sha import short


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from patchcarry.upstream import TREE_PATHS

    parser.add_argument("dest", type=Path, metavar="DIR", help="where to put the tree (new)")
    argtypes.add_upstream(parser)
    parser.add_argument(
        "--at", choices=("base", "tip"), default="base",
        help="the entry's pinned base_commit (default) or its base branch's tip",
    )  # fmt: skip
    parser.add_argument("--entry", help="manifest entry whose base to use (default: the first)")
    argtypes.add_manifest(parser)
    argtypes.add_work_dir(parser)
    parser.add_argument(
        "--path", dest="paths", action="append",
        help=f"directory to check out, repeatable (default: {' '.join(TREE_PATHS)})",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from patchcarry import manifest, upstream

    entry = manifest.load(manifest.find(args.manifest)).select([args.entry] if args.entry else [])[
        0
    ]
    at_tip = args.at == "tip"
    fetched = upstream.fetch(args.upstream or upstream.git_url(entry.upstream),
                             base_commits=[] if at_tip else [entry.base_commit],
                             branches=[entry.base_branch] if at_tip else [], pulls=[],
                             work_dir=args.work_dir)  # fmt: skip
    commit = fetched.branch_tips[entry.base_branch] if at_tip else entry.base_commit
    tree = upstream.checkout_tree(fetched, commit, args.dest, args.paths or upstream.TREE_PATHS)
    kib = fetched.bytes_fetched / 1024
    print(f"{short(commit)} checked out; fetched {kib:.1f} KiB this run", file=sys.stderr)
    print(tree)
    return 0
