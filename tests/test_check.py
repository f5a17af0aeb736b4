"""`patchcarry check` end to end on real git repos built in tmp dirs (testing/upstream_repos)."""

from __future__ import annotations

import io
import json
import random
import sys
from pathlib import Path

import pytest

from patchcarry import manifest
from patchcarry.check import judge, render
from patchcarry.check.run import run_checks
from patchcarry.cli import main
from patchcarry.patchfile import Hunk
from testing.upstream_repos import (
    DRIFT_OFFSET,
    FIX_0001,
    FIX_0003,
    LAYER_PY,
    RANDOM_PY,
    UpstreamRepo,
    make_upstream,
    write_manifest,
)

BIG_FILE_BYTES = 400_000  # incompressible; a fetch that brought every blob would include it


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> UpstreamRepo:
    """Built once: pinned base, drifted dev, #6117 = our 0001, #6017 = 0003 merged with dev."""
    big = random.Random(0).randbytes(BIG_FILE_BYTES // 2).hex()
    repo = make_upstream(tmp_path_factory.mktemp("upstream"), extra_files={"data/big.txt": big})
    repo.add_pull_head(6117, FIX_0001)
    repo.add_pull_head(6017, FIX_0003, merge_dev=True)
    return repo


@pytest.fixture
def upstream(template: UpstreamRepo, tmp_path: Path) -> UpstreamRepo:
    """A per-test copy, safe to move `dev` or rewrite PR heads on."""
    return template.copy(tmp_path / "up")


@pytest.fixture(autouse=True)
def _cache_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.fixture
def check_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], template: UpstreamRepo):
    """Run `patchcarry check` in-process against a manifest pinned to the fixture's base."""

    def run(*args: str, manifest_path: Path | None = None, upstream: str | None = None):
        mf = manifest_path or write_manifest(tmp_path / "m", base_commit=template.base_commit)
        argv = ["check", "--manifest", str(mf), "--work-dir", str(tmp_path / "wd")]
        if upstream is not None:
            argv += ["--upstream", upstream]
        code = main([*argv, *args])
        out, err = capsys.readouterr()
        return code, out, err

    return run


def _entry(data: dict, name: str) -> dict:
    return next(e for e in data["entries"] if e["name"] == name)


def _drift(entry: dict, path: str) -> dict:
    return next(d for d in entry["drift"] if d["path"] == path)


def _ref(entry: dict, ref: str) -> dict:
    return next(r for r in entry["refs"] if r["ref"] == ref)


def test_applies_clean_at_base_and_with_offset_at_drifted_tip(check_cli, upstream):
    code, out, _ = check_cli("--json", upstream=upstream.url)
    data = json.loads(out)
    assert code == 0 and data["ok"] and data["exit_code"] == 0 and data["mode"] == "upstream"
    for name, path in (("checkpoint-grad", RANDOM_PY), ("hc-mlp-norm-manager", LAYER_PY)):
        entry = _entry(data, name)
        assert entry["status"] == "applies"
        assert _ref(entry, "base")["status"] == "clean"
        assert _ref(entry, "base")["commit"] == upstream.base_commit
        tip = _ref(entry, "tip")
        assert (tip["status"], tip["offsets"], tip["commit"]) == (
            "offset",
            [DRIFT_OFFSET],
            upstream.dev_tip,
        )
        drift = _drift(entry, path)
        assert drift["changed"] and not drift["overlaps"] and drift["overlapping_hunks"] == []
        assert drift["nearest"] > 0
        # every patch of the entry (fix, then its test patches) was applied at both refs
        [real] = manifest.load().select([name])
        assert [p["patch"] for p in tip["patches"]] == [
            p.name for p in real.patches(with_tests=True)
        ]


def test_json_shape(check_cli, upstream):
    data = json.loads(check_cli("--json", upstream=str(upstream.bare))[1])
    assert set(data) == {
        "upstream",
        "mode",
        "ok",
        "exit_code",
        "bytes_fetched",
        "cache",
        "cache_bytes",
        "cost",
        "entries",
    }
    cost = data["cost"]  # what the run took: time and bytes, and the history reads per branch
    assert set(cost) == {"seconds", "bytes_fetched", "history_fetches", "history_walks", "entries"}
    assert cost["bytes_fetched"] == data["bytes_fetched"] and cost["seconds"] >= 0
    # `dev` is one commit past the pinned base: the tip and the base fetched at depth 1 are
    # its whole history since the base, so no history fetch is needed (git.shallow)
    assert cost["history_fetches"] == {} and cost["entries"] == len(data["entries"])
    entry = _entry(data, "checkpoint-grad")
    assert set(entry) == {
        "name",
        "status",
        "reason",
        "refs",
        "drift",
        "identity",
        "not_checked",
        "landing",
    }
    assert set(entry["refs"][0]) == {"ref", "label", "commit", "patches", "status", "offsets"}
    assert set(entry["identity"][0]) == {
        "pr",
        "head",
        "merge",
        "compared_to",
        "result",
        "comments_only",
        "files_differ",
        "files",
    }
    assert entry["refs"][0]["patches"][0]["patch"] == FIX_0001.name


def test_bytes_fetched_reported_small_and_cache_reused(check_cli, upstream):
    first = json.loads(check_cli("--json", upstream=upstream.url)[1])
    # The big file is in every fetched commit's tree; only its tree entry may come over.
    assert 0 < first["bytes_fetched"] < BIG_FILE_BYTES / 4
    again = json.loads(check_cli("--json", upstream=upstream.url)[1])
    assert again["bytes_fetched"] == 0 and again["ok"]
    assert again["cache_bytes"] == first["cache_bytes"] >= first["bytes_fetched"]


def test_human_table(check_cli, upstream):
    code, out, _ = check_cli(upstream=upstream.url)
    assert code == 0
    assert f"offset +{DRIFT_OFFSET}" in out and "clean" in out
    assert "not under our hunks" in out
    assert "#6117" in out and "identical" in out
    assert "result: all checked patches apply (exit 0)" in out


def test_conflicting_tip_fails_and_shows_rejected_hunk(check_cli, upstream):
    upstream.make_conflicting_tip()
    code, out, _ = check_cli(upstream=upstream.url)
    assert code == 1
    assert "conflict" in out and "rejected hunk" in out
    assert "+        for inp in detached_inputs:" in out  # the hunk's own text
    assert "does not apply: checkpoint-grad (exit 1)" in out
    data = json.loads(check_cli("--json", upstream=upstream.url)[1])
    entry = _entry(data, "checkpoint-grad")
    assert entry["status"] == "does not apply" and not data["ok"]
    assert _ref(entry, "base")["status"] == "clean"
    fix, *tests = _ref(entry, "tip")["patches"]
    assert fix["status"] == "conflict" and "@@ -632,6 +632,15 @@" in fix["rejected"]
    assert all(t["status"] == "not checked" for t in tests)  # they build on the fix
    assert _drift(entry, RANDOM_PY)["overlaps"]
    assert _drift(entry, RANDOM_PY)["overlapping_hunks"] == [632]
    assert _entry(data, "hc-mlp-norm-manager")["status"] == "applies"


def test_fuzzy_tip_is_fuzz_and_overlapping_drift(check_cli, upstream):
    upstream.make_fuzzy_tip()
    code, out, _ = check_cli("--json", "checkpoint-grad", upstream=upstream.url)
    entry = _entry(json.loads(out), "checkpoint-grad")
    assert code == 0 and _ref(entry, "tip")["status"] == "fuzz"
    assert _drift(entry, RANDOM_PY)["overlaps"]


def _with_comment(text: str) -> str:
    old = "+        # Release the recomputation-leaf gradients: they were harvested into"
    assert old in text
    return text.replace(old, "+        # A different comment, same code.")


def test_identity_comment_only_difference(check_cli, upstream):
    upstream.add_pull_head(6117, _with_comment(FIX_0001.read_text()))
    code, out, _ = check_cli("--json", "checkpoint-grad", upstream=upstream.url)
    [ident] = _entry(json.loads(out), "checkpoint-grad")["identity"]
    assert code == 0
    assert (ident["result"], ident["comments_only"], ident["files_differ"]) == (
        "different",
        True,
        [RANDOM_PY],
    )
    assert not ident["merge"]


def test_identity_code_difference(check_cli, upstream):
    text = FIX_0001.read_text().replace(
        "+                inp.grad = None", "+                del inp.grad"
    )
    upstream.add_pull_head(6117, text)
    _, out, _ = check_cli("checkpoint-grad", upstream=upstream.url)
    assert "#6117" in out and "different, code differs" in out


def test_identity_of_merge_head_uses_parent_with_fewest_changes(check_cli, upstream):
    data = json.loads(check_cli("--json", "hc-mlp-norm-manager", upstream=upstream.url)[1])
    [ident] = _entry(data, "hc-mlp-norm-manager")["identity"]
    assert ident["merge"] and ident["result"] == "identical"
    assert ident["compared_to"] == upstream.dev_tip  # not the branch parent (3 files differ)


def test_missing_pull_ref_is_exit_4(check_cli, upstream, tmp_path, template):
    mf = write_manifest(
        tmp_path / "m2",
        base_commit=template.base_commit,
        overrides={"checkpoint-grad": {"supersedes": [999]}},
    )
    code, out, err = check_cli(manifest_path=mf, upstream=upstream.url)
    assert code == 4 and "refs/pull/999/head" in err and out == ""


def test_missing_base_commit_is_exit_4(check_cli, upstream, tmp_path):
    mf = write_manifest(tmp_path / "m2", base_commit="1" * 40)
    code, out, err = check_cli(manifest_path=mf, upstream=upstream.url)
    assert code == 4 and "1" * 40 in err and out == ""


def test_unreachable_upstream_is_exit_4_without_fallback(check_cli, tmp_path):
    code, out, err = check_cli(upstream=str(tmp_path / "no-such-repo"))
    assert code == 4 and "unreachable" in err
    assert out == ""  # no silent offline report
    code, out, err = check_cli(upstream="http://127.0.0.1:9/NVIDIA/Megatron-LM.git")  # refused
    assert code == 4 and "unreachable" in err and out == ""


def test_malformed_patch_is_exit_5(check_cli, upstream, tmp_path, template):
    mf = write_manifest(tmp_path / "m2", base_commit=template.base_commit)
    patch = mf.parent / FIX_0001.name
    patch.write_text(patch.read_text().replace("@@ -632,6 +632,15 @@", "@@ -632,6 +632,14 @@"))
    code, out, err = check_cli(manifest_path=mf, upstream=upstream.url)
    assert code == 5 and "corrupt" in err and out == ""


def test_bad_manifest_is_exit_5(check_cli, tmp_path):
    bad = tmp_path / "series.toml"
    bad.write_text("[defaults]\n[[entry]]\nname = 'x'\n")
    code, _, err = check_cli(manifest_path=bad)
    assert code == 5 and "missing" in err
    code, _, err = check_cli("no-such-entry")
    assert code == 5 and "unknown entry" in err


def test_offline_on_installed_megatron_core(check_cli):
    code, out, _ = check_cli("--offline", "--json")
    data = json.loads(out)
    assert code == 0 and data["mode"] == "offline" and data["bytes_fetched"] is None
    first = _entry(data, "checkpoint-grad")
    [ref] = first["refs"]
    assert ref["ref"] == "installed" and ref["status"] == "offset" and ref["offsets"]
    assert first["not_checked"][:3] == ["tip", "drift", "identity"]
    assert [p["patch"] for p in ref["patches"]] == [FIX_0001.name]  # no tests/ in the wheel
    assert first["drift"] is None and first["identity"] is None
    second = _entry(data, "hc-mlp-norm-manager")
    assert second["status"] == "not checked" and "predates" in second["reason"]
    code, out, _ = check_cli("--offline")
    assert code == 0 and "not checked: megatron-core 0.16.1 predates" in out


def test_run_checks_api(upstream, template, tmp_path):
    mf = write_manifest(tmp_path / "m", base_commit=template.base_commit)
    entries = manifest.load(mf).select(["checkpoint-grad"])
    report = run_checks(entries, upstream=upstream.url, work_dir=tmp_path / "wd")
    assert report.ok and report.exit_code == 0
    assert [e.name for e in report.entries] == ["checkpoint-grad"]
    assert report.to_json()["entries"][0]["refs"][1]["status"] == "offset"
    assert "checkpoint-grad" in render.table(report)


@pytest.mark.parametrize(
    ("start", "count", "touches", "gap"),
    [
        (630, 1, False, 1),  # line 631 lies between
        (631, 1, False, 0),  # adjacent above
        (631, 0, False, 0),  # insertion just above the hunk
        (632, 0, True, 0),  # insertion between two hunk lines
        (636, 3, True, 0),  # overlaps the last lines
        (637, 0, False, 0),  # insertion right after the hunk
        (640, 0, False, 3),  # 638-640 unchanged, then an insertion
        (640, 2, False, 2),  # 638-639 unchanged
    ],
)
def test_drift_overlap_and_gap(start, count, touches, gap):
    hunk = Hunk(RANDOM_PY, 632, 6, 632, 15, ())  # spans old lines 632..637
    assert judge._touches(start, count, hunk) is touches
    assert judge._gap(start, count, hunk) == gap


def test_identity_indentation_is_code(check_cli, upstream):
    """Two changes that differ only in an added line's indentation differ in meaning."""
    text = FIX_0001.read_text().replace(
        "+                inp.grad = None", "+            inp.grad = None"
    )
    upstream.add_pull_head(6117, text)
    _, out, _ = check_cli("checkpoint-grad", upstream=upstream.url)
    assert "#6117" in out and "different, code differs" in out


def _diff(*lines: str) -> str:
    return "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,3 @@\n" + "\n".join(lines)


@pytest.mark.parametrize(
    ("ours", "theirs", "same"),
    [
        (("+if x:", "+    y = 1"), ("+if x:", "+    y = 1  # why"), True),
        (("+if x:", "+    y = 1"), ("+if x:", "+    # why", "+", "+    y = 1"), True),
        (("+if x:", "+    y=1"), ("+if x:", "+    y = 1"), True),  # tokens, not spacing
        (("+if x:", "+    y = 1", "+z = 2"), ("+if x:", "+    y = 1", "+    z = 2"), False),
        (('+s = """', "+# a", '+"""'), ('+s = """', "+# b", '+"""'), False),  # string text
        (("+    y = 1",), ("+        y = 1",), False),
    ],
)
def test_same_code_forgives_only_comments_and_blank_lines(ours, theirs, same):
    assert judge.same_code("m.py", _diff(*ours), _diff(*theirs)) is same


def test_same_code_outside_python_keeps_indentation():
    assert not judge.same_code("a.yml", _diff("+a:", "+  b: 1"), _diff("+a:", "+b: 1"))
    assert judge.same_code("a.yml", _diff("+a:", "+  b: 1"), _diff("+a:", "+  # c", "+  b: 1"))


def test_the_table_stays_aligned_for_a_60_character_entry_name():
    """`adopt` names entries after branch names: a long one keeps its own column."""
    from patchcarry.check.render import table
    from patchcarry.check.report import CheckReport, EntryResult, PatchApply, RefApply

    long_name = "x" * 60
    refs = [RefApply("base", "c76ff61", "c" * 40, [PatchApply("0001-a.patch", "clean", [])])]
    report = CheckReport(
        "acme/widgets", "offline", [EntryResult(long_name, refs), EntryResult("short", refs)]
    )
    lines = table(report).splitlines()
    header = next(line for line in lines if line.startswith("ENTRY"))
    rows = [line for line in lines if line.startswith((long_name, "short "))]
    column = header.index("REF")
    assert column > len(long_name) and len(rows) == 2
    for row in rows:
        assert row[column - 1] == " " and row[column:].startswith("base c76ff61"), lines


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_fetch_says_its_phase_on_a_terminal_and_keeps_quiet_under_json(
    upstream, tmp_path, monkeypatch
):
    """The fetch from upstream can take a while: a phase line on a terminal's stderr (git's
    own progress shows there too); none under --json, none when stderr is captured."""
    mf = write_manifest(tmp_path / "m", base_commit=upstream.base_commit)
    argv = ["check", "--manifest", str(mf), "--upstream", upstream.url]
    for extra, shown in (([], True), (["--json"], False)):
        terminal = _Terminal()
        monkeypatch.setattr(sys, "stderr", terminal)
        main([*argv, *extra, "--work-dir", str(tmp_path / f"wd{len(extra)}")])
        said = [line for line in terminal.getvalue().splitlines() if line.startswith("fetching")]
        assert bool(said) == shown, terminal.getvalue()
        assert not said or f"from {upstream.url}" in said[0]
