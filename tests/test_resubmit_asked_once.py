"""What one resubmit run asks git once: a question whose answer its inputs fix (the same
commit, the same patch, a config this run's lock keeps to itself) is not asked again in
the run. A run asked each of these twice or more (about 80 gits a run)."""

from __future__ import annotations

import collections
import os
import shutil
from pathlib import Path

import pytest

from patchcarry import pr_template
from testing import github_scenarios as sc
from tests import test_resubmit_live
from tests.test_resubmit_live import AUTHOR, CKPT, _older_fix

template_upstream = test_resubmit_live.template_upstream  # the fixtures, shared
live = test_resubmit_live.live


def _counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A log of every `git` the tool starts (a wrapper first on PATH)."""
    real, folder, log = shutil.which("git"), tmp_path / "bin", tmp_path / "git-calls.log"
    folder.mkdir()
    (folder / "git").write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n')
    (folder / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return log


def test_one_run_asks_each_fixed_question_once(
    live, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    w = live(ckpt_commits=[(AUTHOR, "note", {"NOTES.md": "a\n"})])
    log = _counted(tmp_path, monkeypatch)
    assert w.run(CKPT) == 0  # the fork branch refreshed: a revision comment on the live PR
    calls = log.read_text().splitlines()
    asked = collections.Counter(calls)
    # a commit's tree into a scratch index; whether one commit is another's ancestor
    for verb in ("read-tree ", "merge-base --is-ancestor "):
        assert [c for c in asked if c.startswith(verb) and asked[c] > 1] == [], verb
    assert any(c.startswith("merge-base --is-ancestor ") for c in calls)  # it was asked
    # the template's places listed once; the fork's promisor remote configured once
    template = pr_template.REF.format(branch="main")
    assert len([c for c in calls if c.startswith("ls-tree ") and template in c]) == 1
    assert len([c for c in calls if c.startswith("config --local --list")]) == 1


def test_an_earlier_revisions_parent_gets_the_fix_applied_once(
    live, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding the earlier revision applies the fix on its parent; revising it needs the same
    answer (the same commit, the same patch): it is not asked of git again."""
    w = live(ckpt_commits=[(AUTHOR, sc.CHECKPOINT_TITLE, _older_fix)])
    log = _counted(tmp_path, monkeypatch)
    assert w.run("--dry-run", "--update-live", CKPT) == 0
    parent = w.upstream.base_commit  # the earlier revision sits on the base
    asked = collections.Counter(log.read_text().splitlines())
    # the base's tree read twice: by check's series, and for the fix on the revision's parent
    assert asked[f"read-tree --end-of-options {parent}"] == 2
