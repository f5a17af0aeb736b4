"""One measurement: every variant on its own patched copy, each in its own child process."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from patchcarry.errors import FatalError
from patchcarry.measure import variants
from patchcarry.measure.model import Shape
from patchcarry.measure.variants import VariantResult
from patchcarry.runtime.child import free_loopback_port, probe_env, run_module

# Prefix of the child's result line (megatron prints on stdout too).
RESULT_MARKER = "PATCHCARRY-MEASURE-RESULT "


class MeasureError(FatalError):
    """A measuring child failed, printed no result, or imported the wrong tree."""


@dataclasses.dataclass(frozen=True)
class Request:
    """What every child measures (the same for all variants)."""

    model: str  # "synthetic" | "hc-gpt"
    shapes: tuple[Shape, ...]
    device: str = "cpu"
    iterations: int = 3
    vocab: int = 1024
    seed: int = 1234
    snapshot_dir: Path | None = None
    torch_compile: bool = False

    def child_request(self, variant: str) -> dict[str, Any]:
        snapshot = str(self.snapshot_dir / f"snapshot-{variant}") if self.snapshot_dir else None
        return {"model": self.model, "shapes": [dataclasses.asdict(s) for s in self.shapes],
                "device": self.device, "iterations": self.iterations, "vocab": self.vocab,
                "seed": self.seed, "port": free_loopback_port(), "snapshot": snapshot}  # fmt: skip


def run(
    src: Path, plan: Sequence[variants.Variant], request: Request, workdir: Path, *,
    offline_note: str | None = None, progress: Callable[[str], None] = lambda _: None,
) -> list[VariantResult]:  # fmt: skip
    """Prepare and measure each planned variant; skipped ones keep their reason."""

    def measure(variant: variants.Variant, tree: Path) -> dict[str, Any]:
        """`tree`'s megatron in a child, which prints its figures as JSON (CPU: no compile)."""
        tree = tree.resolve()
        # A CPU measurement hides any GPU, so the named CPU stand-ins are used as on a CPU runner.
        env = probe_env(tree, cpu_only=request.device == "cpu")
        if request.device == "cpu" and not request.torch_compile:
            env["TORCHDYNAMO_DISABLE"] = "1"
        child = request.child_request(variant.name)
        return run_module(tree, "patchcarry.measure.child", env, child, RESULT_MARKER, MeasureError)

    return variants.run_each(plan, src, workdir, measure, verb="measuring",
                             offline_note=offline_note, progress=progress)  # fmt: skip
