"""One planted retention bug per holder kind, each audited in this process (no upstream tree).

    python -m testing.audit_planted > out.json

A tiny model of two 8x8 linear layers (`layers.0`, `layers.1`) runs 3 iterations on a fixed
[4, 8] fp32 input (`harness.x`); after layer 0 a scenario's `plant` sees its output `h` (one
activation: ACTIVATION_BYTES) and keeps it through one holder kind. Modules the planted code
lives in are made under the package name `planted` (the tree under audit, as `megatron` is in
the child). Prints {scenario: the child's configuration result (name, error, iterations)}.
"""

from __future__ import annotations

import functools
import gc
import json
import sys
import types
from collections.abc import Callable
from typing import Any

import torch

from patchcarry.audit import census, child, evidence

SEQ, WIDTH, ITERATIONS = 4, 8, 3
ACTIVATION_BYTES = SEQ * WIDTH * 4
Plant = Callable[[torch.nn.Module, torch.Tensor, dict[str, Any]], None]


class Tiny(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(WIDTH, WIDTH) for _ in range(2))
        self.nodes: list[Any] = []  # autograd nodes a scenario keeps reachable

    def forward(self, x: torch.Tensor, ctx: dict[str, Any]) -> torch.Tensor:
        h = self.layers[0](x)
        ctx["plant"](self, h, ctx)
        out: torch.Tensor = self.layers[1](h)
        return out


class DataParallel(torch.nn.Module):
    """A data-parallel wrapper: each parameter's `main_grad` is a view of one flat buffer
    (the parameters' own state), and whatever else it keeps is not."""

    def __init__(self, module: torch.nn.Module) -> None:
        super().__init__()
        self.module = module
        params = list(module.parameters())
        self.grad_buffer = torch.zeros(sum(p.numel() for p in params))
        offset = 0
        for p in params:
            p.main_grad = self.grad_buffer[offset : offset + p.numel()].view_as(p)  # type: ignore[attr-defined]
            offset += p.numel()

    def forward(self, x: torch.Tensor, ctx: dict[str, Any]) -> torch.Tensor:
        out: torch.Tensor = self.module(x, ctx)
        return out


def planted_module(name: str) -> types.ModuleType:
    """A module of the tree under audit (`planted.<name>`), importable by its name."""
    module = types.ModuleType(f"planted.{name}")
    sys.modules.setdefault("planted", types.ModuleType("planted"))
    sys.modules[module.__name__] = module
    return module


def _once(ctx: dict[str, Any], key: str) -> bool:
    first = key not in ctx
    ctx[key] = True
    return first


def clean(model: torch.nn.Module, h: torch.Tensor, ctx: dict[str, Any]) -> None:
    pass


def transient(model: torch.nn.Module, h: torch.Tensor, ctx: dict[str, Any]) -> None:
    cache = planted_module("transient")
    model.layers[0].tmp = h.detach()
    cache.LAST = h.detach() * 2
    del model.layers[0].tmp, cache.LAST


def module_global(model: torch.nn.Module, h: torch.Tensor, ctx: dict[str, Any]) -> None:
    cache = sys.modules.get("planted.cache") or planted_module("cache")
    if not hasattr(cache, "_CACHE"):
        cache._CACHE = []  # type: ignore[attr-defined]
    cache._CACHE.append(h.detach())  # a growing cache: one activation per step


def class_attribute(model: torch.nn.Module, h: torch.Tensor, ctx: dict[str, Any]) -> None:
    module = sys.modules.get("planted.holder") or planted_module("holder")
    if not hasattr(module, "Holder"):
        module.Holder = type("Holder", (), {"__module__": module.__name__})  # type: ignore[attr-defined]
    module.Holder.last = h.detach()


def closure(model: torch.nn.Module, h: torch.Tensor, ctx: dict[str, Any]) -> None:
    kept = h.detach()
    model.layers[0].callback = lambda: kept


def module_hook(model: torch.nn.Module, h: torch.Tensor, ctx: dict[str, Any]) -> None:
    if _once(ctx, "hooked"):
        seen: dict[str, torch.Tensor] = {}

        def pre_hook(module: torch.nn.Module, args: tuple[torch.Tensor, ...]) -> None:
            seen["input"] = args[0].detach()

        model.layers[1].register_forward_pre_hook(pre_hook)


def tensor_hook(model: torch.nn.Module, h: torch.Tensor, ctx: dict[str, Any]) -> None:
    kept = h.detach()

    def hook(grad: torch.Tensor) -> torch.Tensor:
        return grad if kept is not None else grad

    model.layers[0].weight.register_hook(hook)  # registered every forward: it grows


def post_accumulate_hook(model: torch.nn.Module, h: torch.Tensor, ctx: dict[str, Any]) -> None:
    if _once(ctx, "hooked"):
        kept = h.detach()
        model.layers[0].weight.register_post_accumulate_grad_hook(
            lambda p: None if kept is None else None
        )


def node_metadata(model: torch.nn.Module, h: torch.Tensor, ctx: dict[str, Any]) -> None:
    model.layers[0].out = h  # keeps its autograd node
    assert h.grad_fn is not None
    h.grad_fn.metadata["kept"] = (h * 2).detach()


def optimizer_state(model: torch.nn.Module, h: torch.Tensor, ctx: dict[str, Any]) -> None:
    ctx["optimizer"].state["activation"] = {"h": h.detach()}  # not a parameter's own state


def dp_wrapper(model: torch.nn.Module, h: torch.Tensor, ctx: dict[str, Any]) -> None:
    ctx["wrapper"].last_batch = h.detach()


def _store(box: dict[str, torch.Tensor], module: torch.nn.Module, args: Any, out: Any) -> None:
    box["out"] = out.detach()


def partial(model: torch.nn.Module, h: torch.Tensor, ctx: dict[str, Any]) -> None:
    if _once(ctx, "hooked"):
        model.layers[1].register_forward_hook(functools.partial(_store, {}))


class Recorder:
    def record(self, module: torch.nn.Module, args: Any, out: torch.Tensor) -> None:
        self.out = out.detach()


def bound_method(model: torch.nn.Module, h: torch.Tensor, ctx: dict[str, Any]) -> None:
    if _once(ctx, "hooked"):
        model.layers[1].register_forward_hook(Recorder().record)


def grows_expected(model: torch.nn.Module, h: torch.Tensor, ctx: dict[str, Any]) -> None:
    ctx["history"].append(h.detach())  # held by the harness (expected), but it grows


def unattributed(model: torch.nn.Module, h: torch.Tensor, ctx: dict[str, Any]) -> None:
    node = h.sum().grad_fn  # SumBackward0: saves no tensor
    assert node is not None
    kept = h * 3  # made by MulBackward0; only C++ (the node's hook) holds the closure

    def hook(grad_outputs: tuple[torch.Tensor, ...]) -> None:
        return None if kept is None else None

    node.register_prehook(hook)
    ctx["nodes"].append(node)


SCENARIOS: dict[str, Plant] = {
    f.__name__: f
    for f in (
        clean,
        transient,
        module_global,
        class_attribute,
        closure,
        module_hook,
        tensor_hook,
        post_accumulate_hook,
        node_metadata,
        optimizer_state,
        dp_wrapper,
        partial,
        bound_method,
        grows_expected,
        unattributed,
    )
}


def run(name: str) -> dict[str, Any]:
    """One scenario's configuration result, as the audit child writes it."""
    torch.manual_seed(0)
    tiny = Tiny()
    model: torch.nn.Module = DataParallel(tiny) if name == "dp_wrapper" else tiny
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(SEQ, WIDTH)
    ctx: dict[str, Any] = {"plant": SCENARIOS[name], "optimizer": optimizer, "wrapper": model}
    ctx["nodes"] = tiny.nodes  # on the model: the nodes stay reachable, not their hooks
    ctx["history"] = []  # the harness's own (harness.ctx['history'])

    def step() -> None:
        model(x, ctx).square().sum().backward()

    try:
        iterations = child.iterate(
            model, step, optimizer, ITERATIONS, census.OriginTracker(), prefix="planted"
        )
        error = None
    except Exception as exc:  # noqa: BLE001 - reported like the child's
        iterations, error = [], f"{type(exc).__name__}: {exc}"
    for mod in [m for m in sys.modules if m == "planted" or m.startswith("planted.")]:
        del sys.modules[mod]
    return {"name": name, "shape": {}, "overrides": {}, "error": error, "iterations": iterations}


def doc_of(config: dict[str, Any], name: str) -> dict[str, Any]:
    """A valid evidence document holding one configuration result (variant `unpatched`)."""
    doc = {
        "schema": evidence.SCHEMA_ID,
        "tool": {"name": "patchcarry", "version": "0"},
        "created": "2026-01-01T00:00:00+00:00",
        "tree": {"source": "-", "label": "planted", "commit": None},
        "model": "synthetic",
        "device": "cpu",
        "iterations": max(len(config["iterations"]), 1),
        "torch_version": torch.__version__,
        "cuda_device": None,
        "cpu_standins": [],
        "instrumented": [],
        "variants": [
            {
                "name": "unpatched",
                "sources": [],
                "status": "audited",
                "skip_reason": None,
                "configs": [evidence._config({**config, "name": name})],
            }
        ],
    }
    evidence.validate(doc)
    return doc


def _freeze_what_every_scenario_shares() -> None:
    """Move torch's import-time objects (and those of the lazy imports an optimizer's first step
    makes) into gc's permanent generation: each census's `gc.collect()` and `gc.get_objects()`
    then go over what the scenarios made, not the ~300,000 objects no scenario touches (20 CPU
    seconds to 9 for the 15 scenarios). Nothing a scenario plants exists yet; its modules are
    reached by their names (`walk.module_roots`), not through gc."""
    warm = torch.zeros(1, requires_grad=True)
    optimizer = torch.optim.Adam([warm], lr=1e-3)
    warm.square().sum().backward()
    optimizer.step()
    del warm, optimizer
    gc.collect()
    gc.freeze()


def main() -> int:
    torch.set_num_threads(1)
    _freeze_what_every_scenario_shares()
    json.dump({name: run(name) for name in SCENARIOS}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
