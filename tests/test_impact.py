"""The PR body's "Measured impact" of one entry's fix: committed GPU evidence (upstream's
training loop) first, then the CPU measurement saying what it counts and why it equals the GPU
difference; only the entry's own variant; its configuration, its source (file and commit of
this repository, linked) and the command that reproduces it. --evidence wins."""

from __future__ import annotations

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
    assert text.index("On NVIDIA H200") < text.index("Counted on CPU")
    assert (
        "this change frees 268435456 B (268.44 MB) of the allocator floor between iterations "
        "(the model predicts 268435456 B (268.44 MB)); peak 30000000000 B (30.00 GB) – "
        "31000000000 B (31.00 GB) → 30000000000 B (30.00 GB) – 31000000000 B (31.00 GB)"
    ) in text
    assert "| unpatched | 14610348544 B (14.61 GB) |" in text and "| fix |" in text
    assert not any(word in found.figures for word in ("| both |", "| reset |", *OTHER_VARIANTS[2:]))
    assert f'{recorded_gpu.COMMAND} --out "$(mktemp -d)"' in found.source


def test_cpu_evidence_says_what_it_counts_at_the_configuration_it_ran(tmp_path) -> None:
    manifest = _repo(tmp_path)
    doc = evidence.load(_cpu(tmp_path))
    found = impact.measured_impact(None, manifest, "fix")
    assert found is not None
    s = doc["runs"][-1]["shape"]
    freed = model.freed(model.Shape(**s), "fix")
    assert f"{s['layers']} layers, {s['streams']} residual streams, {s['dtype']}, " in found.figures
    assert f"This change alone frees {freed:,} B" in found.figures
    assert "the detached inputs' `.grad`" in found.figures
    assert not any(word in found.figures for word in OTHER_VARIANTS)


@pytest.mark.parametrize("variant", ["fix", "reset"])
def test_no_figure_is_carried_to_another_configuration_or_to_a_gpu(tmp_path, variant) -> None:
    """Issue 48: the hidden size back-solved from #6117's 0.27 GB, multiplied back into
    "the same count is 0.27 GB", and a GPU claim with no GPU run. Each figure is the CPU
    measurement at the configuration it ran, and nothing more."""
    manifest = _repo(tmp_path)
    _cpu(tmp_path)
    found = impact.measured_impact(None, manifest, variant)
    assert found is not None
    text = found.markdown()
    for borrowed in ("8192", "2048", "0.27 GB", "0.60 GB", "H200", "derived", "#6117"):
        assert borrowed not in text, borrowed
    assert "no GPU run" in text


def test_the_original_authors_figures_are_quoted_as_theirs_for_their_entry_only(tmp_path) -> None:
    manifest = _repo(tmp_path)
    _cpu(tmp_path)
    shutil.copy(CHECKOUT / "evidence" / impact.QUOTED, tmp_path / "evidence")
    found = impact.measured_impact(None, manifest, "fix", entry="checkpoint-grad")
    assert found is not None
    text = found.markdown()
    assert "#6117 measured this change itself, on a single H200" in text
    assert (
        "> Between-iteration floor, sequence length 8192: 28.63 GB before, 28.36 GB after" in text
    )
    assert "Quoted, not re-measured: this repository has no GPU run of it." in text
    sibling = impact.measured_impact(None, manifest, "reset", entry="hc-mlp-norm-manager")
    assert sibling is not None and "28.63" not in sibling.markdown()
    assert "H200" not in sibling.markdown() and "#6117" not in sibling.markdown()


def test_each_body_says_what_its_fix_frees_alone_and_with_the_other_merged(tmp_path) -> None:
    """Issue 48, "Why both PRs?": from the measured rows, never a sum: with #6338 merged,
    #6339's fix frees nothing more in this measurement (defence in depth, which its test
    models); with #6339 merged, #6338's fix frees the rest."""
    manifest = _repo(tmp_path)
    doc = evidence.load(_cpu(tmp_path))
    freed = {v["name"]: v["freed"]["live_tensor_bytes"] for v in doc["runs"][-1]["variants"]}
    fix = impact.measured_impact(None, manifest, "fix", siblings={"reset": "#6338"}, tested=True)
    reset = impact.measured_impact(None, manifest, "reset", siblings={"fix": "#6339"})
    assert fix is not None and reset is not None
    assert f"this fix alone frees {freed['fix']:,} B" in fix.pair
    assert f"#6338 alone frees {freed['reset']:,} B" in fix.pair
    assert f"both together free {freed['both']:,} B" in fix.pair
    assert "With #6338 merged, this fix frees nothing more in this measurement (0 B)" in fix.pair
    assert "defence in depth" in fix.pair and "The test this PR adds models" in fix.pair
    more = freed["both"] - freed["fix"]
    assert more > 0 and f"With #6339 merged, this fix frees {more:,} B" in reset.pair
    assert "defence in depth" not in reset.pair
    # the two bodies' marginal claims add up to what both free: nothing counted twice
    assert freed["fix"] + more == freed["both"]


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
    assert f"[carrier/patches](https://github.com/carrier/patches/tree/{sha}) at {sha[:7]}" in (
        found.source
    )
    assert (
        f"git clone https://github.com/carrier/patches && cd patches && git checkout {sha[:12]}"
        in (found.source)
    )


def test_the_harness_command_writes_elsewhere_and_says_what_it_prints(tmp_path) -> None:
    """Issue 48: run as printed, the command overwrote the committed evidence, and the body
    never said what it prints."""
    manifest = _repo(tmp_path)
    _cpu(tmp_path)
    found = impact.measured_impact(None, manifest, "fix")
    assert found is not None
    (command,) = [line for line in found.source.splitlines() if "scripts/measure" in line]
    assert command.endswith(' --out "$(mktemp -d)"') and command.count("--out") == 1
    assert "--variants unpatched,fix,reset,both" in command  # the rows the pair is read from
    assert (
        "Expected: the table's live-tensor freed column reads `fix` 2097152 B (2.10 MB), "
        "`reset` 4718592 B (4.72 MB), `both` 4718592 B (4.72 MB)"
    ) in found.source


def test_the_harness_is_linked_where_no_remote_is_a_web_address(tmp_path) -> None:
    """The link works for a reader whatever origin is: another remote, or pyproject.toml's
    `[project.urls]`; with neither, the body says a reader cannot fetch it."""
    manifest = _repo(tmp_path)
    _cpu(tmp_path)
    sha = _committed(tmp_path, "/srv/git/patches.git")
    found = impact.measured_impact(None, manifest, "fix")
    assert found is not None and "a reader cannot fetch it" in found.source
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "carrier"\n[project.urls]\nRepository = "https://ghe.example.com/o/carrier"\n'
    )
    found = impact.measured_impact(None, manifest, "fix")
    assert found is not None
    assert f"[o/carrier](https://ghe.example.com/o/carrier/tree/{sha}) at {sha[:7]}" in found.source
    git.git("remote", "add", "mirror", "git@github.com:o/mirror.git", cwd=tmp_path)
    found = impact.measured_impact(None, manifest, "fix")
    assert found is not None and "https://github.com/o/mirror/tree/" in found.source


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
