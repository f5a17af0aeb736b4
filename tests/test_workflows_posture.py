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
    environment: gpu-pr
    runs-on: [self-hosted, gpu]
    timeout-minutes: 5
    permissions: {{contents: read}}
    steps:
      - run: "true"
  customlabel:
    runs-on: gpu
    timeout-minutes: 5
    permissions: {{contents: read}}
    steps:
      - run: "true"
  group:
    runs-on:
      group: gpu-runners
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
        ("self-hosted-pr-trigger", {"gpu", "labelonly", "customlabel", "group"}),
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
                "customlabel",
                "group",
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
        "self-hosted-pr-trigger",
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
    assert "[pull-request-target]" in out and "job gpu: [self-hosted-pr-trigger]" in out


# A clean workflow: the GPU only for a commit that a GitHub-hosted gate job decided on, whose
# outputs the self-hosted job reads; no pull request trigger (that would put the whole file,
# the gate included, in the PR author's hands).
GOOD = f"""
name: good
on:
  push:
    branches: [main]
  issue_comment:
    types: [created]
permissions: {{}}
concurrency:
  group: good-${{{{ github.ref }}}}
jobs:
  test:
    runs-on: ubuntu-24.04
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
  authorize:
    if: github.event_name == 'issue_comment'
    runs-on: ubuntu-24.04
    timeout-minutes: 5
    permissions:
      pull-requests: read
    outputs:
      sha: ${{{{ steps.gate.outputs.sha }}}}
    steps:
      - id: gate
        env:
          GITHUB_TOKEN: ${{{{ github.token }}}}
        run: python3 gate.py
  gpu:
    needs: authorize
    runs-on: [self-hosted, gpu]
    timeout-minutes: 5
    permissions:
      contents: read
    steps:
      - uses: actions/checkout@{SHA} # v7.0.1
        with:
          ref: ${{{{ needs.authorize.outputs.sha }}}}
          persist-credentials: false
"""


def test_clean_workflow_is_clean(tmp_path: Path) -> None:
    assert posture.check_workflow(_write(tmp_path, GOOD)) == []


def test_on_as_string_and_list_forms(tmp_path: Path) -> None:
    text = "on: {}\njobs: {{}}\n"
    assert posture.triggers(
        posture.load_workflow(_write(tmp_path, text.format("push"), "a.yml"))
    ) == {"push"}
    listed = _write(tmp_path, "on: [push, pull_request_target]\njobs: {}\n", "b.yml")
    assert {v.rule for v in posture.check_workflow(listed)} == {"pull-request-target"}


# --- self-hosted runners: no pull request trigger, and a real gate for outside events ------

# The issue's hostile workflow: a pull request's own YAML, a self-hosted job, an `if:` that
# mentions a label (and is true for nearly every event) and an environment. The hook as it
# was passed it: it looked for the word "label" in the `if:` and for any `environment:`.
HOSTILE = """
name: hostile
on:
  __TRIGGER__
permissions: {}
concurrency:
  group: hostile
jobs:
  gpu:
    if: github.event.label.name != 'x'
    environment: anything
    runs-on: __RUNS_ON__
    timeout-minutes: 5
    permissions:
      contents: read
    steps:
      - uses: actions/checkout@__SHA__ # v7.0.1
        with:
          persist-credentials: false
      - run: scripts/gpu-check
"""


def _fill(template: str, **values: str) -> str:
    for key, value in {"sha": SHA, **values}.items():
        template = template.replace(f"__{key.upper()}__", value)
    return template


_SELF_HOSTED_RUNS_ON = [
    "[self-hosted, gpu]",
    "gpu",  # a custom label reaches a self-hosted runner without `self-hosted`
    "{group: gpu-runners}",
    "[ubuntu-24.04, gpu]",
    "\"${{ github.event.label.name == 'x' && 'ubuntu-24.04' || 'gpu' }}\"",
    '${{ fromJSON(\'["self-hosted", "gpu"]\') }}',
]
_PR_TRIGGERS = [
    "pull_request:\n    types: [labeled, synchronize]",
    "pull_request_review:",
    "pull_request_review_comment:",
    "merge_group:",
    "pull_request_target:",
]


@pytest.mark.parametrize("runs_on", _SELF_HOSTED_RUNS_ON)
@pytest.mark.parametrize("trigger", _PR_TRIGGERS, ids=lambda t: t.split(":")[0])
def test_hostile_pr_workflow_on_a_self_hosted_runner_is_rejected(
    tmp_path: Path, trigger: str, runs_on: str
) -> None:
    path = _write(tmp_path, _fill(HOSTILE, trigger=trigger, runs_on=runs_on))
    assert _rules(path).get("self-hosted-pr-trigger") == {"gpu"}
    assert posture.main([str(path)]) == 1


def test_hostile_workflow_on_a_hosted_runner_is_not_this_rule(tmp_path: Path) -> None:
    path = _write(tmp_path, _fill(HOSTILE, trigger="pull_request:", runs_on="ubuntu-24.04"))
    assert "self-hosted-pr-trigger" not in _rules(path)


def test_the_old_label_and_environment_gate_is_no_longer_enough(tmp_path: Path) -> None:
    old_gpu_yml = """
    on:
      workflow_dispatch:
      pull_request:
        types: [labeled, synchronize]
    permissions: {}
    concurrency: {group: gpu}
    jobs:
      gpu-check:
        if: >-
          github.event_name != 'pull_request'
          || (github.event.action == 'labeled' && github.event.label.name == 'ok-to-test-gpu')
        runs-on: [self-hosted, gpu]
        environment: ${{ github.event_name == 'pull_request' && 'gpu-pr' || 'gpu' }}
        timeout-minutes: 90
        permissions: {contents: read}
        steps:
          - run: scripts/gpu-check
    """
    assert _rules(_write(tmp_path, old_gpu_yml)) == {"self-hosted-pr-trigger": {"gpu-check"}}


def _repo_with(tmp_path: Path, caller: str, called: str) -> Path:
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "called.yml").write_text(textwrap.dedent(called))
    return _write(workflows, caller, "caller.yml")


CALLER = """
on: pull_request
permissions: {}
concurrency: {group: c}
jobs:
  call:
    uses: ./.github/workflows/called.yml
"""


def test_pr_workflow_calling_a_self_hosted_reusable_workflow_is_rejected(tmp_path: Path) -> None:
    called = """
    on: workflow_call
    permissions: {}
    concurrency: {group: d}
    jobs:
      gpu: {runs-on: [self-hosted, gpu], timeout-minutes: 5, steps: [{run: "true"}]}
    """
    rules = _rules(_repo_with(tmp_path, CALLER, called))
    assert rules == {"self-hosted-pr-trigger": {"call"}}


def test_pr_workflow_calling_a_hosted_reusable_workflow_is_clean(tmp_path: Path) -> None:
    called = """
    on: workflow_call
    jobs:
      lint: {runs-on: ubuntu-24.04, timeout-minutes: 5, steps: [{run: "true"}]}
    """
    assert _rules(_repo_with(tmp_path, CALLER, called)) == {}


def test_pr_workflow_calling_a_remote_reusable_workflow_is_rejected(tmp_path: Path) -> None:
    remote = CALLER.replace(
        "./.github/workflows/called.yml", f"org/ci/.github/workflows/x.yml@{SHA}"
    )
    assert _rules(_write(tmp_path, remote)) == {"self-hosted-pr-trigger": {"call"}}


COMMENT_TRIGGERED = """
on:
  issue_comment:
    types: [created]
permissions: {}
concurrency: {group: c}
jobs:
  gate:
    runs-on: __GATE_RUNS_ON__
    timeout-minutes: 5
    permissions: {pull-requests: read}
    outputs:
      sha: ${{ steps.gate.outputs.sha }}
    steps:
      - id: gate
        run: python3 gate.py
  gpu:
    __NEEDS__
    if: >-
      contains(github.event.comment.body, '/ok to test')
      && github.event.comment.author_association == 'MEMBER'
    runs-on: [self-hosted, gpu]
    timeout-minutes: 5
    permissions: {contents: read}
    steps:
      - uses: actions/checkout@__SHA__ # v7.0.1
        with:
          ref: __REF__
          persist-credentials: false
"""


@pytest.mark.parametrize(
    ("needs", "ref", "gate_runs_on", "flagged"),
    [
        ("", "${{ github.event.issue.number }}", "ubuntu-24.04", {"gpu"}),  # an `if:` alone
        ("needs: gate", "main", "ubuntu-24.04", {"gpu"}),  # a gate whose decision is unread
        # the gate itself on a self-hosted runner: ungated, and no gate
        ("needs: gate", "${{ needs.gate.outputs.sha }}", "[self-hosted, gpu]", {"gpu", "gate"}),
    ],
    ids=["if-only", "outputs-unread", "self-hosted-gate"],
)
def test_comment_triggered_self_hosted_job_needs_a_hosted_gate(
    tmp_path: Path, needs: str, ref: str, gate_runs_on: str, flagged: set[str]
) -> None:
    text = _fill(COMMENT_TRIGGERED, needs=needs, ref=ref, gate_runs_on=gate_runs_on)
    assert _rules(_write(tmp_path, text)).get("if-only-gate") == flagged


def test_comment_triggered_self_hosted_job_behind_a_hosted_gate_is_clean(tmp_path: Path) -> None:
    text = _fill(
        COMMENT_TRIGGERED,
        needs="needs: gate",
        ref="${{ needs.gate.outputs.sha }}",
        gate_runs_on="ubuntu-24.04",
    )
    assert _rules(_write(tmp_path, text)) == {}


def test_self_hosted_on_trusted_events_needs_no_gate(tmp_path: Path) -> None:
    text = """
    on:
      push:
        branches: [main]
      workflow_dispatch:
      schedule: [{cron: "0 0 * * *"}]
    permissions: {}
    concurrency: {group: t}
    jobs:
      gpu: {runs-on: [self-hosted, gpu], timeout-minutes: 5, steps: [{run: "true"}]}
    """
    assert posture.check_workflow(_write(tmp_path, text)) == []


# --- no installer runs with a secret in its environment ------------------------------------

INSTALLS = """
on: workflow_dispatch
permissions: {}
concurrency: {group: i}
jobs:
  step-secret:
    runs-on: ubuntu-24.04
    timeout-minutes: 5
    permissions: {contents: read}
    steps:
      - name: token and pip together
        env:
          GITHUB_TOKEN: ${{ secrets.RESUBMIT_TOKEN }}
        run: python -m pip install -e .
  job-secret:
    runs-on: ubuntu-24.04
    timeout-minutes: 5
    permissions: {contents: read}
    env:
      GH_TOKEN: ${{ github.token }}
    steps:
      - run: scripts/bootstrap main
  script-that-bootstraps:
    runs-on: ubuntu-24.04
    timeout-minutes: 5
    permissions: {contents: read}
    steps:
      - name: the old resubmit step
        env:
          GITHUB_TOKEN: ${{ secrets.RESUBMIT_TOKEN }}
        run: scripts/resubmit.sh --json > out/resubmit.jsonl
  split:
    runs-on: ubuntu-24.04
    timeout-minutes: 5
    permissions: {contents: read}
    steps:
      - name: install, no secret
        run: scripts/bootstrap main
      - name: the token step runs the built venv
        env:
          GITHUB_TOKEN: ${{ secrets.RESUBMIT_TOKEN }}
        run: .venv/bin/python -m patchcarry resubmit --json
"""


def test_installers_never_run_with_a_secret(tmp_path: Path) -> None:
    # ROOT: scripts/resubmit.sh is recognised as an installer because it runs bootstrap.
    found = {
        v.job: v.detail
        for v in posture.check_workflow(_write(tmp_path, INSTALLS), root=ROOT)
        if v.rule == "install-with-secret"
    }
    assert set(found) == {"step-secret", "job-secret", "script-that-bootstraps"}
    assert "scripts/resubmit.sh (it runs scripts/bootstrap)" in found["script-that-bootstraps"]


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


def test_gpu_runs_only_vetted_commits_from_the_default_branch_definition() -> None:
    workflow = posture.load_workflow(WORKFLOWS / "gpu.yml")
    assert posture.triggers(workflow) == {"push", "workflow_dispatch", "issue_comment"}
    assert workflow["on"]["push"] == {"branches": ["main"]}
    assert workflow["on"]["issue_comment"] == {"types": ["created"]}
    assert set(workflow["on"]["workflow_dispatch"]["inputs"]) == {"pr", "sha"}
    jobs = workflow["jobs"]
    authorize, gpu = jobs["authorize"], jobs["gpu-check"]
    assert not posture.may_be_self_hosted(authorize)
    assert authorize["permissions"] == {"contents": "read", "pull-requests": "read"}
    assert any(s.get("run") == "python3 -P .github/scripts/gpu_gate.py" for s in authorize["steps"])
    assert posture.runs_on_labels(gpu) == ["self-hosted", "gpu"]
    assert gpu["needs"] == "authorize" and "if" not in gpu
    checkout, verify = gpu["steps"][0], gpu["steps"][1]
    assert checkout["with"]["ref"] == "${{ needs.authorize.outputs.ref }}"
    assert verify["env"] == {"VETTED": "${{ needs.authorize.outputs.sha }}"}
    assert "head=$(git rev-parse HEAD)" in verify["run"] and "exit 1" in verify["run"]
    assert "secrets." not in (WORKFLOWS / "gpu.yml").read_text()
    # A later comment starts a run too: it must never cancel a queued, vetted GPU run.
    assert "concurrency" not in workflow
    assert gpu["concurrency"]["group"] == "gpu-${{ needs.authorize.outputs.sha }}"
    assert gpu["concurrency"]["cancel-in-progress"] is False
    assert "github.run_id" in authorize["concurrency"]["group"]


def test_no_workflow_runs_pr_triggered_on_a_self_hosted_runner() -> None:
    for path in _real():
        workflow = posture.load_workflow(path)
        if posture.triggers(workflow) & posture.PR_TRIGGERS:
            jobs = workflow["jobs"].values()
            assert not any(posture.may_be_self_hosted(j) for j in jobs), path.name


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


def test_resubmit_installs_before_the_token_step_and_the_token_step_only_runs_the_venv() -> None:
    (job,) = _jobs("resubmit.yml").values()
    steps = job["steps"]
    with_token = [s for s in steps if "secrets.RESUBMIT_TOKEN" in str(s.get("env"))]
    assert len(with_token) == 1 and "env" not in job
    token_step = with_token[0]
    install = next(s for s in steps if "scripts/bootstrap main" in str(s.get("run")))
    assert steps.index(install) < steps.index(token_step) and "env" not in install
    assert ".venv/bin/python -P -m patchcarry resubmit" in token_step["run"]
    for word in ("pip", "bootstrap", "scripts/resubmit", "uv "):
        assert word not in token_step["run"], word


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
