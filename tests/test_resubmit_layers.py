"""resubmit's shape, read from its source: each module is a phase of the journey run.py
describes or a value the phases share, no phase imports a later one, and modules and
functions stay small enough to read (400 lines, 60 lines)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from testing.package_source import nodes

ROOT = Path(__file__).resolve().parent.parent
RESUBMIT = ROOT / "patchcarry" / "resubmit"
PREFIX = "patchcarry.resubmit."

# The phases in journey order; each module of resubmit/ belongs to exactly one. `shared`
# holds the domain objects every phase may use (it imports no phase).
PHASES: dict[str, tuple[str, ...]] = {
    "shared": ("__init__", "model", "fork", "live", "branch", "section", "body", "inert",
               "ci_gate", "revisions"),
    "observe": ("observe", "default_branch"),
    "build": ("build",),
    "decide": ("decide",),
    "gate": ("gate", "repo_rules"),
    "execute": ("execute",),
    "run": ("run",),
}  # fmt: skip
RANK = {module: n for n, modules in enumerate(PHASES.values()) for module in modules}
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def _resubmit_imports(path: Path) -> set[str]:
    """The resubmit modules `path` imports (top level or inside a function)."""
    found: set[str] = set()
    for node in nodes(path):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "patchcarry.resubmit":
                names = [f"{PREFIX}{alias.name}" for alias in node.names]
            else:
                names = [node.module]
        found.update(n.removeprefix(PREFIX).split(".")[0] for n in names if n.startswith(PREFIX))
    return found


def _modules() -> list[Path]:
    return sorted(RESUBMIT.glob("*.py"))


def test_every_resubmit_module_belongs_to_one_phase():
    names = [p.stem for p in _modules()]
    assert sorted(names) == sorted(RANK), "add a new module of resubmit/ to PHASES"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.stem)
def test_no_resubmit_module_imports_a_later_phase(path: Path):
    later = {
        name for name in _resubmit_imports(path) if name in RANK and RANK[name] > RANK[path.stem]
    }
    assert not later, f"{path.stem} ({_phase(path.stem)}) imports a later phase: {later}"


def _phase(module: str) -> str:
    return next((phase for phase, modules in PHASES.items() if module in modules), "no phase")


def test_every_shared_module_serves_more_than_one_sibling():
    """A module of resubmit/ that is no phase is a domain object several phases use; one
    only one sibling imports belongs inside that sibling."""
    users: dict[str, set[str]] = {name: set() for name in PHASES["shared"]}
    for path in _modules():
        for name in _resubmit_imports(path) - {path.stem}:
            users.setdefault(name, set()).add(path.stem)
    lonely = {name: found for name, found in users.items()
              if name in PHASES["shared"] and name != "__init__" and len(found) < 2}  # fmt: skip
    assert not lonely, f"imported by one sibling only: {lonely}"


def test_the_layering_check_sees_a_late_import(tmp_path: Path):
    """The checker itself: an import of `execute` from an observe module is found."""
    probe = tmp_path / "observe.py"
    probe.write_text("from patchcarry.resubmit import execute\nimport patchcarry.resubmit.gate\n")
    assert _resubmit_imports(probe) == {"execute", "gate"}


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.stem)
def test_modules_and_functions_stay_small(path: Path):
    text = path.read_text()
    lines = len(text.splitlines())
    assert lines <= MAX_MODULE_LINES, f"{path.name}: {lines} lines (at most {MAX_MODULE_LINES})"
    long = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert not long, f"{path.name}: functions over {MAX_FUNCTION_LINES} lines: {long}"


def _calls_in_order(function: ast.FunctionDef) -> list[str]:
    """`module.name` of each call in `function`, in source order."""
    calls = [
        node
        for node in ast.walk(function)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
    ]
    calls.sort(key=lambda c: (c.lineno, c.col_offset))
    return [f"{c.func.value.id}.{c.func.attr}" for c in calls]  # type: ignore[attr-defined]


def test_one_entrys_journey_visits_each_phase_once_in_order():
    """From `commands/resubmit.py:run` into `run.resubmit`: observe, build, decide, gate,
    execute, each called from one place, in that order."""
    command = ast.parse((ROOT / "patchcarry" / "commands" / "resubmit.py").read_text())
    (run,) = [n for n in command.body if isinstance(n, ast.FunctionDef) and n.name == "run"]
    assert "runner.resubmit" in _calls_in_order(run)
    module = ast.parse((RESUBMIT / "run.py").read_text())
    (resubmit,) = [
        n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == "resubmit"
    ]
    journey = [
        "observe.observe_run",
        "observe.observe_entry",
        "build.build_entry",
        "decide.decide",
        "gate.gate",
        "execute.execute",
    ]
    calls = [c for c in _calls_in_order(resubmit) if c in journey]
    assert calls == journey
