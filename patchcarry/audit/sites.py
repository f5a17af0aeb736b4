"""Paths and sites in plain Python (no torch): a path reads like code, and its site is where it
is held, list indices folded to `*` and autograd graphs elided, so records group by holder."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

MODEL_ROOT = "model"
GRAPH_KINDS = frozenset({"grad_fn", "next", "variable", "saved"})
NODE_KINDS = frozenset({"grad_fn", "next"})
_INDEX = re.compile(r"\.\d+(?=[.\[ ]|$)|\[\d+\]")
_LAYER = re.compile(r"(^|\.)layers\.\*(\.|$)")
ARROW = " → "


def _hop(kind: str, label: str, first: bool) -> str:
    if kind in NODE_KINDS:
        return f"{ARROW}{label}"
    if kind == "item":
        return f"[{label}]"
    if kind == "saved":
        return f".saved({label})"
    return label if first else f".{label}"


def _join(hops: Sequence[Sequence[str]], *, bare_first: bool, max_nodes: int = 3) -> str:
    parts: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if len(run) > max_nodes:
            parts.extend([run[0], f"{ARROW}… ({len(run) - 2} nodes)", run[-1]])
        else:
            parts.extend(run)
        run.clear()

    for index, (kind, label) in enumerate(hops):
        text = _hop(kind, label, first=bare_first and index == 0)
        if kind in NODE_KINDS:
            run.append(text)
            continue
        flush()
        parts.append(text)
    flush()
    return "".join(parts)


def render(root: str, hops: Sequence[Sequence[str]], *, max_nodes: int = 3) -> str:
    """The path as a person reads it; a run of more than `max_nodes` graph nodes is elided."""
    if root == MODEL_ROOT:
        return _join(hops, bare_first=True, max_nodes=max_nodes) or MODEL_ROOT
    return root + _join(hops, bare_first=False, max_nodes=max_nodes)


def fold(text: str) -> str:
    """Layer and list indices folded: `layers.0.x[1]` -> `layers.*.x[*]`."""
    return _INDEX.sub(lambda m: "[*]" if m.group().startswith("[") else ".*", text)


def site(root: str, hops: Sequence[Sequence[str]]) -> str:
    """Where a path is held: its holder (to the first autograd hop), folded, plus the tail after
    the last graph node (`AccumulateGrad.variable.grad`)."""
    hops = [(str(k), str(v)) for k, v in hops]
    first_graph = next((i for i, (k, _) in enumerate(hops) if k in GRAPH_KINDS), None)
    if first_graph is None:
        return fold(render(root, hops))
    holder = render(root, hops[:first_graph])
    last_node = max((i for i, (k, _) in enumerate(hops) if k in NODE_KINDS), default=None)
    if last_node is None:  # straight into a saved tensor or variable, no node between
        return fold(holder + _join(hops[first_graph:], bare_first=False))
    tail = hops[last_node][1] + _join(hops[last_node + 1 :], bare_first=False)
    return fold(f"{holder}{ARROW}…{ARROW}{tail}")


def in_layer(site_name: str) -> bool:
    """Whether a site is held by a transformer layer (`…layers.*…` of the model)."""
    return ":" not in site_name.split(ARROW)[0] and bool(_LAYER.search(site_name.split(ARROW)[0]))


def group(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records summed per site, largest first, each with one example path and its origins."""
    sites: dict[str, dict[str, Any]] = {}
    for record in records:
        entry = sites.setdefault(
            record["site"],
            {"site": record["site"], "bytes": 0, "count": 0, "origins": [],
             "example": record["path"]},
        )  # fmt: skip
        entry["bytes"] += record["bytes"]
        entry["count"] += 1
        if record.get("origin") and record["origin"] not in entry["origins"]:
            entry["origins"].append(record["origin"])
    return sorted(sites.values(), key=lambda s: (-s["bytes"], s["site"]))
