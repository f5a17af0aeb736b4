"""`check` on a manifest of many entries (testing/landing_many: real git): the base branch's
history is fetched once and walked once for all of them, the files they read come in one
fetch, and every entry is judged against it. Counted at git's own door (a `git` on PATH that
logs each call) and in the cache (a pack per fetch), never timed.

Twelve entries are every landing way (i % 3) on every pinned base (i % 4), and twelve fetches
or walks (one an entry) would fail the counts as surely as two hundred; size and time from 10
to 200 entries are scripts/check-bench's (a benchmark, JSON), not this test's."""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from patchcarry.cli import main
from testing.landing_history import OTHER, PATH, LandingWorld
from testing.landing_many import ManyWorld, judged

COUNT = 12  # lcm of the three landing ways and the four bases


def _logging_git(tmp_path: Path) -> Path:
    """A `git` first on PATH that writes each call's arguments to a log, then runs git."""
    real = shutil.which("git")
    assert real is not None
    log, folder = tmp_path / "git-calls.log", tmp_path / "bin"
    folder.mkdir()
    shim = folder / "git"
    shim.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    return log


def _check_logged(
    world: ManyWorld | LandingWorld,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> tuple[int, dict[str, Any], list[str]]:
    """`check --json` on WORLD with the logging git first on PATH and a cache of its own in
    tmp_path/wd: its exit code, its JSON, and every git call it made."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    log = _logging_git(tmp_path)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    argv = ["check", "--json", "--manifest", str(world.manifest), "--upstream", world.url]
    code = main([*argv, "--work-dir", str(tmp_path / "wd")])
    data = json.loads(capsys.readouterr().out)
    return code, data, log.read_text().splitlines()


def test_many_entries_read_the_shared_history_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    world = ManyWorld.create(tmp_path / "world", COUNT)
    code, data, calls = _check_logged(world, tmp_path, monkeypatch, capsys)
    assert code == 0  # landed entries are nothing to carry; the others still apply
    verdicts = judged(data)
    assert verdicts == world.expected and len(verdicts) == COUNT
    history_fetches = [c for c in calls if "--shallow-since" in c]
    walks = [c for c in calls if "--name-only" in c and "--diff-merges=first-parent" in c]
    assert len(history_fetches) == 1  # one fetch of dev's history for every entry
    assert len(walks) == 2  # dev's first-parent history, and the side of its one sync merge
    # every fetch into the cache leaves one pack: the named commits, the history, and the
    # blobs all the entries read at their base and tip, in one request (not a lazy fetch each)
    assert len(list((tmp_path / "wd" / "objects" / "pack").glob("*.pack"))) == 3
    assert data["cost"]["history_fetches"] == {"dev": 1}
    assert data["cost"]["history_walks"] == {"dev": 2}
    assert data["cost"]["entries"] == COUNT and data["cost"]["bytes_fetched"] > 0
    # and no git command runs once per entry: the touched files' trees and blobs, whether
    # each patch applies, the drift and the landing's diffs are asked for many entries in one
    # process each (check/prepare.py); only reading the patch files is per file
    reads_patch = ("mailsplit", "mailinfo", "interpret-trailers", "--numstat", "check-ref-format")
    verbs = Counter(
        next(w for w in c.split() if not w.startswith("-") and "=" not in w)
        for c in calls
        if not any(r in c for r in reads_patch)
    )
    assert max(verbs.values()) < COUNT, verbs


def test_the_diffs_of_the_commits_since_the_base_fetch_their_blobs_in_one_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each commit since the base that changed the fix's file holds a blob of its own, read for
    its diff: git's diff of many commits fetches them commit by commit (one lazy fetch each,
    the bulk of a long history's cost) unless they are asked for first, in one request."""
    world = LandingWorld.create(tmp_path / "world")
    for n in range(4):
        line = "    print(widget.name)\n"
        world.commit(
            "dev", {PATH: {line: f"{line}    print({n})\n"}}, f"Report size {n} (#{910 + n})"
        )
    _, data, calls = _check_logged(world, tmp_path, monkeypatch, capsys)
    (entry,) = data["entries"]
    assert entry["landing"]["verdict"] == "not landed"
    # every fetch leaves one pack; git's own lazy fetches (which no `git` on PATH sees) too
    packs = list((tmp_path / "wd" / "objects" / "pack").glob("*.pack"))
    fetches = [c for c in calls if " fetch " in f" {c} "]
    assert len(packs) == len(fetches), fetches


def test_nothing_is_asked_at_the_commits_after_the_one_that_carried_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The judge stops at the first commit that carries the fix: whether the fix reverse-applies
    at the commits after it (a scratch index and an `apply` each) is never asked for them."""
    world = LandingWorld.create(tmp_path / "world")
    carrier = world.squash("Clear detached grads in backward (#101)")
    line, later = "    print(widget.name)\n", []
    for n in range(3):
        later.append(
            world.commit(
                "dev", {PATH: {line: f"{line}    print({n})\n"}}, f"Report {n} (#{910 + n})"
            )
        )
    world.commit("dev", {OTHER: {"VALUE = ": "VALUE = 2 + "}}, "Tune value (#920)")  # the tip
    _, data, calls = _check_logged(world, tmp_path, monkeypatch, capsys)
    (entry,) = data["entries"]
    assert entry["landing"]["verdict"] == "landed" and entry["landing"]["commit"]["sha"] == carrier
    read_trees = [c for c in calls if " read-tree " in f" {c} "]
    assert read_trees and not [c for c in read_trees if any(sha in c for sha in later)]
