"""The workflows' security posture, checked by parsing their YAML.

The checker is `scripts/hooks/workflow_posture.py` (also a pre-commit hook). Each rule is shown
to fire on a deliberately bad workflow, so a passing run on the real workflows is not vacuous.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
EXPECTED = {"ci.yml", "gpu.yml", "drift.yml", "resubmit.yml"}
SHA = "3d3c42e5aac5ba805825da76410c181273ba90b1"


def _load_hook(name: str) -> ModuleType:
    path = ROOT / "scripts" / "hooks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


posture = _load_hook("workflow_posture")
run_shellcheck = _load_hook("workflow_shellcheck")


def _write(tmp_path: Path, text: str, name: str = "bad.yml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def _rules(path: Path) -> dict[str, set[str | None]]:
    found: dict[str, set[str | None]] = {}
    for v in posture.check_workflow(path):
        found.setdefault(v.rule, set()).add(v.job)
    return found


# One workflow that breaks every rule, each in a job named after it.
BAD = f"""
name: bad
on:
  pull_request_target:
  pull_request:
    types: [opened]
jobs:
  unpinned:
    runs-on: ubuntu-24.04
    timeout-minutes: 5
    permissions: {{contents: read}}
    steps:
      - uses: actions/checkout@v4
        with: {{persist-credentials: false}}
      - uses: docker://alpine:3
  credentials:
    runs-on: ubuntu-24.04
    timeout-minutes: 5
    permissions: {{contents: read}}
    steps:
      - uses: actions/checkout@{SHA} # v7.0.1
  injection:
    runs-on: ubuntu-24.04
    timeout-minutes: 5
    permissions: {{contents: read}}
    steps:
      - run: echo "${{{{ github.event.pull_request.title }}}}"
  timeout:
    runs-on: ubuntu-24.04
    permissions: {{contents: read}}
    steps:
      - run: "true"
  gpu:
    runs-on: [self-hosted, gpu]
    timeout-minutes: 5
    permissions: {{contents: read}}
    steps:
      - run: "true"
  labelonly:
    if: contains(github.event.pull_request.labels.*.name, 'ok-to-test-gpu')
    runs-on: [self-hosted, gpu]
    timeout-minutes: 5
    permissions: {{contents: read}}
    steps:
      - run: "true"
  secret:
    runs-on: ubuntu-24.04
    timeout-minutes: 5
    permissions: {{contents: read}}
    env:
      TOKEN: ${{{{ secrets.RESUBMIT_TOKEN }}}}
    steps:
      - run: "true"
  unlimited:
    runs-on: ubuntu-24.04
    timeout-minutes: 5
    steps:
      - run: "true"
  writeall:
    runs-on: ubuntu-24.04
    timeout-minutes: 5
    permissions: write-all
    steps:
      - run: "true"
"""


@pytest.fixture(scope="module")
def bad_rules(tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[str | None]]:
    return _rules(_write(tmp_path_factory.mktemp("bad"), BAD))


@pytest.mark.parametrize(
    ("rule", "jobs"),
    [
        ("pull-request-target", {None}),
        ("unpinned-uses", {"unpinned"}),
        ("persist-credentials", {"credentials"}),
        ("expression-in-run", {"injection"}),
        ("no-timeout", {"timeout"}),
        ("ungated-self-hosted", {"gpu", "labelonly"}),
        ("secrets-in-pr-job", {"secret"}),
        ("no-permissions", {"unlimited", "writeall"}),
        # no workflow-level concurrency and none on any job: every job is reported
        (
            "no-concurrency",
            {
                "unpinned",
                "credentials",
                "injection",
                "timeout",
                "gpu",
                "labelonly",
                "secret",
                "unlimited",
                "writeall",
            },
        ),
    ],
)
def test_bad_workflow_reports_each_violation(
    bad_rules: dict[str, set[str | None]], rule: str, jobs: set[str | None]
) -> None:
    assert bad_rules.get(rule) == jobs


def test_bad_workflow_reports_nothing_unexpected(bad_rules: dict[str, set[str | None]]) -> None:
    assert set(bad_rules) == {
        "pull-request-target",
        "unpinned-uses",
        "persist-credentials",
        "expression-in-run",
        "no-timeout",
        "ungated-self-hosted",
        "secrets-in-pr-job",
        "no-permissions",
        "no-concurrency",
    }


def test_unpinned_uses_names_both_refs(tmp_path: Path) -> None:
    details = [
        v.detail for v in posture.check_workflow(_write(tmp_path, BAD)) if v.rule == "unpinned-uses"
    ]
    assert any("actions/checkout@v4" in d for d in details)
    assert any("docker://alpine:3" in d for d in details)


def test_main_exits_1_and_prints_violations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert posture.main([str(_write(tmp_path, BAD))]) == 1
    out = capsys.readouterr().out
    assert "[pull-request-target]" in out and "job gpu: [ungated-self-hosted]" in out


GOOD = f"""
name: good
on:
  pull_request:
    types: [labeled, synchronize]
  push:
permissions: {{}}
concurrency:
  group: good-${{{{ github.ref }}}}
jobs:
  gpu:
    if: contains(github.event.pull_request.labels.*.name, 'ok-to-test-gpu')
    environment: gpu-pr
    runs-on: [self-hosted, gpu]
    timeout-minutes: 5
    permissions:
      contents: read
    steps:
      - uses: actions/checkout@{SHA} # v7.0.1
        with:
          persist-credentials: false
      - uses: ./.github/actions/local
      - env:
          TITLE: ${{{{ github.event.pull_request.title }}}}
        run: echo "$TITLE"
"""


def test_gated_pinned_workflow_is_clean(tmp_path: Path) -> None:
    assert posture.check_workflow(_write(tmp_path, GOOD)) == []


def test_on_as_string_and_list_forms(tmp_path: Path) -> None:
    text = "on: {}\njobs: {{}}\n"
    assert posture.triggers(
        posture.load_workflow(_write(tmp_path, text.format("push"), "a.yml"))
    ) == {"push"}
    listed = _write(tmp_path, "on: [push, pull_request_target]\njobs: {}\n", "b.yml")
    assert {v.rule for v in posture.check_workflow(listed)} == {"pull-request-target"}


def test_self_hosted_without_pr_trigger_needs_no_gate(tmp_path: Path) -> None:
    text = GOOD.replace("  pull_request:\n    types: [labeled, synchronize]\n", "")
    text = text.replace("    environment: gpu-pr\n", "").replace("    if: contains(", "    # (")
    assert posture.check_workflow(_write(tmp_path, text)) == []


# --- the real workflows ------------------------------------------------------------------


def _real() -> list[Path]:
    return sorted(WORKFLOWS.glob("*.yml"))


def test_the_expected_workflows_exist() -> None:
    assert {p.name for p in _real()} == EXPECTED


@pytest.mark.parametrize("path", _real(), ids=lambda p: p.name)
def test_real_workflow_keeps_every_rule(path: Path) -> None:
    assert [str(v) for v in posture.check_workflow(path)] == []


@pytest.mark.parametrize("path", _real(), ids=lambda p: p.name)
def test_every_uses_has_a_version_comment(path: Path) -> None:
    """A 40-hex pin is unreadable alone: each carries `# vX.Y.Z` for people and Dependabot."""
    for line in path.read_text().splitlines():
        if re.match(r"^\s*(- )?uses: ", line):
            assert re.search(r"@[0-9a-f]{40} # v\d+\.\d+\.\d+$", line), line


def _jobs(name: str) -> dict[str, dict[str, object]]:
    return posture.load_workflow(WORKFLOWS / name)["jobs"]


def test_gpu_workflow_gates_pull_requests_on_label_and_environment() -> None:
    workflow = posture.load_workflow(WORKFLOWS / "gpu.yml")
    assert posture.triggers(workflow) == {"workflow_dispatch", "push", "pull_request"}
    assert workflow["on"]["pull_request"]["types"] == ["labeled", "synchronize"]
    (job,) = workflow["jobs"].values()
    assert posture.runs_on_labels(job) == ["self-hosted", "gpu"]
    assert "ok-to-test-gpu" in job["if"] and "gpu-pr" in job["environment"]
    assert "secrets." not in (WORKFLOWS / "gpu.yml").read_text()


def test_drift_issue_write_is_confined_to_one_job_without_checkout() -> None:
    jobs = _jobs("drift.yml")
    writers = {n for n, j in jobs.items() if "write" in str(j.get("permissions"))}
    assert writers == {"issue"}
    assert jobs["issue"]["permissions"] == {"issues": "write"}
    assert not any("actions/checkout" in str(s.get("uses")) for s in jobs["issue"]["steps"])


def test_resubmit_is_manual_and_dry_run_by_default() -> None:
    workflow = posture.load_workflow(WORKFLOWS / "resubmit.yml")
    assert posture.triggers(workflow) == {"workflow_dispatch"}
    dry_run = workflow["on"]["workflow_dispatch"]["inputs"]["dry_run"]
    assert dry_run["type"] == "boolean" and dry_run["default"] is True
    text = (WORKFLOWS / "resubmit.yml").read_text()
    assert "secrets.RESUBMIT_TOKEN" in text and "scripts/resubmit.sh" in text


# --- workflow_shellcheck: which run: blocks it hands to shellcheck ------------------------


def test_shellcheck_sees_bash_run_blocks_with_expressions_replaced(tmp_path: Path) -> None:
    text = """
    on: push
    defaults:
      run:
        shell: bash
    jobs:
      a:
        runs-on: ubuntu-24.04
        steps:
          - uses: ./.github/actions/local
          - name: first
            run: echo "${{ github.sha }}"
          - name: python
            shell: python
            run: print(1)
      b:
        runs-on: windows-2025
        defaults:
          run:
            shell: pwsh
        steps:
          - run: Write-Output 1
    """
    blocks = list(run_shellcheck.run_blocks(_write(tmp_path, text)))
    assert [(label.split(": ", 1)[1], script) for label, script in blocks] == [
        ("job a step 2 (first)", 'echo "EXPRESSION"')
    ]


def test_shellcheck_reports_lines_inside_the_run_block() -> None:
    line = "-:4:6: note: Double quote to prevent globbing and word splitting. [SC2086]"
    assert run_shellcheck._block_line(line).startswith("run: line 2:6: note: Double quote")
