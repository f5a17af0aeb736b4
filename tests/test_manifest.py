"""manifest.load validation, select, and record_pr on the real and on written manifests."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchcarry import manifest
from patchcarry.errors import BadInputError
from testing.upstream_repos import FIX_0001, write_manifest

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
    ],
)
def test_validation_errors(tmp_path: Path, overrides, message):
    path = write_manifest(tmp_path, base_commit=BASE, overrides={"checkpoint-grad": overrides})
    with pytest.raises(BadInputError, match=message):
        manifest.load(path)


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
