"""The probe's TP=2 batch: two CPU ranks forked from the child after its one Megatron import,
joined over gloo, running the `distribute_saved_activations=True` scenarios."""

from __future__ import annotations

import datetime
import multiprocessing
import os
import queue
import traceback
import types
from typing import Any

import torch

from patchcarry.proof.scenarios import run_scenario
from patchcarry.runtime.child import free_loopback_port
from patchcarry.runtime.standins_dist import install_split_gather_cpu_device_standin
from patchcarry.runtime.tracker import DetachedInputTracker

WORLD_SIZE = 2
TIMEOUT_S = 120


def _rank_main(
    rank: int,
    port: int,
    random_module: types.ModuleType,
    tracker: DetachedInputTracker,
    scenarios: list[Any],
    iterations: int,
    results: Any,
) -> None:

    out: dict[str, Any] = {}
    try:
        torch.set_num_threads(1)
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        torch.distributed.init_process_group(
            "gloo", rank=rank, world_size=WORLD_SIZE, timeout=datetime.timedelta(seconds=TIMEOUT_S)
        )
        import megatron.core.tensor_parallel.utils as tp_utils
        from megatron.core import parallel_state

        parallel_state.initialize_model_parallel(tensor_model_parallel_size=WORLD_SIZE)
        install_split_gather_cpu_device_standin(tp_utils)
        for scenario in scenarios:
            out[f"{scenario.name}@rank{rank}"] = run_scenario(random_module, tracker, scenario,
                                                              iterations)  # fmt: skip
        parallel_state.destroy_model_parallel()
        torch.distributed.destroy_process_group()
    except Exception:
        out[f"setup@rank{rank}"] = {"iterations": [], "error": traceback.format_exc()}
    results.put(out)


def run_tp2(
    random_module: types.ModuleType, tracker: DetachedInputTracker, scenarios: list[Any],
    iterations: int,
) -> dict[str, Any]:  # fmt: skip
    """Fork two ranks, run `scenarios` on each, return their merged results."""
    ctx = multiprocessing.get_context("fork")
    results = ctx.Queue()
    port = free_loopback_port()
    procs = [
        ctx.Process(target=_rank_main,
                    args=(rank, port, random_module, tracker, scenarios, iterations, results))
        for rank in range(WORLD_SIZE)
    ]  # fmt: skip
    for proc in procs:
        proc.start()
    merged: dict[str, Any] = {}
    try:
        for _ in procs:
            merged.update(results.get(timeout=TIMEOUT_S))
    except queue.Empty:
        merged["tp2"] = {"iterations": [], "error": f"a rank sent nothing within {TIMEOUT_S}s"}
    for proc in procs:
        proc.join(timeout=10)
        if proc.is_alive():
            proc.kill()
            proc.join()
    return merged
