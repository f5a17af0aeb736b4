"""The probe child: imports one Megatron tree (first on `sys.path`), runs the scenario batches
its request on stdin names (`{"batches": ["cpu"], "iterations": 2}`), prints one JSON document."""

from __future__ import annotations

import json
import sys
from typing import Any

import torch

from patchcarry.proof.probe import RESULT_MARKER
from patchcarry.proof.scenarios import SCENARIOS, run_scenario
from patchcarry.proof.tp2 import run_tp2
from patchcarry.runtime.standins import install_cuda_rng_state_standin
from patchcarry.runtime.tracker import track_detached_inputs


def probe(batches: list[str], iterations: int) -> dict[str, Any]:
    """Import the tree's megatron, install the CPU stand-ins and tracker, run the batches."""
    torch.set_num_threads(1)
    import megatron.core
    import megatron.core.tensor_parallel.random as random_module

    install_cuda_rng_state_standin(random_module)
    tracker = track_detached_inputs(random_module)
    result: dict[str, Any] = {"megatron_file": megatron.core.__file__,
                              "module_file": random_module.__file__,
                              "torch_version": torch.__version__,
                              "cuda_available": torch.cuda.is_available(), "iterations": iterations,
                              "scenarios": {}}  # fmt: skip
    for batch in batches:
        if batch == "tp2":
            result["scenarios"].update(
                run_tp2(random_module, tracker, SCENARIOS["tp2"], iterations)
            )
        else:
            for scenario in SCENARIOS[batch]:
                result["scenarios"][scenario.name] = run_scenario(random_module, tracker, scenario,
                                                                  iterations)  # fmt: skip
    return result


def main() -> int:
    request = json.loads(sys.stdin.read())
    result = probe(request["batches"], request["iterations"])
    sys.stdout.write("\n" + RESULT_MARKER + json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
