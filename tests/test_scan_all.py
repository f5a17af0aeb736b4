"""`scan --all`: the user's closed, unmerged PRs on every repository, classified, each with
the exact `adopt` command when it was closed by fork detachment and is not carried yet."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from patchcarry import cli
from patchcarry.github import GitHub
from patchcarry.scan import scan_all
from testing import adopt_scenarios as ad
from testing import github_scenarios as sc
from testing.fake_github import FakeGitHub, GitHubState

OTHER = "other-org/tool"


@pytest.fixture
def gh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest):
    """htesd's closed PRs on two upstreams: detached ones on both, a maintainer-closed one,
    a merged one (not unmerged: not listed) and someone else's (not theirs: not listed)."""
    fake = FakeGitHub(GitHubState()).start()
    request.addfinalizer(fake.stop)
    state = fake.state
    sc.detached_fork_close(state, tmp_path / "upstream.git", None)  # #6117, #6017
    sc.maintainer_closed(state, tmp_path / "upstream.git", number=6201)
    sc.merged(state, tmp_path / "upstream.git", number=6100)
    for number, branch in ((12, sc.CHECKPOINT_BRANCH), (13, "fix/b"), (14, "feature/c")):
        ad.closed_by_detachment(state, OTHER, number, title=f"tool fix {number}", branch=branch,
                                head_sha="1" * 40)  # fmt: skip
    ad.closed_by_detachment(state, OTHER, 15, title="not htesd's", branch="x", head_sha="2" * 40,
                            user="someone-else")  # fmt: skip
    monkeypatch.setenv("GH_HOST", fake.url)
    monkeypatch.setenv("GITHUB_TOKEN", sc.TOKEN)
    return fake


def test_pages_through_every_repository_and_classifies_each(gh: FakeGitHub) -> None:
    found = scan_all(GitHub(token=sc.TOKEN), sc.OWNER, {}, set(), per_page=2)
    assert [(c.upstream, c.item.number, c.item.state) for c in found] == [
        ("NVIDIA/Megatron-LM", 6017, "closed-by-fork-detachment"),
        ("NVIDIA/Megatron-LM", 6117, "closed-by-fork-detachment"),
        ("NVIDIA/Megatron-LM", 6201, "closed-by-maintainer"),
        (OTHER, 12, "closed-by-fork-detachment"),
        (OTHER, 13, "closed-by-fork-detachment"),
        (OTHER, 14, "closed-by-fork-detachment"),
    ]
    pages = [r.query.get("page") for r in gh.requests if r.path == "/search/issues"]
    assert pages == ["1", "2", "3", "4"]  # 6 hits, 2 a page: the 4th page comes back empty
    assert found[-1].adopt == f"patchcarry adopt {OTHER}#14"
    assert found[2].adopt is None  # a maintainer's close is theirs to decide, not to adopt


def test_cli_json_marks_carried_ones_and_avoids_a_name_clash(
    gh: FakeGitHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    series = tmp_path / "series.toml"
    patch = tmp_path / "0001-x.patch"
    patch.write_text(
        "From 0 Mon Sep 17 00:00:00 2001\nFrom: a <a@b>\nSubject: [PATCH] x\n\n"
        "Signed-off-by: a <a@b>\n---\ndiff --git a/megatron/f.py b/megatron/f.py\n"
        "--- a/megatron/f.py\n+++ b/megatron/f.py\n@@ -1 +1 @@\n-a\n+b\n"
    )
    series.write_text(
        '[defaults]\nupstream = "NVIDIA/Megatron-LM"\nbase_branch = "dev"\n'
        f'base_commit = "{"c" * 40}"\nfork = "htesd/Megatron-LM-oss"\n\n'
        '[[entry]]\nname = "checkpoint-detached-grad-retention"\ntitle = "t"\n'
        f'head_branch = "{sc.CHECKPOINT_BRANCH}"\nfix = "0001-x.patch"\nsupersedes = [6117]\n'
    )
    assert cli.main(["scan", "--all", "--json", "--manifest", str(series)]) == 1
    rows = {
        (r["upstream"], r["pr"]): r
        for r in map(json.loads, capsys.readouterr().out.split("\n")[:-1])
    }
    assert rows[("NVIDIA/Megatron-LM", 6117)]["carried_by"] == (
        "manifest entry checkpoint-detached-grad-retention"
    )
    assert rows[("NVIDIA/Megatron-LM", 6117)]["adopt"] is None
    assert rows[("NVIDIA/Megatron-LM", 6017)]["adopt"] == ("scripts/adopt NVIDIA/Megatron-LM#6017")
    # #12's branch has the carried entry's name: the command names the entry itself
    assert shlex.split(rows[(OTHER, 12)]["adopt"])[-2:] == [
        "--name", "checkpoint-detached-grad-retention-12",
    ]  # fmt: skip
    assert gh.writes() == []


def test_cli_text_prints_the_commands_and_an_empty_manifest_is_fine(
    gh: FakeGitHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    series = tmp_path / "series.toml"
    series.write_text("[defaults]\n")
    assert cli.main(["scan", "--all", "--manifest", str(series)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(
        "htesd's closed, unmerged PRs on every repository: 6; "
        "closed by fork detachment and not carried: 5\n"
    )
    assert "      adopt: scripts/adopt NVIDIA/Megatron-LM#6117\n" in out  # as a checkout runs it
    assert "#6201 Maintainer-closed change  [closed-by-maintainer]" in out


def test_only_the_token_users_cross_link_counts_as_carried(gh: FakeGitHub) -> None:
    marker = "<!-- patchcarry:cross-link entry=x supersedes=13 -->"
    gh.state.add_comment(OTHER, 13, user=sc.MAINTAINER, body=f"quoted: {marker}")
    gh.state.add_comment(OTHER, 14, user=sc.OWNER, body=marker.replace("13", "14"))
    found = {c.item.number: c for c in scan_all(GitHub(token=sc.TOKEN), sc.OWNER, {}, set(),
                                               trusted=sc.OWNER)}  # fmt: skip
    assert found[13].carried_by is None and found[13].adopt  # someone else's marker: not ours
    assert found[14].carried_by == "cross-link comment" and found[14].adopt is None


def test_titles_are_printed_with_control_characters_escaped(
    gh: FakeGitHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ad.closed_by_detachment(gh.state, OTHER, 16, title="\x1b[2J\x1b]0;pwned\x07fix", branch="y",
                            head_sha="3" * 40)  # fmt: skip
    cli.main(["scan", "--all", "--manifest", str(tmp_path / "none.toml")])
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\x1b[2J\\x1b]0;pwned\\x07fix" in out


@pytest.mark.parametrize("scan_all_repositories", [True, False])
def test_the_apis_login_is_printed_with_control_characters_escaped(
    gh: FakeGitHub, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch, scan_all_repositories: bool,
) -> None:  # fmt: skip
    """A hostile API's `login` (whose PRs: the header line) reaches no terminal as escapes."""
    gh.state.add_token("ghp_escapes", "\x1b[2J\x1b]0;pwned\x07htesd")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_escapes")
    manifest = tmp_path / "series.toml"
    manifest.write_text("[defaults]\n")
    argv = ["--all", "--manifest", str(manifest)] if scan_all_repositories else []
    cli.main(["scan", *argv])
    out = capsys.readouterr().out
    assert "\x1b" not in out and out.startswith("\\x1b[2J\\x1b]0;pwned\\x07htesd's ")
