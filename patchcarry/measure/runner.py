"""Parent side: each variant's tree in its own child process, so no two trees share a module."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from patchcarry.errors import FatalError
from patchcarry.runtime.child import probe_env, run_module

# Prefix of the child's result line (megatron prints on stdout too).
RESULT_MARKER = "PATCHCARRY-MEASURE-RESULT "


class MeasureError(FatalError):
    """A measuring child failed, printed no result, or imported the wrong tree."""


def run_child(tree: Path, request: dict[str, Any], *,
              torch_compile: bool = False) -> dict[str, Any]:  # fmt: skip
    """Measure `request` with `tree`'s megatron in a child; its JSON (CPU: no compile)."""
    tree = Path(tree).resolve()
    # A CPU measurement hides any GPU, so the named CPU stand-ins are used as on a CPU runner.
    env = probe_env(tree, cpu_only=request["device"] == "cpu")
    if request["device"] == "cpu" and not torch_compile:
        env["TORCHDYNAMO_DISABLE"] = "1"
    return run_module(tree, "patchcarry.measure.child", env, request, RESULT_MARKER, MeasureError)
