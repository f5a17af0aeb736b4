"""The package's shape: no import circles, no product module that needs the test helpers,
and a plain (non-editable) install that runs from anywhere on its embedded manifest."""

from __future__ import annotations

import ast
import os
import subprocess
from pathlib import Path

import pytest

from patchcarry import errors
from patchcarry.cli import COMMANDS
from testing import exit_cases
from testing.fake_github import FakeGitHub
from testing.package_source import nodes
from testing.plain_install import checkout_wheel, plain_venv

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "patchcarry"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module `path` imports, at the top or inside a function."""
    found: set[str] = set()
    for node in nodes(path):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {
        name: {m for m in _imports(path) if m in modules and m != name}
        for name, path in modules.items()
    }


def test_no_product_module_imports_the_test_helpers() -> None:
    offenders = sorted(
        _module_name(p)
        for p in PACKAGE.rglob("*.py")
        if any(m == "testing" or m.startswith(("testing.", "tests")) for m in _imports(p))
    )
    assert offenders == []


def test_the_import_graph_has_no_circles() -> None:
    graph = _graph()
    state: dict[str, int] = {}
    circles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                circles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert circles == []


def test_a_plain_install_checks_its_embedded_manifest_from_anywhere(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, fake_github: FakeGitHub
) -> None:
    """`pip install .` (not editable) into a fresh venv, then `check --offline` elsewhere,
    every --help, and one failure of each exit code (tests/test_exit_codes.py's cases)."""
    # The dependencies come from this environment's site-packages (a path entry, so its
    # editable finder for the checkout is NOT loaded); patchcarry itself from the wheel.
    wheel = checkout_wheel(tmp_path_factory)
    py, site = plain_venv(wheel, tmp_path / "venv")
    venv = tmp_path / "venv"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run(
        [py, "-c", "import patchcarry, sys; print(patchcarry.__file__)"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(run.stdout.strip()).is_relative_to(site)
    check = subprocess.run(
        [py, "-m", "patchcarry", "check", "--offline"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stderr
    assert "checkpoint-grad" in check.stdout and "megatron-core" in check.stdout
    plan = subprocess.run(
        [py, "-m", "patchcarry", "resubmit", "--dry-run", "--offline"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
    )
    assert plan.returncode == 0, plan.stderr
    assert "hc-mlp-norm-manager: PLANNED" in plan.stdout
    embedded = site / "patchcarry" / "_series" / "series.toml"
    adopt = subprocess.run(  # the embedded manifest is read-only: refused before any read
        [py, "-m", "patchcarry", "adopt", "acme/widgets#7", "--manifest", str(embedded)],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
    )
    assert adopt.returncode == 5 and "inside the installed package (read-only)" in adopt.stderr
    assert not list(elsewhere.iterdir())  # it wrote nothing where it ran

    # Every command's --help from the installed package (and its console script): its own
    # usage, the exit-code table, and no side effect on the install or where it ran.
    before = _snapshot(venv, elsewhere)
    for command in [None, *COMMANDS]:
        argv = [command, "--help"] if command else ["--help"]
        shown = subprocess.run(
            [py, "-m", "patchcarry", *argv], cwd=elsewhere, env=env, capture_output=True, text=True
        )
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.startswith(f"usage: patchcarry {command or ''}".rstrip())
        assert shown.stdout.rstrip().endswith(errors.help_epilog())
    script = subprocess.run(
        [py, site / "bin" / "patchcarry", "--version"], cwd=elsewhere, env=env, capture_output=True
    )
    assert script.returncode == 0 and script.stdout.startswith(b"patchcarry ")
    assert _snapshot(venv, elsewhere) == before
    # One failure of each documented code, with the install's own way to get what is missing
    # (every case that hides megatron); tests/test_exit_codes.py runs every case from the
    # checkout, so the other variants of a code are not run again here.
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    found = exit_cases.cases(tmp_path, fake_github.url)
    firsts = {c.code: c for c in reversed(found)}.values()
    chosen = [c for c in found if c in firsts or c.env.get("PYTHONPATH")]
    assert {c.code for c in chosen} == {c.code for c in found}
    for case in chosen:
        err = exit_cases.run([py], case, cwd=elsewhere, env=env)
        if case.env.get("PYTHONPATH"):
            assert f"pip install '{wheel}[proof]'" in err and "scripts/" not in err
    assert not list(elsewhere.iterdir())


def _snapshot(*roots: Path) -> dict[str, tuple[int, int]]:
    """(size, mtime) of every file under `roots`, Python's bytecode caches aside."""
    seen: dict[str, tuple[int, int]] = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            for name in filenames:
                stat = (Path(dirpath) / name).lstat()
                seen[os.path.join(dirpath, name)] = (stat.st_size, stat.st_mtime_ns)
    return seen


def test_every_package_folder_ships() -> None:
    """A folder under patchcarry/ missing from pyproject's `packages` would vanish from a plain
    install (the list is explicit because patches/ is mapped in as `patchcarry._series`)."""
    import tomllib

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(pyproject["tool"]["setuptools"]["packages"])
    folders = {_module_name(p.parent / "__init__.py") for p in PACKAGE.rglob("*.py")}
    assert folders - listed == set()


RAW_RUNNERS = {"git", "git_bytes"}  # patchcarry/git/runner.py: only the git package runs them


def _raw_git_calls(path: Path) -> list[str]:
    """Where `path` runs git itself: a call of the git package's raw runner (`git.git(...)`,
    `git_bytes(...)` imported by name) or of the process door with "git" as the program."""
    imported = {
        alias.asname or alias.name
        for node in nodes(path)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("patchcarry.git")
        for alias in node.names
        if alias.name in RAW_RUNNERS
    }
    found = []
    for node in nodes(path):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        raw = (isinstance(func, ast.Attribute) and func.attr in RAW_RUNNERS) or (
            isinstance(func, ast.Name) and func.id in imported
        )
        program = node.args[0] if node.args else None
        runs_git = isinstance(program, ast.Constant) and program.value == "git"
        if raw or (runs_git and isinstance(func, ast.Attribute) and func.attr.startswith("cmd")):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_only_the_git_package_runs_git() -> None:
    """Every git command the product runs is a named function of patchcarry/git/: no module
    outside it calls the raw runner (or runs "git" through the process door)."""
    outside = [p for p in PACKAGE.rglob("*.py") if not p.is_relative_to(PACKAGE / "git")]
    assert [where for p in outside for where in _raw_git_calls(p)] == []
    inside = [w for p in (PACKAGE / "git").rglob("*.py") for w in _raw_git_calls(p)]
    assert inside  # the rule sees the calls it forbids elsewhere


# Underscore names that are public API all the same (namedtuple's documented methods).
PUBLIC_UNDERSCORE = {"_replace", "_asdict", "_fields", "_make"}


def _own_names() -> set[str]:
    """Every name the package itself defines: its modules, functions, classes, variables and
    attributes (an underscore name among them is ours to use)."""
    names = {p.stem for p in PACKAGE.rglob("*.py")} | {p.name for p in PACKAGE.rglob("_*")}
    for path in PACKAGE.rglob("*.py"):
        for node in nodes(path):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Name | ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.id if isinstance(node, ast.Name) else node.attr)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
    return names


def test_a_private_attribute_of_a_dependency_says_why() -> None:
    """Reading or setting a dependency's underscore attribute (argparse's, tomlkit's, torch's,
    megatron's) carries a comment on its line or the line above saying why no public way
    serves."""
    own = _own_names()
    unexplained = []
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = path.read_text().splitlines()
        for node in nodes(path):
            if not isinstance(node, ast.Attribute) or not node.attr.startswith("_"):
                continue
            name = node.attr
            if name.startswith("__") or name in own or name in PUBLIC_UNDERSCORE:
                continue
            here, above = lines[node.lineno - 1], lines[node.lineno - 2].strip()
            if "#" not in here and not above.startswith("#"):
                unexplained.append(f"{path.relative_to(ROOT)}:{node.lineno}: {name}")
    assert unexplained == []
