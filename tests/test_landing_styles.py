"""The landing verdict on every way of landing a PR (testing/landing_styles: one real-git world,
one entry per case): squash, rebase-merge, true merge, forward merge from a maintenance
branch, multi-commit PRs, reverted, removed, changed, applying again; and the verdict of every
entry is the same checked alone as in the run of all of them."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from patchcarry.cli import main
from testing.landing_styles import CASES, StylesWorld


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> StylesWorld:
    return StylesWorld.create(tmp_path_factory.mktemp("styles"))


def _run(world: StylesWorld, work_dir: Path, *entries: str) -> dict[str, Any]:
    """`check --json` (a cold cache of its own) on `entries` (all when none)."""
    argv = ["check", "--json", "--manifest", str(world.manifest), "--upstream", world.url]
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out):
        mp.setenv("XDG_CACHE_HOME", str(work_dir / "cache"))
        main([*argv, "--work-dir", str(work_dir / "wd"), *entries])
    return {e["name"]: e for e in json.loads(out.getvalue())["entries"]}


@pytest.fixture(scope="module")
def full(world: StylesWorld, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _run(world, tmp_path_factory.mktemp("full"))


def _said(entry: dict[str, Any]) -> tuple[Any, ...]:
    """What a verdict says: its verdict and every commit it names."""
    landing = entry["landing"]
    return (
        landing["verdict"],
        (landing["commit"] or {}).get("sha"),
        (landing["merged_by"] or {}).get("sha"),
        [c["sha"] for c in landing["changed_since"]],
        [c["sha"] for c in landing["carried_by"]],
    )


@pytest.mark.parametrize("name", list(CASES))
def test_each_landing_style_reads_its_verdict_and_commits(
    name: str, world: StylesWorld, full: dict[str, Any]
) -> None:
    landing, want = full[name]["landing"], world.expected[name]
    assert landing["verdict"] == want.verdict, landing
    assert (landing["commit"] or {}).get("subject") == want.subject, landing
    assert (landing["merged_by"] or {}).get("subject") == want.merge, landing
    assert tuple(c["subject"] for c in landing["changed_since"]) == want.changed_by, landing
    assert tuple(c["subject"] for c in landing["carried_by"]) == want.also, landing
    assert not any("not enough to call it landed" in p for p in landing["partial"]), landing
    if want.verdict == "landed, then undone":
        assert landing["next"].startswith("keep carrying it: it landed in ")
        assert full[name]["status"] != "landed"


def test_every_verdict_is_the_same_checked_alone(
    world: StylesWorld, full: dict[str, Any], tmp_path: Path
) -> None:
    """Checked alone, an entry reads less history (its own base, not the oldest of the run):
    git's shallow boundary then cuts a merge whose other parent is older, and the landings
    under it once dropped out of view. The verdict and its commits are a fact about the entry."""
    alone = {name: _said(_run(world, tmp_path / name, name)[name]) for name in CASES}
    assert alone == {name: _said(entry) for name, entry in full.items()}


def test_a_multi_commit_entry_is_identical_to_its_whole_pr(full: dict[str, Any]) -> None:
    """Identity compares the whole entry (every fix commit) with the PR's own commits, not its
    last commit alone."""
    for name, (_, multi, _) in CASES.items():
        (identity,) = full[name]["identity"]
        assert identity["result"] == "identical", (name, multi, identity)
