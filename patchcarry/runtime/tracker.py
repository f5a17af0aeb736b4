"""Which detached checkpoint inputs (and their .grad) are still alive, by weakrefs."""

from __future__ import annotations

import dataclasses
import types
import weakref
from collections.abc import Callable
from typing import Any

import torch


def tensor_bytes(t: torch.Tensor) -> int:
    """Bytes of a tensor's own elements (numel x element size)."""
    return t.numel() * t.element_size()


@dataclasses.dataclass
class DetachedInputTracker:
    """Weakrefs to every tensor `detach_variable` produced since the last `reset()`."""

    refs: list[weakref.ref[torch.Tensor]] = dataclasses.field(default_factory=list)

    def reset(self) -> None:
        self.refs.clear()

    def live(self) -> list[torch.Tensor]:
        return [t for t in (r() for r in self.refs) if t is not None]

    def live_grads(self) -> list[torch.Tensor]:
        return [t.grad for t in self.live() if t.grad is not None]

    def input_bytes(self) -> int:
        return sum(tensor_bytes(t) for t in self.live())

    def grad_bytes(self) -> int:
        return sum(tensor_bytes(g) for g in self.live_grads())


def track_detached_inputs(random_module: types.ModuleType) -> DetachedInputTracker:
    """Wrap `random_module.detach_variable` so each detached tensor is weakly recorded."""
    tracker = DetachedInputTracker()
    original: Callable[..., Any] = random_module.detach_variable

    def detach_variable(inputs: Any) -> Any:
        out = original(inputs)
        for t in out if isinstance(out, tuple) else ():
            if isinstance(t, torch.Tensor):
                tracker.refs.append(weakref.ref(t))
        return out

    random_module.detach_variable = detach_variable  # type: ignore[attr-defined]
    return tracker
