"""Runs the probe against one Megatron tree in a child, so two trees never share a process."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from patchcarry.errors import FatalError
from patchcarry.runtime.child import probe_env, run_module

BATCHES = ("cpu", "tp2")
RESULT_MARKER = "PATCHCARRY-PROBE-RESULT "  # before the child's JSON (megatron prints too)


class ProbeError(FatalError):
    """The probe child failed or printed something that is not its JSON document."""


# A probe child does seconds of work; past this it is hung (e.g. a stuck gloo rendezvous).
PROBE_TIMEOUT_S = 600.0


def run_probe(tree: Path, batches: Sequence[str] = BATCHES, iterations: int = 2, *,
              cpu_only: bool = True) -> dict[str, Any]:  # fmt: skip
    """Import `tree`'s megatron in a child, run `batches`, return its JSON; else ProbeError."""
    tree = Path(tree).resolve()
    if not (tree / "megatron" / "core" / "__init__.py").is_file():
        raise ProbeError(f"{tree} has no megatron/core/__init__.py; pass a prepared tree copy")
    request = {"batches": list(batches), "iterations": iterations}
    env = probe_env(tree, cpu_only)
    module = "patchcarry.proof.child"
    return run_module(
        tree, module, env, request, RESULT_MARKER, ProbeError, timeout=PROBE_TIMEOUT_S
    )
