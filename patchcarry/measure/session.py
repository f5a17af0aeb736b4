"""One measurement: every variant on its own patched copy, each in its own child process."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from patchcarry.measure import runner, variants
from patchcarry.measure.model import Shape
from patchcarry.runtime.child import free_loopback_port


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
        return {
            "model": self.model,
            "shapes": [dataclasses.asdict(s) for s in self.shapes],
            "device": self.device,
            "iterations": self.iterations,
            "vocab": self.vocab,
            "seed": self.seed,
            "port": free_loopback_port(),
            "snapshot": snapshot,
        }


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
    """Prepare and measure each planned variant; skipped ones keep their reason."""
    results = []
    for planned in plan:
        variant, tree = variants.prepare(planned, src, workdir, offline_note=offline_note)
        if tree is None:
            progress(f"{variant.name}: skipped ({variant.skip_reason})")
            results.append(VariantResult(variant, None))
            continue
        progress(f"{variant.name}: measuring on {tree}")
        child = runner.run_child(
            tree, request.child_request(variant.name), torch_compile=request.torch_compile
        )
        results.append(VariantResult(variant, child))
    return results
