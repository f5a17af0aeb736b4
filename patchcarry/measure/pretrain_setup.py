"""`measure --harness pretrain` after parsing: shape, GPU need, runs, evidence, plot."""

from __future__ import annotations

import dataclasses
import sys
import tempfile
from pathlib import Path
from typing import Any

from patchcarry import install, manifest
from patchcarry.errors import UsageError
from patchcarry.measure import model, pretrain, pretrain_evidence, pretrain_plot, setup, variants
from patchcarry.measure.model import CPU_DEFAULTS, VARIANTS, Shape
from patchcarry.runtime import tree as megatron_tree

DEFAULT_ITERATIONS = 6  # the first step compiles; the floor is read after the last
# One training process at most (start-up, compile, steps): a hung run must not take
# gpu-check's 10-minute budget with it.
RUN_TIMEOUT_S = 300.0


def shape_for(opts: setup.Options) -> Shape:
    """The PR's seed configuration, with any shape option given on the command line instead."""
    if opts.device != "cuda":
        raise UsageError("--harness pretrain runs on a GPU: drop --device cpu (or use cuda)")
    if opts.model != "hc-gpt":
        raise UsageError("--harness pretrain trains upstream's GPT (--model hc-gpt)")
    given = {k: getattr(opts, k) for k in CPU_DEFAULTS if getattr(opts, k)}
    if opts.dtype:
        given["dtype"] = opts.dtype
    return dataclasses.replace(model.pr_seed_shape(), **given)


def command_line(shape: Shape, iterations: int, repeats: int,
                 requested: list[str] | None = None) -> str:  # fmt: skip
    """The command that reproduces this measurement (recorded in the evidence)."""
    seed = model.pr_seed_shape()
    parts = ["python -m patchcarry measure --harness pretrain"]
    for key in ("layers", "seq", "mbs", "hidden", "streams", "dtype"):
        if getattr(shape, key) != getattr(seed, key):
            parts.append(f"--{key} {getattr(shape, key)}")
    parts += [f"--iterations {iterations}", f"--repeats {repeats}"]
    if requested and list(requested) != list(VARIANTS):
        parts.append(f"--variants {','.join(requested)}")
    return " ".join(parts)


def stem(shape: Shape) -> str:
    return f"hc-gpt-pretrain-cuda-{shape.layers}l-seq{shape.seq}"


def run(opts: setup.Options) -> int:
    """Train every requested variant; print the table, write evidence JSON and PNG."""
    opts = dataclasses.replace(opts, device=opts.device or "cuda")
    shape = shape_for(opts)
    install.require(("torch", "matplotlib"), "measure", "test")
    pretrain.require_cuda()
    src = setup.source_tree(opts)
    loaded = manifest.load(opts.manifest) if opts.manifest else manifest.load()
    requested = [v.strip() for v in opts.variants.split(",") if v.strip()]
    plan = variants.plan(loaded, requested, opts.patch)
    iterations = opts.iterations or DEFAULT_ITERATIONS
    installed = megatron_tree.installed_tree() if install.has_module("megatron.core") else None
    with tempfile.TemporaryDirectory(prefix="patchcarry-pretrain-") as work:
        argv, results = pretrain.run(
            src, plan, shape, Path(work), iterations=iterations, repeats=opts.repeats,
            installed=installed, timeout_s=RUN_TIMEOUT_S,
            offline_note=variants.offline_note(loaded),
            progress=lambda line: print(f"measure: {line}", file=sys.stderr),
        )  # fmt: skip
    doc = pretrain_evidence.build(results, shape=shape, iterations=iterations, pretrain_argv=argv,
                                  command=command_line(shape, iterations, opts.repeats, requested),
                                  tree=setup.tree_info(src))  # fmt: skip
    out = (opts.out or Path("evidence")).resolve()
    name = opts.name or stem(shape)
    json_path = pretrain_evidence.write(doc, out / f"{name}.json")
    png_path = pretrain_plot.write_png(doc, out / f"{name}.png")
    held = opts.require_predicted is None or fix_meets_prediction(doc, opts.require_predicted)
    return setup.report(pretrain_evidence.render_markdown_table(doc), json_path, png_path, held)


def fix_meets_prediction(doc: dict[str, Any], tolerance: float) -> bool:
    """True when the fix frees at least (1-tolerance) x the predicted floor bytes."""
    fix = next((v for v in doc["variants"] if v["name"] == "fix"), None)
    if fix is None or "freed" not in fix:  # asked to hold the fix to its prediction, unmeasured
        print("FAIL: the fix was not measured (skipped, or not among --variants)", file=sys.stderr)
        return False
    measured, predicted = fix["freed"]["floor_bytes"], fix["freed"]["predicted"]
    if measured is not None and measured >= (1 - tolerance) * predicted:
        return True
    print(f"FAIL: the fix freed {measured} B of the floor, the model predicts {predicted} B "
          f"(tolerance {tolerance:.0%})",
          file=sys.stderr)  # fmt: skip
    return False
