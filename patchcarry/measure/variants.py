"""The four variants, each on its own patched copy of the tree (a reset that fails: skipped)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from patchcarry.errors import BadInputError
from patchcarry.manifest import Entry, Manifest
from patchcarry.measure.model import VARIANTS
from patchcarry.patchfile import Patch
from patchcarry.patchfile import load as load_patch
from patchcarry.runtime.tree import prepared_copy

SYNTHETIC_NO_RESET = (
    "the synthetic model has no HyperConnectionTransformerLayer, which the reset patch changes"
)


@dataclasses.dataclass(frozen=True)
class Variant:
    """One variant: the patches it applies, or why it cannot run."""

    name: str
    patches: tuple[Patch, ...]
    sources: tuple[str, ...]  # manifest entry names or patch file names, for the evidence
    skip_reason: str | None = None


def _entry(manifest: Manifest, role: str) -> Entry | None:
    """The entry whose fix is the `role` variant (its manifest key `measure`)."""
    return next((e for e in manifest.entries if e.measure == role), None)


def plan(manifest: Manifest, requested: Sequence[str],
         reset_patches: Sequence[Path] = ()) -> list[Variant]:  # fmt: skip
    """The requested variants (manifest order of VARIANTS) with their patches."""
    unknown = [v for v in requested if v not in VARIANTS]
    if unknown:
        raise BadInputError(
            f"unknown variant(s) {', '.join(unknown)}; known: {', '.join(VARIANTS)}"
        )
    fix_entry = _entry(manifest, "fix")
    if fix_entry is None:
        raise BadInputError(f'{manifest.path} has no entry with measure = "fix", the fix measured')
    fix, fix_sources = (fix_entry.fix,), (fix_entry.name,)
    reset_entry = _entry(manifest, "reset")
    if reset_patches:
        reset = tuple(load_patch(Path(p)) for p in reset_patches)
        reset_sources = tuple(p.name for p in reset)
    else:
        reset = (reset_entry.fix,) if reset_entry else ()
        reset_sources = (reset_entry.name,) if reset_entry else ()
    no_reset = f'no entry with measure = "reset" in {manifest.path} and no --patch given'
    out = []
    for name in (v for v in VARIANTS if v in requested):
        if name == "unpatched":
            out.append(Variant(name, (), ()))
        elif name == "fix":
            out.append(Variant(name, fix, fix_sources))
        elif not reset:
            out.append(Variant(name, (), (), skip_reason=no_reset))
        elif name == "reset":
            out.append(Variant(name, reset, reset_sources))
        else:
            out.append(Variant(name, fix + reset, (*fix_sources, *reset_sources)))
    return out


def prepare(variant: Variant, src: Path, workdir: Path, *,
            offline_note: str | None = None) -> tuple[Variant, Path | None]:  # fmt: skip
    """Copy `src` to `workdir/<variant>` with its patches applied: (variant, tree)."""
    if variant.skip_reason:
        return variant, None
    try:
        return variant, prepared_copy(src, list(variant.patches), workdir / variant.name)
    except BadInputError as exc:
        if variant.name == "fix":
            raise
        reason = str(exc).splitlines()[0]
        if offline_note:
            reason = f"{reason} ({offline_note})"
        return dataclasses.replace(variant, skip_reason=reason), None


def offline_note(manifest: Manifest) -> str | None:
    """The manifest's reason why the reset entry cannot be judged on an installed tree."""
    reset = _entry(manifest, "reset")
    return reset.offline if reset else None


@dataclasses.dataclass(frozen=True)
class VariantResult:
    variant: Variant
    child: Any  # what the variant's child reported; None when skipped

    def head(self, done: str = "measured") -> dict[str, Any]:
        """The evidence's first fields for this variant: which, from what, `done` or why not."""
        return {"name": self.variant.name, "sources": list(self.variant.sources),
                "status": "skipped" if self.child is None else done,
                "skip_reason": self.variant.skip_reason}  # fmt: skip


def run_each(
    plan: Sequence[Variant], src: Path, workdir: Path, run_one: Callable[[Variant, Path], Any], *,
    verb: str, offline_note: str | None = None, progress: Callable[[str], None] = lambda _: None,
) -> list[VariantResult]:  # fmt: skip
    """Prepare each planned variant's tree and `run_one` on it; skipped ones keep their reason."""
    results = []
    for planned in plan:
        variant, tree = prepare(planned, src, workdir, offline_note=offline_note)
        if tree is None:
            progress(f"{variant.name}: skipped ({variant.skip_reason})")
            results.append(VariantResult(variant, None))
            continue
        progress(f"{variant.name}: {verb} on {tree}")
        results.append(VariantResult(variant, run_one(variant, tree)))
    return results
