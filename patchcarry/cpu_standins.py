"""Stand-ins for the CUDA-only pieces Megatron's checkpointing touches, for CPU runs.

Each stand-in is named for exactly what it replaces and is installed only when CUDA is
absent; everything else (CheckpointFunction, detach_variable, autograd) stays real.
"""

from __future__ import annotations

import types
from typing import Any

import torch


class CpuStandInCudaGenerator:
    """Stands in for the CUDA default generator: a CPU torch.Generator with its own state.

    `_get_cuda_rng_state` returns this generator's state and `_set_cuda_rng_state` restores
    it, so checkpoint recompute forks and restores a distinct "CUDA" stream just as on GPU.
    """

    def __init__(self, seed: int = 1234) -> None:
        self.generator = torch.Generator(device="cpu")
        self.generator.manual_seed(seed)

    def get_state(self, *_: Any, **__: Any) -> torch.Tensor:
        return self.generator.get_state()

    def set_state(self, new_state: torch.Tensor, *_: Any, **__: Any) -> None:
        self.generator.set_state(new_state)


def install_cuda_rng_state_standin(random_module: types.ModuleType) -> CpuStandInCudaGenerator:
    """Replace `_get_cuda_rng_state`/`_set_cuda_rng_state` in megatron's random module.

    A no-op returning None when CUDA is available: the real functions are used there.
    """
    standin = CpuStandInCudaGenerator()
    if torch.cuda.is_available():
        return standin
    random_module._get_cuda_rng_state = standin.get_state  # type: ignore[attr-defined]
    random_module._set_cuda_rng_state = standin.set_state  # type: ignore[attr-defined]
    return standin
