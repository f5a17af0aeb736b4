"""adopt end to end: `cli.main(["adopt", ...])` against real fixture repos (refs/pull/N/head as
GitHub keeps them) and the loopback fake GitHub; assertions on the files and the manifest."""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from patchcarry import cli, git, manifest
from patchcarry.errors import BadInputError
from patchcarry.patchfile import load as load_patch
from testing import adopt_scenarios as ad
from testing import github_scenarios as sc
from testing import patch_corpus
from testing.fake_github import FakeGitHub, GitHubState
from testing.shared_worlds import adopt_upstream
from testing.upstream_repos import FIX_0001, FIX_0003, UpstreamRepo

DEFAULTS = f"""# carried patches
[defaults]
upstream = "{sc.UPSTREAM}"
base_branch = "dev"
base_commit = "{{base}}"
fork = "{sc.NEW_FORK}"
include_tests = true
"""


@pytest.fixture(scope="session")
def template_upstream(tmp_path_factory: pytest.TempPathFactory) -> UpstreamRepo:
    """#6117, #6017 (dev merged into it, like 6a1b608) and #6200 (a three-commit series) on
    the fixture upstream, built once per run (read-only)."""
    return adopt_upstream(tmp_path_factory)


@dataclass
class World:
    tmp: Path
    gh: FakeGitHub
    upstream: UpstreamRepo
    manifest: Path

    def adopt(self, *args: str) -> int:
        return cli.main(
            ["adopt", "--manifest", str(self.manifest), "--upstream-url", str(self.upstream.bare),
             *args]
        )  # fmt: skip

    def head(self, number: int) -> str:
        return git.rev_parse(f"refs/pull/{number}/head", cwd=self.upstream.bare)

    def patches(self) -> list[Path]:
        return sorted(self.manifest.parent.glob("*.patch"))


@pytest.fixture
def world(tmp_path, template_upstream, monkeypatch, request) -> World:
    """An empty manifest (defaults only) and #6117/#6017 closed by detachment; #6200 too."""
    upstream = template_upstream.copy(tmp_path / "up")
    patches = tmp_path / "patches"
    patches.mkdir()
    series = patches / "series.toml"
    series.write_text(DEFAULTS.format(base=upstream.base_commit))
    gh = FakeGitHub(GitHubState()).start()
    request.addfinalizer(gh.stop)
    fork_git = tmp_path / "fork.git"
    git.git("clone", "-q", "--bare", str(upstream.bare), str(fork_git), cwd=tmp_path)
    sc.detached_fork_close(gh.state, upstream.bare, fork_git)
    ad.closed_by_detachment(
        gh.state, sc.UPSTREAM, 6200, title="Three commits", branch="fix/three-things",
        head_sha=git.rev_parse("refs/pull/6200/head", cwd=upstream.bare),
    )  # fmt: skip
    monkeypatch.setenv("GH_HOST", gh.url)
    monkeypatch.setenv("GITHUB_TOKEN", sc.TOKEN)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return World(tmp_path, gh, upstream, series)


def _patch_id(text: str, cwd: Path) -> str | None:
    return git.patch_id(text, cwd=cwd)


def _body(text: str) -> str:
    """A format-patch file without its `From <sha>` line, `index` lines (blob ids: the fixture's
    files are synthetic), hunk-header function names and its git-version signature."""
    body = text.split("\n", 1)[1].rsplit("\n-- \n", 1)[0]
    lines = [re.sub(r"^(@@ [^@]+ @@).*", r"\1", line) for line in body.splitlines()]
    return "\n".join(line for line in lines if not line.startswith("index "))


def test_one_commit_pr_becomes_the_same_patch_and_a_checked_entry(world: World, capsys) -> None:
    assert world.adopt(f"{sc.UPSTREAM}#6117") == 0
    (patch,) = world.patches()
    assert patch.name == "0001-Fix-cross-iteration-gradient-retention-in-Checkpoint.patch"
    # authorship, date, message and Signed-off-by as they were; nothing added in their name
    assert _body(patch.read_text()) == _body(FIX_0001.read_text())
    assert patch.read_text().count("Signed-off-by:") == FIX_0001.read_text().count("Signed-off-by:")
    (entry,) = manifest.load(world.manifest).entries
    assert entry.name == "checkpoint-detached-grad-retention"
    assert (entry.title, entry.head_branch) == (sc.CHECKPOINT_TITLE, sc.CHECKPOINT_BRANCH)
    assert (entry.base_commit, entry.base_branch) == (world.upstream.base_commit, "dev")
    assert entry.supersedes == (6117,) and entry.fork == sc.NEW_FORK and entry.pr is None
    assert world.manifest.read_text().startswith("# carried patches\n[defaults]\n")
    out = capsys.readouterr().out
    assert "closed-by-fork-detachment" in out
    assert f"#6117 {world.head(6117)[:12]}: identical (same git patch-id)" in out
    assert world.gh.writes() == []  # adopt writes nothing to GitHub


def test_head_that_merged_dev_into_itself_gives_the_fix_alone(world: World, capsys) -> None:
    assert world.adopt(f"{sc.UPSTREAM}#6017", "--name", "hc-mlp") == 0
    (patch,) = world.patches()
    repo = world.upstream.bare
    assert _patch_id(patch.read_text(), repo) == _patch_id(FIX_0003.read_text(), repo)
    fix_commit = git.rev_parse(f"{world.head(6017)}^1", cwd=repo)
    assert f"From {fix_commit} " in patch.read_text()
    (entry,) = manifest.load(world.manifest).entries
    assert entry.base_commit == world.upstream.base_commit  # the fix's own base, not dev's tip
    out = capsys.readouterr().out
    assert "dropped" in out and "Merge branch 'dev' into pr-6017" in out
    report = json.loads(_check_json(world, "hc-mlp", capsys))
    (identity,) = report["entries"][0]["identity"]
    assert identity["pr"] == 6017 and identity["result"] == "identical"


def _check_json(world: World, name: str, capsys) -> str:
    code = cli.main(
        ["check", "--json", "--manifest", str(world.manifest), "--upstream",
         str(world.upstream.bare), name]
    )  # fmt: skip
    assert code == 0
    return capsys.readouterr().out


def test_three_commits_become_three_patches_in_order(world: World, capsys) -> None:
    assert world.adopt(f"{sc.UPSTREAM}#6200") == 0
    names = [p.name[:4] for p in world.patches()]
    assert names == ["0001", "0002", "0003"]
    (entry,) = manifest.load(world.manifest).entries
    assert entry.name == "three-things" and entry.include_tests
    assert [p.name for p in entry.patches()] == [p.name for p in world.patches()]
    repo = world.upstream.bare
    originals = [FIX_0001, ad.TEST_0002, FIX_0003]
    assert [_patch_id(p.read_text(), repo) for p in world.patches()] == [
        _patch_id(p.read_text(), repo) for p in originals
    ]
    assert [_body(p.read_text()) for p in world.patches()] == [
        _body(p.read_text()) for p in originals
    ]
    assert "3 commit(s) of its own" in capsys.readouterr().out


def test_a_second_adopt_numbers_after_the_existing_patches(world: World) -> None:
    assert world.adopt(f"{sc.UPSTREAM}#6117") == 0
    assert world.adopt(f"{sc.UPSTREAM}#6017") == 0
    assert [p.name[:4] for p in world.patches()] == ["0001", "0002"]
    assert [e.supersedes for e in manifest.load(world.manifest).entries] == [(6117,), (6017,)]


def test_dry_run_shows_patches_and_entry_and_writes_nothing(world: World, capsys) -> None:
    before = world.manifest.read_text()
    assert world.adopt(f"{sc.UPSTREAM}#6117", "--dry-run") == 0
    assert world.manifest.read_text() == before and world.patches() == []
    out = capsys.readouterr().out
    assert "DRY RUN" in out and 'name = "checkpoint-detached-grad-retention"' in out
    assert "supersedes = [6117]" in out and "0001-Fix-cross-iteration-gradient" in out


def test_merged_pr_is_refused(world: World, capsys) -> None:
    sc.merged(world.gh.state, world.upstream.bare, number=6100)
    assert world.adopt(f"{sc.UPSTREAM}#6100") == 1
    assert "is merged" in capsys.readouterr().err
    assert world.patches() == []


def test_missing_pull_head_is_exit_4(world: World, capsys) -> None:
    ad.closed_by_detachment(
        world.gh.state, sc.UPSTREAM, 6300, title="Gone", branch="fix/gone", head_sha="0" * 40
    )
    before = world.manifest.read_text()
    assert world.adopt(f"{sc.UPSTREAM}#6300") == 4
    assert "no longer has refs/pull/6300/head" in capsys.readouterr().err
    assert world.manifest.read_text() == before and world.patches() == []


def test_name_clash_and_an_already_carried_pr_are_exit_5(world: World, capsys) -> None:
    assert world.adopt(f"{sc.UPSTREAM}#6117", "--name", "grad") == 0
    before = world.manifest.read_text()
    assert world.adopt(f"{sc.UPSTREAM}#6017", "--name", "grad") == 5
    assert "an entry named 'grad' already exists" in capsys.readouterr().err
    assert world.adopt(f"{sc.UPSTREAM}#6117", "--name", "grad2") == 5
    assert "already carries #6117" in capsys.readouterr().err
    assert world.adopt(f"{sc.UPSTREAM}#6017", "--name", "Bad Name") == 5
    assert world.manifest.read_text() == before and len(world.patches()) == 1


def test_a_branch_another_entry_publishes_from_is_refused_before_any_write(
    world: World, capsys
) -> None:
    (world.manifest.parent / FIX_0001.name).write_text(FIX_0001.read_text())
    world.manifest.write_text(
        world.manifest.read_text()
        + f'\n[[entry]]\nname = "mine"\ntitle = "Mine"\nhead_branch = "fix/three-things"\n'
        f'fix = "{FIX_0001.name}"\n'
    )
    before = world.manifest.read_text()
    assert world.adopt(f"{sc.UPSTREAM}#6200") == 5
    err = capsys.readouterr().err
    assert f"entry 'mine' already publishes from {sc.NEW_FORK}:fix/three-things" in err
    assert world.manifest.read_text() == before and [p.name for p in world.patches()] == [
        FIX_0001.name
    ]


def test_adopted_entry_is_what_resubmit_plans_a_new_pr_for(world: World, capsys) -> None:
    assert world.adopt(f"{sc.UPSTREAM}#6117") == 0
    capsys.readouterr()
    code = cli.main(
        ["resubmit", "--dry-run", "--manifest", str(world.manifest), "--upstream-url",
         str(world.upstream.bare), "--json"]
    )  # fmt: skip
    assert code == 0
    (plan,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert plan["entry"] == "checkpoint-detached-grad-retention" and plan["action"] == "planned"
    assert plan["superseded"][0]["state"] == "closed-by-fork-detachment"
    assert f"POST /repos/{sc.UPSTREAM}/pulls" in plan["writes"]
    assert world.gh.writes() == []


def test_entry_keys_are_the_issue_s_list(world: World) -> None:
    assert world.adopt(f"{sc.UPSTREAM}#6017") == 0
    (raw,) = tomllib.loads(world.manifest.read_text())["entry"]
    assert list(raw) == [
        "name", "title", "upstream", "base_branch", "base_commit", "head_branch", "fix",
        "paths", "supersedes",
    ]  # fmt: skip


def test_a_pr_s_commits_stay_one_fix_series_unless_they_touch_tests_alone(
    world: World, capsys
) -> None:
    # #6200: fix, its test, a second fix: a test in the middle stays in the series (order)
    assert world.adopt(f"{sc.UPSTREAM}#6200") == 0
    (entry,) = manifest.load(world.manifest).entries
    assert [p.name[:4] for p in entry.fixes] == ["0001", "0002", "0003"] and entry.tests == ()
    assert len(entry.patches(with_tests=False)) == 3  # include_tests = false drops nothing
    (raw,) = tomllib.loads(world.manifest.read_text())["entry"]
    assert len(raw["fix"]) == 3 and "tests" not in raw
    assert capsys.readouterr().out.count("[fix]") == 3


def test_embedded_manifest_is_refused_for_adopt(world: World, monkeypatch, capsys) -> None:
    monkeypatch.setattr(manifest, "EMBEDDED_DIR", world.manifest.parent)
    before = world.manifest.read_text()
    assert world.adopt(f"{sc.UPSTREAM}#6117") == 5
    assert "read-only" in capsys.readouterr().err
    assert world.manifest.read_text() == before and world.patches() == []
    assert world.gh.requests == []  # refused before anything was read


def test_derived_paths_hold_exactly_the_touched_directories() -> None:
    from patchcarry import patchrules
    from patchcarry.adopt import paths

    files = ["src/a/b.py", "src/a/c/d.py", "README.md", "docs/x/y.md", "tests/unit/test_b.py"]
    derived = paths.derive(files)
    assert derived == ["README.md", "docs/x/**", "src/a/**", "tests/unit/**"]
    assert patchrules.outside(files, derived) == []
    assert patchrules.outside(["src/other.py", "setup.py"], derived) == ["src/other.py", "setup.py"]
    assert [paths.is_test_file(f) for f in files] == [False, False, False, False, True]
    assert paths.is_test_file("pkg/widget_test.go") and paths.is_test_file("web/a.spec.ts")


# -- issue 17: patches as git reads them.
def _pr_by(world: World, number: int, name: str, message_extra: str = "") -> str:
    """PR `number`: FIX_0001's change committed by `name`, closed by detachment."""
    sha = patch_corpus.reauthored(
        world.upstream, FIX_0001, name=name, email="dev@example.invalid",
        message_extra=message_extra, branch=f"pr-{number}",
    )  # fmt: skip
    git.git("push", "-q", "-f", "origin", f"{sha}:refs/pull/{number}/head", cwd=world.upstream.work)
    ad.closed_by_detachment(
        world.gh.state, sc.UPSTREAM, number, title=f"Fix by \x1b]0;pwned\x07{name}",
        branch=f"fix/by-{number}", head_sha=sha,
    )  # fmt: skip
    return sha


@pytest.mark.parametrize("name", [patch_corpus.POLISH, patch_corpus.CHINESE])
def test_non_ascii_author_round_trips_through_adopt_check_and_resubmit(world: World, capsys, name):
    sha = _pr_by(world, 6401, name)
    assert world.adopt(f"{sc.UPSTREAM}#6401", "--name", "by-them") == 0
    (patch,) = world.patches()
    assert load_patch(patch).author == f"{name} <dev@example.invalid>"
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\x1b]0;pwned\\x07" in out  # the PR title, escaped
    assert cli.main(["check", "--manifest", str(world.manifest), "--upstream",
                     str(world.upstream.bare), "by-them"]) == 0  # fmt: skip
    assert cli.main(["resubmit", "--manifest", str(world.manifest), "--upstream-url",
                     str(world.upstream.bare), "by-them"]) == 0  # fmt: skip
    branch = manifest.load(world.manifest).entries[0].head_branch
    fork_git = world.tmp / "fork.git"
    fields = "%an <%ae>%n%cn <%ce>%n%B"
    _, got, _ = git.git("log", "-1", f"--format={fields}", f"refs/heads/{branch}", cwd=fork_git)
    _, want, _ = git.git("log", "-1", "--format=%an <%ae>%n%an <%ae>%n%B", sha,
                         cwd=world.upstream.bare)  # fmt: skip
    assert got == want
    _, raw, _ = git.git("cat-file", "commit", f"refs/heads/{branch}", cwd=fork_git)
    assert "=?" not in raw


def test_a_diff_section_in_a_commit_message_is_refused_with_zero_writes(world: World, capsys):
    _pr_by(world, 6402, "Mallory Example", message_extra=patch_corpus.SMUGGLED)
    before = world.manifest.read_text()
    assert world.adopt(f"{sc.UPSTREAM}#6402", "--name", "smuggled") == 5
    err = capsys.readouterr().err
    assert "(`Index: .github/workflows/pwn.yml`) is where git starts reading the diff" in err
    assert world.manifest.read_text() == before and world.patches() == []
    assert world.gh.writes() == []


def test_a_fork_that_is_not_owner_repo_is_refused_before_anything(world: World, capsys):
    """Each value a command-line mistake (exit 2 and the usage) before anything is read:
    one world for every value, as none of them may change it."""
    before = world.manifest.read_text()
    for fork in ("htesd/..", "htesd/.", "htesd/x\ny", "x-/y", "a/b/c", "a/b#1"):
        with pytest.raises(SystemExit) as usage:
            world.adopt(f"{sc.UPSTREAM}#6117", "--fork", fork)
        assert usage.value.code == 2, fork
        err = capsys.readouterr().err
        assert err.startswith("usage: patchcarry adopt"), (fork, err)
        assert "--fork: must be OWNER/REPO" in err, (fork, err)
        assert world.manifest.read_text() == before and world.patches() == [], fork


def test_a_pr_number_is_carried_only_on_its_own_upstream() -> None:
    """#6117 of another repository is not Megatron-LM's #6117 (names compared as GitHub does,
    case-insensitively)."""
    from patchcarry.adopt.run import _preflight_carried

    loaded = manifest.load(manifest.DEFAULT_MANIFEST)
    entries = list(loaded.entries)
    _preflight_carried("acme/widgets", 6117, entries, loaded.path)  # another repository's #6117
    with pytest.raises(BadInputError, match="already carries #6117"):
        _preflight_carried("nvidia/megatron-lm", 6117, entries, loaded.path)


@pytest.mark.parametrize(
    ("branch", "base", "key"),
    [("fix/a\x00b", sc.BASE_BRANCH, "head_branch"), ("fix/ok", "dev\x00", "base_branch")],
)
def test_a_nul_in_the_pr_s_branch_names_is_refused_as_in_the_manifest(
    world: World, capsys, branch, base, key
) -> None:
    """GitHub's answer names the PR's branches: a NUL in one (a hostile or broken API) gets
    the manifest's own check, exit 5 naming the key, before any git call or write."""
    ad.closed_by_detachment(
        world.gh.state, sc.UPSTREAM, 6301, title="Nul", branch=branch, base=base,
        head_sha=world.head(6117),
    )  # fmt: skip
    before = world.manifest.read_text()
    assert world.adopt(f"{sc.UPSTREAM}#6301") == 5
    err = capsys.readouterr().err.strip()
    assert f"{key} holds a NUL" in err and len(err.splitlines()) == 1 and "\x00" not in err
    assert world.manifest.read_text() == before and world.patches() == []


HOSTILE = (
    'cc @nvidia/maintainers and @someone, see <img src="http://127.0.0.2/pixel.png">\n'
    "![x](http://127.0.0.2/p.png) <details><summary>hi</summary>x</details>\n"
    "bell \x07 and \u202eevil\u202c here"
)
# what GitHub would render as a mention, an image, raw HTML, or a control character
_LIVE = re.compile(
    r"(?<![\w@/`])@[A-Za-z0-9]|<img|<details><summary>hi|!\[|[\x00-\x08\x0b-\x1f\x7f\u202e]"
)


def _adopt_and_open(world: World, number: int, name: str, email: str, capsys) -> tuple[str, str]:
    """PR `number` by `name <email>` whose message holds HOSTILE, adopted and opened again:
    (the new PR's title, its body); the plan printed is left in capsys."""
    from testing import patch_corpus as pc

    sha = pc.reauthored(world.upstream, FIX_0001, name=name, email=email,
                        message_extra=HOSTILE, branch=f"pr-{number}")  # fmt: skip
    git.git("push", "-q", "-f", "origin", f"{sha}:refs/pull/{number}/head", cwd=world.upstream.work)
    ad.closed_by_detachment(world.gh.state, sc.UPSTREAM, number,
                            title="Fix @nvidia/maintainers \x1b]0;pwned\x07 now",
                            branch=f"fix/by-{number}", head_sha=sha)  # fmt: skip
    assert world.adopt(f"{sc.UPSTREAM}#{number}", "--name", "theirs") == 0
    capsys.readouterr()
    assert cli.main(["resubmit", "--manifest", str(world.manifest), "--upstream-url",
                     str(world.upstream.bare), "theirs"]) == 0  # fmt: skip
    (pull,) = [p for p in world.gh.state.pulls.values() if p.state == "open"]
    return pull.title, pull.body


def test_someone_elses_commit_message_is_posted_inert_and_the_plan_says_so(world: World, capsys):
    """The adopted PR's author is not the token's user: its mentions, image, raw HTML and
    control characters are made inert in the posted title and body (the words all there)."""
    title, text = _adopt_and_open(world, 6501, "Mallory Example", "mallory@example.invalid",
                                  capsys)  # fmt: skip
    out = capsys.readouterr().out
    assert not _LIVE.search(title) and not _LIVE.search(text), (title, text)
    assert "nvidia/maintainers" in text and "127.0.0.2/pixel.png" in text and "evil" in text
    assert "made inert before posting" in out and "2 mentions" in out, out


def test_the_token_users_own_commit_message_is_posted_byte_for_byte(world: World, capsys):
    _, text = _adopt_and_open(world, 6502, "Htesd", f"{sc.OWNER}@users.noreply.github.com",
                              capsys)  # fmt: skip
    assert HOSTILE.split("\n")[0] in text and "<details>" in text
    assert "made inert" not in capsys.readouterr().out
