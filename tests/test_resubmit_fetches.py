"""What a run asks of the fork's git side to tell whether a push needs the `workflow` scope:
its heads' trees in one fetch and their histories in one more, however many heads it has
(it was a fetch and a `rev-parse` per head, twice over)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from patchcarry import git
from testing.upstream_repos import PINNED_ENV
from tests import test_resubmit as tr

pytest_plugins = ["testing.fake_github"]

template_upstream = tr.template_upstream
world = tr.world


def test_the_forks_heads_are_fetched_once_for_their_trees_and_once_for_their_history(
    world, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    w = world()
    tr._workflow_on_dev(w)
    work = w.upstream.work  # two more heads on the fork besides main and dev
    for name in ("side-a", "side-b"):
        git.git("checkout", "-q", "-B", name, w.upstream.base_commit, cwd=work)
        git.git("commit", "-q", "--allow-empty", "-m", name, cwd=work, env_extra=PINNED_ENV)
        git.git("push", "-q", str(w.fork_git), f"HEAD:refs/heads/{name}", cwd=work)
    heads = git.refs_under("refs/heads/", cwd=w.fork_git)
    assert len(set(heads.values())) >= 4
    real, folder, log = shutil.which("git"), tmp_path / "bin", tmp_path / "git-calls.log"
    folder.mkdir()
    (folder / "git").write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n')
    (folder / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    assert w.run("--rebase", "--dry-run", tr.ENTRY) == 0
    fetches = [line for line in log.read_text().splitlines() if " fetch " in f" {line}"]
    trees = [f for f in fetches if "refs/patchcarry/live/" in f]
    histories = [f for f in fetches if "refs/patchcarry/all-history/" in f and " fork-" in f]
    assert len(trees) == 1 and len(histories) == 1, fetches
    assert all(sha in trees[0] and sha in histories[0] for sha in set(heads.values()))
