"""Measure what each variant (unpatched, fix, reset, both) keeps alive between iterations:
each in its own process on its own patched Megatron tree; a table, and evidence JSON + PNG in
--out. --harness pretrain runs upstream's pretrain_gpt.py (CUDA GPU only; else exit 5).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from patchcarry.commands import argtypes
from patchcarry.measure.model import CPU_DEFAULTS


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model", choices=("hc-gpt", "synthetic"), default="hc-gpt",
        help="upstream's hyper-connection GPTModel, or a synthetic stack",
    )  # fmt: skip
    parser.add_argument(
        "--harness", choices=("model", "pretrain"), default="model",
        help="this repository's harness, or upstream's pretrain_gpt.py (GPU)",
    )  # fmt: skip
    parser.add_argument("--repeats", type=positive, default=1, metavar="N",
                        help="--harness pretrain: runs per variant")  # fmt: skip
    parser.add_argument("--variants", default="unpatched,fix,reset,both", metavar="LIST",
                        help="comma-separated subset of unpatched,fix,reset,both")  # fmt: skip
    parser.add_argument(
        "--patch", action="append", type=Path, default=[],
        help="patch file(s) for the reset variant instead of the manifest's",
    )  # fmt: skip
    parser.add_argument(
        "--iterations", type=positive, metavar="N",
        help="per variant (default 3; 6 steps with --harness pretrain)",
    )  # fmt: skip
    for name, default in CPU_DEFAULTS.items():
        parser.add_argument(f"--{name}", type=positive, metavar="N",
                            help=f"(default {default} on CPU)")  # fmt: skip
    parser.add_argument("--dtype", choices=("fp32", "bf16", "fp16"),
                        help="default fp32 on CPU, bf16 on GPU")  # fmt: skip
    parser.add_argument("--vocab", type=positive, default=1024, metavar="N",
                        help="(default %(default)s)")  # fmt: skip
    parser.add_argument("--device", choices=("cpu", "cuda"),
                        help="default cpu (cuda with --harness pretrain)")  # fmt: skip
    parser.add_argument(
        "--seed-config", action="store_true",
        help="GPU: the PR's configuration (2 layers, seq 8192, bf16, ...)",
    )  # fmt: skip
    parser.add_argument("--snapshot", action="store_true",
                        help="GPU: also dump CUDA memory-history snapshots")  # fmt: skip
    parser.add_argument("--torch-compile", action="store_true",
                        help="CPU: keep upstream's @torch.compile (off by default)")  # fmt: skip
    parser.add_argument("--megatron-src", type=Path, metavar="DIR",
                        help="upstream Megatron-LM tree (default: $MEGATRON_SRC)")  # fmt: skip
    argtypes.add_upstream(parser, when="no tree given: the pinned base from it")
    argtypes.add_manifest(parser)
    parser.add_argument(
        "--out", type=Path,
        help="where the JSON and PNG go (./evidence; synthetic: ./build/measure)",
    )  # fmt: skip
    parser.add_argument("--name", help="file stem (default: MODEL-DEVICE[-seqN])")
    parser.add_argument("--require-predicted", type=float, metavar="TOL",
                        help="exit 1 if the fix frees < (1-TOL) x the predicted bytes")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    import dataclasses

    from patchcarry.measure import setup

    opts = setup.Options(
        **{f.name: getattr(args, f.name) for f in dataclasses.fields(setup.Options)}
    )
    if opts.harness == "pretrain":
        from patchcarry.measure import pretrain_setup

        return pretrain_setup.run(opts)
    return setup.run(opts)
