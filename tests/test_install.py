"""What this install lacks, said the way this install gets it."""

from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path

import pytest

from patchcarry import install
from patchcarry.errors import ExitCode, MissingInstallError
from testing.plain_install import checkout_wheel, plain_venv


def test_a_missing_parent_package_is_absent_not_an_exception() -> None:
    with pytest.raises(ModuleNotFoundError):  # what the old check tripped on
        importlib.util.find_spec("no_such_parent_pkg.core")
    assert install.has_module("no_such_parent_pkg.core") is False
    assert install.has_module("json.decoder") is True


def test_require_names_what_is_missing_and_the_checkouts_way(monkeypatch) -> None:
    with pytest.raises(MissingInstallError) as raised:
        install.require(("json", "no_such_parent_pkg.x"), "measure", "test")
    assert raised.value.exit_code == ExitCode.BAD_INPUT
    assert str(raised.value) == (
        "measure needs no_such_parent_pkg.x, not installed here: run scripts/bootstrap test"
    )
    monkeypatch.setattr(install, "in_checkout", lambda: False)  # as after `pip install .`
    assert install.command("check") == "patchcarry check"


def _hint(py: Path, bootstrap_set: str) -> str:
    done = subprocess.run(
        [py, "-c", f"from patchcarry import install; print(install.how_to_get({bootstrap_set!r}))"],
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        cwd=py.parent,  # not the checkout, whose package -c would import
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_the_hint_is_the_one_that_works_in_that_install(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """pip: the source it was installed from, with the extra (no index serves `patchcarry`);
    pipx: `pipx inject` with the extra's pins (pip is not the user's tool in a pipx venv)."""
    wheel = checkout_wheel(tmp_path_factory)
    py, _ = plain_venv(wheel, tmp_path / "venv")
    assert _hint(py, "test") == (
        f"pip install '{wheel}[proof]' (or, to keep a torch already installed, "
        f"pip install '{wheel}[gpu]')"
    )
    assert _hint(py, "main").startswith(f"pip install '{wheel}[proof]' (or its source alone")
    py, _ = plain_venv(wheel, tmp_path / "pipx" / "venvs" / "patchcarry")
    assert _hint(py, "test") == (
        "pipx inject patchcarry torch==2.13.0 megatron-core==0.16.1 matplotlib==3.11.2"
    )
    assert _hint(py, "main") == "pipx inject patchcarry megatron-core==0.16.1"
