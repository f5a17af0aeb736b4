"""The PR body's "Measured impact" from evidence files: committed GPU evidence (upstream's
training loop) first, else the CPU measurement said to be CPU, else none; --evidence wins."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from patchcarry.errors import BadInputError
from patchcarry.install import CHECKOUT
from patchcarry.measure import impact, pretrain_evidence
from testing import recorded_gpu


def _repo(tmp_path: Path) -> Path:
    (tmp_path / "evidence").mkdir()
    return tmp_path / "patches" / "series.toml"


def test_gpu_evidence_gives_floor_peak_reserved_ratio_and_command(tmp_path) -> None:
    manifest = _repo(tmp_path)
    shutil.copy(CHECKOUT / "evidence" / impact.CPU_EVIDENCE, tmp_path / "evidence")
    pretrain_evidence.write(recorded_gpu.pretrain_doc(), tmp_path / "evidence" / "loop.json")
    text = impact.measured_impact(None, manifest)
    assert text is not None and "CPU only" not in text
    assert (
        "the fix frees 268435456 B (268.44 MB) of the allocator floor between iterations "
        "(the model predicts 268435456 B (268.44 MB)); peak 30000000000 B (30.00 GB) – "
        "31000000000 B (31.00 GB) → 30000000000 B (30.00 GB) – 31000000000 B (31.00 GB), "
        "reserved 31000000000 B (31.00 GB) – 32000000000 B (32.00 GB) → "
    ) in text
    assert "both fixes free 603979776 B" in text and "step-time ratio 1.000" in text
    assert f"produced by `{recorded_gpu.COMMAND}`" in text
    assert "| unpatched | 14610348544 B (14.61 GB) |" in text


def test_without_gpu_evidence_it_says_cpu_and_without_any_it_says_nothing(tmp_path) -> None:
    manifest = _repo(tmp_path)
    assert impact.measured_impact(None, manifest) is None
    shutil.copy(CHECKOUT / "evidence" / impact.CPU_EVIDENCE, tmp_path / "evidence")
    text = impact.measured_impact(None, manifest)
    assert text is not None and text.startswith("Measured on CPU only")


def test_an_explicit_file_wins_and_a_missing_one_is_bad_input(tmp_path) -> None:
    manifest = _repo(tmp_path)
    path = pretrain_evidence.write(recorded_gpu.pretrain_doc(), tmp_path / "given.json")
    assert "On NVIDIA H200" in str(impact.measured_impact(path, manifest))
    with pytest.raises(BadInputError, match="no such file"):
        impact.measured_impact(tmp_path / "missing.json", manifest)
