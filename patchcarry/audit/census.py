"""Every live tensor between iterations but the model's state, with its shortest path."""

from __future__ import annotations

import gc
import types
import warnings
import weakref
from collections.abc import Callable, Iterable
from typing import Any

import torch

from patchcarry.audit import sites
from patchcarry.audit.walk import Found

StorageKey = tuple[str, int]


def storage_key(t: torch.Tensor) -> StorageKey | None:
    """(device, data pointer) of a tensor's storage; None for meta, fake or empty storages."""
    if t.is_meta:
        return None
    try:
        ptr = t.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):
        return None
    return (str(t.device), ptr) if ptr else None


def storage_bytes(t: torch.Tensor) -> int:
    return int(t.untyped_storage().nbytes())


def model_state(model: torch.nn.Module, optimizer: torch.optim.Optimizer | None) -> set[StorageKey]:
    """Storages of parameters, their grads, optimizer state and registered buffers."""
    tensors: list[torch.Tensor] = []
    for p in model.parameters():
        tensors.append(p)
        tensors.extend(t for t in (p.grad, getattr(p, "main_grad", None)) if t is not None)
    tensors.extend(model.buffers())
    if optimizer is not None:  # a parameter's own state only: anything else it keeps counts
        params = {id(p) for p in model.parameters()}
        for key, state in optimizer.state.items():
            if id(key) in params and isinstance(state, dict):
                tensors.extend(v for v in state.values() if isinstance(v, torch.Tensor))
    return {k for k in map(storage_key, tensors) if k is not None}


class OriginTracker:
    """Weakrefs to tensors made by named functions; the wrapped function runs unchanged."""

    def __init__(self) -> None:
        self.refs: list[tuple[str, weakref.ref[torch.Tensor]]] = []

    def wrap(self, module: types.ModuleType, name: str, origin: str) -> None:
        original: Callable[..., Any] = getattr(module, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            out = original(*args, **kwargs)
            for t in out if isinstance(out, (tuple, list)) else (out,):
                if isinstance(t, torch.Tensor):
                    self.refs.append((origin, weakref.ref(t)))
            return out

        setattr(module, name, wrapper)

    def origins(self) -> dict[StorageKey, str]:
        out: dict[StorageKey, str] = {}
        alive = []
        for origin, ref in self.refs:
            t = ref()
            if t is None:
                continue
            alive.append((origin, ref))
            key = storage_key(t)
            if key is not None:
                out.setdefault(key, origin)
        self.refs = alive
        return out


def _describe(t: torch.Tensor) -> dict[str, Any]:
    """What is known of a tensor without a path: dtype, shape and the op that made it."""
    # a view's base tensor: torch exposes it only as `_base` (no public name)
    node = t.grad_fn if t.grad_fn is not None else getattr(t._base, "grad_fn", None)
    return {"dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape),
            "op": type(node).__name__ if node is not None else None}  # fmt: skip


def _origin(item: Found, key: StorageKey, origins: dict[StorageKey, str]) -> str | None:
    """The origin of the tensor, or `<origin> .grad` when it is a tagged tensor's `.grad`."""
    if key in origins:
        return origins[key]
    owner = storage_key(item.owner) if item.owner is not None else None
    return f"{origins[owner]} .grad" if owner in origins else None


def take(found: Iterable[Found], excluded: set[StorageKey],
         origins: dict[StorageKey, str]) -> dict[str, Any]:  # fmt: skip
    """Attributed records (one per storage) and what is live but not attributed."""
    records: dict[StorageKey, dict[str, Any]] = {}
    for item in found:
        key = storage_key(item.tensor)
        if key is None or key in excluded or key in records:
            continue
        hops = [[h.kind, h.label] for h in item.path]
        records[key] = {"root": item.root, "path": sites.render(item.root, hops),
                        "site": sites.site(item.root, hops), "bytes": storage_bytes(item.tensor),
                        "origin": _origin(item, key, origins),
                        **_describe(item.tensor)}  # fmt: skip
    unattributed: dict[StorageKey, dict[str, Any]] = {}
    with warnings.catch_warnings():  # isinstance on a deprecated torch alias warns
        warnings.simplefilter("ignore", FutureWarning)
        tensors = [obj for obj in gc.get_objects() if isinstance(obj, torch.Tensor)]
    for obj in tensors:
        key = storage_key(obj)
        if key is None or key in excluded or key in records or key in unattributed:
            continue
        unattributed[key] = {"bytes": storage_bytes(obj), "origin": origins.get(key),
                             **_describe(obj)}  # fmt: skip
    return {"records": list(records.values()), "unattributed": list(unattributed.values())}
