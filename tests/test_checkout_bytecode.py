"""scripts/lib/checkout_bytecode.py: the checkout's bytecode before pytest's workers start,
pytest's rewritten test modules included, so that a worker under PYTHONDONTWRITEBYTECODE
(which reads pytest's cache but never writes it) rewrites nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FILES = {
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\n',
    "pkg/__init__.py": "",
    "pkg/mod.py": "VALUE = 1\n",
    "plug/__init__.py": "",
    "plug/plugin.py": "import pytest\n\n@pytest.fixture\ndef one():\n    return 1\n",
    "tests/conftest.py": 'pytest_plugins = ["plug.plugin"]\n',
    "tests/test_a.py": "from pkg.mod import VALUE\n\ndef test_a(one):\n    assert VALUE == one\n",
}


def _pycs(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in root.rglob("*.pyc")
    }


def _script(root: Path, before: str = "") -> subprocess.CompletedProcess[str]:
    """The script's `main` on `root`, in a process of its own: its pool forks, and a fork of
    a test worker (threads of its own) may deadlock. BEFORE: code run first (a pytest made
    other)."""
    code = (
        f"{before}\n"
        "import importlib.util, sys; from pathlib import Path; "
        "spec = importlib.util.spec_from_file_location('checkout_bytecode', sys.argv[1]); "
        "module = importlib.util.module_from_spec(spec); sys.modules[spec.name] = module; "
        "spec.loader.exec_module(module); "
        "sys.exit(module.main(Path(sys.argv[2]), ('pkg', 'plug', 'tests')))"
    )
    script = str(ROOT / "scripts/lib/checkout_bytecode.py")
    command = [sys.executable, "-P", "-c", code, script, str(root)]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def test_pytest_finds_every_module_it_rewrites_already_written(tmp_path: Path) -> None:
    """After the script, a pytest run that may write bytecode writes none: each test module,
    conftest and `pytest_plugins` module has pytest's current rewritten bytecode, every other
    module its plain bytecode. A second run of the script rewrites nothing either."""
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert _script(tmp_path).returncode == 0
    written = _pycs(tmp_path)
    assert {Path(p).name.split(".")[0] for p in written} == {
        "__init__", "mod", "plugin", "conftest", "test_a",
    }  # fmt: skip
    assert _script(tmp_path).returncode == 0
    assert _pycs(tmp_path) == written

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    ran = subprocess.run(
        [sys.executable, "-P", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert _pycs(tmp_path) == written  # pytest found them all current: it wrote nothing


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


@pytest.mark.parametrize(
    "moved",
    [
        "del rewrite._rewrite_test",
        "rewrite._rewrite_test = lambda fn, config: (b'', b'', compile('', str(fn), 'exec'))",
        "rewrite._write_pyc_fp = lambda fp, code: None",
    ],
    ids=["gone", "reshaped", "new-signature"],
)
def test_a_pytest_whose_private_functions_moved_costs_only_its_cache_and_says_so_once(
    tmp_path: Path, moved: str
) -> None:
    """The script leans on pytest's private functions: when they move, it still exits 0
    and writes every plain module's bytecode; it writes no pytest bytecode, and one line
    says why (once, for the three files pytest rewrites)."""
    _write(tmp_path, FILES)
    ran = _script(tmp_path, f"import _pytest.assertion.rewrite as rewrite; {moved}")
    assert ran.returncode == 0, ran.stderr
    assert ran.stderr.splitlines() == [
        "checkout_bytecode: this pytest's rewrite cache is not where it was"
    ]
    assert {Path(p).name.split(".")[0] for p in _pycs(tmp_path)} == {"__init__", "mod"}
    assert [p.name for p in tmp_path.rglob("__pycache__/*") if p.suffix != ".pyc"] == []


def test_a_test_module_that_does_not_parse_is_left_to_pytest_without_a_note(
    tmp_path: Path,
) -> None:
    """A syntax error is the file's own (pytest reports it when it collects): the others
    get their bytecode, and no note blames pytest."""
    _write(tmp_path, {**FILES, "tests/test_b.py": "def test_b(:\n"})
    ran = _script(tmp_path)
    assert (ran.returncode, ran.stderr) == (0, "")
    assert {Path(p).name.split(".")[0] for p in _pycs(tmp_path)} == {
        "__init__", "mod", "plugin", "conftest", "test_a",
    }  # fmt: skip
