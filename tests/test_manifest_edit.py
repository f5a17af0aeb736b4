"""Round-trip manifest edits: `record_pr` and `add_entry` keep what people wrote by hand."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

import pytest

from patchcarry import manifest, manifest_edit
from patchcarry.errors import BadInputError
from testing.upstream_repos import write_manifest

BASE = "c76ff610bfa064d4af3035daa594d8c41ca7fce6"


def _hand_edited(tmp_path: Path) -> Path:
    """The real manifest as a person might leave it: single quotes, trailing comments."""
    path = write_manifest(tmp_path, base_commit=BASE)
    text = path.read_text()
    text = text.replace('name = "checkpoint-grad"', "name = 'checkpoint-grad'  # the 6117 fix")
    text = text.replace("pr = 6339", "pr = 6339  # re-submitted after the fork detached")
    path.write_text("# carried patches, edited by hand\n" + text)
    return path


def test_record_pr_keeps_a_trailing_comment_and_writes_one_pr_line(tmp_path: Path) -> None:
    path = _hand_edited(tmp_path)
    manifest.record_pr(path, "checkpoint-grad", 7001)
    text = path.read_text()
    assert "pr = 7001  # re-submitted after the fork detached\n" in text
    assert sum(line.startswith("pr =") for line in text.splitlines()) == 2  # one per entry
    assert {e.name: e.pr for e in manifest.load(path).entries} == {
        "checkpoint-grad": 7001,
        "hc-mlp-norm-manager": 6338,
    }


def test_record_pr_finds_a_single_quoted_name_and_keeps_the_rest_byte_for_byte(
    tmp_path: Path,
) -> None:
    path = _hand_edited(tmp_path)
    before = path.read_text()
    manifest.record_pr(path, "checkpoint-grad", 7001)
    after = path.read_text()
    assert after == before.replace("pr = 6339  #", "pr = 7001  #")


def test_record_pr_inserts_into_the_named_entry_only(tmp_path: Path) -> None:
    path = write_manifest(tmp_path, base_commit=BASE, overrides={"checkpoint-grad": {"pr": None}})
    manifest.record_pr(path, "checkpoint-grad", 7003)
    raw = tomllib.loads(path.read_text())["entry"]
    assert [e.get("pr") for e in raw] == [7003, 6338]
    with pytest.raises(BadInputError, match="no \\[\\[entry\\]\\] named 'nope'"):
        manifest.record_pr(path, "nope", 1)


def test_a_write_that_fails_midway_leaves_the_old_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _hand_edited(tmp_path)
    before = path.read_text()

    def disk_full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(manifest_edit.os, "fsync", disk_full)
    with pytest.raises(OSError, match="No space left"):
        manifest.record_pr(path, "checkpoint-grad", 7001)
    assert path.read_text() == before
    assert sorted(p.name for p in path.parent.iterdir() if p.name.startswith(".")) == []


def test_record_pr_replaces_the_file_rather_than_rewriting_it(tmp_path: Path) -> None:
    path = _hand_edited(tmp_path)
    path.chmod(0o640)
    inode = path.stat().st_ino
    manifest.record_pr(path, "checkpoint-grad", 7001)
    assert path.stat().st_ino != inode  # a reader that had it open still sees the old file
    assert path.stat().st_mode & 0o777 == 0o640


NEW = {
    "name": "adopted-fix",
    "title": 'Fix "quoted" things',
    "head_branch": "fix/adopted",
    "fix": "0001-Fix-cross-iteration-gradient-retention-in-Checkpoint.patch",
    "supersedes": [6117],
}


def test_add_entry_appends_and_keeps_comments(tmp_path: Path) -> None:
    path = _hand_edited(tmp_path)
    before = path.read_text()
    manifest_edit.add_entry(path, NEW, validate=manifest.load)
    after = path.read_text()
    assert after.startswith(before)
    assert [e.name for e in manifest.load(path).entries][-1] == "adopted-fix"
    assert manifest.load(path).entries[-1].title == 'Fix "quoted" things'


def test_add_entry_to_a_manifest_without_entries(tmp_path: Path) -> None:
    path = write_manifest(tmp_path, base_commit=BASE, entries=[])
    path.write_text("# nothing carried yet\n" + path.read_text())
    manifest_edit.add_entry(path, NEW, validate=manifest.load)
    assert path.read_text().startswith("# nothing carried yet\n[defaults]\n")
    (entry,) = manifest.load(path).entries
    assert (entry.name, entry.supersedes, entry.fork) == ("adopted-fix", (6117,), entry.fork)


def test_add_entry_refuses_a_name_clash_and_a_failed_validation_writes_nothing(
    tmp_path: Path,
) -> None:
    path = _hand_edited(tmp_path)
    before = path.read_text()
    with pytest.raises(BadInputError, match="'checkpoint-grad' is already in the manifest"):
        manifest_edit.add_entry(path, {**NEW, "name": "checkpoint-grad"})
    with pytest.raises(BadInputError, match="patch file missing.patch not found"):
        manifest_edit.add_entry(path, {**NEW, "fix": "missing.patch"}, validate=manifest.load)
    assert path.read_text() == before
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".")] == []
    assert os.listdir(path.parent).count("series.toml") == 1


def test_entries_added_one_after_another_are_separated_by_a_blank_line(tmp_path: Path) -> None:
    path = write_manifest(tmp_path, base_commit=BASE, entries=[])
    manifest_edit.add_entry(path, NEW)
    manifest_edit.add_entry(path, {**NEW, "name": "second"})
    assert 'supersedes = [6117]\n\n[[entry]]\nname = "second"' in path.read_text()


def test_a_manifest_named_by_a_relative_path_gives_patch_paths_usable_from_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_manifest(tmp_path, base_commit=BASE)
    monkeypatch.chdir(tmp_path)
    entry = manifest.load(Path("patches/series.toml")).entries[0]
    assert entry.fix.path.is_absolute() and entry.fix.path.is_file()


def test_record_pr_goes_inside_the_entry_before_the_next_entrys_comment_and_keeps_crlf(
    tmp_path: Path,
) -> None:
    path = write_manifest(tmp_path, base_commit=BASE, overrides={"checkpoint-grad": {"pr": None}})
    text = path.read_text().replace(
        '\n[[entry]]\nname = "hc-mlp-norm-manager"',
        "\n# The second fix: the hyper-connection manager.\n# (adopted from #6017)\n"
        '[[entry]]\nname = "hc-mlp-norm-manager"',
    )
    path.write_bytes(text.replace("\n", "\r\n").encode())
    before = path.read_bytes().decode()
    manifest.record_pr(path, "checkpoint-grad", 7003)
    after = path.read_bytes().decode()
    lines_before, lines_after = before.split("\r\n"), after.split("\r\n")
    assert "\n" not in after.replace("\r\n", "")  # every line ending is still CRLF
    anchor = lines_before.index('measure = "fix"')  # the last key of the entry's own block
    assert lines_after == [*lines_before[: anchor + 1], "pr = 7003", *lines_before[anchor + 1 :]]
    assert [e.pr for e in manifest.load(path).entries] == [7003, 6338]


@pytest.mark.parametrize(
    ("edit", "old", "new"),
    [
        (
            lambda path: manifest.record_pr(path, "checkpoint-grad", 7001),
            "  pr =  6339   # re-submitted by hand",
            "  pr =  7001   # re-submitted by hand",
        ),
        (
            lambda path: manifest_edit.record_landed(
                path, "checkpoint-grad", {"commit": "f" * 40, "pr": 7001}
            ),
            '  landed = { commit = "0000000" }  # a guess, to be checked',
            f'  landed = {{commit = "{"f" * 40}", pr = 7001}}  # a guess, to be checked',
        ),
    ],
    ids=["pr", "landed"],
)
def test_a_key_set_again_in_a_crlf_manifest_changes_its_value_and_no_other_byte(
    tmp_path: Path, edit: Any, old: str, new: str
) -> None:
    """The key's indentation, the spaces around `=`, its trailing comment, the CRLF line ends
    and every other line stay as the user wrote them: only the value is the tool's."""
    path = write_manifest(tmp_path, base_commit=BASE, overrides={"checkpoint-grad": {"pr": None}})
    text = path.read_text().replace(
        'name = "checkpoint-grad"\n', f'name = "checkpoint-grad"  # the 6117 fix\n{old}\n', 1
    )
    path.write_bytes(("# by hand\n" + text + "# the end\n").replace("\n", "\r\n").encode())
    before = path.read_bytes()
    edit(path)
    assert path.read_bytes() == before.replace(old.encode(), new.encode())
