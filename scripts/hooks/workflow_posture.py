#!/usr/bin/env python3
"""Security posture of GitHub Actions workflows: the rules this repository keeps.

Usage: workflow_posture.py WORKFLOW.yml...  (pre-commit hook `workflow-posture`; exit 1 on any
violation). `tests/test_workflows_posture.py` imports `check_workflow` and feeds it both the
real workflows and deliberately bad ones.

Rules (ids as reported):
  pull-request-target   no `pull_request_target` trigger (it runs with secrets on fork PRs)
  self-hosted-pr-trigger
                        no job that may run on a non-GitHub-hosted runner in a workflow that a
                        pull request event can trigger, whatever its `if:` or `environment:`
                        say: for those events GitHub runs the PR's own copy of the YAML, so
                        the PR author writes the `if:`. "May run" is anything but a literal
                        GitHub-hosted image label (`self-hosted`, a custom label such as
                        `gpu` alone, a runner group, an expression), and a reusable workflow
                        that has such a job (a remote one cannot be checked: refused)
  if-only-gate          a job that may run on a non-GitHub-hosted runner, in a workflow that
                        people without write access can trigger (issue_comment, workflow_run,
                        ...: the default branch's YAML, run on their say-so), needs a
                        GitHub-hosted job that decides (the API check) and reads its outputs
                        (`needs.<gate>.outputs.*`); an `if:` alone is not a gate
  secrets-in-pr-job     no `secrets.*` in a job that pull requests can trigger (it runs PR code)
  install-with-secret   no step that installs packages (pip, uv, npm, ..., or a repository
                        script that runs scripts/bootstrap) while a secret or the workflow
                        token is in its environment (step, job or workflow `env:`)
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
        "merge_group",
        "issue_comment",
        "workflow_run",
    }
)
# Pull request events: the workflow file comes from the PR's merge commit (pull_request,
# pull_request_review*), the merge queue's branch that holds the PR (merge_group), or runs
# for the PR in the base's context (pull_request_target). No self-hosted runner for them.
PR_TRIGGERS = frozenset(
    {
        "pull_request",
        "pull_request_target",
        "pull_request_review",
        "pull_request_review_comment",
        "merge_group",
    }
)
# Events only people with write access cause (workflow_call: its callers are checked).
# Any other event (issue_comment, issues, workflow_run, discussion_comment, ...) can be
# caused from outside, so a self-hosted job there needs a real gate (`if-only-gate`).
TRUSTED_EVENTS = frozenset(
    {"push", "schedule", "workflow_dispatch", "repository_dispatch", "workflow_call"}
)
# GitHub-hosted image labels (standard and larger runners: -arm, -intel, -large, -xlarge).
_HOSTED_LABEL = re.compile(
    r"^(?:ubuntu-slim|(?:ubuntu|windows|macos)-(?:latest|\d+(?:\.\d+)?)"
    r"(?:-(?:arm|arm64|intel|large|xlarge))?)$"
)
_NEEDS_OUTPUT = re.compile(r"\bneeds\.([A-Za-z_][A-Za-z0-9_-]*)\.outputs\.")
_INSTALLER = re.compile(
    r"\bpip3?\s+install\b|-m\s+pip\b|\buv\s+(?:pip|sync|add|tool|run)\b|\bpipx\b"
    r"|\bpoetry\s+install\b|\b(?:npm|pnpm|yarn)\s+(?:install|ci|add|i)\b|\bnpx\b"
    r"|\bconda\s+install\b|\bapt(?:-get)?\s+install\b|\bsetup\.py\b|\bscripts/bootstrap\b"
)
_REPO_SCRIPT = re.compile(r"(?<![\w/.-])(?:\./)?(scripts/[\w./-]+)")
_TOKEN_REF = re.compile(r"\bsecrets\.|\bsecrets\[|\bgithub\.token\b")
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


@dataclasses.dataclass(frozen=True)
class _Context:
    """One workflow being checked: its name as shown, YAML, events and repository."""

    shown: str
    workflow: dict[str, Any]
    events: frozenset[str]
    root: Path | None


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


def may_be_self_hosted(job: dict[str, Any]) -> bool:
    """True unless `runs-on` is provably GitHub-hosted: literal image labels only. A runner
    group, an expression, `self-hosted` or any custom label (a self-hosted runner is reached
    by its custom label alone, e.g. `runs-on: gpu`) may land on a self-hosted runner."""
    runs_on = job.get("runs-on")
    if runs_on is None:
        return False  # a reusable-workflow call: see _called_workflow_problem
    if isinstance(runs_on, dict) and "group" in runs_on:
        return True
    labels = runs_on_labels(job)
    return not labels or not all(_HOSTED_LABEL.match(label) for label in labels)


def _repo_root(path: Path) -> Path | None:
    """The repository holding `.github/workflows/<path>`, if the path says so."""
    resolved = path.resolve()
    if resolved.parent.name == "workflows" and resolved.parent.parent.name == ".github":
        return resolved.parents[2]
    return None


def _called_workflow_problem(uses: str, root: Path | None, seen: frozenset[str]) -> str | None:
    """Why a reusable-workflow call may reach a self-hosted runner (None: it cannot)."""
    if not uses.startswith("./"):
        return f"calls {uses}, whose runners cannot be checked here"
    if uses in seen:
        return None  # a cycle: each workflow is looked at once
    if root is None:
        return f"calls {uses}, which cannot be found here"
    called = root / uses.split("@", 1)[0]
    if not called.is_file():
        return f"calls {uses}, which does not exist"
    for name, job in (load_workflow(called).get("jobs") or {}).items():
        if not isinstance(job, dict):
            continue
        if may_be_self_hosted(job):
            return f"calls {uses}, whose job {name} may run on a self-hosted runner"
        inner = job.get("uses")
        if isinstance(inner, str):
            problem = _called_workflow_problem(inner, root, seen | {uses})
            if problem:
                return f"calls {uses}, which {problem}"
    return None


def _gate_jobs(job: dict[str, Any], jobs: dict[str, Any]) -> set[str]:
    """The GitHub-hosted jobs this job needs and whose outputs it reads."""
    needs = job.get("needs") or []
    needed = {needs} if isinstance(needs, str) else {str(n) for n in needs}
    read = set(_NEEDS_OUTPUT.findall(yaml.safe_dump(job)))
    return {
        gate
        for gate in needed & read
        if isinstance(jobs.get(gate), dict)
        and not may_be_self_hosted(jobs[gate])
        and not isinstance(jobs[gate].get("uses"), str)
    }


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


def _installs(run: str, root: Path | None) -> str | None:
    """What in a `run:` script installs packages (None: nothing does)."""
    found = _INSTALLER.search(run)
    if found:
        return found.group(0).strip()
    for script in _REPO_SCRIPT.findall(run):
        target = root / script if root else None
        # a shim runs bootstrap through scripts/lib/shim.bash (`shim SET COMMAND`)
        if (
            target
            and target.is_file()
            and any(
                runs in target.read_text(errors="replace")
                for runs in ("scripts/bootstrap", "lib/shim.bash")
            )
        ):
            return f"{script} (it runs scripts/bootstrap)"
    return None


def _install_violations(ctx: _Context, name: str, job: dict[str, Any]) -> Iterable[Violation]:
    outer = _TOKEN_REF.search(yaml.safe_dump(ctx.workflow.get("env") or {})) or _TOKEN_REF.search(
        yaml.safe_dump(job.get("env") or {})
    )
    for step in job.get("steps") or []:
        if not isinstance(step, dict) or not isinstance(step.get("run"), str):
            continue
        inner = _TOKEN_REF.search(yaml.safe_dump(step.get("env") or {}))
        installer = _installs(step["run"], ctx.root)
        if installer and (outer or inner):
            label = step.get("name") or step.get("id") or "step"
            yield Violation(
                ctx.shown,
                "install-with-secret",
                f"{label}: {installer} runs with a secret or the workflow token in its "
                "environment (install in an earlier step without one)",
                name,
            )


def _self_hosted_violations(ctx: _Context, name: str, job: dict[str, Any]) -> Iterable[Violation]:
    jobs = ctx.workflow.get("jobs") or {}
    uses = job.get("uses")
    if isinstance(uses, str):
        problem = _called_workflow_problem(uses, ctx.root, frozenset())
    elif may_be_self_hosted(job):
        problem = f"runs-on {job.get('runs-on')!r} may be a self-hosted runner"
    else:
        return
    if problem is None:
        return
    pr = sorted(ctx.events & PR_TRIGGERS)
    if pr:
        yield Violation(
            ctx.shown,
            "self-hosted-pr-trigger",
            f"{problem}, in a workflow that {', '.join(pr)} triggers: a pull request's own "
            "YAML runs for those events, so no `if:` or `environment:` in it can gate",
            name,
        )
    outside = sorted(ctx.events - TRUSTED_EVENTS - PR_TRIGGERS)
    if outside and not _gate_jobs(job, jobs):
        yield Violation(
            ctx.shown,
            "if-only-gate",
            f"{problem}, triggered by {', '.join(outside)}, with no GitHub-hosted gate job "
            "in `needs:` whose outputs it reads (an `if:` alone is not a gate)",
            name,
        )


def _job_violations(ctx: _Context, name: str, job: dict[str, Any]) -> Iterable[Violation]:
    uses = job.get("uses")
    if isinstance(uses, str):  # a reusable-workflow call has no steps or timeout of its own
        problem = _uses_violations(uses)
        if problem:
            yield Violation(ctx.shown, "unpinned-uses", problem, name)
    elif "timeout-minutes" not in job:
        yield Violation(ctx.shown, "no-timeout", "no timeout-minutes", name)
    if "concurrency" not in ctx.workflow and "concurrency" not in job:
        yield Violation(
            ctx.shown, "no-concurrency", "no concurrency group here or at workflow level", name
        )
    yield from _self_hosted_violations(ctx, name, job)
    if ctx.events & PR_EVENTS and _SECRET_REF.search(yaml.safe_dump(job)):
        yield Violation(ctx.shown, "secrets-in-pr-job", "uses secrets.* in a job PRs can run", name)
    yield from _install_violations(ctx, name, job)
    for step in job.get("steps") or []:
        if isinstance(step, dict):
            yield from _step_violations(ctx.shown, name, step)


def check_workflow(path: Path, root: Path | None = None) -> list[Violation]:
    """Every rule broken by the workflow at `path` (empty when it keeps them all). `root` is
    the repository (for local reusable workflows and scripts); by default the one that holds
    `.github/workflows/<path>`."""
    workflow = load_workflow(path)
    ctx = _Context(str(path), workflow, frozenset(triggers(workflow)), root or _repo_root(path))
    found: list[Violation] = []
    if "pull_request_target" in ctx.events:
        found.append(Violation(ctx.shown, "pull-request-target", "pull_request_target trigger"))
    found += _permission_violations(ctx.shown, workflow)
    for name, job in (workflow.get("jobs") or {}).items():
        if isinstance(job, dict):
            found += _job_violations(ctx, str(name), job)
    return found


def main(argv: Sequence[str] | None = None) -> int:
    paths = [Path(p) for p in (sys.argv[1:] if argv is None else argv)]
    violations = [v for p in paths for v in check_workflow(p)]
    for violation in violations:
        print(violation)
    return 1 if violations else 0


if __name__ == "__main__":
    raise SystemExit(main())
