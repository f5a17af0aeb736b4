"""`--model synthetic`: checkpointed blocks that keep their output on the module, as HC does."""

from __future__ import annotations

from collections.abc import Callable

import torch

from patchcarry.measure.hc_gpt import TORCH_DTYPES
from patchcarry.measure.model import Shape
from patchcarry.proof.scenarios import KeepsOutputBlock


class CheckpointedStack(torch.nn.Module):
    """x -> pre linear -> [checkpoint(block_i)] x layers -> sum of squares."""

    def __init__(self, shape: Shape, seed: int = 1234) -> None:
        super().__init__()
        width = shape.hidden * shape.streams
        dtype = TORCH_DTYPES[shape.dtype]
        self.pre = torch.nn.Linear(width, width, dtype=dtype)
        self.blocks = torch.nn.ModuleList(
            KeepsOutputBlock(width, width, dtype, seed + i) for i in range(shape.layers)
        )

    def forward(self, x: torch.Tensor, checkpoint: Callable[..., torch.Tensor]) -> torch.Tensor:
        hidden = self.pre(x)  # a non-leaf, as hidden states are in a transformer
        for block in self.blocks:
            hidden = checkpoint(block, False, hidden)
        out: torch.Tensor = hidden
        return out


def make_step(shape: Shape, *, device: str,
              seed: int = 1234) -> tuple[torch.nn.Module, Callable[[], None]]:  # fmt: skip
    """The model and one forward+backward step on a fixed `[seq, mbs, hidden*streams]` input."""
    from megatron.core.tensor_parallel import random as megatron_random

    model = CheckpointedStack(shape, seed).to(device)
    gen = torch.Generator().manual_seed(seed)
    width = shape.hidden * shape.streams
    x = torch.randn(shape.seq, shape.mbs, width, generator=gen).to(TORCH_DTYPES[shape.dtype])
    x = x.to(device)

    def step() -> None:
        out = model(x, megatron_random.checkpoint)
        out.float().square().sum().backward()

    return model, step
