"""Stand-ins for the CUDA-only pieces Megatron touches, installed only without CUDA, each named
for exactly what it replaces; everything else (checkpointing, autograd, layers) stays real."""

from __future__ import annotations

import types
from typing import Any

import torch


class CpuStandInCudaGenerator:
    """The CUDA default generator stood in by a CPU generator with its own state, so checkpoint
    recompute forks and restores a distinct "CUDA" stream just as on GPU."""

    def __init__(self, seed: int = 1234) -> None:
        self.generator = torch.Generator(device="cpu")
        self.generator.manual_seed(seed)

    def get_state(self, *_: Any, **__: Any) -> torch.Tensor:
        return self.generator.get_state()

    def set_state(self, new_state: torch.Tensor, *_: Any, **__: Any) -> None:
        self.generator.set_state(new_state)


def install_cuda_rng_state_standin(random_module: types.ModuleType) -> CpuStandInCudaGenerator:
    """Replace `_get/_set_cuda_rng_state` in megatron's random module; no-op (None) on CUDA."""
    standin = CpuStandInCudaGenerator()
    if torch.cuda.is_available():
        return standin
    # megatron's own private names: the ones its random module calls, so the ones replaced
    random_module._get_cuda_rng_state = standin.get_state  # type: ignore[attr-defined]
    random_module._set_cuda_rng_state = standin.set_state  # type: ignore[attr-defined]
    return standin


def standin_cuda_seed_api(generator: CpuStandInCudaGenerator) -> None:
    """`torch.cuda` seed and RNG-state calls -> `generator` (fills `CudaRNGStatesTracker`)."""

    def manual_seed(seed: int) -> None:
        generator.generator.manual_seed(int(seed))

    torch.cuda.manual_seed = manual_seed
    torch.cuda.manual_seed_all = manual_seed
    torch.cuda.get_rng_state = generator.get_state
    torch.cuda.set_rng_state = generator.set_state


def standin_current_device_cpu() -> None:
    """`torch.cuda.current_device()` -> the CPU device (megatron's GlobalMemoryBuffer uses it)."""
    torch.cuda.current_device = lambda: torch.device("cpu")  # type: ignore[assignment,return-value]


def standin_nvtx_ranges() -> None:
    """`torch.cuda.nvtx` range_push/range_pop/mark -> no-ops (a CPU build raises on them)."""
    nvtx = torch.cuda.nvtx
    nvtx.range_push = lambda *_, **__: 0
    nvtx.range_pop = lambda *_, **__: 0
    nvtx.mark = lambda *_, **__: None
