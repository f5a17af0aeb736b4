"""manifest.load validation, select, and record_pr on the real and on written manifests."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchcarry import manifest
from patchcarry.errors import BadInputError
from testing.upstream_repos import FIX_0001, FIX_0003, write_manifest

BASE = "c76ff610bfa064d4af3035daa594d8c41ca7fce6"


def test_real_manifest_loads():
    m = manifest.load()
    assert [e.name for e in m.entries] == ["checkpoint-grad", "hc-mlp-norm-manager"]
    first, second = m.entries
    assert first.base_commit == BASE and first.base_branch == "dev"  # from [defaults]
    assert first.fix.path == FIX_0001
    assert [p.path for p in first.patches(with_tests=False)] == [FIX_0001]
    assert first.patches(with_tests=True) == [first.fix, *first.tests]
    assert (first.supersedes, first.pr, first.offline) == ((6117,), 6339, None)
    assert second.offline and "predates" in second.offline
    assert first.fork_owner == "htesd"


def test_select():
    m = manifest.load()
    assert [e.name for e in m.select(["hc-mlp-norm-manager"])] == ["hc-mlp-norm-manager"]
    assert len(m.select([])) == 2
    with pytest.raises(BadInputError, match="unknown entry nope"):
        m.select(["nope"])


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"title": None}, "missing title"),
        ({"colour": "blue"}, "unknown key"),
        ({"base_commit": "c76ff61"}, "full 40-hex sha"),
        ({"upstream": "not a repo"}, "must be OWNER/REPO"),
        ({"fork": "htesd/.."}, "fork must be OWNER/REPO"),
        ({"fork": "htesd/."}, "fork must be OWNER/REPO"),
        ({"fork": "htesd/x y"}, "fork must be OWNER/REPO"),
        ({"fork": "ht_esd/x"}, "fork must be OWNER/REPO"),
        ({"pr": -1}, "positive PR number"),
        ({"pr": True}, "pr must be a positive PR number"),
        ({"include_tests": "false"}, "include_tests must be a bool"),
        ({"supersedes": 6117}, "supersedes must be a list"),
        ({"supersedes": [True]}, "supersedes must be a list"),
        ({"title": 3}, "title must be a str"),
        ({"fix": "/etc/passwd"}, "must be a file inside patches/"),
        ({"fix": "../../etc/passwd"}, "must be a file inside patches/"),
        ({"tests": ["../series.toml"]}, "must be a file inside patches/"),
        ({"name": "../x"}, r"name must match \[a-z0-9\]"),
        ({"name": "Checkpoint"}, r"name must match"),
        ({"head_branch": "bad..name"}, "head_branch 'bad..name' is not a valid branch name"),
        ({"head_branch": "-x"}, "not a valid branch name"),
        ({"base_branch": "dev lock"}, "not a valid branch name"),
        ({"paths": ["megatron/core/transformer/**"]}, "random.py, outside the entry's paths"),
        ({"paths": "megatron/**"}, "paths must be a list"),
        ({"supersedes": ["6117"]}, "positive PR numbers"),
        ({"fix": "missing.patch"}, "missing.patch not found"),
        ({"name": "hc-mlp-norm-manager"}, "unique"),
        (
            {"head_branch": "fix/hc-mlp-norm-manager-retention"},
            "entries 'checkpoint-grad' and 'hc-mlp-norm-manager' both publish from "
            "htesd/Megatron-LM-oss:fix/hc-mlp-norm-manager-retention",
        ),
        ({"pr": 6338}, "entries 'checkpoint-grad' and 'hc-mlp-norm-manager' both record pr = 6338"),
        (  # GitHub's owner and repository names are case-insensitive
            {"head_branch": "fix/hc-mlp-norm-manager-retention", "fork": "HTESD/megatron-lm-OSS"},
            "both publish from",
        ),
    ],
)
def test_validation_errors(tmp_path: Path, overrides, message):
    path = write_manifest(tmp_path, base_commit=BASE, overrides={"checkpoint-grad": overrides})
    with pytest.raises(BadInputError, match=message):
        manifest.load(path).select(["checkpoint-grad"])  # its patch is read when it is used


def test_file_level_errors(tmp_path: Path):
    with pytest.raises(BadInputError, match="manifest not found"):
        manifest.load(tmp_path / "absent.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[defaults\n")
    with pytest.raises(BadInputError, match="not valid TOML"):
        manifest.load(bad)
    bad.write_text("[defaults]\nfork = 'a/b'\n")
    with pytest.raises(BadInputError, match=r"no \[\[entry\]\] tables"):
        manifest.load(bad)


def test_record_pr_updates_only_the_named_entry(tmp_path: Path):
    path = write_manifest(tmp_path, base_commit=BASE)
    manifest.record_pr(path, "checkpoint-grad", 7001)
    by_name = {e.name: e for e in manifest.load(path).entries}
    assert by_name["checkpoint-grad"].pr == 7001
    assert by_name["hc-mlp-norm-manager"].pr == 6338


def test_record_pr_inserts_when_absent_and_keeps_comments(tmp_path: Path):
    path = write_manifest(
        tmp_path, base_commit=BASE, overrides={"hc-mlp-norm-manager": {"pr": None}}
    )
    path.write_text("# keep this comment: pr = 1\n" + path.read_text())
    assert manifest.load(path).entries[1].pr is None
    manifest.record_pr(path, "hc-mlp-norm-manager", 7002)
    assert manifest.load(path).entries[1].pr == 7002
    assert path.read_text().startswith("# keep this comment: pr = 1\n")
    with pytest.raises(BadInputError, match="no \\[\\[entry\\]\\] named 'nope'"):
        manifest.record_pr(path, "nope", 1)


def test_non_table_defaults_and_entries_are_refused(tmp_path: Path):
    good = write_manifest(tmp_path, base_commit=BASE).read_text()
    bad = tmp_path / "patches" / "bad.toml"
    bad.write_text("defaults = 3\n" + good.split("\n", 1)[1].replace("[defaults]", ""))
    with pytest.raises(BadInputError, match=r"\[defaults\] must be a table"):
        manifest.load(bad)
    bad.write_text("entry = [1, 2]\n")
    with pytest.raises(BadInputError, match="must be a table"):
        manifest.load(bad)


def test_fix_may_be_a_series_kept_in_order(tmp_path: Path):
    series = [FIX_0001.name, FIX_0003.name]
    path = write_manifest(
        tmp_path, base_commit=BASE, overrides={"checkpoint-grad": {"fix": series}}
    )
    entry = manifest.load(path).entries[0]
    assert [p.name for p in entry.fixes] == series and entry.fix is entry.fixes[0]
    assert [p.name for p in entry.patches(with_tests=False)] == series  # never dropped
    assert entry.patches() == [*entry.fixes, *entry.tests]


@pytest.mark.parametrize(
    ("fix", "message"),
    [([], "fix must be a patch file name or a list"), (3, "fix must be a patch file name"),
     ([FIX_0001.name, FIX_0001.name], "named twice")],
)  # fmt: skip
def test_bad_fix_series(tmp_path: Path, fix, message):
    path = write_manifest(tmp_path, base_commit=BASE, overrides={"checkpoint-grad": {"fix": fix}})
    with pytest.raises(BadInputError, match=message):
        manifest.load(path)


def test_an_entry_error_names_the_manifest_and_the_entry_line(tmp_path: Path):
    path = write_manifest(tmp_path, base_commit=BASE, overrides={"hc-mlp-norm-manager": {"pr": 0}})
    lines = path.read_text().splitlines()
    line = [i for i, text in enumerate(lines, 1) if text == "[[entry]]"][1]
    with pytest.raises(BadInputError, match=rf"^{path}:{line}: entry 'hc-mlp-norm-manager': pr"):
        manifest.load(path)


def test_a_workflow_file_is_never_carried_whatever_paths_say(tmp_path: Path):
    path = write_manifest(
        tmp_path, base_commit=BASE, overrides={"checkpoint-grad": {"paths": ["**"]}}
    )
    patch = path.parent / FIX_0001.name
    text = patch.read_text().replace(
        "megatron/core/tensor_parallel/random.py", ".github/workflows/ci.yml"
    )
    patch.write_text(text)
    with pytest.raises(BadInputError) as caught:
        manifest.load(path).select([])
    assert "touches .github/workflows/ci.yml: a GitHub Actions workflow, never carried" in str(
        caught.value
    )
    assert "add it to" not in str(caught.value)


def test_find_looks_upward_then_in_the_user_config_then_the_package(tmp_path, monkeypatch):
    deep = tmp_path / "proj" / "src" / "pkg"
    deep.mkdir(parents=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert manifest.find(cwd=deep) == manifest.DEFAULT_MANIFEST
    user = tmp_path / "config" / "patchcarry" / "series.toml"
    user.parent.mkdir(parents=True)
    user.write_text("")
    assert manifest.find(cwd=deep) == user
    project = tmp_path / "proj" / "patches" / "series.toml"
    project.parent.mkdir()
    project.write_text("")
    assert manifest.find(cwd=deep) == project
    assert manifest.find(Path("x.toml"), cwd=deep) == Path("x.toml")  # --manifest wins


def test_the_embedded_copy_is_read_only(tmp_path, monkeypatch):
    monkeypatch.setattr(manifest, "EMBEDDED_DIR", tmp_path / "_series")
    with pytest.raises(BadInputError, match="inside the installed package \\(read-only\\)"):
        manifest.check_writable(tmp_path / "_series" / "series.toml")
    manifest.check_writable(tmp_path / "patches" / "series.toml")  # elsewhere: fine


def test_a_command_reads_the_patches_of_the_entries_it_uses_alone(tmp_path: Path):
    """One entry of a manifest whose other entry's patch is unreadable: selecting it reads
    its own patch only (a manifest of hundreds is not parsed whole to check one entry); the
    whole manifest still stops at the bad patch, with its line and entry named, before any
    command that uses every entry does anything."""
    path = write_manifest(tmp_path, base_commit=BASE)
    (path.parent / FIX_0003.name).write_text("not a patch\n")
    loaded = manifest.load(path)
    assert loaded.names == ["checkpoint-grad", "hc-mlp-norm-manager"]
    (entry,) = loaded.select(["checkpoint-grad"])
    assert entry.fix.name == FIX_0001.name
    with pytest.raises(BadInputError, match=r"entry 'hc-mlp-norm-manager': .*format-patch"):
        loaded.select([])


# -- values git or the OS cannot take, and TOML nested past what a reader can recurse into ----
@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("head_branch", "fix/a@NUL@b"),
        ("base_branch", "dev@NUL@"),
        ("fix", "x@NUL@.patch"),
        ("tests", ["t@NUL@.patch"]),
        ("paths", ["megatron/@NUL@**"]),
        ("title", "a title@NUL@"),
    ],
)
def test_a_nul_in_any_value_is_refused_naming_the_entry_and_key(tmp_path: Path, key, value):
    """A NUL (TOML's `\\u0000`) cannot be a branch name, a file name or a title: exit 5 with
    the entry and the key, not a ValueError from a path or git's argv."""
    path = write_manifest(tmp_path, base_commit=BASE, overrides={"checkpoint-grad": {key: value}})
    path.write_text(path.read_text().replace("@NUL@", "\\u0000"))
    with pytest.raises(BadInputError, match=rf"entry 'checkpoint-grad': {key} holds a NUL"):
        manifest.load(path).select(["checkpoint-grad"])


def test_toml_nested_past_any_reader_is_refused_naming_the_entry_and_key(tmp_path: Path):
    path = write_manifest(tmp_path, base_commit=BASE)
    deep = "[" * 10_000 + "]" * 10_000
    path.write_text(path.read_text() + f'\n[[entry]]\nname = "deep"\nfix = {deep}\n')
    lines = path.read_text().splitlines()
    line = len(lines)
    with pytest.raises(BadInputError) as caught:
        manifest.load(path)
    said = str(caught.value)
    assert said.startswith(f"{path}:{line}: entry 'deep': fix is nested"), said
    assert "\n" not in said and len(said) < 300
