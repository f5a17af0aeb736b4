"""What `check` costs as a manifest grows: time, bytes and history reads, 10 to 200 entries.

    python -m testing.check_bench [--entries N ...] [--out PATH]

Each size gets a fresh real-git upstream (testing/landing_many: a third of the fixes squashed
on dev, a third landed on main and brought to dev by a sync merge, a third not landed) and a
cold cache; `check --json` runs on every entry, and its own `cost` (seconds, bytes fetched,
history fetches and walks per base branch) is recorded with the wall time of the whole command
(manifest loading included), the peak memory of this process and of the largest git it ran
(`getrusage`'s ru_maxrss, MB; the process's peak includes building the world), the
CPU-seconds of the command (this process, and the gits it ran: on a shared machine its
wall time says more about the others' load, given beside it) and whether every verdict was
the expected one. Prints and writes one JSON object: {"runs": [{"entries", "wall_seconds",
"check_seconds", "cpu_seconds": {"self", "git"}, "load_1min": {"before", "after"},
"bytes_fetched", "history_fetches", "history_walks", "peak_rss_mb", "peak_git_rss_mb",
"verdicts_ok"}]}. A measurement, not a test: nothing is
compared with a time. `--entries 1000` is the issue-49 figure (1,000 entries cold).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

SIZES = (10, 50, 100, 200)


def _peak(who: int) -> float:
    """Peak resident memory in MB (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(who).ru_maxrss / 1024


def _cpu() -> dict[str, float]:
    """CPU-seconds (user + system) so far of this process and of the children it waited for
    (every git the check ran)."""
    own, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return {"self": own.ru_utime + own.ru_stime, "git": kids.ru_utime + kids.ru_stime}


def measure(count: int) -> dict[str, Any]:
    """One cold `check --json` of `count` entries on a world of its own."""
    from patchcarry.cli import main
    from testing.landing_many import ManyWorld, judged

    with tempfile.TemporaryDirectory(prefix="check-bench-") as tmp:
        world = ManyWorld.create(Path(tmp) / "world", count)
        argv = ["check", "--json", "--manifest", str(world.manifest), "--upstream", world.url]
        out = io.StringIO()
        old = os.environ.get("XDG_CACHE_HOME")
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        try:
            load = os.getloadavg()[0]
            cpu = _cpu()
            started = time.monotonic()
            with contextlib.redirect_stdout(out):
                code = main([*argv, "--work-dir", str(Path(tmp) / "wd")])
            wall = time.monotonic() - started
            cpu = {k: round(v - cpu[k], 2) for k, v in _cpu().items()}
        finally:
            if old is None:
                os.environ.pop("XDG_CACHE_HOME", None)
            else:
                os.environ["XDG_CACHE_HOME"] = old
        data = json.loads(out.getvalue())
        cost = data["cost"]
        return {
            "entries": count,
            "exit_code": code,
            "wall_seconds": round(wall, 2),
            "check_seconds": cost["seconds"],
            "cpu_seconds": cpu,
            "load_1min": {"before": round(load, 2), "after": round(os.getloadavg()[0], 2)},
            "bytes_fetched": cost["bytes_fetched"],
            "history_fetches": cost["history_fetches"],
            "history_walks": cost["history_walks"],
            "peak_rss_mb": round(_peak(resource.RUSAGE_SELF), 1),
            "peak_git_rss_mb": round(_peak(resource.RUSAGE_CHILDREN), 1),
            "verdicts_ok": judged(data) == world.expected,
        }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=os.environ.pop("PATCHCARRY_PROG", None), description=__doc__.splitlines()[0]
    )
    parser.add_argument("--entries", type=int, action="append", default=[])
    parser.add_argument("--out", type=Path, default=Path("out/check-bench.json"))
    args = parser.parse_args(argv)
    runs = []
    for count in args.entries or SIZES:
        runs.append(measure(count))
        print(json.dumps(runs[-1]), file=sys.stderr)
    text = json.dumps({"runs": runs}, indent=2)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n")
    print(f"written: {args.out}", file=sys.stderr)
    return 0 if all(r["verdicts_ok"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
