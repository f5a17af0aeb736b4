"""The measuring child: one variant's tree, N iterations per shape, figures after gc."""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import json
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

import torch

from patchcarry.audit.census import StorageKey, storage_key
from patchcarry.measure.model import Shape
from patchcarry.measure.session import RESULT_MARKER
from patchcarry.runtime.tracker import DetachedInputTracker, tensor_bytes, track_detached_inputs

CUDA_STATS = (
    "allocated_bytes.all.current", "active_bytes.all.current", "reserved_bytes.all.current",
    "allocation.all.current", "num_alloc_retries",
)  # fmt: skip


def live_tensor_bytes(model: torch.nn.Module) -> int:
    """Bytes of distinct storages of gc-visible tensors, parameters and their grads excepted."""
    excepted = {storage_key(t) for p in model.parameters() for t in (p, p.grad) if t is not None}
    seen: dict[StorageKey, int] = {}
    for obj in gc.get_objects():
        if isinstance(obj, torch.Tensor) and (key := storage_key(obj)) and key not in excepted:
            seen[key] = obj.untyped_storage().nbytes()
    return sum(seen.values())


def detached_figures(tracker: DetachedInputTracker) -> dict[str, int]:
    """Bytes of still-alive detached inputs that require grad, and of their .grad."""
    live = [t for t in tracker.live() if t.requires_grad]
    return {"detached_input_bytes": sum(tensor_bytes(t) for t in live),
            "detached_grad_bytes": sum(tensor_bytes(t.grad) for t in live if t.grad is not None),
            "detached_live_inputs": len(live)}  # fmt: skip


def grad_digest(model: torch.nn.Module) -> str:
    """sha256 over every parameter's grad bytes: equal across variants means identical grads."""
    h = hashlib.sha256()
    for name, p in model.named_parameters():
        h.update(name.encode())
        if p.grad is not None:
            h.update(
                p.grad.detach().contiguous().view(-1).view(torch.uint8).cpu().numpy().tobytes()
            )
    return h.hexdigest()


def cuda_figures() -> dict[str, Any]:
    stats = torch.cuda.memory_stats()
    return {"allocated_floor_bytes": torch.cuda.memory_allocated(),
            "peak_bytes": torch.cuda.max_memory_allocated(),
            "stats": {k: int(stats.get(k, 0)) for k in CUDA_STATS}}  # fmt: skip


def install_standins(request: dict[str, Any], random_module: Any) -> list[str]:
    """The CPU stand-ins the model needs (none on a GPU); their names."""
    if request["model"] == "hc-gpt":
        from patchcarry.measure import hc_gpt

        standins = hc_gpt.install_cpu_standins(random_module)
        hc_gpt.init_single_rank(request["device"], request["port"])
        return standins
    from patchcarry.runtime.standins import install_cuda_rng_state_standin

    install_cuda_rng_state_standin(random_module)
    return [] if torch.cuda.is_available() else ["install_cuda_rng_state_standin"]


def build(
    request: dict[str, Any], shape: Shape, overrides: Mapping[str, Any] | None = None
) -> tuple[torch.nn.Module, Callable[[], None]]:
    """The model and its step (`overrides`: hc-gpt config fields, which the audit varies)."""
    device, seed = request["device"], request["seed"]
    if request["model"] == "hc-gpt":
        from patchcarry.measure import hc_gpt

        model = hc_gpt.build(
            shape, device=device, vocab=request["vocab"], seed=seed, overrides=overrides
        )
        return model, hc_gpt.make_step(
            model, shape, device=device, vocab=request["vocab"], seed=seed
        )
    from patchcarry.measure import synthetic_model

    return synthetic_model.make_step(shape, device=device, seed=seed)


def imported(request: dict[str, Any]) -> dict[str, Any]:
    """What the child ran on: the megatron it imported, torch, the GPU (the result's head)."""
    import megatron.core

    cuda = request["device"] == "cuda"
    return {
        "megatron_file": megatron.core.__file__,
        "torch_version": torch.__version__,
        "cuda_device": torch.cuda.get_device_name(0) if cuda else None,
    }


def measure(request: dict[str, Any]) -> dict[str, Any]:
    """Run every shape of the request and return the figures (see the module docstring)."""
    from megatron.core.tensor_parallel import random as random_module

    tracker = track_detached_inputs(random_module)
    standins = install_standins(request, random_module)
    runs = []
    for shape_fields in request["shapes"]:
        torch.manual_seed(request["seed"])
        runs.append(measure_shape(request, Shape(**shape_fields), tracker))
        gc.collect()
    return {**imported(request), "cpu_standins": standins, "runs": runs}


def measure_shape(request: dict[str, Any], shape: Shape,
                  tracker: DetachedInputTracker) -> dict[str, Any]:  # fmt: skip
    """N iterations of one shape; the figures after each."""
    cuda = request["device"] == "cuda"
    model, step = build(request, shape)
    if cuda and request.get("snapshot"):
        # torch's memory-snapshot API is these underscore names ("Understanding CUDA Memory Usage")
        torch.cuda.memory._record_memory_history(max_entries=200_000)
    iterations = []
    for index in range(request["iterations"]):
        tracker.reset()
        gc.collect()
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        start = time.perf_counter()
        step()
        if cuda:
            torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
        digest = grad_digest(model)
        model.zero_grad(set_to_none=True)
        gc.collect()
        record: dict[str, Any] = {"index": index, "step_time_s": elapsed, "grad_digest": digest}
        record.update(detached_figures(tracker))
        record["live_tensor_bytes"] = live_tensor_bytes(model)
        record["cuda"] = cuda_figures() if cuda else None
        iterations.append(record)
    if cuda and request.get("snapshot"):
        torch.cuda.memory._dump_snapshot(  # type: ignore[no-untyped-call]
            f"{request['snapshot']}.{shape.seq}.pickle"
        )
        torch.cuda.memory._record_memory_history(enabled=None)  # (the snapshot API, above)
    return {"shape": dataclasses.asdict(shape),
            "parameter_bytes": sum(tensor_bytes(p) for p in model.parameters()),
            "iterations": iterations}  # fmt: skip


def main() -> int:
    torch.set_num_threads(max(1, min(4, torch.get_num_threads())))
    request = json.loads(sys.stdin.read())
    result = measure(request)
    sys.stdout.write("\n" + RESULT_MARKER + json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
