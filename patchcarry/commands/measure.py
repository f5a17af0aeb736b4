"""Measure what each variant (unpatched, fix, reset, both) keeps alive between iterations.

Every variant runs in its own child process on its own patched copy of a Megatron tree, with
full recompute. The result is printed as a table (measured vs the analytic model) and written
to --out as evidence JSON (schema: patchcarry/measure/evidence.schema.json) and a PNG plot.
--model hc-gpt needs an upstream tree (--megatron-src or MEGATRON_SRC); --model synthetic
runs on the installed megatron-core unless --megatron-src is given.

--harness pretrain runs upstream's own pretrain_gpt.py (unchanged) in each variant's tree, one
process per variant and repeat, the PR's seed configuration unless --layers/--seq say
otherwise, and reads the CUDA allocator after every train_step (floor between iterations,
peak, reserved pool, step time): evidence JSON (pretrain.schema.json) + PNG and a table. It
needs a CUDA GPU: without one it refuses in one line (exit 5).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from patchcarry.measure.model import CPU_DEFAULTS


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        choices=("hc-gpt", "synthetic"),
        default="hc-gpt",
        help="real hyper-connection GPTModel (upstream tree) or synthetic stack",
    )
    parser.add_argument(
        "--harness",
        choices=("model", "pretrain"),
        default="model",
        help="model: this repository's harness around upstream's GPTModel (CPU or GPU); "
        "pretrain: upstream's own training loop, pretrain_gpt.py (GPU only)",
    )
    parser.add_argument(
        "--repeats",
        type=positive,
        default=1,
        help="--harness pretrain: runs per variant (the spread of peak and reserved)",
    )
    parser.add_argument(
        "--variants",
        default="unpatched,fix,reset,both",
        help="comma-separated subset of unpatched,fix,reset,both",
    )
    parser.add_argument(
        "--patch",
        action="append",
        type=Path,
        default=[],
        help="patch file(s) for the reset variant instead of the manifest entry",
    )
    parser.add_argument(
        "--iterations",
        type=positive,
        default=None,
        help="iterations per variant (default 3; 6 training steps with --harness pretrain)",
    )
    for name, default in CPU_DEFAULTS.items():
        parser.add_argument(
            f"--{name}", type=positive, default=None, help=f"(default {default} on CPU)"
        )
    parser.add_argument(
        "--dtype",
        choices=("fp32", "bf16", "fp16"),
        default=None,
        help="default fp32 on CPU (bf16 runs there too: the model is wrapped in upstream's "
        "Float16Module as training wraps it), bf16 on GPU",
    )
    parser.add_argument("--vocab", type=positive, default=1024)
    parser.add_argument(
        "--device",
        choices=("cpu", "cuda"),
        default=None,
        help="default cpu (cuda with --harness pretrain)",
    )
    parser.add_argument(
        "--seed-config",
        action="store_true",
        help="the PR's configuration: 2 layers, 4 streams, bf16, mbs 1, seq 8192, "
        "hidden 2048 (derived; the PR gives none). GPU only; --seq may override",
    )
    parser.add_argument(
        "--snapshot",
        action="store_true",
        help="GPU: also dump torch.cuda.memory._record_memory_history snapshots",
    )
    parser.add_argument(
        "--torch-compile",
        action="store_true",
        help="CPU: keep upstream's @torch.compile (off by default: compile time)",
    )
    parser.add_argument(
        "--megatron-src",
        type=Path,
        default=None,
        help="upstream Megatron-LM tree (default: $MEGATRON_SRC)",
    )
    parser.add_argument(
        "--upstream",
        metavar="URL|PATH",
        default=None,
        help="no tree given: fetch one at the manifest's pinned base from here (the check's "
        "fetcher, cached under $XDG_CACHE_HOME/patchcarry/trees)",
    )
    parser.add_argument("--manifest", type=Path, default=None)
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="directory for the evidence JSON and PNG (default: ./evidence for hc-gpt; "
        "./build/measure for synthetic, which is no evidence for a PR)",
    )
    parser.add_argument("--name", default=None, help="file stem (default: MODEL-DEVICE[-seqN])")
    parser.add_argument(
        "--require-predicted",
        type=float,
        default=None,
        metavar="TOL",
        help="exit 1 if the fix frees less than (1-TOL) x the predicted bytes",
    )


def run(args: argparse.Namespace) -> int:
    if args.harness == "pretrain":
        from patchcarry.measure import pretrain_setup

        return pretrain_setup.run(args)
    from patchcarry.measure import setup

    return setup.run(args)
