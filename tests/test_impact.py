"""The PR body's "Measured impact" of one entry's fix: committed GPU evidence (upstream's
training loop) first, then the CPU measurement saying what it counts and why it equals the GPU
difference; only the entry's own variant; its configuration, its source (file and commit of
this repository, linked) and the command that reproduces it. --evidence wins."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from patchcarry import git
from patchcarry.errors import BadInputError
from patchcarry.install import CHECKOUT
from patchcarry.measure import evidence, impact, model, pretrain_evidence
from testing import recorded_gpu

IDENT = ("-c", "user.name=A", "-c", "user.email=a@example.com")
OTHER_VARIANTS = ("reset", "both", "the reset frees", "both fixes free")


def _repo(tmp_path: Path) -> Path:
    (tmp_path / "evidence").mkdir()
    return tmp_path / "patches" / "series.toml"


def _committed(tmp_path: Path, remote: str | None) -> str:
    """Make tmp_path a git repository holding its evidence/ in one commit; that commit."""
    git.init(tmp_path)
    if remote:
        git.git("remote", "add", "origin", remote, cwd=tmp_path)
    git.git("add", "evidence", cwd=tmp_path)
    git.git(*IDENT, "commit", "-qm", "evidence", cwd=tmp_path)
    return git.rev_parse("HEAD", cwd=tmp_path)


def _cpu(tmp_path: Path) -> Path:
    path = tmp_path / "evidence" / impact.CPU_EVIDENCE
    shutil.copy(CHECKOUT / "evidence" / impact.CPU_EVIDENCE, path)
    return path


def test_gpu_evidence_comes_first_and_names_only_the_entrys_own_variant(tmp_path) -> None:
    manifest = _repo(tmp_path)
    _cpu(tmp_path)
    pretrain_evidence.write(recorded_gpu.pretrain_doc(), tmp_path / "evidence" / "loop.json")
    found = impact.measured_impact(None, manifest, "fix")
    assert found is not None
    text = found.markdown()
    assert text.index("On NVIDIA H200") < text.index("On CPU")
    assert (
        "this change frees 268435456 B (268.44 MB) of the allocator floor between iterations "
        "(the model predicts 268435456 B (268.44 MB)); peak 30000000000 B (30.00 GB) – "
        "31000000000 B (31.00 GB) → 30000000000 B (30.00 GB) – 31000000000 B (31.00 GB)"
    ) in text
    assert "| unpatched | 14610348544 B (14.61 GB) |" in text and "| fix |" in text
    assert not any(word in text for word in ("| both |", "| reset |", *OTHER_VARIANTS[2:]))
    assert f"reproduce: `{recorded_gpu.COMMAND}`" in found.source


def test_cpu_evidence_says_what_it_counts_at_which_configuration_and_why_it_is_the_gpu_drop(
    tmp_path,
) -> None:
    manifest = _repo(tmp_path)
    doc = evidence.load(_cpu(tmp_path))
    found = impact.measured_impact(None, manifest, "fix")
    assert found is not None
    s = doc["runs"][-1]["shape"]
    freed = model.freed(model.Shape(**s), "fix")
    assert (
        f"({s['layers']} layers, {s['streams']} residual streams, {s['dtype']}, " in found.figures
    )
    assert f"this change frees {freed:,} B" in found.figures
    assert (
        "the detached inputs' `.grad`" in found.figures
        and "exactly the model's count" in found.figures
    )
    assert (
        "At #6117's own configuration (2 layers, 4 residual streams, bf16, micro-batch 1, "
        "seq 8192, hidden 2048; the hidden size is derived, as #6117 states none) the same "
        "count is 268,435,456 B (0.27 GB): the drop of the allocator floor #6117 measured on "
        "an H200 for this change"
    ) in found.figures
    assert not any(word in found.markdown() for word in OTHER_VARIANTS)
    assert "--variants unpatched,fix " in found.source  # the command makes this entry's rows


def test_a_measurement_at_the_prs_own_configuration_says_so_once(tmp_path) -> None:
    manifest = _repo(tmp_path)
    path = _cpu(tmp_path)
    doc = json.loads(path.read_text())
    seed = model.pr_seed_shape()
    doc["runs"][-1]["shape"] = dict(doc["extrapolation"]["seed_shape"])
    for v in doc["runs"][-1]["variants"]:
        v["freed"]["live_tensor_bytes"] = v["freed"]["predicted"] = model.freed(seed, v["name"])
    path.write_text(json.dumps(doc))
    found = impact.measured_impact(None, manifest, "fix")
    assert found is not None
    assert "this change frees 268,435,456 B (0.27 GB)" in found.figures
    assert "This is #6117's own configuration: the same bytes as the drop" in found.figures
    assert found.figures.count("268,435,456") == 1 and found.figures.count("0.27 GB") == 1


def test_another_entrys_variant_gets_its_own_figure_and_no_prs_gpu_claim(tmp_path) -> None:
    manifest = _repo(tmp_path)
    doc = evidence.load(_cpu(tmp_path))
    found = impact.measured_impact(None, manifest, "reset")
    assert found is not None
    freed = model.freed(model.Shape(**doc["runs"][-1]["shape"]), "reset")
    assert f"this change frees {freed:,} B" in found.figures and "mlp_norm_manager" in found.figures
    assert "0.27 GB" not in found.figures and "detached inputs' `.grad`," not in found.figures


def test_the_source_is_the_file_and_commit_of_this_repository_linked(tmp_path) -> None:
    manifest = _repo(tmp_path)
    _cpu(tmp_path)
    sha = _committed(tmp_path, "https://user:secret@github.com/carrier/patches.git")
    found = impact.measured_impact(None, manifest, "fix")
    assert found is not None
    link = f"https://github.com/carrier/patches/blob/{sha}/evidence/{impact.CPU_EVIDENCE}"
    assert (
        f"Evidence (counted on CPU): [`evidence/{impact.CPU_EVIDENCE}`]({link}) at {sha[:12]}"
        in found.source
    )
    assert "secret" not in found.source


def test_a_changed_or_uncommitted_file_is_never_credited_to_a_commit(tmp_path) -> None:
    manifest = _repo(tmp_path)
    path = _cpu(tmp_path)
    _committed(tmp_path, None)
    found = impact.measured_impact(None, manifest, "fix")
    assert found is not None and found.source.startswith(
        f"Evidence (counted on CPU): `evidence/{path.name}` at "
    )
    path.write_text(path.read_text() + "\n")
    found = impact.measured_impact(None, manifest, "fix")
    assert found is not None and "(not committed)" in found.source


@pytest.mark.parametrize(
    ("remote", "web"),
    [
        ("https://github.com/o/r.git", "https://github.com/o/r"),
        ("https://x-access-token:tok@ghe.example.com/o/r", "https://ghe.example.com/o/r"),
        ("git@github.com:o/r.git", "https://github.com/o/r"),
        ("ssh://git@github.com:22/o/r.git", "https://github.com/o/r"),
        ("/srv/git/r.git", None),
        ("file:///srv/git/r.git", None),
    ],
)
def test_web_url_of_a_remote(remote, web) -> None:
    assert impact.web_url(remote) == web


def test_without_any_evidence_it_says_nothing_and_an_explicit_file_wins(tmp_path) -> None:
    manifest = _repo(tmp_path)
    assert impact.measured_impact(None, manifest, "fix") is None
    _cpu(tmp_path)
    path = pretrain_evidence.write(recorded_gpu.pretrain_doc(), tmp_path / "given.json")
    found = impact.measured_impact(path, manifest, "fix")
    assert found is not None and "On NVIDIA H200" in found.figures and "On CPU" not in found.figures
    with pytest.raises(BadInputError, match="no such file"):
        impact.measured_impact(tmp_path / "missing.json", manifest, "fix")
