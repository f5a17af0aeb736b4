"""The evidence file: built from the children's figures, validated against its schema, rendered."""

from __future__ import annotations

import dataclasses
import datetime
import os
import platform
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from patchcarry import __version__, jsondoc
from patchcarry.errors import BadInputError
from patchcarry.measure import model
from patchcarry.measure.session import Request
from patchcarry.measure.variants import VariantResult
from patchcarry.units import human_bytes

SCHEMA_PATH = Path(__file__).with_name("evidence.schema.json")


def cpu_model() -> str:
    """The CPU's model name (from /proc/cpuinfo on Linux), else platform.processor()."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _median_step(iterations: list[dict[str, Any]]) -> float:
    timed = iterations[1:] or iterations  # the first iteration is warm-up
    return float(statistics.median(i["step_time_s"] for i in timed))


def _variant(result: VariantResult, run_index: int, shape: model.Shape) -> dict[str, Any]:
    v = result.variant
    out = result.head()
    if result.child is None:
        return out
    run = result.child["runs"][run_index]
    last = run["iterations"][-1]
    cuda = last["cuda"]
    prediction = model.predict(shape, v.name)
    out.update(
        parameter_bytes=run["parameter_bytes"],
        iterations=run["iterations"],
        retained={"detached_grad_bytes": last["detached_grad_bytes"],
                  "detached_input_bytes": last["detached_input_bytes"],
                  "detached_total": last["detached_grad_bytes"] + last["detached_input_bytes"],
                  "live_tensor_bytes": last["live_tensor_bytes"],
                  "allocated_floor_bytes": cuda["allocated_floor_bytes"] if cuda else None},
        predicted={**dataclasses.asdict(prediction),
                   "detached_total": prediction.detached_total,
                   "total": prediction.total},
        step_time_median_s=_median_step(run["iterations"]),
    )  # fmt: skip
    return out


def _compare_with_unpatched(variants: list[dict[str, Any]]) -> None:
    base = next((v for v in variants if v["name"] == "unpatched" and "retained" in v), None)
    for v in variants:
        if "retained" not in v:
            continue
        floor = v["retained"]["allocated_floor_bytes"]
        base_floor = base["retained"]["allocated_floor_bytes"] if base else None
        v["freed"] = {
            "live_tensor_bytes": (
                base["retained"]["live_tensor_bytes"] - v["retained"]["live_tensor_bytes"]
            )
            if base
            else None,
            "allocated_floor_bytes": (base_floor - floor)
            if base_floor is not None and floor is not None
            else None,
            "predicted": (base["predicted"]["total"] - v["predicted"]["total"]) if base else 0,
        }
        v["grads_identical_to_unpatched"] = (
            (
                [i["grad_digest"] for i in v["iterations"]]
                == [i["grad_digest"] for i in base["iterations"]]
            )
            if base
            else None
        )
        v["step_time_ratio"] = (v["step_time_median_s"] / base["step_time_median_s"]
                                if base and base["step_time_median_s"] else None)  # fmt: skip


def build(
    request: Request, results: Sequence[VariantResult], *, tree: dict[str, Any],
    seed_config: bool = False, model_shapes: Sequence[model.Shape] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """The evidence document; `model_shapes`: the model's shapes (default `request.shapes`)."""
    shapes = list(model_shapes or request.shapes)
    measured = [r.child for r in results if r.child is not None]
    if not measured:
        raise BadInputError("no variant could be measured; see the skip reasons above")
    first = measured[0]
    runs = []
    for index, shape in enumerate(shapes):
        variants = [_variant(r, index, shape) for r in results]
        _compare_with_unpatched(variants)
        runs.append({"shape": dataclasses.asdict(shape), "variants": variants})
    return {
        "schema_version": 1,
        "created_utc": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "model": request.model,
        "device": request.device,
        "iterations": request.iterations,
        "torch_compile": request.device == "cuda" or request.torch_compile,
        "seed_config": seed_config,
        "tree": tree,
        "versions": {"python": platform.python_version(),
                     "torch": first["torch_version"], "patchcarry": __version__,
                     "megatron": tree["label"]},
        "hardware": {"device": request.device, "cpu_model": cpu_model(),
                     "cpu_count": os.cpu_count() or 0, "gpu": first["cuda_device"],
                     "platform": platform.platform()},
        "cpu_standins": first["cpu_standins"],
        "runs": runs,
        "extrapolation": model.pr_extrapolation(),
    }  # fmt: skip


def validate(doc: dict[str, Any]) -> None:
    jsondoc.validate(doc, SCHEMA_PATH)


def write(doc: dict[str, Any], path: Path) -> Path:
    return jsondoc.write(doc, path, SCHEMA_PATH, indent=1, sort_keys=True)


def load(path: Path) -> dict[str, Any]:
    return jsondoc.load(path, SCHEMA_PATH)


def freed_ratio(measured: int | None, predicted: int) -> str:
    if measured is None:
        return "–"
    if predicted == 0:
        return "exact" if measured == 0 else "∞"
    return f"{measured / predicted:.3f}"


def _yes_no(value: bool | None) -> str:
    return "–" if value is None else ("yes (bit-identical)" if value else "NO")


def render_markdown_table(evidence: dict[str, Any]) -> str:
    """One Markdown table per measured shape: measured vs predicted per variant."""
    gpu = evidence["device"] == "cuda"
    freed_key = "allocated_floor_bytes" if gpu else "live_tensor_bytes"
    freed_label = "allocator floor freed" if gpu else "live-tensor floor freed"
    blocks = []
    for run in evidence["runs"]:
        s = run["shape"]
        where = evidence["hardware"]["gpu"] or evidence["hardware"]["cpu_model"]
        head = (
            f"{evidence['model']} on {evidence['device']} ({where}): "
            f"{s['layers']} layers, seq {s['seq']}, mbs {s['mbs']}, hidden {s['hidden']}, "
            f"{s['streams']} streams, {s['dtype']}; {evidence['iterations']} iterations"
        )
        rows = [
            "| variant | detached `.grad` retained | detached inputs retained "
            "| predicted (grad + input) "
            f"| {freed_label} | predicted freed | measured / predicted freed | grads = unpatched |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for v in run["variants"]:
            if v["status"] == "skipped":
                rows.append(f"| {v['name']} | skipped: {v['skip_reason']} |" + " |" * 6)
                continue
            r, p, f = v["retained"], v["predicted"], v["freed"]
            rows.append(f"| {v['name']} | {human_bytes(r['detached_grad_bytes'])} "
                        f"| {human_bytes(r['detached_input_bytes'])} "
                        f"| {human_bytes(p['detached_grad_bytes'])} + "
                        f"{human_bytes(p['detached_input_bytes'])} "
                        f"| {human_bytes(f[freed_key])} | {human_bytes(f['predicted'])} "
                        f"| {freed_ratio(f[freed_key], f['predicted'])} "
                        f"| {_yes_no(v['grads_identical_to_unpatched'])} |")  # fmt: skip
        blocks.append(f"{head}\n\n" + "\n".join(rows))
    blocks.append(
        "No speed figure is drawn: each variant runs in its own process, one after another, so "
        "their step times (kept per iteration in the JSON) are not a side-by-side comparison."
    )
    if evidence.get("command") and evidence.get("command_ran"):
        blocks.append(f"Produced by: `{evidence['command']}`.")
    elif evidence.get("command"):  # rebuilt from the options: not the command that ran
        blocks.append(
            f"Reproduce with: `{evidence['command']}` (it fetches the tree at the pinned base; "
            f"this run read {evidence['tree']['label']})."
        )
    x = evidence["extrapolation"]
    blocks.append(
        f"{x['label'][:1].upper()}{x['label'][1:]}: {x['shape']['layers']} layers, "
        f"seq {x['shape']['seq']}, "
        f"hidden {x['shape']['hidden']} (derived: {x['hidden_derivation']}): the fix frees "
        f"{human_bytes(x['fix_freed_bytes'])}; both fixes free "
        f"{human_bytes(x['both_freed_bytes'])}."
    )
    return "\n\n".join(blocks) + "\n"
