"""Run the synthetic-block probe against one Megatron tree in a child process.

The parent never imports torch or megatron: `run_probe(tree, ...)` starts
`python -m patchcarry.synthetic` with `tree` first on the path (cwd and PYTHONPATH), so an
unpatched and a patched tree are each imported in their own process, never side by side in
one. The child prints one JSON document:

    {"module_file": ".../megatron/core/tensor_parallel/random.py",   # proves which tree
     "torch_version": "...", "cuda_available": false, "iterations": 2,
     "scenarios": {
       "<name>[@rank<r>]": {
         "error": null | "<traceback>",
         "iterations": [{
           "retained": {"live_inputs": int, "input_bytes": int, "grad_bytes": int,
                        "live_grads": [{"shape": [4, 8], "dtype": "float32", "bytes": 128}]},
           "input_shape_after_forward": [4, 8],      # [16] when distributed over TP=2
           "grads": {"x": "<dtype:shape:sha256>", "pre.weight": ..., ...},
           "reference_grads": {...}}]}}}             # same seed, no checkpoint

Scenario names and shapes: `patchcarry.synthetic.SCENARIOS`, `BATCH`, `HIDDEN`, `INNER`.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from patchcarry import proc
from patchcarry.errors import FatalError

REPO_ROOT = Path(__file__).resolve().parent.parent
BATCHES = ("cpu", "tp2")


class ProbeError(FatalError):
    """The probe child failed or printed something that is not its JSON document."""


def probe_env(tree: Path, cpu_only: bool = False) -> dict[str, str]:
    """The child's environment: `tree` then this repo on PYTHONPATH, one CPU thread.

    `cpu_only` hides any GPU (CUDA_VISIBLE_DEVICES=""), so the CPU stand-ins are used and
    results match a CPU runner; `run_probe` sets it by default, a GPU measurement must not.
    """
    env = dict(os.environ)
    if cpu_only:
        env["CUDA_VISIBLE_DEVICES"] = ""
    env["PYTHONPATH"] = os.pathsep.join([str(tree), str(REPO_ROOT)])
    env["OMP_NUM_THREADS"] = "1"
    env["PYTHONWARNINGS"] = "ignore"
    return env


# A probe child does seconds of work; past this it is hung (e.g. a stuck gloo rendezvous).
PROBE_TIMEOUT_S = 600.0


def run_probe(
    tree: Path, batches: Sequence[str] = BATCHES, iterations: int = 2, *, cpu_only: bool = True
) -> dict[str, Any]:
    """Import `tree`'s megatron in a child, run the scenario `batches`, return its JSON.

    Raises ProbeError when the child fails or imported megatron from somewhere else. A
    scenario that fails inside the child is reported in its JSON (`scenario_errors`).
    """
    tree = Path(tree).resolve()
    if not (tree / "megatron" / "core" / "__init__.py").is_file():
        raise ProbeError(f"{tree} has no megatron/core/__init__.py; pass a prepared tree copy")
    batch_args = [arg for batch in batches for arg in ("--batch", batch)]
    code, out, err = proc.cmd_output(
        sys.executable,
        "-m",
        "patchcarry.synthetic",
        *batch_args,
        "--iterations",
        str(iterations),
        cwd=tree,
        env=probe_env(tree, cpu_only),
        check=False,
        timeout=PROBE_TIMEOUT_S,
    )
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


def scenario_errors(result: dict[str, Any]) -> dict[str, str]:
    """The scenarios that failed inside the child, with their tracebacks."""
    return {name: s["error"] for name, s in result["scenarios"].items() if s.get("error")}


def free_loopback_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (a child's process-group rendezvous)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
