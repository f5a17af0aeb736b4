"""scripts/lib/checkout_bytecode.py: the checkout's bytecode before pytest's workers start,
pytest's rewritten test modules included, so that a worker under PYTHONDONTWRITEBYTECODE
(which reads pytest's cache but never writes it) rewrites nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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


def _script(root: Path) -> subprocess.CompletedProcess[str]:
    """The script's `main` on `root`, in a process of its own: its pool forks, and a fork of
    a test worker (threads of its own) may deadlock."""
    code = (
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
