"""What this install lacks, said the way this install gets it."""

from __future__ import annotations

import importlib.util

import pytest

from patchcarry import install
from patchcarry.errors import ExitCode, MissingInstallError


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
    assert install.how_to_get("test") == (
        "pip install 'patchcarry[proof]' (or, to keep a torch already installed, 'patchcarry[gpu]')"
    )
    assert install.how_to_get("main").startswith("pip install 'patchcarry[proof]' (or")
    assert install.command("check") == "patchcarry check"
