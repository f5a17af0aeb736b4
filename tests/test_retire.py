"""`retire`: a landed entry is recorded in the manifest and no longer carried; --comment posts
one comment on its open PR (loopback GitHub); a fix that has not landed is refused."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from patchcarry import manifest
from patchcarry.cli import main
from testing.fake_github import FakeGitHub
from testing.landing_history import LandingWorld

TOKEN = "fake-token-casey"
PR_NOW = 700


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LandingWorld:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    return LandingWorld.create(tmp_path / "w")


def _retire(world: LandingWorld, *args: str) -> int:
    argv = ["retire", "widget-grads", "--manifest", str(world.manifest), "--upstream", world.url]
    return main([*argv, "--work-dir", str(world.root / "wd"), *args])


def _with_pr(world: LandingWorld, fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    text = world.manifest.read_text().replace(
        "supersedes = [101]", f"supersedes = [101]\npr = {PR_NOW}"
    )
    world.manifest.write_text(text)
    state = fake_github.state
    state.add_token(TOKEN, "casey")
    state.add_repo("acme/widgets", world.bare)
    state.add_pull(
        "acme/widgets",
        title="Clear detached grads",
        user="casey",
        head_ref="fix/widget-grads",
        head_repo="casey/widgets",
        number=PR_NOW,
    )
    monkeypatch.setenv("GH_HOST", fake_github.url)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)


def test_landed_entry_is_recorded_and_no_longer_carried(world, capsys) -> None:
    landed = world.squash("Clear detached grads in backward (#101)")
    assert _retire(world) == 0
    out = capsys.readouterr().out
    assert "retired widget-grads" in out
    record = tomllib.loads(world.manifest.read_text())["entry"][0]["landed"]
    assert record["commit"] == landed and record["verdict"] == "landed" and record["pr"] == 101
    assert record["date"] == "2026-03-01"
    loaded = manifest.load(world.manifest)
    assert loaded.entries == () and [e.name for e in loaded.retired] == ["widget-grads"]
    # every command stops carrying it, and says why when it is named
    assert (
        main(["check", "--manifest", str(world.manifest), "--upstream", world.url, "widget-grads"])
        == 5
    )
    assert "is retired: landed upstream as" in capsys.readouterr().err


def test_not_landed_is_refused_and_nothing_written(world, capsys) -> None:
    before = world.manifest.read_bytes()
    assert _retire(world) == 1
    assert "does not find its fix landed" in capsys.readouterr().err
    assert world.manifest.read_bytes() == before


def test_landed_then_undone_is_refused_and_says_keep_carrying(world, capsys) -> None:
    """A fix that landed and was reverted is no landing to record: retire refuses, naming
    both commits, and writes nothing."""
    landed = world.squash("Clear detached grads in backward (#101)")
    reverted = world.revert(landed)
    before = world.manifest.read_bytes()
    assert _retire(world) == 1
    err = capsys.readouterr().err
    assert f"it landed in {landed[:12]} and was undone in {reverted[:12]}" in err, err
    assert "keep carrying it" in err and world.manifest.read_bytes() == before


def test_superseded_needs_moot(world, capsys) -> None:
    world.commit("dev", {"megatron/core/widget.py": None}, "Remove the widget module (#401)")
    before = world.manifest.read_bytes()
    assert _retire(world) == 1
    assert "--moot" in capsys.readouterr().err and world.manifest.read_bytes() == before
    assert _retire(world, "--moot") == 0
    assert (
        tomllib.loads(world.manifest.read_text())["entry"][0]["landed"]["verdict"] == "superseded"
    )


def test_dry_run_writes_nothing(world, capsys) -> None:
    world.squash("Clear detached grads in backward (#101)")
    before = world.manifest.read_bytes()
    assert _retire(world, "--dry-run") == 0
    assert "DRY RUN: would record" in capsys.readouterr().out
    assert world.manifest.read_bytes() == before


def test_comment_once_on_the_open_pr(world, fake_github, monkeypatch, capsys) -> None:
    _with_pr(world, fake_github, monkeypatch)
    # the user's own reply quoting the tool's marker is their text, not the landing comment
    quote = "> <!-- patchcarry:landed entry=widget-grads -->\n\nLanded, thanks!"
    fake_github.state.add_comment("acme/widgets", PR_NOW, user="casey", body=quote)
    landed = world.squash("Clear detached grads in backward (#101)")
    assert _retire(world, "--comment") == 0
    comments = [c for c in fake_github.state.comments if c.issue == PR_NOW and c.body != quote]
    assert len(comments) == 1 and landed in comments[0].body and comments[0].user == "casey"
    # a re-run after the record (the manifest write lost, say) finds it and posts no second
    text = world.manifest.read_text()
    world.manifest.write_text(text[: text.index("landed =")])
    assert _retire(world, "--comment") == 0
    assert len([c for c in fake_github.state.comments if c.issue == PR_NOW]) == 2
    assert "already has the landing comment" in capsys.readouterr().out


def test_comment_without_token_is_refused_before_any_write(world, capsys) -> None:
    world.squash("Clear detached grads in backward (#101)")
    before = world.manifest.read_bytes()
    assert _retire(world, "--comment") == 2
    assert world.manifest.read_bytes() == before


def test_retire_writes_one_line_through_a_symlink_and_keeps_every_other_line(world) -> None:
    """The manifest is the user's file: retire adds its `landed = {...}` line and nothing else
    changes, not a comment, not another key, and a symlinked manifest stays a link."""
    world.squash("Clear detached grads in backward (#101)")
    before = world.manifest.read_text() + "# the user's own closing comment\n"
    world.manifest.write_text(before)
    real = world.manifest.with_name("real-series.toml")
    world.manifest.rename(real)
    world.manifest.symlink_to(real.name)
    assert _retire(world) == 0
    assert world.manifest.is_symlink()
    after = real.read_text().splitlines()
    added = [line for line in after if line not in before.splitlines()]
    assert len(added) == 1 and added[0].startswith("landed = {"), added
    assert [line for line in after if line not in added] == before.splitlines()
