#!/usr/bin/env python3
"""shellcheck every `run:` block of the given workflows, as bash runs them on the runner.

Usage: workflow_shellcheck.py WORKFLOW.yml...  (pre-commit hook `workflow-shellcheck`).
actionlint does this too, but it cannot install without GitHub (see .pre-commit-config.yaml),
so this hook keeps the check in the PyPI-only hook set. GitHub runs a `run:` block as
`bash --noprofile --norc -eo pipefail {0}`; the block is checked with that header. A
`${{ ... }}` expression (none should remain: see workflow_posture.py) is replaced by a plain
word so shellcheck sees valid shell.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import yaml

_EXPRESSION = re.compile(r"\$\{\{.*?\}\}", re.DOTALL)
_HEADER = "#!/usr/bin/env bash\nset -eo pipefail\n"


def run_blocks(path: Path) -> Iterator[tuple[str, str]]:
    """(label, script) for each bash `run:` step of the workflow at `path`."""
    workflow: dict[str, Any] = yaml.safe_load(path.read_text()) or {}
    default_shell = ((workflow.get("defaults") or {}).get("run") or {}).get("shell", "bash")
    for job_name, job in (workflow.get("jobs") or {}).items():
        job_shell = ((job.get("defaults") or {}).get("run") or {}).get("shell", default_shell)
        for n, step in enumerate(job.get("steps") or [], 1):
            if not isinstance(step, dict) or not isinstance(step.get("run"), str):
                continue
            if not str(step.get("shell", job_shell)).startswith("bash"):
                continue
            label = f"{path}: job {job_name} step {n} ({step.get('name', 'run')})"
            yield label, _EXPRESSION.sub("EXPRESSION", step["run"])


def _block_line(gcc_line: str) -> str:
    """`-:LINE:COL: msg` -> `run: line L:COL: msg`, L counted inside the `run:` block."""
    match = re.match(r"^-:(\d+):(\d+): (.*)$", gcc_line)
    if not match:
        return gcc_line
    line = int(match.group(1)) - _HEADER.count("\n")
    return f"run: line {line}:{match.group(2)}: {match.group(3)}"


def check(paths: Sequence[Path]) -> int:
    failed = 0
    for path in paths:
        for label, script in run_blocks(path):
            result = subprocess.run(
                ["shellcheck", "--shell=bash", "--format=gcc", "-"],
                input=_HEADER + script,
                capture_output=True,
                text=True,
                check=False,
            )
            if result.returncode != 0:
                failed = 1
                print(f"{label}:")
                for line in result.stdout.splitlines():
                    print("  " + _block_line(line))
                print(result.stderr, end="")
    return failed


if __name__ == "__main__":
    raise SystemExit(check([Path(p) for p in sys.argv[1:]]))
