"""The shortest readable path from a root to each tensor it keeps (breadth-first, no guess)."""

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
_KINDS = "attr item grad grad_fn next variable saved base closure"
ATTR, ITEM, GRAD, GRAD_FN, NEXT, VARIABLE, SAVED, BASE, CLOSURE = _KINDS.split()
GRAPH_KINDS = frozenset({GRAD_FN, NEXT, VARIABLE, SAVED})
MAX_OBJECTS = 2_000_000  # a 2-layer model and megatron's globals visit about 100k
_TENSOR_HOOKS = ("_backward_hooks", "_post_accumulate_grad_hooks")
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


def _is_mock(obj: Any) -> bool:
    """unittest.mock objects make up an attribute for every lookup: never entered."""
    return type(obj).__module__ == "unittest.mock"


def _key_label(key: Any) -> str:
    """A dict key as a path shows it; a tensor key by its type only (its repr prints values)."""
    if isinstance(key, int) and not isinstance(key, bool):
        return str(key)
    return f"<{type(key).__name__}>" if isinstance(key, torch.Tensor) else repr(key)


def _tensor_edges(t: torch.Tensor) -> Iterator[tuple[Hop, Any]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # .grad of a non-leaf warns
        grad = t.grad
    if grad is not None:
        yield Hop(GRAD, "grad"), grad
    if t.grad_fn is not None:
        yield Hop(GRAD_FN, _node_name(t.grad_fn)), t.grad_fn
    # a view's base tensor: torch exposes it only as `_base` (no public name)
    if t._base is not None:
        yield Hop(BASE, "_base"), t._base  # (as above)
    for name in _TENSOR_HOOKS:  # C-level attributes, not in the tensor's __dict__
        hooks = getattr(t, name, None)
        if hooks:
            yield Hop(ATTR, name), hooks
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
    metadata = getattr(node, "metadata", None)
    if metadata:
        yield Hop(ATTR, "metadata"), metadata
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
            yield Hop(ITEM, _key_label(key)), value
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
        if obj.__defaults__:
            yield Hop(ATTR, "__defaults__"), obj.__defaults__
        if obj.__kwdefaults__:
            yield Hop(ATTR, "__kwdefaults__"), obj.__kwdefaults__
        for name, value in vars(obj).items():  # function attributes, `__wrapped__`
            yield Hop(ATTR, name), value
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
    elif isinstance(obj, torch.autograd.graph.Node):
        yield from _node_edges(obj)
    else:
        yield from _object_edges(obj)


class WalkLimit(RuntimeError):
    """The walk visited `max_objects` objects: its census would be incomplete."""


class Found:
    """A tensor reached from a root; its (shortest) path rebuilt from the walk only when asked."""

    __slots__ = ("_parents", "key", "owner", "root", "tensor")

    def __init__(
        self, tensor: torch.Tensor, root: str, parents: dict[int, tuple[int, Hop]],
        owner: torch.Tensor | None = None,
    ) -> None:  # fmt: skip
        self.tensor = tensor
        self.root = root
        self.key = id(tensor)
        self.owner = owner  # the tensor whose `.grad` this is (last hop "grad")
        self._parents = parents

    @property
    def path(self) -> tuple[Hop, ...]:
        hops: list[Hop] = []
        key = self.key
        while key in self._parents:
            key, hop = self._parents[key]
            hops.append(hop)
        return tuple(reversed(hops))


def _enterable(obj: Any, is_root: bool) -> bool:
    if isinstance(obj, _ATOMS) or _is_mock(obj):
        return False
    return is_root or not isinstance(obj, _SKIP)


def reach(roots: list[tuple[str, Any]], *, max_objects: int = MAX_OBJECTS) -> list[Found]:
    """Every tensor reachable from `roots` (an earlier root wins), once; `WalkLimit` past cap."""
    parents: dict[int, tuple[int, Hop]] = {}  # id(child) -> (id(parent), hop); roots absent
    seen: set[int] = set()
    keepalive: list[Any] = []
    found: list[Found] = []
    for root_name, root in roots:
        if id(root) in seen or not _enterable(root, True):
            continue
        seen.add(id(root))
        keepalive.append(root)
        queue: collections.deque[tuple[Any, Any]] = collections.deque([(root, None)])
        while queue:
            obj, parent = queue.popleft()
            if isinstance(obj, torch.Tensor):
                link = parents.get(id(obj))
                owner = parent if link is not None and link[1].kind == GRAD else None
                found.append(Found(obj, root_name, parents, owner))
            try:
                children = list(edges(obj))
            except Exception:  # noqa: BLE001 - an exotic object: stop here, do not guess
                continue
            for hop, child in children:
                if id(child) in seen or not _enterable(child, False):
                    continue
                if len(keepalive) >= max_objects:
                    raise WalkLimit(
                        f"the walk reached its limit of {max_objects:,} objects from root "
                        f"{root_name}: the census would be incomplete"
                    )
                seen.add(id(child))
                keepalive.append(child)
                parents[id(child)] = (id(obj), hop)
                queue.append((child, obj))
    return found


def _defined_in(value: Any, mod_name: str) -> bool:
    return getattr(value, "__module__", None) == mod_name


def _class_roots(mod_name: str, cls: type) -> Iterator[tuple[str, Any]]:
    """A class's own attributes (not inherited, not methods): `mod:Class.attr`."""
    for name, value in list(vars(cls).items()):
        if name.startswith("__") or _is_mock(value):
            continue
        if isinstance(value, (*_SKIP, *_ATOMS, staticmethod, classmethod, property)):
            continue
        if isinstance(value, types.FunctionType) or type(value).__name__.endswith("descriptor"):
            continue
        yield f"{mod_name}:{cls.__qualname__}.{name}", value


def module_roots(prefix: str) -> list[tuple[str, Any]]:
    """What the modules under `prefix` hold: globals (`mod:name`), class attributes (`mod:C.a`)."""
    import sys

    roots: list[tuple[str, Any]] = []
    for mod_name, module in sorted(sys.modules.items()):
        if not (mod_name == prefix or mod_name.startswith(prefix + ".")) or module is None:
            continue
        for name, value in list(vars(module).items()):
            if name.startswith("__") or _is_mock(value):
                continue
            if isinstance(value, type):
                if _defined_in(value, mod_name):
                    roots.extend(_class_roots(mod_name, value))
                continue
            if isinstance(value, types.FunctionType) and not _defined_in(value, mod_name):
                continue  # an import: its own module names it
            if isinstance(value, (*_SKIP, *_ATOMS)):
                continue
            roots.append((f"{mod_name}:{name}", value))
    return roots
