"""drift.yml's check step judges only a complete JSON report: a run that stopped early (exit 1
with no or cut-off JSON) fails the step instead of reading as "clean" and closing the issue."""

from __future__ import annotations

import json
import os
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


JUDGE = "Judge drift and write the issue body"


def _run_judge_step(tmp_path: Path, report: dict) -> dict[str, str]:
    steps = yaml.safe_load(DRIFT.read_text())["jobs"]["check"]["steps"]
    (script,) = [s["run"] for s in steps if s.get("name") == JUDGE]
    out = tmp_path / "out"
    out.mkdir()
    (out / "check.json").write_text(json.dumps(report))
    (out / "check.txt").write_text("check output\n")
    (out / "exit-code").write_text("0\n")
    env = {
        **os.environ,
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary"),
        "GITHUB_SERVER_URL": "https://github.example",
        "GITHUB_REPOSITORY": "me/patchcarry",
        "GITHUB_RUN_ID": "1",
    }
    subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, check=True, env=env)
    lines = (tmp_path / "output").read_text().split()
    return dict(line.split("=", 1) for line in lines)


def _entry(name: str, status: str, tip: str, landing: dict | None) -> dict:
    refs = [{"ref": "base", "status": "clean"}, {"ref": "tip", "status": tip}]
    return {"name": name, "status": status, "refs": refs, "drift": [], "landing": landing}


LANDED = {
    "verdict": "landed",
    "commit": {"sha": "a" * 40, "subject": "Fix grads (#6339)", "pr": 6339},
    "evidence": ["same git patch-id --verbatim over the fix's files"],
}


@pytest.mark.skipif(shutil.which("jq") is None, reason="needs jq, as the runner has")
def test_a_landing_is_reported_as_such_not_as_drift(tmp_path):
    """A landed fix no longer applies at the tip (a conflict): that is its landing, not drift."""
    report = {"entries": [_entry("checkpoint-grad", "landed", "conflict", LANDED)]}
    outputs = _run_judge_step(tmp_path, report)
    assert outputs == {"drifted": "false", "landed": "true"}
    body = (tmp_path / "out" / "landed.md").read_text()
    assert "| checkpoint-grad | landed | aaaaaaaaaaaa Fix grads (#6339) | 6339 |" in body
    assert "`scripts/retire checkpoint-grad`" in body


@pytest.mark.skipif(shutil.which("jq") is None, reason="needs jq, as the runner has")
def test_a_conflict_that_has_not_landed_is_still_drift(tmp_path):
    landing = {"verdict": "not landed", "commit": None, "evidence": []}
    report = {"entries": [_entry("checkpoint-grad", "does not apply", "conflict", landing)]}
    assert _run_judge_step(tmp_path, report) == {"drifted": "true", "landed": "false"}
