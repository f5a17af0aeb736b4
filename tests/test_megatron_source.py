"""A plain install without megatron-core runs its main job: the offline check fetches the
pinned, hash-checked wheel's source into its cache on first use and says so in one line."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from patchcarry.runtime import megatron_source
from testing.plain_install import checkout_wheel, plain_venv


def _run(py: Path, *args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(py), "-m", "patchcarry", *args], cwd=cwd, env=env, capture_output=True, text=True
    )


@pytest.fixture
def bare_install(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(python, a folder to run in): patchcarry's wheel, its dependencies, no megatron-core."""
    py, _ = plain_venv(checkout_wheel(tmp_path_factory), tmp_path / "venv", hide=("megatron",))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    return py, elsewhere


def _env(cache: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return {**env, "XDG_CACHE_HOME": str(cache), **extra}


def test_the_offline_check_and_plan_fetch_megatron_core_once(
    bare_install: tuple[Path, Path], tmp_path: Path
) -> None:
    py, elsewhere = bare_install
    env = _env(tmp_path / "cache")
    version = megatron_source.pinned_version()
    probe = _run(py, "--version", cwd=elsewhere, env=env)  # megatron is hidden from it
    assert probe.returncode == 0
    hidden = subprocess.run([py, "-c", "import megatron.core"], env=env, capture_output=True)
    assert hidden.returncode != 0

    first = _run(py, "check", "--offline", cwd=elsewhere, env=env)
    if first.returncode == 4:
        pytest.skip(f"the package index is not reachable here: {first.stderr.strip()}")
    assert first.returncode == 0, first.stderr
    said = [line for line in first.stderr.splitlines() if "fetching megatron-core" in line]
    assert len(said) == 1 and version in said[0] and "once" in said[0]
    assert f"megatron-core {version} (fetched source)" in first.stdout
    assert "checkpoint-grad" in first.stdout and "offset -66" in first.stdout
    tree = tmp_path / "cache" / "patchcarry" / "megatron-core" / version
    assert (tree / "megatron" / "core" / "tensor_parallel" / "random.py").is_file()
    assert sorted(p.name for p in tree.iterdir()) == ["megatron"]  # its source, nothing else

    plan = _run(py, "resubmit", "--dry-run", "--offline", cwd=elsewhere, env=env)
    assert plan.returncode == 0, plan.stderr
    assert "fetching" not in plan.stderr  # the cache is reused
    assert f"applies at megatron-core {version} (fetched source)" in plan.stdout
    assert not list(elsewhere.iterdir())


def test_an_unreachable_index_is_exit_4_and_leaves_no_cache(
    bare_install: tuple[Path, Path], tmp_path: Path
) -> None:
    py, elsewhere = bare_install
    env = _env(
        tmp_path / "cache",
        PIP_CONFIG_FILE=os.devnull,
        PIP_INDEX_URL="http://127.0.0.1:9/simple",
        PIP_FIND_LINKS="",
        PIP_NO_CACHE_DIR="1",
        PIP_RETRIES="0",
        PIP_TIMEOUT="5",
    )
    run = _run(py, "check", "--offline", cwd=elsewhere, env=env)
    assert run.returncode == 4, run.stderr
    assert "could not fetch megatron-core" in run.stderr
    assert "Traceback" not in run.stderr
    left = tmp_path / "cache" / "patchcarry" / "megatron-core"
    assert not (left / megatron_source.pinned_version()).exists()
    assert [p for p in left.iterdir()] == []  # no half-fetched folder either
