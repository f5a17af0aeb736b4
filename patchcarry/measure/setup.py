"""What `measure` does once its command line is read: the shape, the source tree, the
variants' runs, the evidence and the plot. The command module only parses arguments."""

from __future__ import annotations

import argparse
import dataclasses
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any

from patchcarry import install, manifest, upstream
from patchcarry.errors import ExitCode, MissingInstallError, UsageError
from patchcarry.measure import evidence, model, plot, session, variants
from patchcarry.measure.model import CPU_DEFAULTS, Shape
from patchcarry.runtime import tree as megatron_tree

DEFAULT_ITERATIONS = 3
# The parsed command line (argparse's namespace; its fields are `measure --help`'s options).
Options = argparse.Namespace


class NoUpstreamTree(MissingInstallError):
    """--model hc-gpt without an upstream source tree (exit 5, like any missing tree)."""


def shape_for(args: Options) -> Shape:
    """The model shape: the PR's seed configuration, or the CPU defaults with overrides."""
    if args.seed_config:
        if args.device != "cuda":
            raise UsageError("--seed-config is the PR's GPU configuration; add --device cuda")
        base = model.pr_seed_shape()
        return dataclasses.replace(base, seq=args.seq or base.seq)
    values = {k: getattr(args, k) or v for k, v in CPU_DEFAULTS.items()}
    dtype = args.dtype or ("bf16" if args.device == "cuda" else "fp32")
    return Shape(dtype=dtype, **values)


def source_tree(args: Options) -> Path:
    """The Megatron tree the variants are copied from."""
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


def _fetched_tree(args: Options) -> Path:
    """The pinned base's tree from `--upstream`, through the check's fetcher (cached)."""
    loaded = manifest.load(args.manifest) if args.manifest else manifest.load()
    base = loaded.entries[0].base_commit
    fetched = upstream.fetch(args.upstream, base_commits=[base], branches=[], pulls=[])
    trees = upstream.default_work_dir(fetched.url).parent.parent / "trees"
    return upstream.checkout_tree(fetched, base, trees / base)


def tree_info(tree: Path) -> dict[str, Any]:
    return {
        "source": tree.name,  # committed evidence names no path of the machine it ran on
        "label": megatron_tree.tree_label(tree),
        "commit": megatron_tree.tree_commit(tree),
    }


def reproduce_command(args: Options, shape: Shape, upstream_repo: str) -> str:
    """The one line that re-runs this measurement on any machine: every shape option spelled
    out, the tree fetched at the manifest's pinned base (no path of this machine)."""
    parts = ["scripts/measure", "--upstream", upstream.git_url(upstream_repo)]
    if args.model != "hc-gpt":
        parts += ["--model", args.model]
    if args.device != "cpu":
        parts += ["--device", args.device]
    if args.seed_config:
        parts += ["--seed-config", "--seq", str(shape.seq)]
    else:
        parts += [w for name in CPU_DEFAULTS for w in (f"--{name}", str(getattr(shape, name)))]
        parts += ["--dtype", shape.dtype]
    parts += ["--variants", args.variants, "--iterations", str(args.iterations)]
    return " ".join(shlex.quote(p) for p in parts)


def differs_from_command(args: Options) -> str | None:
    """Why the recorded command is not the one that ran (it is rebuilt from the options, with
    the tree fetched at the pinned base), or None when it is that run: then, and only then,
    the table says "Produced by"."""
    if args.megatron_src:
        return "the tree came from --megatron-src"
    if args.model != "synthetic" and megatron_tree.upstream_tree_from_env() is not None:
        return f"the tree came from {megatron_tree.MEGATRON_SRC_ENV}"
    if args.manifest:
        return "--manifest named another manifest"
    return None


def fix_meets_prediction(evidence: dict[str, Any], tolerance: float) -> bool:
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


def run(args: Options) -> int:
    """Measure every requested variant, print the table, write evidence JSON and PNG."""
    args.device = args.device or "cpu"
    args.iterations = args.iterations or DEFAULT_ITERATIONS
    install.require(("torch", "matplotlib"), "measure", "test")
    shape = shape_for(args)
    src = source_tree(args)
    loaded = manifest.load(args.manifest) if args.manifest else manifest.load()
    requested = [v.strip() for v in args.variants.split(",") if v.strip()]
    plan = variants.plan(loaded, requested, args.patch)
    if args.model == "synthetic":
        plan = [
            dataclasses.replace(v, skip_reason=v.skip_reason or variants.SYNTHETIC_NO_RESET)
            if v.name in ("reset", "both")
            else v
            for v in plan
        ]
    default_out = Path("evidence") if args.model == "hc-gpt" else Path("build", "measure")
    out = (args.out or default_out).resolve()
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
            offline_note=variants.offline_note(loaded),
            progress=lambda line: print(f"measure: {line}", file=sys.stderr),
        )
    doc = evidence.build(
        request,
        results,
        tree=tree_info(src),
        seed_config=args.seed_config,
        model_shapes=[model.shape_for(args.model, shape)],
    )
    doc["command"] = reproduce_command(args, shape, loaded.entries[0].upstream)
    doc["command_ran"] = differs_from_command(args) is None
    json_path = evidence.write(doc, out / f"{stem}.json")
    png_path = plot.write_png(doc, out / f"{stem}.png")
    held = args.require_predicted is None or fix_meets_prediction(doc, args.require_predicted)
    return report(evidence.render_markdown_table(doc), json_path, png_path, held)


def report(table: str, json_path: Path, png_path: Path, held: bool) -> int:
    """Print the table and where the evidence went; exit 1 when the model's bound failed."""
    print(table)
    print(f"evidence: {json_path}\nplot: {png_path}")
    return ExitCode.OK if held else ExitCode.FAILED
