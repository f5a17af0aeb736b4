"""Evidence of `measure --harness pretrain`, with the spread across repeats."""

from __future__ import annotations

import dataclasses
import datetime
import platform
import statistics
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from patchcarry import __version__, jsondoc
from patchcarry.errors import BadInputError
from patchcarry.measure import model
from patchcarry.measure.evidence import freed_ratio
from patchcarry.measure.variants import VariantResult
from patchcarry.units import human_bytes

SCHEMA_PATH = Path(__file__).with_name("pretrain.schema.json")
HARNESS = "pretrain"


def _spread(values: Sequence[int]) -> dict[str, int]:
    return {"min": min(values), "max": max(values)}


def _median_step(runs: Sequence[dict[str, Any]]) -> float:
    times = [s["step_time_s"] for r in runs for s in (r["steps"][1:] or r["steps"])]
    return float(statistics.median(times))


def _variant(result: VariantResult, shape: model.Shape) -> dict[str, Any]:
    v = result.variant
    out = result.head()
    if result.child is None:
        return out
    runs = result.child["runs"]
    if any(not r["steps"] for r in runs):
        raise BadInputError(f"{v.name}: a training run reported no step")
    out.update(repeats=[{"steps": r["steps"]} for r in runs],
               floor_bytes=_spread([r["steps"][-1]["allocated_floor_bytes"] for r in runs]),
               peak_bytes=_spread([max(s["peak_bytes"] for s in r["steps"]) for r in runs]),
               reserved_bytes=_spread([r["steps"][-1]["reserved_bytes"] for r in runs]),
               step_time_median_s=_median_step(runs),
               predicted_retained_bytes=model.predict(shape, v.name).total)  # fmt: skip
    return out


def _compare(variants: list[dict[str, Any]], shape: model.Shape) -> None:
    base = next((v for v in variants if v["name"] == "unpatched" and "repeats" in v), None)
    for v in variants:
        if "repeats" not in v:
            continue
        v["freed"] = {
            "floor_bytes": base["floor_bytes"]["min"] - v["floor_bytes"]["min"] if base else None,
            "predicted": model.freed(shape, v["name"]),
        }
        v["step_time_ratio"] = (
            v["step_time_median_s"] / base["step_time_median_s"] if base else None
        )


def build(
    results: Sequence[VariantResult], *, shape: model.Shape, iterations: int,
    pretrain_argv: list[str], command: str, tree: dict[str, Any],
) -> dict[str, Any]:  # fmt: skip
    """The evidence document of one training-loop measurement."""
    measured = [r.child["runs"][0] for r in results if r.child is not None]
    if not measured:
        raise BadInputError("no variant could be measured; see the skip reasons above")
    variants = [_variant(r, shape) for r in results]
    _compare(variants, shape)
    return {
        "schema_version": 1,
        "harness": HARNESS,
        "created_utc": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": command,
        "model": "hc-gpt",
        "device": "cuda",
        "shape": dataclasses.asdict(shape),
        "iterations": iterations,
        "repeats": max(len(v.get("repeats", [])) for v in variants),
        "pretrain_script": "pretrain_gpt.py (upstream's, unchanged)",
        "pretrain_argv": pretrain_argv,
        "tree": tree,
        "versions": {"python": platform.python_version(),
                     "torch": measured[0]["torch_version"], "patchcarry": __version__,
                     "megatron": tree["label"]},
        "hardware": {"gpu": measured[0]["cuda_device"], "platform": platform.platform()},
        "variants": variants,
    }  # fmt: skip


def is_pretrain(doc: Any) -> bool:
    """Whether a parsed evidence file is the training loop's (any JSON may be handed in)."""
    return isinstance(doc, dict) and doc.get("harness") == HARNESS


def write(doc: dict[str, Any], path: Path) -> Path:
    return jsondoc.write(doc, path, SCHEMA_PATH, indent=1, sort_keys=True)


def load(path: Path) -> dict[str, Any]:
    return jsondoc.load(path, SCHEMA_PATH)


def bytes_spread(spread: dict[str, int]) -> str:
    """`1.2 GB`, or `1.2 GB – 1.3 GB` where the runs differ."""
    if spread["min"] == spread["max"]:
        return human_bytes(spread["min"])
    return f"{human_bytes(spread['min'])} – {human_bytes(spread['max'])}"


def headline(doc: dict[str, Any]) -> str:
    s = doc["shape"]
    return (
        f"upstream's pretrain_gpt.py on {doc['hardware']['gpu']}: {s['layers']} layers, "
        f"seq {s['seq']}, mbs {s['mbs']}, hidden {s['hidden']}, {s['streams']} streams, "
        f"{s['dtype']}; {doc['iterations']} steps x {doc['repeats']} run(s) per variant"
    )


def render_markdown_table(doc: dict[str, Any], only: Collection[str] = ()) -> str:
    """The training-loop table; `only`: those variants' rows (e.g. unpatched and one fix)."""
    rows = ["| variant | allocator floor between iterations | floor freed | predicted freed "
            "| measured / predicted | peak | reserved | step time (median) | step-time ratio |",
            "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for v in doc["variants"]:
        if only and v["name"] not in only:
            continue
        if v["status"] == "skipped":
            rows.append(f"| {v['name']} | skipped: {v['skip_reason']} |" + " |" * 7)
            continue
        freed, predicted = v["freed"]["floor_bytes"], v["freed"]["predicted"]
        ratio = v["step_time_ratio"]
        rows.append(f"| {v['name']} | {bytes_spread(v['floor_bytes'])} "
                    f"| {'–' if freed is None else human_bytes(freed)} | {human_bytes(predicted)} "
                    f"| {freed_ratio(freed, predicted)} | {bytes_spread(v['peak_bytes'])} "
                    f"| {bytes_spread(v['reserved_bytes'])} | {v['step_time_median_s']:.3f} s "
                    f"| {'–' if ratio is None else f'{ratio:.3f}'} |")  # fmt: skip
    note = ("Floor: `torch.cuda.memory_allocated()` after the last step; peak: "
            "`max_memory_allocated()` within a step; reserved: `memory_reserved()`; ranges are "
            "min – max over the runs. Produced by: `" + doc["command"] + "`.")  # fmt: skip
    return f"{headline(doc)}\n\n" + "\n".join(rows) + f"\n\n{note}\n"
