"""How long reading one patch takes as its one hunk grows (what every `check` pays per patch).

    python -m testing.patch_parse_bench [--lines N ...] [--out PATH]

Writes a real `git format-patch` of a commit adding a file of N lines (one hunk of N added
lines), then times `patchfile.load` of it (the best of three). Prints and writes one JSON object:
{"cap_bytes", "runs": [{"lines", "bytes", "seconds", "seconds_per_10k_lines"}]}. A figure for the
record, never a pass/fail: the tests count operations instead (tests/test_patchfile.py).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from patchcarry import patchfile
from testing import patch_corpus

LINES = (10_000, 20_000, 40_000, 200_000)  # the three, and one near the size cap


def measure(lines: int, tmp: Path) -> dict[str, Any]:
    """The best of three `patchfile.load` times of a patch whose one hunk has `lines` lines."""
    path = patch_corpus.large_hunk_patch(tmp, lines)
    times = []
    for _ in range(3):
        start = time.perf_counter()
        patchfile.load(path)
        times.append(time.perf_counter() - start)
    best = min(times)
    return {
        "lines": lines,
        "bytes": path.stat().st_size,
        "seconds": round(best, 3),
        "seconds_per_10k_lines": round(best * 10_000 / lines, 4),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=os.environ.pop("PATCHCARRY_PROG", None), description=__doc__.splitlines()[0]
    )
    parser.add_argument("--lines", type=int, action="append", default=[])
    parser.add_argument("--out", type=Path, default=Path("out/patch-parse-bench.json"))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="patchcarry-bench-") as tmp:
        runs = [measure(n, Path(tmp)) for n in args.lines or LINES]
    text = json.dumps({"cap_bytes": patchfile.MAX_PATCH_BYTES, "runs": runs}, indent=2)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n")
    print(f"written: {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
