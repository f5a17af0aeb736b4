"""adopt -> check -> resubmit -> refresh on an upstream that is not Megatron-LM (acme/widgets,
testing/widgets.py): nothing Megatron-specific is needed, and the manifest is found from the
current directory."""

from __future__ import annotations

import shlex
import tomllib
from pathlib import Path

import pytest

from patchcarry import cli, git, manifest, upstream
from testing import adopt_scenarios as ad
from testing import github_scenarios as sc
from testing import widgets as wd
from testing.fake_github import FakeGitHub, GitHubState
from testing.once import copy_tree, once_dir
from testing.shared_worlds import widgets_template


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return widgets_template(tmp_path_factory)


@pytest.fixture(scope="session")
def template_pull(template: Path) -> tuple[str, list[str]]:
    """#7's head and its own commits (oldest first), read once from the shared template."""
    head = git.rev_parse(f"refs/pull/{wd.NUMBER}/head", cwd=template / "widgets.git")
    commits = git.git("rev-list", "--reverse", "--no-merges", f"main..{head}",
                      cwd=template / "widgets.git")[1].split()  # fmt: skip
    return head, commits


@pytest.fixture
def widgets(
    tmp_path, template, template_pull, monkeypatch, request
) -> tuple[FakeGitHub, wd.Widgets, Path]:
    """A copy of the widgets repos, the fake GitHub holding them, and a project directory
    (cwd) whose patches/series.toml holds no entry yet."""
    root = copy_tree(template, tmp_path / "w")
    git.git("remote", "set-url", "origin", str(root / "widgets.git"), cwd=root / "widgets-work")
    head, commits = template_pull[0], list(template_pull[1])
    w = wd.Widgets(root / "widgets.git", root / "widgets-fork.git", root / "widgets-work", head,
                   commits)  # fmt: skip
    gh = FakeGitHub(GitHubState(fork_storage=tmp_path)).start()
    request.addfinalizer(gh.stop)
    wd.load(gh.state, w)
    project = tmp_path / "project"
    (project / "patches").mkdir(parents=True)
    (project / "patches" / "series.toml").write_text("# what this project carries\n")
    monkeypatch.chdir(project)
    monkeypatch.setenv("GH_HOST", gh.url)
    monkeypatch.setenv("GITHUB_TOKEN", sc.TOKEN)
    return gh, w, project / "patches" / "series.toml"


@pytest.fixture
def adopted(widgets, tmp_path_factory, capsys) -> tuple[FakeGitHub, wd.Widgets, Path]:
    """`widgets` after `adopt acme/widgets#7` (entry `last-page`): the manifest and patches
    the first test of the run to ask made with that adopt, copied into each later one (the
    same bytes each time; what adopt writes and prints is
    test_scan_adopt_check_resubmit_refresh_on_acme_widgets's)."""
    import shutil

    series = widgets[2]

    def adopt(dest: Path) -> None:
        assert cli.main(["adopt", f"{wd.REPO}#{wd.NUMBER}"]) == 0
        capsys.readouterr()
        shutil.copytree(series.parent, dest, dirs_exist_ok=True)

    shutil.copytree(once_dir(tmp_path_factory, "widgets-adopted", adopt), series.parent,
                    dirs_exist_ok=True)  # fmt: skip
    return widgets


def _patch_id(text: str, cwd: Path) -> str | None:
    return git.patch_id(text, cwd=cwd)


def test_scan_adopt_check_resubmit_refresh_on_acme_widgets(widgets, capsys) -> None:
    gh, w, series = widgets
    assert cli.main(["scan", "--all"]) == 1
    out = capsys.readouterr().out
    (command,) = [line.split("adopt: ", 1)[1] for line in out.splitlines() if "adopt: " in line]
    assert command == f"scripts/adopt {wd.REPO}#{wd.NUMBER}"  # as a checkout runs it

    assert cli.main(["adopt", *shlex.split(command)[1:]]) == 0  # the printed command
    out = capsys.readouterr().out
    assert "[tests (it touches tests only)]" in out
    assert (
        "paths (from the directories its commits touch): docs/**, src/widgets/**, tests/**" in out
    )
    (entry,) = manifest.load(series).entries
    assert (entry.upstream, entry.base_branch, entry.fork) == (wd.REPO, "main", wd.FORK)
    assert [p.name[:4] for p in entry.fixes] == ["0001", "0002"]
    assert [p.name[:4] for p in entry.tests] == ["0003"] and entry.include_tests
    raw = series.read_text()
    assert 'paths = ["docs/**", "src/widgets/**", "tests/**"]' in raw
    # the three patches are the PR's own three commits (the merge of main dropped)
    shown = [git.git("show", "--format=", c, cwd=w.bare)[1] for c in w.commits]
    assert [_patch_id(p.text, w.bare) for p in entry.patches()] == [
        _patch_id(s, w.bare) for s in shown
    ]
    assert [p.author_name for p in entry.patches()] == [wd.AUTHOR[0]] * 3

    assert cli.main(["check", "--upstream", str(w.bare)]) == 0
    assert "identical (same git patch-id)" in capsys.readouterr().out

    assert cli.main(["resubmit"]) == 0
    capsys.readouterr()
    (new,) = [p for (repo, n), p in gh.state.pulls.items() if repo == wd.REPO and n != wd.NUMBER]
    assert new.draft and new.base_ref == "main" and new.head_label == f"{sc.OWNER}:{wd.BRANCH}"
    assert f"pr = {new.number}" in series.read_text()
    on_old = [c for c in gh.state.comments if (c.repo, c.issue) == (wd.REPO, wd.NUMBER)]
    links = [c for c in on_old if f"#{new.number}" in c.body]
    assert links  # the closed PR points to its re-submission
    branch = git.rev_parse(f"refs/heads/{wd.BRANCH}", cwd=w.fork)
    log = git.git("log", "--format=%an|%s", f"main..{branch}", cwd=w.fork)[1].splitlines()
    assert [line.split("|")[0] for line in log] == [wd.AUTHOR[0]] * 3

    writes, text = len(gh.writes()), series.read_text()
    assert cli.main(["resubmit"]) == 0
    assert len(gh.writes()) == writes and series.read_text() == text  # nothing to do

    merge = w.maintainer_merges_main(wd.BRANCH)
    assert cli.main(["resubmit"]) == 0
    tip = git.rev_parse(f"refs/heads/{wd.BRANCH}", cwd=w.fork)
    assert git.git("merge-base", "--is-ancestor", merge, tip, cwd=w.fork, check=False)[0] == 0
    # acme/widgets has no copy-pr-bot: none of its words (its CI gate, `/ok to test`)
    out = capsys.readouterr().out
    assert "CI gate" not in out and "/ok to test" not in out
    assert not any("/ok to test" in c.body for c in gh.state.comments)


def _closed(gh: FakeGitHub, w: wd.Widgets, number: int, files: dict[str, str]) -> None:
    head = w.add_pull(number, f"Change {number}", files)
    ad.closed_by_detachment(gh.state, wd.REPO, number, title=f"Change {number}",
                            branch=f"fix/change-{number}", head_sha=head, base="main")  # fmt: skip


def test_paths_come_from_the_pr_and_paths_overrides_them(widgets, capsys) -> None:
    gh, w, series = widgets
    _closed(gh, w, 8, {"src/widgets/deep/grid.py": "GRID = 1\n", "setup.cfg": "[x]\n"})
    assert cli.main(["adopt", f"{wd.REPO}#8", "--dry-run"]) == 0
    assert 'paths = ["setup.cfg", "src/widgets/deep/**"]' in capsys.readouterr().out
    assert cli.main(["adopt", f"{wd.REPO}#8", "--paths", "src/**"]) == 5
    err = capsys.readouterr().err
    assert "setup.cfg, outside --paths (src/**)" in err
    assert cli.main(["adopt", f"{wd.REPO}#8", "--paths", "src/**", "*.cfg"]) == 0
    (entry,) = tomllib.loads(series.read_text())["entry"]
    assert entry["paths"] == ["src/**", "*.cfg"]


@pytest.mark.parametrize("dry_run", [True, False])
def test_a_workflow_file_is_refused_whatever_paths_say_dry_run_too(
    widgets, capsys, dry_run: bool
) -> None:
    gh, w, series = widgets
    _closed(gh, w, 9, {"src/widgets/x.py": "X = 1\n", ".github/workflows/ci.yml": "on: push\n"})
    before = series.read_text()
    extra = ["--dry-run"] if dry_run else []
    assert cli.main(["adopt", f"{wd.REPO}#9", *extra]) == 5  # its derived paths hold it, too
    err = capsys.readouterr().err
    assert "touches .github/workflows/ci.yml: a GitHub Actions workflow, never carried" in err
    assert "add it to" not in err and ".tmp" not in err
    assert err.startswith(f"error: {wd.REPO}#9: 0001-")  # the PR's commit, not a temp file
    assert series.read_text() == before and list(series.parent.glob("*.patch")) == []


def test_readopting_a_carried_pr_names_the_entry_that_carries_it(adopted, capsys) -> None:
    gh, w, series = adopted
    for extra in ([], ["--name", "other"]):
        assert cli.main(["adopt", f"{wd.REPO}#{wd.NUMBER}", *extra]) == 5
        err = capsys.readouterr().err
        assert f"{series}:3: entry 'last-page' already carries #{wd.NUMBER}" in err
        assert "resubmit last-page" in err and "--name" not in err


def test_check_without_upstream_fetches_the_entries_own_repository(monkeypatch) -> None:
    monkeypatch.delenv("GH_HOST")
    entry = type("E", (), {"upstream": wd.REPO})()
    assert upstream.url_for_entries([entry]) == "https://github.com/acme/widgets.git"  # type: ignore[list-item]


def test_the_embedded_example_is_never_acted_on_as_the_users(adopted, monkeypatch, capsys):
    """Found when the user has no manifest of their own: resubmit says it is the example and
    how to make theirs, plans it without their token (no authenticated request, no token
    owner's refusal) and writes nothing, even without --dry-run."""
    gh, w, series = adopted
    monkeypatch.setattr(manifest, "EMBEDDED_DIR", series.parent)
    monkeypatch.setenv("GITHUB_TOKEN", "fake-token-alice")  # someone else's than the fork's
    gh.state.add_token("fake-token-alice", "alice")
    before = series.read_text()
    capsys.readouterr()
    requests = len(gh.requests)
    for argv in (["resubmit"], ["resubmit", "--dry-run"]):
        assert cli.main(argv) == 0
        out, err = capsys.readouterr()
        assert "is the example manifest inside the installed package" in err
        assert "adopt OWNER/REPO#N` in your project's folder starts it there" in err
        assert out.startswith("DRY RUN") and "last-page: PLANNED" in out
        assert "--force" not in out + err and "use that owner's token" not in err
    assert gh.writes() == [] and series.read_text() == before
    assert not any(r.authorized for r in gh.requests[requests:])


def test_adopt_in_an_empty_folder_starts_the_users_manifest_there(
    widgets, tmp_path, monkeypatch, capsys
) -> None:
    """Run from a checkout (whose patches/series.toml is the example) in a folder with no
    manifest anywhere above: adopt starts patches/series.toml here, says so in one line,
    and leaves the checkout's example byte for byte; `adopt --help` says so too."""
    example = manifest.DEFAULT_MANIFEST
    before = example.read_bytes()
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert cli.main(["scan", "--all"]) == 1
    out, err = capsys.readouterr()
    (command,) = [line.split("adopt: ", 1)[1] for line in out.splitlines() if "adopt: " in line]
    assert "--manifest" not in command and "starts patches/series.toml in this folder" in err
    assert cli.main(["adopt", f"{wd.REPO}#{wd.NUMBER}"]) == 0
    out, err = capsys.readouterr()
    started = empty / "patches" / "series.toml"
    (note,) = [line for line in err.splitlines() if "no manifest of yours" in line]
    assert note.endswith(f"adopt starts {started}")
    assert [e.name for e in manifest.load(started).entries] == ["last-page"]
    assert example.read_bytes() == before
    assert (
        "next: scripts/resubmit.sh --dry-run last-page\n" in out
    )  # found from here: no --manifest
    with pytest.raises(SystemExit):
        cli.main(["adopt", "--help"])
    assert "starts patches/series.toml in this folder" in " ".join(capsys.readouterr().out.split())


def test_offline_on_another_upstream_says_the_check_was_not_made_and_plans(adopted, capsys) -> None:
    """The offline check reads megatron-core's source, NVIDIA/Megatron-LM's: for an entry on
    acme/widgets it says it was not made (and which check would make it), and plans; never
    the circular `check --offline NAME`, and no megatron-core source is read or fetched."""
    gh, w, series = adopted
    requests = len(gh.requests)
    assert cli.main(["resubmit", "--dry-run", "--offline"]) == 0
    out = capsys.readouterr().out
    assert "last-page: PLANNED" in out and "REFUSED" not in out
    assert f"check: not checked: no offline source for {wd.REPO}" in out
    assert "--offline last-page" not in out and "megatron-core 0" not in out
    assert cli.main(["check", "--offline"]) == 0
    out = capsys.readouterr().out
    assert f"no offline source for {wd.REPO}" in out and "check last-page` checks it" in out
    assert len(gh.requests) == requests  # offline: nothing read


def test_adopt_takes_the_prs_url_on_the_configured_host(widgets, capsys) -> None:
    """As gh does: https://HOST/OWNER/REPO/pull/N (a tab after the number is ignored), HOST
    being GH_HOST's GitHub; a PR on another host is a usage mistake naming both."""
    gh, w, series = widgets
    other = gh.url.replace("127.0.0.1", "127.0.0.2")
    with pytest.raises(SystemExit) as done:
        cli.main(["adopt", f"{other}/{wd.REPO}/pull/{wd.NUMBER}"])
    err = capsys.readouterr().err
    assert done.value.code == 2 and "not on the configured GitHub" in err and gh.url in err
    assert gh.requests == []
    assert cli.main(["adopt", f"{gh.url}/{wd.REPO}/pull/{wd.NUMBER}/files"]) == 0
    assert [e.supersedes for e in manifest.load(series).entries] == [(wd.NUMBER,)]


@pytest.mark.parametrize(
    ("host", "url", "target"),
    [
        (None, "https://github.com/acme/widgets/pull/7", ("acme/widgets", 7)),
        (None, "https://GitHub.com/acme/widgets/pull/7#issuecomment-1", ("acme/widgets", 7)),
        ("ghe.example.com", "https://ghe.example.com/acme/widgets/pull/12", ("acme/widgets", 12)),
        ("acme.ghe.com", "https://acme.ghe.com/o/r/pull/3", ("o/r", 3)),
    ],
)
def test_a_pr_url_names_its_repository_and_number(monkeypatch, host, url, target) -> None:
    from patchcarry.adopt import pull

    if host is None:
        monkeypatch.delenv("GH_HOST", raising=False)
    else:
        monkeypatch.setenv("GH_HOST", host)
    assert pull.parse_target(url) == pull.Target(*target)


@pytest.mark.parametrize(
    "url",
    ["https://github.com/acme/widgets/issues/7", "https://github.com/acme/widgets/pull/x",
     "ftp://github.com/acme/widgets/pull/7", "https://gitlab.com/acme/widgets/pull/7"],
)  # fmt: skip
def test_what_is_not_a_pr_url_here_is_a_usage_mistake(monkeypatch, capsys, url) -> None:
    monkeypatch.delenv("GH_HOST", raising=False)
    with pytest.raises(SystemExit) as done:
        cli.main(["adopt", url])
    assert done.value.code == 2 and "usage: patchcarry adopt" in capsys.readouterr().err


def test_tree_fetches_the_entrys_own_upstream_and_names_no_other(adopted, tmp_path, capsys):
    gh, w, series = adopted
    with pytest.raises(SystemExit):
        cli.main(["tree", "--help"])
    assert "Megatron-LM" not in capsys.readouterr().out
    assert cli.main(["tree", str(tmp_path / "tree"), "--path", "src"]) == 0
    assert (tmp_path / "tree" / "src" / "widgets" / "pagination.py").is_file()


def test_a_network_failure_on_another_upstream_does_not_advise_offline(
    adopted, monkeypatch, capsys
) -> None:
    """--offline checks nothing for acme/widgets (megatron-core's source is Megatron-LM's):
    a failed read says what failed, not to run what would check nothing."""
    gh, w, series = adopted
    monkeypatch.setenv("GH_HOST", "http://127.0.0.1:9")  # nothing listens there
    for argv in (["resubmit", "--dry-run"], ["check"]):
        assert cli.main(argv) == 4, argv
        err = capsys.readouterr().err
        assert "error: " in err and "--offline" not in err, (argv, err)
