"""Reachability: the shortest readable path from a root to every tensor it keeps alive.

A breadth-first walk over what Python and autograd expose, no guessing:

  module        its `__dict__` (children, parameters, buffers, hook dicts, plain attributes),
                each child named `.name` as in `named_modules()`
  object        `__dict__` and `__slots__` attributes
  container     dict items `[key]`, list/tuple/set/deque items `[i]`
  function      closure cells `.<cellname>`, a bound method's `__self__`, a partial's args
  tensor        `.grad`, `.grad_fn`, `._base` (a view's base), its Python attributes
  autograd node `next_functions`, `AccumulateGrad.variable`, saved tensors (`_saved_*` of a
                C++ node, `saved_tensors` and the `ctx` attributes of a Python Function)

Classes, modules (other than the roots given), and a function's globals are not entered: a
tensor reachable only through them is reported as not attributed, never guessed. Every
visited object is kept alive until the walk ends, so `id()` is never reused under it.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import types
import warnings
from collections.abc import Iterator
from typing import Any

import torch

# Hop kinds. "graph" hops leave the object world into autograd's.
ATTR, ITEM, GRAD, GRAD_FN, NEXT, VARIABLE, SAVED, BASE, CLOSURE = (
    "attr",
    "item",
    "grad",
    "grad_fn",
    "next",
    "variable",
    "saved",
    "base",
    "closure",
)
GRAPH_KINDS = frozenset({GRAD_FN, NEXT, VARIABLE, SAVED})
_ATOMS = (str, bytes, int, float, complex, bool, type(None), torch.dtype, torch.device)
_SKIP = (type, types.ModuleType, types.CodeType, types.FrameType)
_MODULE_DICTS = ("_modules", "_parameters", "_buffers")


@dataclasses.dataclass(frozen=True)
class Hop:
    """One step of a path: its kind and its label (attribute name, key, node class)."""

    kind: str
    label: str


def _node_name(node: Any) -> str:
    return type(node).__name__


def _is_node(obj: Any) -> bool:
    return isinstance(obj, torch.autograd.graph.Node)


def _is_mock(obj: Any) -> bool:
    """unittest.mock objects (megatron stands in for absent extensions with them) make up an
    attribute for every lookup: never entered."""
    return type(obj).__module__ == "unittest.mock"


def _tensor_edges(t: torch.Tensor) -> Iterator[tuple[Hop, Any]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # .grad of a non-leaf warns
        grad = t.grad
    if grad is not None:
        yield Hop(GRAD, "grad"), grad
    if t.grad_fn is not None:
        yield Hop(GRAD_FN, _node_name(t.grad_fn)), t.grad_fn
    if t._base is not None:
        yield Hop(BASE, "_base"), t._base
    for name, value in getattr(t, "__dict__", {}).items():
        yield Hop(ATTR, name), value


def _node_edges(node: Any) -> Iterator[tuple[Hop, Any]]:
    variable = getattr(node, "variable", None)
    if isinstance(variable, torch.Tensor):
        yield Hop(VARIABLE, "variable"), variable
    for name in dir(node):
        if name.startswith("_saved_"):
            try:
                value = getattr(node, name)
            except RuntimeError:  # freed by backward
                continue
            yield Hop(SAVED, name[len("_saved_") :]), value
    if isinstance(node, torch.autograd.function.BackwardCFunction):
        saved: tuple[Any, ...] = ()
        try:
            saved = tuple(node.saved_tensors)
        except RuntimeError:  # freed by backward
            pass
        for index, value in enumerate(saved or ()):
            yield Hop(SAVED, f"saved_tensors[{index}]"), value
    for name, value in getattr(node, "__dict__", {}).items():  # a Python Function's ctx
        yield Hop(ATTR, name), value
    for next_node, _ in getattr(node, "next_functions", ()) or ():
        if next_node is not None:
            yield Hop(NEXT, _node_name(next_node)), next_node


def _object_edges(obj: Any) -> Iterator[tuple[Hop, Any]]:
    if isinstance(obj, torch.nn.Module):
        for dict_name in _MODULE_DICTS:
            for name, value in getattr(obj, dict_name, {}).items():
                yield Hop(ATTR, name), value
        for name, value in vars(obj).items():
            if name not in _MODULE_DICTS:
                yield Hop(ATTR, name), value
        return
    if isinstance(obj, dict):
        for key, value in list(obj.items()):
            yield Hop(ITEM, repr(key) if not isinstance(key, int) else str(key)), value
            if not isinstance(key, _ATOMS):
                yield Hop(ITEM, f"key {type(key).__name__}"), key
        return
    if isinstance(obj, (list, tuple, collections.deque)):
        for index, value in enumerate(obj):
            yield Hop(ITEM, str(index)), value
        return
    if isinstance(obj, (set, frozenset)):
        for index, value in enumerate(obj):
            yield Hop(ITEM, f"set#{index}"), value
        return
    if isinstance(obj, functools.partial):
        yield Hop(ATTR, "func"), obj.func
        yield Hop(ATTR, "args"), obj.args
        yield Hop(ATTR, "keywords"), obj.keywords
        return
    if isinstance(obj, types.MethodType):
        yield Hop(ATTR, "__self__"), obj.__self__
        yield Hop(ATTR, "__func__"), obj.__func__
        return
    if isinstance(obj, types.FunctionType):
        for cell_name, cell in zip(obj.__code__.co_freevars, obj.__closure__ or (), strict=False):
            try:
                yield Hop(CLOSURE, cell_name), cell.cell_contents
            except ValueError:  # empty cell
                continue
        return
    if hasattr(obj, "__dict__") and isinstance(vars(obj), dict):
        for name, value in list(vars(obj).items()):
            yield Hop(ATTR, name), value
    for slot in getattr(type(obj), "__slots__", ()) or ():
        if isinstance(slot, str) and slot != "__dict__" and hasattr(obj, slot):
            yield Hop(ATTR, slot), getattr(obj, slot)


def edges(obj: Any) -> Iterator[tuple[Hop, Any]]:
    """What `obj` references, each with the hop that names it."""
    if isinstance(obj, torch.Tensor):
        yield from _tensor_edges(obj)
    elif _is_node(obj):
        yield from _node_edges(obj)
    else:
        yield from _object_edges(obj)


@dataclasses.dataclass(frozen=True)
class Found:
    """A tensor reached from a root, with the path that reaches it first (BFS: shortest)."""

    tensor: torch.Tensor
    root: str
    path: tuple[Hop, ...]
    owner: torch.Tensor | None = None  # the tensor whose `.grad` this is (last hop "grad")


def reach(roots: list[tuple[str, Any]], *, max_objects: int = 2_000_000) -> list[Found]:
    """Every tensor reachable from `roots` (walked in order: an earlier root wins), each once."""
    seen: set[int] = set()
    keepalive: list[Any] = []
    found: list[Found] = []
    for root_name, root in roots:
        queue: collections.deque[tuple[Any, tuple[Hop, ...], Any]] = collections.deque(
            [(root, (), None)]
        )
        while queue and len(keepalive) < max_objects:
            obj, path, parent = queue.popleft()
            if id(obj) in seen or isinstance(obj, _ATOMS):
                continue
            if (isinstance(obj, _SKIP) and path) or _is_mock(obj):
                continue
            seen.add(id(obj))
            keepalive.append(obj)
            if isinstance(obj, torch.Tensor):
                owner = parent if path and path[-1].kind == GRAD else None
                found.append(Found(obj, root_name, path, owner))
            try:
                children = list(edges(obj))
            except Exception:  # noqa: BLE001 - an exotic object: stop here, do not guess
                continue
            for hop, child in children:
                if not isinstance(child, _ATOMS) and id(child) not in seen:
                    queue.append((child, (*path, hop), obj))
    return found


def module_roots(prefix: str) -> list[tuple[str, Any]]:
    """Module globals under `prefix` (e.g. "megatron"), each global a root named mod:name."""
    import sys

    roots = []
    for mod_name, module in sorted(sys.modules.items()):
        if not (mod_name == prefix or mod_name.startswith(prefix + ".")) or module is None:
            continue
        for name, value in list(vars(module).items()):
            if (
                name.startswith("__")
                or _is_mock(value)
                or isinstance(value, (*_SKIP, types.FunctionType, *_ATOMS))
            ):
                continue
            roots.append((f"{mod_name}:{name}", value))
    return roots
