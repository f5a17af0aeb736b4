"""The shallow boundary looked at after every shallow fetch asks git, within one run, only
what a fetch can change: which commits are here is asked once for each commit found here (a
cache loses none), and a commit's parents once (they are its content)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from patchcarry import git

IDENT = ("-c", "user.name=A", "-c", "user.email=a@example.com")


def test_a_second_look_asks_only_about_commits_not_yet_found_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    origin = tmp_path / "origin"
    git.init(origin)
    for n in range(2):
        git.git(*IDENT, "commit", "-q", "--allow-empty", "-m", f"c{n}", cwd=origin)
    clone = tmp_path / "clone"
    git.git("clone", "-q", "--bare", "--depth=1", origin.as_uri(), str(clone), cwd=tmp_path)
    assert git.shallow_file(cwd=clone).is_file()  # the tip, its parent not here
    real, folder, log = shutil.which("git"), tmp_path / "bin", tmp_path / "git-calls.log"
    folder.mkdir()
    (folder / "git").write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n')
    (folder / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    git.forget_run_memos()
    assert git.keep_known_history(cwd=clone) == set()
    first = log.read_text().splitlines()
    log.unlink()
    assert git.keep_known_history(cwd=clone) == set()
    again = log.read_text().splitlines()
    assert [c.split()[0] for c in first] == ["rev-parse", "rev-list", "cat-file", "rev-list"]
    assert again == ["rev-list --missing=allow-any --ignore-missing --no-walk --stdin"]  # parent
    git.forget_run_memos()  # a new run asks again
    log.unlink()
    assert git.keep_known_history(cwd=clone) == set()
    assert len(log.read_text().splitlines()) == 4
