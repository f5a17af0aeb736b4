"""scripts/measure-bootstrap's venv facts (the timing itself is measured, never asserted)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _load():  # type: ignore[no-untyped-def]
    path = str(ROOT / "scripts" / "measure-bootstrap")
    loader = importlib.machinery.SourceFileLoader("measure_bootstrap", path)
    spec = importlib.util.spec_from_loader("measure_bootstrap", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    loader.exec_module(module)
    return module


measure_bootstrap = _load()


def test_venv_facts_counts_bytes_once_and_names_torch_and_triton(tmp_path: Path) -> None:
    site = tmp_path / "lib" / "python3.11" / "site-packages"
    for dist in ("ghapi-2.1.4", "torch-2.13.0+cpu"):
        (site / f"{dist}.dist-info").mkdir(parents=True)
    (site / "blob").write_bytes(b"x" * 1000)
    (site / "link").symlink_to(site / "blob")
    facts = measure_bootstrap.venv_facts(tmp_path)
    assert facts["venv_bytes"] == 1000
    assert facts["packages"] == ["ghapi-2.1.4", "torch-2.13.0+cpu"]
    assert facts["has_torch"] is True and facts["has_triton"] is False


def test_no_venv_is_empty(tmp_path: Path) -> None:
    facts = measure_bootstrap.venv_facts(tmp_path / "absent")
    assert (facts["venv_bytes"], facts["packages"], facts["has_torch"]) == (0, [], False)
