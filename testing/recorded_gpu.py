"""Recorded GPU figures for CPU tests of what surrounds a GPU run: training-loop steps as the
allocator reported them on an H200 at the seed shape, built into an evidence document by the
real `pretrain_evidence.build`. The floors are quoted from issue 25's text (a run made outside
this repository, one run each): fixture values for the shapes of the code around a GPU run,
not evidence; the README quotes only committed evidence files."""

from __future__ import annotations

from typing import Any

from patchcarry.manifest import load as load_manifest
from patchcarry.measure import model, pretrain_args, pretrain_evidence, variants
from patchcarry.measure.variants import VariantResult

SEED = model.pr_seed_shape()
FLOORS = {"unpatched": 14_610_348_544, "fix": 14_341_913_088, "both": 14_006_368_768}
COMMAND = "python -m patchcarry measure --harness pretrain --iterations 3 --repeats 2"


def recorded_runs(floor: int, peaks: list[int]) -> dict[str, Any]:
    """A variant's child results: one run per peak, three steps each (the first compiles)."""
    runs = []
    for peak in peaks:
        steps = [
            {"index": i, "step_time_s": 20.0 if i == 0 else 0.175, "allocated_floor_bytes": floor,
             "peak_bytes": peak, "reserved_bytes": peak + 10**9}
            for i in range(3)
        ]  # fmt: skip
        runs.append({"torch_version": "2.11.0+cu130", "cuda_device": "NVIDIA H200",
                     "megatron_file": "x", "steps": steps})  # fmt: skip
    return {"runs": runs}


def pretrain_doc(peaks: dict[str, list[int]] | None = None) -> dict[str, Any]:
    """The seed-shape training-loop evidence: unpatched, fix and both measured; reset not."""
    peaks = peaks or {name: [30 * 10**9, 31 * 10**9] for name in FLOORS}
    plan = variants.plan(load_manifest(), ["unpatched", "fix", "reset", "both"])
    results = [
        VariantResult(v, recorded_runs(FLOORS[v.name], peaks[v.name]))
        if v.name in FLOORS
        else VariantResult(variants.Variant(v.name, (), (), skip_reason="not run"), None)
        for v in plan
    ]
    return pretrain_evidence.build(
        results, shape=SEED, iterations=3, pretrain_argv=pretrain_args.argv(SEED, iterations=3),
        command=COMMAND,
        tree={"source": "megatron-src", "label": "upstream tree megatron-src @ c76ff61",
              "commit": "c76ff61"},
    )  # fmt: skip
