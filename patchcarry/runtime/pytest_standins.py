"""pytest plugin (`-p patchcarry.runtime.pytest_standins`): upstream's CUDA + NCCL unit tests
on a CPU host, each CUDA-only thing stood in by one named function (with CUDA: nothing)."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from patchcarry.runtime.standin_typing import standin_typing_override
from patchcarry.runtime.standins import (
    CpuStandInCudaGenerator,
    install_cuda_rng_state_standin,
    standin_cuda_seed_api,
    standin_current_device_cpu,
    standin_nvtx_ranges,
)

# What `pytest_configure` installed, for the report header (empty when CUDA is present).
INSTALLED: list[str] = []


def standin_cuda_rng_state_functions() -> CpuStandInCudaGenerator:
    """megatron's `_get_cuda_rng_state`/`_set_cuda_rng_state` -> one CPU generator's state."""
    from megatron.core.tensor_parallel import random as megatron_random

    return install_cuda_rng_state_standin(megatron_random)


def standin_cuda_device_api() -> None:
    """One pretend device, the CPU (`device_count` 1, `set_device`/`synchronize` no-ops):
    megatron selects `rank % device_count()` and allocates on `current_device()`."""
    torch.cuda.device_count = lambda: 1
    standin_current_device_cpu()
    torch.cuda.set_device = lambda *_, **__: None
    torch.cuda.synchronize = lambda *_, **__: None


def standin_torch_compile_eager() -> None:
    """`@torch.compile` functions run eagerly: same math, no ten seconds of compile per child."""
    import torch._dynamo

    # no public switch: TORCH_COMPILE_DISABLE is read once, when torch._dynamo is imported
    torch._dynamo.config.disable = True


def standin_nccl_with_gloo() -> None:
    """`init_process_group(backend='nccl')` -> gloo, the CPU backend (world size 1 here)."""
    real_init = torch.distributed.init_process_group

    def init_process_group(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("backend") == "nccl":
            kwargs["backend"] = "gloo"
        elif args and args[0] == "nccl":
            args = ("gloo",) + args[1:]
        return real_init(*args, **kwargs)

    torch.distributed.init_process_group = init_process_group


def standin_cuda_moves() -> None:
    """`Tensor.cuda()` and `Module.cuda()` stay on the CPU (the carried tests call `.cuda()`)."""

    def tensor_cuda(self: torch.Tensor, *_: Any, **__: Any) -> torch.Tensor:
        return self

    def module_cuda(self: torch.nn.Module, *_: Any, **__: Any) -> torch.nn.Module:
        return self

    torch.Tensor.cuda = tensor_cuda  # type: ignore[method-assign,assignment]
    torch.nn.Module.cuda = module_cuda  # type: ignore[method-assign,assignment]


def pytest_configure(config: pytest.Config) -> None:
    """Install every stand-in, once, before collection; the CUDA ones only without CUDA."""
    standin_typing_override()
    if torch.cuda.is_available() or INSTALLED:
        return
    generator = standin_cuda_rng_state_functions()
    standin_cuda_seed_api(generator)
    standin_cuda_device_api()
    standin_nvtx_ranges()
    standin_torch_compile_eager()
    standin_nccl_with_gloo()
    standin_cuda_moves()
    INSTALLED.extend([
        "megatron _get/_set_cuda_rng_state", "torch.cuda seed/rng-state", "torch.cuda device api",
        "nvtx no-ops", "torch.compile eager", "nccl->gloo", ".cuda()->cpu",
    ])  # fmt: skip


def pytest_report_header(config: pytest.Config) -> str:
    """Say in the child's output which stand-ins are active."""
    if not INSTALLED:
        return "upstream_unit_standins: CUDA available, no stand-ins"
    return "upstream_unit_standins (CPU): " + ", ".join(INSTALLED)
