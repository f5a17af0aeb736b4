"""The audit child: each configuration for N iterations, then the census (or its error)."""

from __future__ import annotations

import gc
import json
import signal
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

import torch

from patchcarry.audit import census, walk
from patchcarry.audit.runner import RESULT_MARKER
from patchcarry.measure import child
from patchcarry.measure.model import Shape

# The functions whose results are tagged with an origin (instrumentation, not stand-ins).
ORIGINS = {"detach_variable": "CheckpointFunction detached input",
           "_load_args_from_ctx": "CheckpointWithoutOutput recomputed input"}  # fmt: skip


def _build(
    request: dict[str, Any], config: dict[str, Any]
) -> tuple[torch.nn.Module, Callable[[], None]]:
    return child.build(request, Shape(**config["shape"]), config["overrides"])


def iterate(
    model: torch.nn.Module, step: Callable[[], None], optimizer: torch.optim.Optimizer,
    iterations: int, tracker: census.OriginTracker, prefix: str = "megatron",
) -> list[dict[str, Any]]:  # fmt: skip
    """N iterations (step, optimizer step, zero grad, gc), the census after each."""
    out = []
    for index in range(iterations):
        step()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        gc.collect()
        roots = [("model", model), ("optimizer", optimizer), ("harness", step)]
        found = walk.reach([*roots, *walk.module_roots(prefix)])
        taken = census.take(found, census.model_state(model, optimizer), tracker.origins())
        del found
        out.append({"index": index, **taken})
    return out


class ConfigTimeout(BaseException):  # not caught by the broad `except Exception` below
    """A configuration ran past its time (several share this process on a GPU)."""


def _alarm(seconds: float | None, device: str) -> None:
    """Raise ConfigTimeout in this (main) thread after `seconds`; None or 0 clears it."""

    def stop(_signum: int, _frame: object) -> None:
        raise ConfigTimeout(f"did not finish within {seconds:g} s on {device}")

    if not seconds or not hasattr(signal, "setitimer"):
        return
    signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)


def audit_config(request: dict[str, Any], config: dict[str, Any],
                 tracker: census.OriginTracker) -> dict[str, Any]:  # fmt: skip
    """N iterations of one configuration, the census after each."""
    out: dict[str, Any] = {**config, "error": None, "iterations": []}
    try:
        _alarm(request.get("config_timeout_s"), request["device"])
        try:
            _audit_into(out, request, config, tracker)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except ConfigTimeout as exc:
        out["error"], out["iterations"] = str(exc), []
    return out


def _audit_into(
    out: dict[str, Any], request: dict[str, Any], config: dict[str, Any],
    tracker: census.OriginTracker,
) -> None:  # fmt: skip
    try:
        model, step = _build(request, config)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
        out["iterations"] = iterate(model, step, optimizer, request["iterations"], tracker)
    except Exception as exc:  # noqa: BLE001 - a configuration that does not build is a result
        lines = traceback.format_exception_only(type(exc), exc)
        out["error"] = lines[-1].strip()[:500]
        out["traceback"] = traceback.format_exc()[-3000:]


def audit(request: dict[str, Any]) -> dict[str, Any]:
    from megatron.core.tensor_parallel import random as random_module

    tracker = census.OriginTracker()
    instrumented = []
    for name, origin in ORIGINS.items():
        if hasattr(random_module, name):
            tracker.wrap(random_module, name, origin)
            instrumented.append(f"megatron.core.tensor_parallel.random.{name}")
    standins = child.install_standins(request, random_module)
    configs = []
    for config in request["configs"]:
        torch.manual_seed(request["seed"])
        start = time.perf_counter()
        configs.append(audit_config(request, config, tracker))
        gc.collect()
        status = configs[-1]["error"] or "audited"
        print(f"{config['name']}: {status} ({time.perf_counter() - start:.1f} s)", file=sys.stderr)
    return {
        **child.imported(request),
        "cpu_standins": standins,
        "instrumented": instrumented,
        "configs": configs,
    }


def main() -> int:
    torch.set_num_threads(1)
    request = json.loads(sys.stdin.read())
    result = audit(request)
    sys.stdout.write("\n" + RESULT_MARKER + json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
