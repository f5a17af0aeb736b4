"""The walk's peak memory over a deep autograd chain (what a long unrolled graph costs it).

    python -m testing.audit_walk_bench [--depth N ...] [--out PATH]

Builds `x → x * 1.0001 → …` N deep (one MulBackward0 node per step, each saving a scalar),
keeps only the last tensor on a module, and walks it with `patchcarry.audit.walk.reach`;
`tracemalloc` measures the peak of what Python allocates during the walk and the rebuild of the
deepest tensor's path (the chain itself is made before and not counted). Prints and writes one JSON
object: {"bound_mib", "max_objects", "runs": [{"depth", "tensors", "longest_path",
"peak_mib", "within_bound"}]}; exit 1 when a run is past the bound. Memory only:
no time is measured or compared.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tracemalloc
from collections.abc import Sequence
from pathlib import Path
from typing import Any

DEPTHS = (2_000, 10_000)
# The walk keeps, per visited object, one parent entry (parent id, hop) and one keepalive
# slot: about 0.5 KiB per object at most. A 10k-deep chain visits about 20k objects.
BOUND_MIB = 32.0


def holder(depth: int) -> Any:
    """A module keeping only the chain's last tensor (torch, and the walk that imports it,
    are imported where used, so --help runs without torch)."""
    import torch

    module = torch.nn.Module()
    x = torch.ones(4, requires_grad=True)
    y = x
    for _ in range(depth):
        y = y * 1.0001
    module.out = y
    return module


def measure(depth: int) -> dict[str, Any]:
    """Peak Python memory of one walk over a chain `depth` nodes deep."""
    from patchcarry.audit import walk

    holder_module = holder(depth)
    tracemalloc.start()
    found = walk.reach([("model", holder_module)])
    deepest = len(found[-1].path)  # breadth first: the last found is the deepest; one path
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    peak_mib = peak / 2**20
    return {
        "depth": depth,
        "tensors": len(found),
        "longest_path": deepest,
        "peak_mib": round(peak_mib, 2),
        "within_bound": peak_mib <= BOUND_MIB,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=os.environ.pop("PATCHCARRY_PROG", None), description=__doc__.splitlines()[0]
    )
    parser.add_argument("--depth", type=int, action="append", default=[])
    parser.add_argument("--out", type=Path, default=Path("out/audit-walk-bench.json"))
    args = parser.parse_args(argv)
    from patchcarry.audit import walk

    runs = [measure(d) for d in args.depth or DEPTHS]
    result = {"bound_mib": BOUND_MIB, "max_objects": walk.MAX_OBJECTS, "runs": runs}
    text = json.dumps(result, indent=2)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n")
    print(f"written: {args.out}", file=sys.stderr)
    return 0 if all(r["within_bound"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
