"""The hash locks in requirements/ (scripts/lock writes them, scripts/hooks/locks.py checks
them offline): current, complete, hashed, and split as the install sets need."""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
_REQUIREMENT = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+) \\$")


def _load() -> ModuleType:
    path = ROOT / "scripts" / "hooks" / "locks.py"
    spec = importlib.util.spec_from_file_location("locks", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


locks = _load()


def _pins(name: str, root: Path = ROOT) -> dict[str, str]:
    """{normalised name: version} of one lock; every requirement must carry a hash."""
    lines = (root / "requirements" / f"{name}.txt").read_text().splitlines()
    pins = {}
    for n, line in enumerate(lines):
        match = _REQUIREMENT.match(line)
        if match:
            assert lines[n + 1].lstrip().startswith("--hash=sha256:"), line
            pins[re.sub(r"[-_.]+", "-", match[1]).lower()] = match[2]
        else:
            assert not re.match(r"^[A-Za-z0-9]", line), f"{name}: unhashed or unpinned: {line}"
    return pins


def _pyproject_pins(*lists: list[str]) -> dict[str, str]:
    pins = {}
    for requirement in (r for lst in lists for r in lst):
        name, version = requirement.split("==")
        pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    return pins


PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]
GROUPS = PYPROJECT["dependency-groups"]


def test_locks_are_current() -> None:
    assert locks.problems(ROOT) == []
    assert locks.main(["--check"]) == 0


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    shutil.copytree(ROOT / "requirements", tmp_path / "requirements")
    return tmp_path


def test_a_changed_pin_makes_every_lock_stale(copy: Path) -> None:
    pyproject = copy / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"jsonschema==4.26.0"', '"jsonschema"'))
    found = locks.problems(copy)
    assert len(found) == len(locks.LOCKS) and all("is stale" in p for p in found)


def test_comments_and_tool_settings_do_not_make_a_lock_stale(copy: Path) -> None:
    pyproject = copy / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "\n# a comment\n[tool.example]\nx = 1\n")
    assert locks.problems(copy) == []


def test_a_hand_edit_is_caught(copy: Path) -> None:
    main = copy / "requirements" / "main.txt"
    text = main.read_text()
    digest = re.search(r"--hash=sha256:([0-9a-f]{64})", text)
    assert digest is not None
    main.write_text(text.replace(digest[1], "0" * 64, 1))
    assert locks.problems(copy) == [
        "requirements/main.txt was edited by hand (its body no longer matches its header)"
    ]


def test_a_missing_lock_is_caught(copy: Path) -> None:
    (copy / "requirements" / "upstream-cpu.txt").unlink()
    assert locks.problems(copy) == ["requirements/upstream-cpu.txt is missing"]


def test_the_main_set_has_no_torch_triton_or_cuda() -> None:
    main = _pins("main")
    assert not {n for n in main if n in {"torch", "triton", "numpy"} or n.startswith("nvidia")}
    assert main.items() >= _pyproject_pins(PROJECT["dependencies"]).items()
    # megatron-core alone, for its source tree: installed with --no-deps
    assert _pins("megatron-core") == _pyproject_pins(GROUPS["megatron-sources"])


def test_megatron_core_is_one_version_everywhere() -> None:
    proof = _pyproject_pins(PROJECT["optional-dependencies"]["proof"])
    assert _pyproject_pins(GROUPS["megatron-sources"])["megatron-core"] == proof["megatron-core"]
    for name in ("test-cpu", "test-cuda"):
        assert _pins(name)["megatron-core"] == proof["megatron-core"]


@pytest.mark.parametrize("name", ["test-cpu", "test-cuda"])
def test_test_locks_hold_the_main_set_proof_and_dev_at_the_same_pins(name: str) -> None:
    pins = _pins(name)
    assert pins.items() >= _pins("main").items()
    wanted = _pyproject_pins(PROJECT["optional-dependencies"]["proof"], GROUPS["dev"])
    torch = wanted.pop("torch")
    assert pins.items() >= wanted.items()
    assert pins["torch"] == (f"{torch}+cpu" if name == "test-cpu" else torch)


def test_triton_only_where_it_belongs() -> None:
    assert "triton" not in _pins("test-cpu")
    assert _pins("upstream-cpu") == _pyproject_pins(GROUPS["upstream"])
    # the CUDA build requires its own triton; the CPU build none
    assert "triton" in _pins("test-cuda") and "nvidia-nccl-cu13" in _pins("test-cuda")


def test_lock_tools_pin_uv() -> None:
    assert _pins("lock-tools") == _pyproject_pins(GROUPS["lock"])
