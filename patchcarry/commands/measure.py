"""Measure what each variant (unpatched, fix, reset, both) keeps alive between iterations.

Every variant runs in its own child process on its own patched copy of a Megatron tree, with
full recompute. The result is printed as a table (measured vs the analytic model) and written
to --out as evidence JSON (schema: patchcarry/measure/evidence.schema.json) and a PNG plot.
--model hc-gpt needs an upstream tree (--megatron-src or MEGATRON_SRC); --model synthetic
runs on the installed megatron-core unless --megatron-src is given.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
from pathlib import Path
from typing import Any

from patchcarry.errors import ExitCode, FatalError

DEFAULT_OUT = Path(__file__).resolve().parent.parent.parent / "evidence"
CPU_DEFAULTS = {"layers": 2, "seq": 64, "mbs": 2, "hidden": 32, "streams": 4}


class NoUpstreamTree(FatalError):
    """--model hc-gpt without an upstream source tree."""

    exit_code = ExitCode.USAGE


def _positive(text: str) -> int:
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
    parser.add_argument("--iterations", type=_positive, default=3)
    for name, default in CPU_DEFAULTS.items():
        parser.add_argument(
            f"--{name}", type=_positive, default=None, help=f"(default {default} on CPU)"
        )
    parser.add_argument(
        "--dtype",
        choices=("fp32", "bf16", "fp16"),
        default=None,
        help="default fp32 on CPU (the local spec fails in bf16 there), bf16 on GPU",
    )
    parser.add_argument("--vocab", type=_positive, default=1024)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
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
        default=DEFAULT_OUT,
        help="directory for the evidence JSON and PNG (default: evidence/)",
    )
    parser.add_argument("--name", default=None, help="file stem (default: MODEL-DEVICE[-seqN])")
    parser.add_argument(
        "--require-predicted",
        type=float,
        default=None,
        metavar="TOL",
        help="exit 1 if the fix frees less than (1-TOL) x the predicted bytes",
    )


def _shape(args: argparse.Namespace) -> Any:
    from patchcarry.measure import model

    if args.seed_config:
        if args.device != "cuda":
            raise FatalError("--seed-config is the PR's GPU configuration; add --device cuda")
        base = model.pr_seed_shape()
        return dataclasses.replace(base, seq=args.seq or base.seq)
    values = {k: getattr(args, k) or v for k, v in CPU_DEFAULTS.items()}
    dtype = args.dtype or ("bf16" if args.device == "cuda" else "fp32")
    return model.Shape(dtype=dtype, **values)


def _source_tree(args: argparse.Namespace) -> Path:
    from patchcarry import megatron_tree

    if args.megatron_src:
        tree: Path = args.megatron_src.expanduser().resolve()
        if not (tree / "megatron" / "core" / "__init__.py").is_file():
            raise NoUpstreamTree(f"--megatron-src {tree} has no megatron/core/__init__.py")
        return tree
    if args.model == "synthetic":
        return megatron_tree.installed_tree()
    upstream = megatron_tree.upstream_tree_from_env()
    if upstream is None and args.upstream:
        upstream = _fetched_tree(args)
    if upstream is None:
        raise NoUpstreamTree(
            "--model hc-gpt needs an upstream Megatron-LM tree (HyperConnectionTransformerLayer "
            "is not in megatron-core 0.16.1): pass --megatron-src PATH, set MEGATRON_SRC to a "
            "checkout at the manifest's base_commit, fetch one with --upstream URL, "
            "or use --model synthetic"
        )
    return upstream


def _fetched_tree(args: argparse.Namespace) -> Path:
    """The pinned base's tree from `--upstream`, through the check's fetcher (cached)."""
    from patchcarry import manifest, upstream

    loaded = manifest.load(args.manifest) if args.manifest else manifest.load()
    base = loaded.entries[0].base_commit
    fetched = upstream.fetch(args.upstream, base_commits=[base], branches=[], pulls=[])
    trees = upstream.default_work_dir(fetched.url).parent.parent / "trees"
    return upstream.checkout_tree(fetched, base, trees / base)


def _tree_info(tree: Path) -> dict[str, Any]:
    from patchcarry import megatron_tree

    return {
        "source": str(tree),
        "label": megatron_tree.tree_label(tree),
        "commit": megatron_tree.tree_commit(tree),
    }


def _check_fix(evidence: dict[str, Any], tolerance: float) -> bool:
    """True when the fix frees at least (1-tolerance) x predicted in every run."""
    key = "allocated_floor_bytes" if evidence["device"] == "cuda" else "live_tensor_bytes"
    ok = True
    for run in evidence["runs"]:
        for v in run["variants"]:
            if v["name"] == "fix" and v["status"] == "measured":
                measured, predicted = v["freed"][key], v["freed"]["predicted"]
                if measured is None or measured < (1 - tolerance) * predicted:
                    print(
                        f"FAIL: seq {run['shape']['seq']}: fix freed {measured} B, model "
                        f"predicts {predicted} B (tolerance {tolerance:.0%})",
                        file=sys.stderr,
                    )
                    ok = False
    return ok


def run(args: argparse.Namespace) -> int:
    from patchcarry import manifest as manifest_mod
    from patchcarry.measure import evidence, model, plot, session, variants

    shape = _shape(args)
    src = _source_tree(args)
    manifest = manifest_mod.load(args.manifest) if args.manifest else manifest_mod.load()
    requested = [v.strip() for v in args.variants.split(",") if v.strip()]
    plan = variants.plan(manifest, requested, args.patch)
    if args.model == "synthetic":
        plan = [
            dataclasses.replace(v, skip_reason=v.skip_reason or variants.SYNTHETIC_NO_RESET)
            if v.name in ("reset", "both")
            else v
            for v in plan
        ]
    out = args.out.resolve()
    stem = args.name or f"{args.model}-{args.device}" + (
        f"-seq{shape.seq}" if args.seed_config else ""
    )
    request = session.Request(
        model=args.model,
        shapes=(shape,),
        device=args.device,
        iterations=args.iterations,
        vocab=args.vocab,
        snapshot_dir=out if args.snapshot and args.device == "cuda" else None,
        torch_compile=args.torch_compile,
    )
    with tempfile.TemporaryDirectory(prefix="patchcarry-measure-") as work:
        results = session.run(
            src,
            plan,
            request,
            Path(work),
            offline_note=variants.offline_note(manifest),
            progress=lambda line: print(f"measure: {line}", file=sys.stderr),
        )
    doc = evidence.build(
        request,
        results,
        tree=_tree_info(src),
        seed_config=args.seed_config,
        model_shapes=[model.shape_for(args.model, shape)],
    )
    json_path = evidence.write(doc, out / f"{stem}.json")
    png_path = plot.write_png(doc, out / f"{stem}.png")
    print(evidence.render_markdown_table(doc))
    print(f"evidence: {json_path}\nplot: {png_path}")
    if args.require_predicted is not None and not _check_fix(doc, args.require_predicted):
        return ExitCode.FAILED
    return ExitCode.OK
