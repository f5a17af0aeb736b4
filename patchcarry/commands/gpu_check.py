"""The one prepared check for a GPU machine: GPU tests, the PR's seed configuration through
this repository's harness and through upstream's training loop (pretrain_gpt.py), 9 layers at
seq 16384 through the training loop, upstream's unit tests unpatched vs patched, the retention
audit (one process per variant), with a summary.md for the job summary. No network when
MEGATRON_SRC names an upstream tree.

Exit 0 when everything holds; 1 when a GPU test, measurement or training run failed, the fix
frees less than 95% of the predicted bytes, an upstream test regressed or a carried test did
not flip, the audit found a site, or there is no GPU (use --dry-run on CPU). Tests failing
the same way in both trees are listed with their cause (Transformer Engine missing, world
size), not counted.
OUT is made only once there is something to write in it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from patchcarry.commands import argtypes
from patchcarry.errors import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from patchcarry.upstream import DEFAULT_UPSTREAM

    parser.add_argument(
        "out", nargs="?", type=Path, default=Path("gpu-evidence"), metavar="OUT_DIR",
        help="output directory, made once there is output (default ./gpu-evidence)",
    )  # fmt: skip
    parser.add_argument(
        "--dry-run", action="store_true",
        help="check this command on CPU: tiny shape, GPU tests skip, no torchrun",
    )  # fmt: skip
    parser.add_argument(
        "--steps", metavar="KEY,…",
        help="run only these steps (the others are listed as not selected): "
        "gpu-tests, unit-tests, audit, seed-harness, seed-loop, big-loop (default: all)",
    )  # fmt: skip
    argtypes.add_upstream(parser, DEFAULT_UPSTREAM, "without MEGATRON_SRC; default %(default)s")


def run(args: argparse.Namespace) -> int:
    from patchcarry.measure import gpu_check

    def say(line: str) -> None:
        print(f"gpu-check: {line}", file=sys.stderr)

    steps = None
    if args.steps is not None:
        steps = [k.strip() for k in args.steps.split(",") if k.strip()]
        unknown = sorted(set(steps) - set(gpu_check.STEP_KEYS))
        if unknown:
            raise UsageError(
                f"--steps: unknown {', '.join(unknown)}; known: {', '.join(gpu_check.STEP_KEYS)}"
            )
    return gpu_check.run(args.out.resolve(), dry_run=args.dry_run, upstream_url=args.upstream,
                         say=say, steps=steps)  # fmt: skip
