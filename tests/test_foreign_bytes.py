"""Commit metadata that is not UTF-8 (git allows any bytes there) is data: `check`, `retire`,
`adopt` and `scan --all` read it, print it escaped (`caf\\xe9`) and keep identities byte for
byte, where each exited 3 with a traceback (git's output was decoded strictly)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from patchcarry import git
from patchcarry.cli import main
from testing import adopt_scenarios as ad
from testing import github_scenarios as sc
from testing.foreign_bytes import LATIN1_NAME, LATIN1_SUBJECT, rewrite_head
from testing.landing_history import LandingWorld
from testing.upstream_repos import FIX_0001, PINNED_ENV
from tests import test_adopt

template_upstream = test_adopt.template_upstream  # adopt's fixtures, shared
adopt_world = test_adopt.world


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LandingWorld:
    """The fix landed on dev in a commit whose subject and author name are Latin-1 bytes."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    world = LandingWorld.create(tmp_path / "w")
    world.squash("placeholder (#101)")
    rewrite_head(world.work, subject=LATIN1_SUBJECT, author_name=LATIN1_NAME)
    git.git("push", "-q", "-f", "origin", "HEAD:refs/heads/dev", cwd=world.work)
    return world


def _argv(world: LandingWorld, command: str) -> list[str]:
    return [command, "--manifest", str(world.manifest), "--upstream", world.url,
            "--work-dir", str(world.root / "wd")]  # fmt: skip


def test_check_reads_a_latin1_landing_commit_and_prints_it_escaped(world, capsys) -> None:
    assert main(_argv(world, "check")) == 0
    out = capsys.readouterr().out
    assert f"landed: {world.tip()[:12]} 'Clear detached grads, caf\\udce9 (#101)'" in out  # repr


def test_check_json_carries_the_subject_as_data(world, capsys) -> None:
    assert main([*_argv(world, "check"), "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["entries"]
    subject = entry["landing"]["commit"]["subject"]
    assert subject.encode("utf-8", "surrogateescape") == LATIN1_SUBJECT  # byte for byte


def test_retire_records_the_subject_as_text_a_file_holds(world, capsys) -> None:
    assert main(_argv(world, "retire")[:1] + ["widget-grads"] + _argv(world, "retire")[1:]) == 0
    record = tomllib.loads(world.manifest.read_text())["entry"][0]["landed"]
    assert record["subject"] == "Clear detached grads, caf\\xe9 (#101)"
    assert record["commit"] == world.tip()


def _latin1_pull(w: test_adopt.World, number: int) -> None:
    """refs/pull/N/head: the base plus one signed-off commit whose subject and author name
    are Latin-1 bytes; the PR closed by detachment on the fake GitHub."""
    work = w.upstream.work
    git.git("checkout", "-q", "-B", f"pr-{number}", w.upstream.base_commit, cwd=work)
    (work / "megatron/core/x.py").write_text("x = 1\n")
    git.git("add", "-A", cwd=work)
    git.git("commit", "-q", "-s", "-m", "placeholder", cwd=work, env_extra=PINNED_ENV)
    _, signoff, _ = git.git("log", "-1", "--format=%(trailers)", cwd=work)
    head = rewrite_head(work, subject=LATIN1_SUBJECT, author_name=LATIN1_NAME,
                        body=signoff.strip().encode() + b"\n")  # fmt: skip
    git.git("push", "-q", "-f", "origin", f"HEAD:refs/pull/{number}/head", cwd=work)
    ad.closed_by_detachment(w.gh.state, sc.UPSTREAM, number, title="Latin-1", branch="fix/l1",
                            head_sha=head)  # fmt: skip


def test_adopt_reads_a_prs_latin1_commit_without_a_traceback(adopt_world, capsys) -> None:
    """The PR's own commit is read and said (escaped); the patch it makes cannot carry a
    non-UTF-8 author byte for byte, so it is refused in one line before any write."""
    w = adopt_world
    _latin1_pull(w, 6310)
    before = w.manifest.read_text()
    for dry_run in (["--dry-run"], []):
        assert w.adopt(f"{sc.UPSTREAM}#6310", *dry_run) == 5  # one clear line, not exit 3
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: ") and len(err.splitlines()) == 1
        assert "its From: author is not UTF-8" in err
        assert w.manifest.read_text() == before and w.patches() == []


def test_scan_all_reads_a_latin1_landing_commit_and_prints_it_escaped(adopt_world, capsys):
    """#6117's fix landed on dev in a commit whose subject and author are Latin-1 bytes."""
    w = adopt_world
    work = w.upstream.work
    git.git("checkout", "-q", "-B", "dev", w.upstream.dev_tip, cwd=work)
    git.git("apply", str(FIX_0001), cwd=work)
    git.git("commit", "-q", "-am", "placeholder", cwd=work, env_extra=PINNED_ENV)
    landed = rewrite_head(work, subject=b"Free grads, caf\xe9 (#7001)", author_name=LATIN1_NAME)
    git.git("push", "-q", "origin", "HEAD:refs/heads/dev", cwd=work)
    assert main(["scan", "--all", "--manifest", str(w.manifest)]) == 1  # #6017 still to adopt
    out = capsys.readouterr().out
    assert f"landed upstream since, as {landed[:12]} 'Free grads, caf\\udce9 (#7001)'" in out
    main(["scan", "--all", "--json", "--manifest", str(w.manifest)])
    rows = {r["pr"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    subject = rows[6117]["landing"]["commit"]["subject"]
    assert subject.encode("utf-8", "surrogateescape") == b"Free grads, caf\xe9 (#7001)"
