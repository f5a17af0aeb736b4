#!/usr/bin/env python3
"""Security posture of GitHub Actions workflows: the rules this repository keeps.

Usage: workflow_posture.py WORKFLOW.yml...  (pre-commit hook `workflow-posture`; exit 1 on any
violation). `tests/test_workflows_posture.py` imports `check_workflow` and feeds it both the
real workflows and deliberately bad ones.

Rules (ids as reported):
  pull-request-target   no `pull_request_target` trigger (it runs with secrets on fork PRs)
  ungated-self-hosted   a self-hosted job in a workflow that pull requests can trigger needs an
                        `if:` that checks a maintainer-applied label AND an `environment:`
                        (required reviewers)
  secrets-in-pr-job     no `secrets.*` in a job that pull requests can trigger (it runs PR code)
  unpinned-uses         every `uses:` pinned to a full 40-hex commit sha (docker: sha256 digest)
  no-permissions        `permissions:` at workflow level or on every job; never `write-all`
  expression-in-run     no `${{ ... }}` inside `run:`: values go through `env:` (script injection)
  persist-credentials   every actions/checkout step sets `persist-credentials: false`
  no-timeout            every job sets `timeout-minutes`
  no-concurrency        a `concurrency:` group at workflow level or on every job
"""

from __future__ import annotations

import dataclasses
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

# Events that run a workflow for a pull request, i.e. possibly for a fork's code.
PR_EVENTS = frozenset(
    {
        "pull_request",
        "pull_request_target",
        "pull_request_review",
        "pull_request_review_comment",
        "issue_comment",
        "workflow_run",
    }
)
_SHA_PIN = re.compile(r"^[^@\s]+@[0-9a-f]{40}$")
_DOCKER_PIN = re.compile(r"^docker://[^@\s]+@sha256:[0-9a-f]{64}$")
_EXPRESSION = re.compile(r"\$\{\{.*?\}\}", re.DOTALL)
_SECRET_REF = re.compile(r"\bsecrets\.(?!GITHUB_TOKEN\b)[A-Za-z_][A-Za-z0-9_]*|\bsecrets\[")


@dataclasses.dataclass(frozen=True)
class Violation:
    """One broken rule: where (file, job, step) and what."""

    path: str
    rule: str
    detail: str
    job: str | None = None

    def __str__(self) -> str:
        where = f"{self.path}: job {self.job}" if self.job else self.path
        return f"{where}: [{self.rule}] {self.detail}"


def load_workflow(path: Path) -> dict[str, Any]:
    """Parse a workflow; YAML 1.1 reads the `on:` key as True, so put it back under "on"."""
    data = yaml.safe_load(path.read_text())
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a workflow mapping")
    if True in data and "on" not in data:
        data["on"] = data.pop(True)
    return data


def triggers(workflow: dict[str, Any]) -> set[str]:
    """Event names from `on:` in any of its three forms (string, list, mapping)."""
    on = workflow.get("on")
    if isinstance(on, str):
        return {on}
    if isinstance(on, list):
        return {str(e) for e in on}
    if isinstance(on, dict):
        return {str(e) for e in on}
    return set()


def runs_on_labels(job: dict[str, Any]) -> list[str]:
    """The runner labels a job asks for (string, list, or {group, labels})."""
    runs_on = job.get("runs-on")
    if isinstance(runs_on, str):
        return [runs_on]
    if isinstance(runs_on, list):
        return [str(x) for x in runs_on]
    if isinstance(runs_on, dict):
        labels = runs_on.get("labels", [])
        return [labels] if isinstance(labels, str) else [str(x) for x in labels]
    return []


def _is_self_hosted(job: dict[str, Any]) -> bool:
    runs_on = job.get("runs-on")
    if isinstance(runs_on, dict) and "group" in runs_on:
        return True  # runner groups are self-hosted (or larger runners: gate them the same)
    return "self-hosted" in runs_on_labels(job)


def _label_gated(job: dict[str, Any]) -> bool:
    condition = str(job.get("if", ""))
    return "label" in condition and bool(job.get("environment"))


def _uses_violations(uses: str) -> str | None:
    if uses.startswith("./"):
        return None  # a local action or reusable workflow in this repository
    if uses.startswith("docker://"):
        return None if _DOCKER_PIN.match(uses) else f"{uses} is not pinned by sha256 digest"
    return None if _SHA_PIN.match(uses) else f"{uses} is not pinned to a 40-hex commit sha"


def _is_checkout(uses: str) -> bool:
    return uses.split("@", 1)[0].lower() == "actions/checkout"


def _step_violations(path: str, name: str, step: dict[str, Any]) -> Iterable[Violation]:
    label = step.get("name") or step.get("uses") or step.get("id") or "step"
    uses = step.get("uses")
    if isinstance(uses, str):
        problem = _uses_violations(uses)
        if problem:
            yield Violation(path, "unpinned-uses", problem, name)
        if _is_checkout(uses):
            persist = (step.get("with") or {}).get("persist-credentials")
            if str(persist).lower() != "false":
                yield Violation(path, "persist-credentials", f"{label}: set false", name)
    run = step.get("run")
    if isinstance(run, str):
        for expr in _EXPRESSION.findall(run):
            yield Violation(
                path, "expression-in-run", f"{label}: {expr} in run: (pass it via env:)", name
            )


def _permission_violations(path: str, workflow: dict[str, Any]) -> Iterable[Violation]:
    jobs = workflow.get("jobs") or {}
    if workflow.get("permissions") == "write-all":
        yield Violation(path, "no-permissions", "workflow permissions: write-all")
    for name, job in jobs.items():
        if isinstance(job, dict) and job.get("permissions") == "write-all":
            yield Violation(path, "no-permissions", "permissions: write-all", name)
    if "permissions" in workflow:
        return
    for name, job in jobs.items():
        if isinstance(job, dict) and "permissions" not in job:
            yield Violation(
                path, "no-permissions", "no permissions: here or at workflow level", name
            )


def _job_violations(
    path: str, name: str, job: dict[str, Any], pr_triggered: bool, workflow: dict[str, Any]
) -> Iterable[Violation]:
    uses = job.get("uses")
    if isinstance(uses, str):  # a reusable-workflow call has no steps or timeout of its own
        problem = _uses_violations(uses)
        if problem:
            yield Violation(path, "unpinned-uses", problem, name)
    elif "timeout-minutes" not in job:
        yield Violation(path, "no-timeout", "no timeout-minutes", name)
    if "concurrency" not in workflow and "concurrency" not in job:
        yield Violation(
            path, "no-concurrency", "no concurrency group here or at workflow level", name
        )
    if pr_triggered and _is_self_hosted(job) and not _label_gated(job):
        yield Violation(
            path,
            "ungated-self-hosted",
            "self-hosted job reachable from pull requests without a label `if:` and an environment",
            name,
        )
    if pr_triggered and _SECRET_REF.search(yaml.safe_dump(job)):
        yield Violation(path, "secrets-in-pr-job", "uses secrets.* in a job PRs can run", name)
    for step in job.get("steps") or []:
        if isinstance(step, dict):
            yield from _step_violations(path, name, step)


def check_workflow(path: Path) -> list[Violation]:
    """Every rule broken by the workflow at `path` (empty when it keeps them all)."""
    workflow = load_workflow(path)
    shown = str(path)
    events = triggers(workflow)
    found: list[Violation] = []
    if "pull_request_target" in events:
        found.append(Violation(shown, "pull-request-target", "pull_request_target trigger"))
    found += _permission_violations(shown, workflow)
    pr_triggered = bool(events & PR_EVENTS)
    for name, job in (workflow.get("jobs") or {}).items():
        if isinstance(job, dict):
            found += _job_violations(shown, str(name), job, pr_triggered, workflow)
    return found


def main(argv: Sequence[str] | None = None) -> int:
    paths = [Path(p) for p in (sys.argv[1:] if argv is None else argv)]
    violations = [v for p in paths for v in check_workflow(p)]
    for violation in violations:
        print(violation)
    return 1 if violations else 0


if __name__ == "__main__":
    raise SystemExit(main())
