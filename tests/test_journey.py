"""The ordinary journey (issue 44): a contributor's PR on their own upstream (acme/widgets, not
Megatron-LM) carried with the README's commands from `scan --all` to `retire`, each write run
twice, for every PR shape and starting state of their fork, upstream landing the carried PR
each way (testing/journey.py). Every step runs in-process against the loopback GitHub with
the cache the previous step left; every step ends with a documented exit code and no
traceback, and a second run writes nothing."""

from __future__ import annotations

import dataclasses
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from patchcarry import cli, git, manifest, upstream
from patchcarry.check import judge
from patchcarry.errors import UpstreamError
from testing import github_scenarios as sc
from testing import journey as jr
from testing import widgets as wd
from testing.fake_github import FakeGitHub, GitHubState
from testing.plain_install import checkout_wheel, plain_venv
from testing.shared_worlds import journey_template


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return journey_template(tmp_path_factory)


@dataclasses.dataclass
class Step:
    argv: list[str]
    code: int
    out: str
    err: str
    writes: int  # API writes this step made


@dataclasses.dataclass
class Journey:
    gh: FakeGitHub
    w: wd.Widgets
    shape: jr.Shape
    fork_state: str
    series: Path
    capsys: pytest.CaptureFixture[str]
    steps: list[Step] = dataclasses.field(default_factory=list)

    def run(self, *argv: str, code: int) -> Step:
        """`patchcarry ARGV` in-process; it must exit `code` with no traceback."""
        before = len(self.gh.writes())
        try:
            got = int(cli.main(list(argv)))
        except SystemExit as exc:  # argparse's usage error
            got = int(exc.code or 0)
        out, err = self.capsys.readouterr()
        step = Step(list(argv), got, out, err, len(self.gh.writes()) - before)
        self.steps.append(step)
        said = f"patchcarry {shlex.join(argv)} exited {got}:\n{out}\n{err}"
        assert "Traceback" not in out + err, said
        assert got == code, said
        return step

    def fork(self) -> Path | None:
        """The user's fork's git directory (None before it exists)."""
        fork = self.gh.state.repos.get(wd.FORK)
        return Path(fork.clone_url) if fork is not None else None

    def fork_refs(self) -> dict[str, str]:
        fork = self.fork()
        return git.refs_under("refs/", cwd=fork) if fork is not None else {}

    def again(self, *argv: str, code: int) -> Step:
        """A second run of a write: the same exit, and nothing written anywhere."""
        refs, text = self.fork_refs(), self.series.read_text()
        step = self.run(*argv, code=code)
        assert step.writes == 0, step.out + step.err
        assert self.fork_refs() == refs and self.series.read_text() == text
        return step


@pytest.fixture
def journey(tmp_path, template, monkeypatch, capsys, request) -> Journey:
    shape_name, fork_state = request.param
    shape = jr.SHAPES[shape_name]
    w = jr.copy(template, tmp_path / "w")
    gh = FakeGitHub(GitHubState(fork_storage=tmp_path)).start()
    request.addfinalizer(gh.stop)
    jr.load(gh.state, w, shape, fork_state)
    project = tmp_path / "my-prs"
    project.mkdir()
    monkeypatch.chdir(project)
    monkeypatch.setenv("GH_HOST", gh.url)
    monkeypatch.setenv("GITHUB_TOKEN", sc.TOKEN)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return Journey(gh, w, shape, fork_state, project / "patches" / "series.toml", capsys)


# (shape, the fork's starting state, how upstream lands it): each shape, each starting state
# and each landing at least once, in as few journeys as that takes (each is ten commands);
# the stranger's journey below adds one-commit, new-fork, squash through the installed package.
CASES = [
    ("several-commits", "new-fork", "rebase"),
    ("base-merged-inside", "absent", "merge"),
    ("head-is-a-merge", "same", "rebase"),
    ("one-commit", "other", "squash"),
    ("author-not-committer", "same", "merge"),
]


def test_the_cases_cover_every_shape_starting_state_and_landing() -> None:
    assert {s for s, _, _ in CASES} == set(jr.SHAPES)
    assert {f for _, f, _ in CASES} == set(jr.FORK_STATES)
    assert {how for _, _, how in CASES} == set(jr.LANDINGS)


@pytest.mark.parametrize(
    ("journey", "landing"),
    [((s, f), how) for s, f, how in CASES],
    indirect=["journey"],
    ids=[f"{s}-{f}-{how}" for s, f, how in CASES],
)
def test_the_ordinary_journey(journey: Journey, landing: str) -> None:
    j, shape = journey, journey.shape
    found = j.run("scan", "--all", code=1)  # one PR of theirs is not carried yet
    (adopt,) = [x.split("adopt: ", 1)[1] for x in found.out.splitlines() if "adopt: " in x]
    command, *argv = shlex.split(adopt)  # `scripts/adopt ...` from a checkout
    assert command.rsplit("/", 1)[-1] == "adopt", adopt
    argv = ["adopt", *argv]
    j.run(*argv, "--manifest", "patches/series.toml", code=0)
    j.run(*argv, "--manifest", "patches/series.toml", code=5)  # carried already: nothing
    (entry,) = manifest.load(j.series).entries
    plan = j.run("resubmit", "--dry-run", code=0)
    assert plan.writes == 0 and "PLANNED" in plan.out
    wrote = j.run("resubmit", code=0)
    assert wrote.writes > 0
    (new,) = [p for (r, n), p in j.gh.state.pulls.items() if r == wd.REPO and n != shape.number]
    fork = j.fork()
    assert fork is not None and new.head_label == f"{sc.OWNER}:{shape.branch}"
    tip = git.rev_parse(f"refs/heads/{shape.branch}", cwd=fork)
    if j.fork_state == "other":  # what the branch held stays: the fix goes on top
        assert git.is_ancestor(git.rev_parse("refs/other", cwd=j.w.work), tip, cwd=fork)
    j.again("resubmit", code=0)
    checked = j.run("check", code=0)  # what is carried is the PR's own change, every shape
    assert f"#{shape.number} " in checked.out and "identical (same git patch-id)" in checked.out
    jr.land(j.w, j.gh.state, fork, shape.branch, new.number, shape.title, landing)
    landed = j.run("check", code=0)
    assert f"result: landed upstream, nothing to carry: {entry.name}" in landed.out, landed.out
    j.run("retire", entry.name, code=0)
    j.again("retire", entry.name, code=5)


# -- the cache: what git reads about history depends on which commits are here, not on which
# fetch ran last (a `--depth` fetch marks its cut shallow even where the parents are here)


def _cached_pull(template: Path, tmp_path: Path) -> tuple[wd.Widgets, Path, str]:
    """check's cache after one fetch of #11 (a one-commit PR): the cache and #11's head."""
    w = jr.copy(template, tmp_path / "w")
    shape = jr.SHAPES["one-commit"]
    fetched = upstream.fetch(str(w.bare), base_commits=[], branches=["main"],
                             pulls=[shape.number], work_dir=tmp_path / "cache")  # fmt: skip
    head = fetched.pull_heads[shape.number]
    assert git.commit_parents(head, cwd=fetched.repo)  # depth 2: its parent came with it
    return w, fetched.repo, head


def test_a_shallow_fetch_of_a_commit_here_keeps_its_parents(template, tmp_path) -> None:
    w, cache, head = _cached_pull(template, tmp_path)
    (parent,) = git.commit_parents(head, cwd=cache)
    # what resubmit does with the fork's head when it is the PR's head: a depth-1 fetch
    git.fetch_blobless("origin", [f"+{head}:refs/patchcarry/live/{head}"], cwd=cache)
    assert git.commit_parents(head, cwd=cache) == [parent]
    assert git.is_ancestor(parent, head, cwd=cache)
    assert head not in git.shallow_commits(cwd=cache)
    assert parent in git.shallow_commits(cwd=cache)  # its own parents were never fetched


def test_a_cache_an_earlier_fetch_cut_reads_whole_again(template, tmp_path) -> None:
    w, cache, head = _cached_pull(template, tmp_path)
    # an earlier version's depth-1 fetch (git alone) cut #11's head off its parent
    git.git("fetch", "-q", "--depth=1", "--filter=blob:none", "origin",
            f"+{head}:refs/patchcarry/live/{head}", cwd=cache)  # fmt: skip
    assert git.commit_parents(head, cwd=cache) == []
    upstream.fetch(str(w.bare), base_commits=[], branches=["main"], pulls=[11],
                   work_dir=tmp_path / "cache")  # fmt: skip
    assert len(git.commit_parents(head, cwd=cache)) == 1


def test_a_stranger_s_journey_from_an_installed_package_in_an_empty_folder(
    template: Path, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The journey once through `pip install .` (testing/plain_install.py) in an empty
    folder: their one-commit PR, no fork yet, `patchcarry` run as a program each step (scan,
    adopt, resubmit, check once it landed, retire: each command's modules from the wheel)."""
    py, site = plain_venv(checkout_wheel(tmp_path_factory), tmp_path / "venv")
    shape = jr.SHAPES["one-commit"]
    w = jr.copy(template, tmp_path / "w")
    gh = FakeGitHub(GitHubState(fork_storage=tmp_path)).start()
    try:
        jr.load(gh.state, w, shape, "new-fork")
        folder = tmp_path / "my-prs"
        folder.mkdir()
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GITHUB_TOKEN")}
        env.update(GH_HOST=gh.url, GH_TOKEN=sc.TOKEN, HOME=str(tmp_path / "home"),
                   XDG_CACHE_HOME=str(tmp_path / "cache"),
                   XDG_CONFIG_HOME=str(tmp_path / "config"))  # fmt: skip

        def patchcarry(*argv: str, code: int, wrote: bool = False) -> str:
            """`patchcarry ARGV` as a program: exit `code`, no traceback, API writes or none."""
            writes = len(gh.writes())
            done = subprocess.run([py, site / "bin" / "patchcarry", *argv], cwd=folder, env=env,
                                  capture_output=True, text=True, timeout=300)  # fmt: skip
            said = f"{shlex.join(argv)} exited {done.returncode}:\n{done.stdout}{done.stderr}"
            assert "Traceback" not in done.stdout + done.stderr, said
            assert done.returncode == code, said
            assert (len(gh.writes()) > writes) == wrote, said
            return done.stdout

        found = patchcarry("scan", "--all", code=1)
        assert f"adopt: patchcarry adopt {wd.REPO}#{shape.number}" in found
        patchcarry("adopt", f"{wd.REPO}#{shape.number}", "--manifest", "patches/series.toml",
                   code=0)  # fmt: skip
        # the dry run, the no-op rerun and check before the landing run the same modules as
        # the steps kept here; what they do is test_the_ordinary_journey's (one-commit too),
        # each a process of its own in test_layout's plain install (resubmit --dry-run, check)
        patchcarry("resubmit", code=0, wrote=True)
        (new,) = [p for (r, n), p in gh.state.pulls.items() if r == wd.REPO and n != shape.number]
        fork = Path(gh.state.repos[wd.FORK].clone_url)
        jr.land(w, gh.state, fork, shape.branch, new.number, shape.title, "squash")
        assert "result: landed upstream" in patchcarry("check", code=0)
        patchcarry("retire", "grid", code=0)
        assert "landed = {" in (folder / "patches" / "series.toml").read_text()
    finally:
        gh.stop()


def test_a_head_without_parents_is_a_root_or_a_clean_refusal(template, tmp_path) -> None:
    w = jr.copy(template, tmp_path / "w")
    root = git.rev_list("main", cwd=w.bare)[-1]  # a root commit: its change is its whole tree
    empty = git.git("hash-object", "-t", "tree", "--stdin", cwd=w.bare, stdin="")[1].strip()
    files = git.changed_paths(empty, root, cwd=w.bare)
    ours = git.diff_files(empty, root, files, cwd=w.bare)
    assert judge.identity(w.bare, ours, 1, root).result == "identical"
    # a head fetched without its parents (git alone, depth 1): its change cannot be told
    cache = tmp_path / "cut.git"
    cache.mkdir()
    git.init_bare(cache)
    head = jr.pr_head(w, jr.SHAPES["one-commit"])
    git.git("fetch", "-q", "--depth=1", w.bare.as_uri(), head, cwd=cache)
    with pytest.raises(UpstreamError, match="came without its parents"):
        judge.identity(cache, ours, 11, head)
