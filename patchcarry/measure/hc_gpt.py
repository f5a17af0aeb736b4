"""A tiny real `GPTModel` with hyper connections from an upstream tree; in half precision it is
wrapped in `Float16Module` as upstream's training does (else the first forward fails)."""

from __future__ import annotations

import os
import types
from collections.abc import Callable, Mapping
from typing import Any

import torch

from patchcarry.measure.model import Shape, default_heads
from patchcarry.runtime.standins import (
    install_cuda_rng_state_standin,
    standin_cuda_seed_api,
    standin_current_device_cpu,
    standin_nvtx_ranges,
)

TORCH_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def install_cpu_standins(random_module: types.ModuleType) -> list[str]:
    """Install the CPU stand-ins (none when CUDA exists). Returns the names installed."""
    if torch.cuda.is_available():
        return []
    generator = install_cuda_rng_state_standin(random_module)
    standin_nvtx_ranges()
    standin_current_device_cpu()
    standin_cuda_seed_api(generator)
    return ["install_cuda_rng_state_standin", "standin_nvtx_ranges",
            "standin_current_device_cpu", "standin_cuda_seed_api"]  # fmt: skip


def init_single_rank(device: str, port: int) -> None:
    """World size 1 (gloo on CPU, NCCL on GPU) and megatron's TP=PP=1 groups."""
    from megatron.core import parallel_state

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(port))
    if device == "cuda":
        torch.cuda.set_device(0)
    if not torch.distributed.is_initialized():
        backend = "nccl" if device == "cuda" else "gloo"
        torch.distributed.init_process_group(backend, rank=0, world_size=1)
    if not parallel_state.model_parallel_is_initialized():
        parallel_state.initialize_model_parallel(1, 1)


def build(
    shape: Shape, *, device: str, vocab: int = 1024, seed: int = 1234,
    overrides: Mapping[str, Any] | None = None,
) -> torch.nn.Module:  # fmt: skip
    """Upstream's GPTModel, hyper-connection layers, full recompute; `overrides`: config fields."""
    from megatron.core.models.gpt import GPTModel
    from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
    from megatron.core.tensor_parallel import random as megatron_random
    from megatron.core.transformer.transformer_config import TransformerConfig

    megatron_random.model_parallel_cuda_manual_seed(seed)
    torch.manual_seed(seed)
    dtype = TORCH_DTYPES[shape.dtype]
    fields: dict[str, Any] = dict(num_layers=shape.layers, hidden_size=shape.hidden,
                                  num_attention_heads=default_heads(shape.hidden),
                                  use_cpu_initialization=True, enable_hyper_connections=True,
                                  num_residual_streams=shape.streams, recompute_granularity="full",
                                  recompute_method="uniform", recompute_num_layers=1,
                                  hidden_dropout=0.0, attention_dropout=0.0,
                                  bf16=shape.dtype == "bf16", fp16=shape.dtype == "fp16",
                                  params_dtype=dtype)  # fmt: skip
    fields.update(overrides or {})
    config = TransformerConfig(**fields)
    spec = get_gpt_layer_local_spec(
        num_experts=fields.get("num_moe_experts"),
        moe_grouped_gemm=bool(fields.get("moe_grouped_gemm")),
        enable_hyper_connection=bool(fields["enable_hyper_connections"]),
    )
    model = GPTModel(config=config, transformer_layer_spec=spec, vocab_size=vocab,
                     max_sequence_length=shape.seq,
                     position_embedding_type="learned_absolute")  # fmt: skip
    module: torch.nn.Module = model.to(device=device)
    if not (config.bf16 or config.fp16):
        return module
    from megatron.core.transformer.module import Float16Module

    # upstream's own half-precision wrapper, as `get_model` applies it
    wrapped: torch.nn.Module = Float16Module(config, module)
    return wrapped


def make_step(model: torch.nn.Module, shape: Shape, *, device: str, vocab: int = 1024,
              seed: int = 1234) -> Callable[[], None]:  # fmt: skip
    """One forward and backward with an explicit causal mask (upstream's is built on cuda)."""
    gen = torch.Generator().manual_seed(seed)
    tokens = torch.randint(0, vocab, (shape.mbs, shape.seq), generator=gen).to(device)
    labels = torch.randint(0, vocab, (shape.mbs, shape.seq), generator=gen).to(device)
    positions = torch.arange(shape.seq).unsqueeze(0).expand(shape.mbs, -1).to(device)
    mask = torch.ones(shape.seq, shape.seq, dtype=torch.bool).triu(1)[None, None].to(device)

    def step() -> None:
        loss: Any = model(tokens, positions, mask, labels=labels)
        loss.float().mean().backward()

    return step
