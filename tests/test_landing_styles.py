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

from patchcarry import git
from patchcarry.check.run import _identity
from patchcarry.cli import main
from patchcarry.manifest import load
from testing.landing_history import BASE_TEXT, CONTRIBUTOR, FIX, SIGNOFF, _g, edit
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


def test_a_pr_of_more_commits_than_the_entry_has_patches_is_identical(tmp_path: Path) -> None:
    """A PR of three commits carried as one squashed patch: its head is fetched as deep as the
    entry's one patch asks, so git cannot tell the base an ancestor of it (psf/requests
    #7520); the PR is still this change (its tree is the base's with it), not "different"."""
    work, bare, cache = tmp_path / "work", tmp_path / "upstream.git", tmp_path / "cache.git"
    work.mkdir()
    _g("init", "-q", "-b", "dev", cwd=work)
    (work / "megatron").mkdir()
    module = work / "megatron" / "widget.py"
    module.write_text(BASE_TEXT)
    _g("add", "-A", cwd=work)
    _g("commit", "-q", "-m", "base (#1)", cwd=work)
    base = _g("rev-parse", "HEAD", cwd=work)
    steps = [edit(BASE_TEXT, FIX), edit(BASE_TEXT, FIX) + "# one\n", edit(BASE_TEXT, FIX) + "# 2\n"]
    for n, content in enumerate(steps):  # the PR's own commits
        module.write_text(content)
        _g(
            "commit",
            "-q",
            "-am",
            f"Step {n}\n\nSigned-off-by: {SIGNOFF}",
            cwd=work,
            env=CONTRIBUTOR,
        )
    head = _g("rev-parse", "HEAD", cwd=work)
    _g("checkout", "-q", "-b", "carried", base, cwd=work)
    module.write_text(steps[-1])
    _g("commit", "-q", "-am", f"Fix widget\n\nSigned-off-by: {SIGNOFF}", cwd=work, env=CONTRIBUTOR)
    _g("format-patch", "-q", "-1", "-o", str(tmp_path / "patches"), cwd=work)
    _g("init", "-q", "--bare", str(bare), cwd=tmp_path)
    _g("push", "-q", str(bare), f"{base}:refs/heads/dev", f"{head}:refs/pull/7/head", cwd=work)
    # the cache as check fetches it: the base, and the PR head two commits deep
    _g("init", "-q", "--bare", str(cache), cwd=tmp_path)
    _g("fetch", "-q", "--depth=1", bare.as_uri(), "dev", cwd=cache)
    _g("fetch", "-q", "--depth=2", bare.as_uri(), "refs/pull/7/head", cwd=cache)
    assert not git.is_ancestor(base, head, cwd=cache)  # the PR's first commit is not here
    (patch,) = (tmp_path / "patches").glob("*.patch")
    manifest = tmp_path / "patches" / "series.toml"
    manifest.write_text(
        '[defaults]\nupstream = "acme/widgets"\nbase_branch = "dev"\nfork = "casey/widgets"\n'
        f'[[entry]]\nname = "widget"\ntitle = "Fix widget"\nhead_branch = "fix/widget"\n'
        f'fix = "{patch.name}"\nsupersedes = [7]\nbase_commit = "{base}"\n'
    )
    (entry,) = load(manifest).select([])
    identity = _identity(cache, entry, 7, head, base)
    assert identity.result == "identical" and identity.compared_to == base, identity
