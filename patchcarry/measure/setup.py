"""What `measure` does once its command line is read: shape, tree, runs, evidence, plot."""

from __future__ import annotations

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


@dataclasses.dataclass(frozen=True)
class TreeFrom:
    """What picks the source tree (`measure` and `audit` share these options)."""

    model: str
    megatron_src: Path | None
    upstream: str | None
    manifest: Path | None


@dataclasses.dataclass(frozen=True)
class Options(TreeFrom):
    """`measure --help`'s options as plain values (None: the option's default applies)."""

    harness: str
    repeats: int
    variants: str
    patch: list[Path]
    iterations: int | None
    layers: int | None
    seq: int | None
    mbs: int | None
    hidden: int | None
    streams: int | None
    dtype: str | None
    vocab: int
    device: str | None
    seed_config: bool
    snapshot: bool
    torch_compile: bool
    out: Path | None
    name: str | None
    require_predicted: float | None


class NoUpstreamTree(MissingInstallError):
    """--model hc-gpt without an upstream source tree (exit 5, like any missing tree)."""


def shape_for(opts: Options) -> Shape:
    """The model shape: the PR's seed configuration, or the CPU defaults with overrides."""
    if opts.seed_config:
        if opts.device != "cuda":
            raise UsageError("--seed-config is the PR's GPU configuration; add --device cuda")
        base = model.pr_seed_shape()
        return dataclasses.replace(base, seq=opts.seq or base.seq)
    values = {k: getattr(opts, k) or v for k, v in CPU_DEFAULTS.items()}
    dtype = opts.dtype or ("bf16" if opts.device == "cuda" else "fp32")
    return Shape(dtype=dtype, **values)


def source_tree(opts: TreeFrom) -> Path:
    """The Megatron tree the variants are copied from."""
    if opts.megatron_src:
        tree: Path = opts.megatron_src.expanduser().resolve()
        if not (tree / "megatron" / "core" / "__init__.py").is_file():
            raise NoUpstreamTree(f"--megatron-src {tree} has no megatron/core/__init__.py")
        return tree
    if opts.model == "synthetic":
        return megatron_tree.installed_tree()
    upstream = megatron_tree.upstream_tree_from_env()
    if upstream is None and opts.upstream:
        upstream = _fetched_tree(opts.upstream, opts.manifest)
    if upstream is None:
        raise NoUpstreamTree(
            "--model hc-gpt needs an upstream Megatron-LM tree (HyperConnectionTransformerLayer "
            "is not in megatron-core 0.16.1): pass --megatron-src PATH, set MEGATRON_SRC to a "
            "checkout at the manifest's base_commit, fetch one with --upstream URL, "
            "or use --model synthetic"
        )
    return upstream


def _fetched_tree(url: str, manifest_path: Path | None) -> Path:
    """The pinned base's tree from `--upstream`, through the check's fetcher (cached)."""
    loaded = manifest.load(manifest_path) if manifest_path else manifest.load()
    base = loaded.entries[0].base_commit
    fetched = upstream.fetch(url, base_commits=[base], branches=[], pulls=[])
    trees = upstream.default_work_dir(fetched.url).parent.parent / "trees"
    return upstream.checkout_tree(fetched, base, trees / base)


def tree_info(tree: Path) -> dict[str, Any]:
    return {
        "source": tree.name,  # committed evidence names no path of the machine it ran on
        "label": megatron_tree.tree_label(tree),
        "commit": megatron_tree.tree_commit(tree),
    }


def reproduce_command(opts: Options, shape: Shape, upstream_repo: str) -> str:
    """The line that re-runs this measurement anywhere (every shape option, the pinned base)."""
    parts = ["scripts/measure", "--upstream", upstream.git_url(upstream_repo)]
    if opts.model != "hc-gpt":
        parts += ["--model", opts.model]
    if opts.device != "cpu":
        parts += ["--device", str(opts.device)]
    if opts.seed_config:
        parts += ["--seed-config", "--seq", str(shape.seq)]
    else:
        parts += [w for name in CPU_DEFAULTS for w in (f"--{name}", str(getattr(shape, name)))]
        parts += ["--dtype", shape.dtype]
    parts += ["--variants", opts.variants, "--iterations", str(opts.iterations)]
    return " ".join(shlex.quote(p) for p in parts)


def differs_from_command(opts: Options) -> str | None:
    """Why the recorded command is not the one that ran (None: it is, so "Produced by")."""
    if opts.megatron_src:
        return "the tree came from --megatron-src"
    if opts.model != "synthetic" and megatron_tree.upstream_tree_from_env() is not None:
        return f"the tree came from {megatron_tree.MEGATRON_SRC_ENV}"
    if opts.manifest:
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
                    print(f"FAIL: seq {run['shape']['seq']}: fix freed {measured} B, model "
                          f"predicts {predicted} B (tolerance {tolerance:.0%})",
                          file=sys.stderr)  # fmt: skip
                    ok = False
    return ok


def run(opts: Options) -> int:
    """Measure every requested variant, print the table, write evidence JSON and PNG."""
    device, iterations = opts.device or "cpu", opts.iterations or DEFAULT_ITERATIONS
    opts = dataclasses.replace(opts, device=device, iterations=iterations)
    install.require(("torch", "matplotlib"), "measure", "test")
    shape = shape_for(opts)
    src = source_tree(opts)
    loaded = manifest.load(opts.manifest) if opts.manifest else manifest.load()
    requested = [v.strip() for v in opts.variants.split(",") if v.strip()]
    plan = variants.plan(loaded, requested, opts.patch)
    if opts.model == "synthetic":
        plan = [dataclasses.replace(v, skip_reason=v.skip_reason or variants.SYNTHETIC_NO_RESET)
                if v.name in ("reset", "both") else v for v in plan]  # fmt: skip
    default_out = Path("evidence") if opts.model == "hc-gpt" else Path("build", "measure")
    out = (opts.out or default_out).resolve()
    stem = opts.name or f"{opts.model}-{opts.device}" + (
        f"-seq{shape.seq}" if opts.seed_config else ""
    )
    request = session.Request(model=opts.model, shapes=(shape,), device=device,
                              iterations=iterations, vocab=opts.vocab,
                              snapshot_dir=out if opts.snapshot and opts.device == "cuda" else None,
                              torch_compile=opts.torch_compile)  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="patchcarry-measure-") as work:
        results = session.run(
            src, plan, request, Path(work), offline_note=variants.offline_note(loaded),
            progress=lambda line: print(f"measure: {line}", file=sys.stderr),
        )  # fmt: skip
    doc = evidence.build(request, results, tree=tree_info(src), seed_config=opts.seed_config,
                         model_shapes=[model.shape_for(opts.model, shape)])  # fmt: skip
    doc["command"] = reproduce_command(opts, shape, loaded.entries[0].upstream)
    doc["command_ran"] = differs_from_command(opts) is None
    json_path = evidence.write(doc, out / f"{stem}.json")
    png_path = plot.write_png(doc, out / f"{stem}.png")
    held = opts.require_predicted is None or fix_meets_prediction(doc, opts.require_predicted)
    return report(evidence.render_markdown_table(doc), json_path, png_path, held)


def report(table: str, json_path: Path, png_path: Path, held: bool) -> int:
    """Print the table and where the evidence went; exit 1 when the model's bound failed."""
    print(table)
    print(f"evidence: {json_path}\nplot: {png_path}")
    return ExitCode.OK if held else ExitCode.FAILED
