"""Runs the probe against one Megatron tree in a child, so two trees never share a process."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from patchcarry import proc
from patchcarry.errors import FatalError
from patchcarry.runtime.child import probe_env

BATCHES = ("cpu", "tp2")


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
    args = [arg for batch in batches for arg in ("--batch", batch)]
    args = [*proc.PYTHON, "-m", "patchcarry.proof.child", *args, "--iterations", str(iterations)]
    env = probe_env(tree, cpu_only)
    code, out, err = proc.cmd_output(*args, cwd=tree, env=env, check=False, timeout=PROBE_TIMEOUT_S)
    if code != 0:
        raise ProbeError(f"probe of {tree} exited {code}; its stderr:\n{err.strip()[-4000:]}")
    try:
        result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        raise ProbeError(f"probe of {tree} printed no JSON; stdout:\n{out[-2000:]}") from None
    module_file = Path(result.get("module_file", "")).resolve()
    if tree not in module_file.parents:
        raise ProbeError(f"probe of {tree} imported megatron from {module_file}, not from the tree")
    return result
