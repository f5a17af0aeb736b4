"""How byte counts are shown to people: the exact figure, and a decimal unit when large."""

from __future__ import annotations


def human_bytes(n: int | None) -> str:
    """`268435456 B (268.44 MB)`; `512 B`; `–` when unknown. Exact first, so no figure rounds."""
    if n is None:
        return "–"
    for unit, size in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if abs(n) >= size:
            return f"{n} B ({n / size:.2f} {unit})"
    return f"{n} B"
