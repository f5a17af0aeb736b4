"""drift.yml's check step judges only a complete JSON report: a run that stopped early (exit 1
with no or cut-off JSON) fails the step instead of reading as "clean" and closing the issue."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

DRIFT = Path(__file__).resolve().parent.parent / ".github" / "workflows" / "drift.yml"
STEP = "Check against the base branch's tip"


def _run_check_step(tmp_path: Path, fake_check: str) -> int:
    steps = yaml.safe_load(DRIFT.read_text())["jobs"]["check"]["steps"]
    (script,) = [s["run"] for s in steps if s.get("name") == STEP]
    (tmp_path / "scripts").mkdir()
    check = tmp_path / "scripts" / "check"
    check.write_text(f"#!/bin/bash\n{fake_check}\n")
    check.chmod(0o755)
    # GitHub runs a `run:` block without `shell:` as `bash -e {0}`.
    return subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, check=False).returncode


@pytest.mark.skipif(shutil.which("jq") is None, reason="needs jq, as the runner has")
@pytest.mark.parametrize(
    ("fake_check", "passes"),
    [
        ('[ "$1" = --json ] && echo \'{"entries": []}\'; exit 1', True),  # a real drift
        ('[ "$1" = --json ] && echo \'{"entries": []}\'; exit 0', True),
        ("echo 'error: network dropped' >&2; exit 1", False),  # no JSON at all
        ('[ "$1" = --json ] && echo \'{"entries": [\'; exit 1', False),  # cut off
        ("exit 7", False),  # a git read failed
    ],
)
def test_check_step_accepts_only_a_valid_json_report(tmp_path, fake_check, passes):
    assert (_run_check_step(tmp_path, fake_check) == 0) is passes
