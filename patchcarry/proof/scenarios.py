"""`KeepsOutputBlock`, the smallest stand-in for HC's `mlp_norm_manager` (imports torch)."""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import traceback
import types
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from patchcarry.runtime.tracker import DetachedInputTracker, tensor_bytes

BATCH = 4  # rows of every input
HIDDEN = 8  # width of the checkpoint input (outer level when nested)
INNER = 6  # width of the inner checkpoint input when nested
DROPOUT = 0.25  # uses the CPU RNG, so recompute must restore it to match the reference
SEED = 1234


class KeepsOutputBlock(torch.nn.Module):
    """linear -> (+ side input) -> dropout -> tanh, keeping its output on `self.kept`."""

    def __init__(self, width_in: int, width_out: int, dtype: torch.dtype, seed: int) -> None:
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        self.weight = torch.nn.Parameter(
            (torch.randn(width_out, width_in, generator=gen) * 0.3).to(dtype)
        )
        self.bias = torch.nn.Parameter((torch.randn(width_out, generator=gen) * 0.1).to(dtype))
        self.kept: torch.Tensor | None = None
        self.side_seen = ""  # what the last call got as `side`: how checkpoint passed it on

    def forward(self, hidden: torch.Tensor, side: torch.Tensor | None = None) -> torch.Tensor:
        out = F.linear(hidden, self.weight, self.bias)
        self.side_seen = "None" if side is None else f"tensor requires_grad={side.requires_grad}"
        if side is not None:
            out = out + side
        out = torch.tanh(F.dropout(out, p=DROPOUT, training=True))
        self.kept = out  # the outside reference the fix is about
        return out


@dataclasses.dataclass(frozen=True)
class Scenario:
    """One way of calling `checkpoint`; side: "absent", "no_grad" or "none" (second input)."""

    name: str
    dtype: str  # "float32" | "bfloat16"
    nested: bool = False
    side: str = "absent"
    distribute: bool = False  # distribute_saved_activations; needs a TP group (tp2 batch)


def _scenarios() -> dict[str, list[Scenario]]:
    cpu = []
    for dtype in ("float32", "bfloat16"):
        short = "fp32" if dtype == "float32" else "bf16"
        cpu += [Scenario(f"plain-{short}", dtype), Scenario(f"nested-{short}", dtype, nested=True),
                Scenario(f"side-no-grad-{short}", dtype, side="no_grad"),
                Scenario(f"side-none-{short}", dtype, side="none")]  # fmt: skip
    tp2 = [Scenario("tp2-distribute-fp32", "float32", distribute=True),
           Scenario("tp2-distribute-bf16", "bfloat16", distribute=True)]  # fmt: skip
    return {"cpu": cpu, "tp2": tp2}


SCENARIOS = _scenarios()

CheckpointFn = Callable[..., Any]


class SyntheticModel(torch.nn.Module):
    """leaf x -> pre linear -> h -> [checkpointed run function] -> y; loss = sum(y^2). `h` is a
    non-leaf, as hidden states are, so a detached input's gradient has no other referrer."""

    def __init__(self, scenario: Scenario) -> None:
        super().__init__()
        self.scenario = scenario
        self.dtype = getattr(torch, scenario.dtype)
        self.pre = torch.nn.Linear(HIDDEN, HIDDEN, dtype=self.dtype)
        with torch.no_grad():
            gen = torch.Generator().manual_seed(SEED)
            self.pre.weight.copy_(torch.randn(HIDDEN, HIDDEN, generator=gen) * 0.3)
            self.pre.bias.copy_(torch.randn(HIDDEN, generator=gen) * 0.1)
        if scenario.nested:
            self.outer = KeepsOutputBlock(HIDDEN, INNER, self.dtype, SEED + 1)
            self.inner = KeepsOutputBlock(INNER, INNER, self.dtype, SEED + 2)
        else:
            self.block = KeepsOutputBlock(HIDDEN, HIDDEN, self.dtype, SEED + 1)
        self._checkpoint: CheckpointFn | None = None
        self.input_shape_after_forward: list[int] = []

    @property
    def first_block(self) -> KeepsOutputBlock:
        return self.outer if self.scenario.nested else self.block

    def run_function(self, hidden: torch.Tensor, side: torch.Tensor | None = None) -> torch.Tensor:
        """What gets checkpointed; when nested, checkpoints its inner block too."""
        out: torch.Tensor
        if not self.scenario.nested:
            out = self.block(hidden, side)
        elif self._checkpoint is None:
            out = self.inner(self.outer(hidden, side))
        else:
            out = self._checkpoint(self.inner, False, self.outer(hidden, side))
        return out

    def step(self, seed: int, checkpoint: CheckpointFn | None) -> dict[str, torch.Tensor]:
        """One forward+backward; the leaf grads; records `input_shape_after_forward`."""
        self._checkpoint = checkpoint
        torch.manual_seed(seed)
        x = torch.randn(BATCH, HIDDEN, dtype=self.dtype, requires_grad=True)
        side = (torch.randn(BATCH, HIDDEN, dtype=self.dtype) if self.scenario.side == "no_grad"
                else None)  # fmt: skip
        h = self.pre(x)
        args: tuple[Any, ...] = (h,) if self.scenario.side == "absent" else (h, side)
        if checkpoint is None:
            y = self.run_function(*args)
        else:
            y = checkpoint(self.run_function, self.scenario.distribute, *args)
        self.input_shape_after_forward = list(h.shape)
        y.float().square().sum().backward()  # type: ignore[no-untyped-call]
        grads = {"x": x.grad}
        grads.update({name: p.grad for name, p in self.named_parameters()})
        self.zero_grad(set_to_none=True)
        return {k: v for k, v in grads.items() if v is not None}


def digest(t: torch.Tensor) -> str:
    """sha256 of a tensor's raw bytes: equal digests mean bit-identical values."""
    raw = t.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
    return f"{t.dtype}:{list(t.shape)}:{hashlib.sha256(raw).hexdigest()}"


def retained(tracker: DetachedInputTracker) -> dict[str, Any]:
    """What detached checkpoint inputs are still reachable now, and their `.grad`."""
    gc.collect()
    return {
        "live_inputs": len(tracker.live()),
        "input_bytes": tracker.input_bytes(),
        "grad_bytes": tracker.grad_bytes(),
        "live_grads": [
            {"shape": list(g.shape), "dtype": str(g.dtype).removeprefix("torch."),
             "bytes": tensor_bytes(g)}
            for g in tracker.live_grads()
        ],
    }  # fmt: skip


def run_scenario(
    random_module: types.ModuleType, tracker: DetachedInputTracker, scenario: Scenario,
    iterations: int,
) -> dict[str, Any]:  # fmt: skip
    """Per iteration: checkpointed step, what it leaves retained, then an un-checkpointed
    reference step with the same seed; grads of both as digests. Errors are reported."""
    try:
        model = SyntheticModel(scenario)
        records = []
        for i in range(iterations):
            tracker.reset()
            grads = model.step(SEED + 100 * i, random_module.checkpoint)
            after_backward = retained(tracker)
            saved_shape = model.input_shape_after_forward
            side_seen = model.first_block.side_seen  # its last call was the recompute
            reference = model.step(SEED + 100 * i, None)
            records.append(
                {"retained": after_backward, "input_shape_after_forward": saved_shape,
                 "side_in_recompute": side_seen,
                 "grads": {k: digest(v) for k, v in grads.items()},
                 "reference_grads": {k: digest(v) for k, v in reference.items()}}
            )  # fmt: skip
            del grads, reference
        return {"iterations": records, "error": None}
    except Exception:  # reported to the parent, which fails the test with it
        return {"iterations": [], "error": traceback.format_exc()}
