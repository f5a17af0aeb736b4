"""CPU stand-in for the one CUDA call on the `distribute_saved_activations` path
(`current_device()` in `tensor_parallel.utils`); split, gather and gloo stay real."""

from __future__ import annotations

import types
from typing import Any

import torch


class _CudaWithCpuCurrentDevice:
    """`torch.cuda`, except `current_device()` names the CPU."""

    def current_device(self) -> torch.device:
        return torch.device("cpu")

    def __getattr__(self, name: str) -> Any:
        return getattr(torch.cuda, name)


class TorchWithCpuCurrentDevice:
    """`torch` as seen by the tensor-parallel utils module while CUDA is absent."""

    cuda = _CudaWithCpuCurrentDevice()

    def __getattr__(self, name: str) -> Any:
        return getattr(torch, name)


def install_split_gather_cpu_device_standin(tp_utils_module: types.ModuleType) -> bool:
    """Make `tp_utils_module`'s split/gather allocate on CPU; True if installed (not on CUDA)."""
    if torch.cuda.is_available():
        return False
    tp_utils_module.torch = TorchWithCpuCurrentDevice()  # type: ignore[attr-defined]
    return True
