"""Parent side of the audit: each variant's tree in its own child; no torch imported here."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from patchcarry import proc
from patchcarry.errors import FatalError
from patchcarry.measure import variants
from patchcarry.measure.variants import VariantResult
from patchcarry.runtime.child import child_result, free_loopback_port, probe_env

RESULT_MARKER = "PATCHCARRY-AUDIT-RESULT "  # the audit child imports it (torch-free here)
# One configuration takes seconds on CPU; past this it is stuck (recursing until memory is gone)
# and reported as not finished.
CONFIG_TIMEOUT_S = 120.0


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
    config_timeout_s: float = CONFIG_TIMEOUT_S

    @property
    def one_process(self) -> bool:
        """CUDA: a variant's configurations share a child (one compile); CPU: one each (memory)."""
        return self.device == "cuda"

    def child_request(self, configs: list[dict[str, Any]]) -> dict[str, Any]:
        return {"model": self.model, "configs": configs, "config_timeout_s": self.config_timeout_s,
                "device": self.device, "iterations": self.iterations, "vocab": self.vocab,
                "seed": self.seed, "port": free_loopback_port()}  # fmt: skip


def run_child(tree: Path, request: Request) -> dict[str, Any]:
    """Audit each configuration with `tree`'s megatron, each in its own child (CPU: no compile)."""
    tree = Path(tree).resolve()
    env = probe_env(tree, cpu_only=request.device == "cpu")
    if request.device == "cpu":
        env["TORCHDYNAMO_DISABLE"] = "1"
    if request.one_process:
        together = _one_child(tree, env, request, list(request.configs))
        if not isinstance(together, str):
            return together
    finished, configs = [], []
    for config in request.configs:  # one child each (CPU; or after the shared child died)
        result = _one_child(tree, env, request, [config])
        if isinstance(result, str):
            configs.append({**config, "error": result, "iterations": []})
        else:
            finished.append(result)
            configs += result["configs"]
    if not finished:
        raise AuditError(f"no configuration finished on {tree}")
    return {**finished[0], "configs": configs}


def _one_child(tree: Path, env: dict[str, str], request: Request,
               configs: list[dict[str, Any]]) -> dict[str, Any] | str:  # fmt: skip
    """One child's result for `configs`, or why it has none (timed out, or killed: OOM)."""
    try:
        code, out, err = proc.cmd_output(
            *proc.PYTHON, "-m", "patchcarry.audit.child", cwd=tree, env=env, check=False,
            stdin=json.dumps(request.child_request(configs)),
            timeout=request.config_timeout_s * len(configs) + 30 * (len(configs) > 1),
        )  # fmt: skip
    except proc.TimedOut:
        return f"did not finish within {request.config_timeout_s:g} s on {request.device}"
    if code < 0:
        return f"killed by signal {-code} on {request.device}"
    return child_result(tree, code, out, err, RESULT_MARKER, AuditError)


def run(
    src: Path, plan: Sequence[variants.Variant], request: Request, workdir: Path, *,
    offline_note: str | None = None, progress: Callable[[str], None] = lambda _: None,
) -> list[VariantResult]:  # fmt: skip
    """Prepare and audit each planned variant; skipped ones keep their reason."""
    return variants.run_each(plan, src, workdir, lambda _, tree: run_child(tree, request),
                             verb="auditing", offline_note=offline_note,
                             progress=progress)  # fmt: skip
