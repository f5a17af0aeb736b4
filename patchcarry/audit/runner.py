"""Parent side: prepare each variant's tree, run `patchcarry.audit.child` on it, collect.

The parent never imports torch or megatron; each variant runs in its own child process with
its own patched copy first on PYTHONPATH (one Megatron tree per process).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from patchcarry import proc
from patchcarry.errors import FatalError
from patchcarry.measure import variants
from patchcarry.probe import free_loopback_port, probe_env

RESULT_MARKER = "PATCHCARRY-AUDIT-RESULT "  # as in patchcarry.audit.child (torch-free here)
CHILD_TIMEOUT_S = 3600.0


class AuditError(FatalError):
    """An audit child failed, printed no result, or imported the wrong tree."""


@dataclasses.dataclass(frozen=True)
class Request:
    """What every child audits (the same for all variants)."""

    model: str  # "hc-gpt" | "synthetic"
    configs: tuple[dict[str, Any], ...]  # {"name", "shape", "overrides"}
    device: str = "cpu"
    iterations: int = 2
    vocab: int = 64
    seed: int = 1234

    def child_request(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "configs": list(self.configs),
            "device": self.device,
            "iterations": self.iterations,
            "vocab": self.vocab,
            "seed": self.seed,
            "port": free_loopback_port(),
        }


def run_child(tree: Path, request: Request) -> dict[str, Any]:
    """Audit `request` with `tree`'s megatron in a child process; its result JSON.

    On CPU `torch.compile` is off (TORCHDYNAMO_DISABLE=1), as in `measure`: compiling changes
    nothing about which tensors stay referenced.
    """
    tree = Path(tree).resolve()
    env = probe_env(tree, cpu_only=request.device == "cpu")
    if request.device == "cpu":
        env["TORCHDYNAMO_DISABLE"] = "1"
    code, out, err = proc.cmd_output(
        sys.executable,
        "-m",
        "patchcarry.audit.child",
        cwd=tree,
        env=env,
        check=False,
        stdin=json.dumps(request.child_request()),
        timeout=CHILD_TIMEOUT_S,
    )
    lines = [line for line in out.splitlines() if line.startswith(RESULT_MARKER)]
    if code != 0 or not lines:
        raise AuditError(
            f"audit child for {tree} exited {code} without a result; last stderr:\n"
            f"{err.strip()[-4000:]}"
        )
    result: dict[str, Any] = json.loads(lines[-1][len(RESULT_MARKER) :])
    imported = Path(result["megatron_file"]).resolve()
    if tree not in imported.parents:
        raise AuditError(f"child for {tree} imported megatron from {imported}, not the tree")
    return result


@dataclasses.dataclass(frozen=True)
class VariantResult:
    variant: variants.Variant
    child: dict[str, Any] | None  # None when skipped


def run(
    src: Path,
    plan: Sequence[variants.Variant],
    request: Request,
    workdir: Path,
    *,
    offline_note: str | None = None,
    progress: Callable[[str], None] = lambda _: None,
) -> list[VariantResult]:
    """Prepare and audit each planned variant; skipped ones keep their reason."""
    results = []
    for planned in plan:
        variant, tree = variants.prepare(planned, src, workdir, offline_note=offline_note)
        if tree is None:
            progress(f"{variant.name}: skipped ({variant.skip_reason})")
            results.append(VariantResult(variant, None))
            continue
        progress(f"{variant.name}: auditing on {tree}")
        results.append(VariantResult(variant, run_child(tree, request)))
    return results
