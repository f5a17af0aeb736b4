"""The checkout's bytecode, written once by scripts/test before pytest's workers start.

    .venv/bin/python -P scripts/lib/checkout_bytecode.py [DIR...]  (patchcarry testing tests)

Under PYTHONDONTWRITEBYTECODE (set on many CI and sandbox machines) no process writes
bytecode, so every pytest worker and every child compiled patchcarry and testing again, and
every worker rewrote the asserts of every test module again: pytest reads its cache of
rewritten modules under that variable but never writes it (a worker's collection: 9.5 CPU
seconds without that cache, 4.5 with it). So, one process per core: plain bytecode for each
module, and for each file pytest rewrites (test modules, conftest.py, the plugins a conftest
lists in `pytest_plugins`) pytest's own rewritten bytecode where pytest looks for it. A
current file is left alone (plain bytecode is checked against the source's mtime, pytest's
against its hash), so a second run costs a stat and a read a file.

pytest's cache is written with the functions pytest writes it with (private names of the
pytest the test lock pins); a pytest that moved them gets plain bytecode only and a note,
never a failure: a missing cache only costs each worker its rewrite.
"""

from __future__ import annotations

import ast
import compileall
import fnmatch
import os
import sys
import tomllib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

try:  # imported once, before the pool forks its processes
    from _pytest.assertion import rewrite
except ImportError:  # no pytest: plain bytecode only
    rewrite = None  # type: ignore[assignment]

ROOT = Path(__file__).resolve().parents[2]
DIRS = ("patchcarry", "testing", "tests")


def _ini(root: Path) -> dict[str, object]:
    with open(root / "pyproject.toml", "rb") as f:
        tool = tomllib.load(f).get("tool", {})
    ini: dict[str, object] = tool.get("pytest", {}).get("ini_options", {})
    return ini


def _plugins(conftest: Path) -> set[str]:
    """The module names a conftest's `pytest_plugins` lists (pytest rewrites them too)."""
    for node in ast.parse(conftest.read_bytes()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in node.targets
        ):
            value = ast.literal_eval(node.value)
            return {value} if isinstance(value, str) else set(value)
    return set()


def rewritten_files(root: Path, files: list[Path]) -> set[Path]:
    """The files among FILES whose asserts pytest rewrites at import."""
    ini = _ini(root)
    patterns = ini.get("python_files", ["test_*.py", "*_test.py"])
    if isinstance(patterns, str):
        patterns = patterns.split()
    assert isinstance(patterns, list)
    plugins: set[str] = set()
    for conftest in (f for f in files if f.name == "conftest.py"):
        plugins |= _plugins(conftest)
    plugin_files = {root / (name.replace(".", "/") + ".py") for name in plugins}
    return {
        f
        for f in files
        if f.name == "conftest.py"
        or any(fnmatch.fnmatch(f.name, p) for p in patterns)
        or f in plugin_files
    }


def _rewrite(path: str) -> bool:
    """pytest's rewritten bytecode for PATH, unless current. False: this pytest has no such
    functions (a pytest other than the pinned one)."""
    if rewrite is None:
        return False
    fn = Path(path)
    try:
        pyc = rewrite.get_cache_dir(fn) / (fn.name[:-3] + rewrite.PYC_TAIL)
        if rewrite._read_pyc(fn, pyc) is not None:
            return True
        source_hash, code = rewrite._rewrite_test(fn, None)  # type: ignore[arg-type]
        pyc.parent.mkdir(exist_ok=True)
        partial = pyc.with_name(f"{pyc.name}.{os.getpid()}")
        try:
            with open(partial, "wb") as f:
                rewrite._write_pyc_fp(f, source_hash, code)
            os.replace(partial, pyc)  # atomic, as pytest's own writer: a worker reads it whole
        finally:  # a writer that failed leaves no partial file behind
            partial.unlink(missing_ok=True)
    except (SyntaxError, OSError):  # this file's own fault: pytest reports it at import
        return True
    except Exception:  # a pytest whose private functions moved, were renamed or reshaped
        return False
    return True


def _compile(path: str) -> bool:
    return bool(compileall.compile_file(path, quiet=2))


def main(root: Path, dirs: tuple[str, ...] = DIRS) -> int:
    files = sorted(
        p for d in dirs for p in (root / d).rglob("*.py") if "__pycache__" not in p.parts
    )
    rewritten = set()
    if not _ini(root).get("enable_assertion_pass_hook"):  # else its rewrite needs the config
        rewritten = rewritten_files(root, files)
    with ProcessPoolExecutor(os.cpu_count()) as pool:
        plain = pool.map(_compile, [str(f) for f in files if f not in rewritten], chunksize=16)
        pytest_ = pool.map(_rewrite, [str(f) for f in sorted(rewritten)], chunksize=4)
        list(plain)
        if not all(pytest_):
            print(
                "checkout_bytecode: this pytest's rewrite cache is not where it was",
                file=sys.stderr,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(ROOT, tuple(sys.argv[1:]) or DIRS))
