"""resubmit and scan end to end: `cli.main([...])` in-process against the loopback fake GitHub
and real local git repos (upstream, fork). Assertions are on server state and the repos."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from patchcarry import cli, git, trace
from patchcarry.install import CHECKOUT
from patchcarry.measure import evidence, impact
from patchcarry.resubmit.section import section_end
from testing import github_scenarios as sc
from testing import patch_corpus
from testing import pr_bodies as pb
from testing.fake_github import FakeGitHub, GitHubState
from testing.shared_worlds import resubmit_upstream
from testing.upstream_repos import (
    FIX_0001,
    PINNED_ENV,
    PR_TEMPLATE_PATH,
    UpstreamRepo,
    write_manifest,
)

ENTRY = "checkpoint-grad"
PULLS = f"/repos/{sc.UPSTREAM}/pulls"
SENTINEL = "sentinel-token-value-0123456789-never-printed"


@pytest.fixture(scope="session")
def template_upstream(tmp_path_factory: pytest.TempPathFactory) -> UpstreamRepo:
    """#6117's and #6017's heads on the fixture upstream, built once per run (read-only)."""
    return resubmit_upstream(tmp_path_factory)


@dataclass
class World:
    tmp: Path
    gh: FakeGitHub
    upstream: UpstreamRepo
    fork_git: Path
    manifest: Path

    @property
    def state(self) -> GitHubState:
        return self.gh.state

    def run(self, *args: str) -> int:
        return cli.main(["resubmit", "--manifest", str(self.manifest), *args])

    def scan(self, *args: str) -> int:
        return cli.main(["scan", "--manifest", str(self.manifest), *args])

    def writes(self) -> list[tuple[str, str]]:
        return [(r.method, r.path) for r in self.gh.writes()]

    def pulls_from(self, branch: str) -> list[int]:
        return sorted(
            p.number
            for p in self.state.pulls.values()
            if p.head_label == f"{sc.OWNER}:{branch}" and p.state == "open"
        )

    def fork_branch(self, git_dir: Path | None = None) -> str | None:
        code, out, _ = git.git(
            "rev-parse",
            "-q",
            "--verify",
            f"refs/heads/{sc.CHECKPOINT_BRANCH}",
            cwd=git_dir or self.fork_git,
            check=False,
        )
        return out.strip() if code == 0 else None


@pytest.fixture
def world(
    tmp_path: Path,
    template_upstream: UpstreamRepo,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
):
    """#6117's situation: closed by detachment, an attached fork htesd/Megatron-LM-oss, a
    manifest with no recorded PR; the token maps to htesd."""

    def make(
        new_fork: str = "attached", token: str | None = sc.TOKEN, empty_fork: bool = False
    ) -> World:
        upstream = template_upstream.copy(tmp_path / "up")
        fork_git = tmp_path / "fork.git"
        if empty_fork:  # a fork without the base's history: the shallow build must deepen
            git.git("init", "-q", "--bare", str(fork_git), cwd=tmp_path)
        else:
            git.git("clone", "-q", "--bare", str(upstream.bare), str(fork_git), cwd=tmp_path)
        manifest = write_manifest(
            tmp_path,
            base_commit=upstream.base_commit,
            overrides={
                ENTRY: {"pr": None},
                "hc-mlp-norm-manager": {"pr": None},
            },
        )
        storage = tmp_path / "forks"
        storage.mkdir()
        gh = FakeGitHub(GitHubState(fork_storage=storage)).start()
        request.addfinalizer(gh.stop)
        sc.detached_fork_close(gh.state, upstream.bare, fork_git, new_fork=new_fork)  # type: ignore[arg-type]
        monkeypatch.setenv("GH_HOST", gh.url)
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        if token:
            if token != sc.TOKEN:
                gh.state.add_token(token, sc.OWNER)
            monkeypatch.setenv("GITHUB_TOKEN", token)
        return World(tmp_path, gh, upstream, fork_git, manifest)

    return make


def test_detached_close_gives_new_draft_pr_one_cross_link_and_records_it(world, capsys):
    """The first run opens and records the PR; a re-run writes nothing (it was
    test_rerun_is_unchanged_with_zero_writes); a hand-edited body gets one PATCH (it was
    test_changed_body_gets_exactly_one_patch): one world, three runs."""
    w = world()
    assert w.run(ENTRY) == 0
    assert w.writes() == [("POST", PULLS), ("POST", f"/repos/{sc.UPSTREAM}/issues/6117/comments")]
    (number,) = w.pulls_from(sc.CHECKPOINT_BRANCH)
    pull = w.state.pulls[(sc.UPSTREAM, number)]
    assert pull.draft and pull.maintainer_can_modify and pull.base_ref == "dev"
    assert "<!-- patchcarry:begin entry=checkpoint-grad title=" in pull.body
    assert "Re-submission of #6117" in pull.body and "head.repo is null" in pull.body
    assert "No evidence file was given" in pull.body
    assert "- [x] I have added relevant unit tests" in pull.body  # include_tests + 0002
    # the fork branch: pinned base + the fix via git am, authorship and sign-off kept
    tip = w.fork_branch()
    assert tip == pull.head_sha
    assert git.rev_parse(f"{tip}~2", cwd=w.fork_git) == w.upstream.base_commit  # fix + test
    _, log, _ = git.git("log", "-1", "--format=%an <%ae>%n%B", f"{tip}~1", cwd=w.fork_git)
    assert log.startswith("iiap <1471127927@qq.com>\n")  # #6339's own commit, byte for byte
    assert "Signed-off-by: iiap <1471127927@qq.com>" in log
    links = [c for c in w.state.comments if c.issue == 6117 and "patchcarry:cross-link" in c.body]
    assert len(links) == 1 and f"#{number}" in links[0].body
    assert f"pr = {number}" in w.manifest.read_text()
    out = capsys.readouterr().out
    assert f"{ENTRY}: CREATED  PR #{number}" in out
    # what the author does next: the PR opens as a draft (as upstream's template asks)
    (step,) = [line for line in out.splitlines() if line.startswith("next: ")]
    assert f"#{number} is a draft" in step and "self-review" in step
    assert "Ready for review" in step and step.endswith(f"/pull/{number}")
    # a re-run changes nothing and writes nothing (counted in the server's log)
    before = len(w.gh.writes())
    assert w.run("--json", ENTRY) == 0
    assert len(w.gh.writes()) == before
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["action"] == "unchanged" and result["writes"] == []
    assert result["superseded"][0]["state"] == "closed-by-fork-detachment"
    assert w.pulls_from(sc.CHECKPOINT_BRANCH) == [number]
    # a body edited by hand gets exactly one PATCH, of the body alone, keeping the edit
    pull.body = "edited by hand"
    assert w.run(ENTRY) == 0
    assert w.writes()[before:] == [("PATCH", f"{PULLS}/{number}")]
    assert w.gh.writes()[-1].body.keys() == {"body"}  # title unchanged: not sent
    kept = w.state.pulls[(sc.UPSTREAM, number)].body
    assert kept.startswith("edited by hand\n\n<!-- patchcarry:begin entry=checkpoint-grad")


def test_fork_without_the_base_history_still_gets_the_branch(world):
    w = world(empty_fork=True)
    assert w.run(ENTRY) == 0
    (number,) = w.pulls_from(sc.CHECKPOINT_BRANCH)
    tip = w.fork_branch()
    assert tip == w.state.pulls[(sc.UPSTREAM, number)].head_sha
    assert git.rev_parse(f"{tip}~2", cwd=w.fork_git) == w.upstream.base_commit  # full history


def test_dry_run_reads_everything_and_writes_nothing(world, capsys):
    w = world()
    assert w.run("--dry-run", ENTRY) == 0
    assert w.writes() == []
    out = capsys.readouterr().out
    assert out.startswith("DRY RUN (--dry-run)")
    assert f"POST {PULLS}" in out and "closed-by-fork-detachment" in out
    assert w.fork_branch() is None  # nothing pushed
    # git is asked about each branch name once at most (dev and the two entries' heads)
    asked = trace.log_path().read_text().count(" check-ref-format ")
    assert asked <= 3, asked


def test_no_token_defaults_to_dry_run(world, capsys):
    w = world(token=None)
    assert w.run(ENTRY) == 0
    assert w.writes() == [] and not any(r.authorized for r in w.gh.requests)
    assert "DRY RUN (no GH_TOKEN or GITHUB_TOKEN set)" in capsys.readouterr().out


def test_existing_fork_under_another_name_is_used_and_reported(world, capsys):
    w = world(new_fork="none")
    other = w.state.add_repo("htesd/Megatron-LM-2", w.fork_git, fork_of=sc.UPSTREAM)
    assert w.run(ENTRY) == 0
    assert "GitHub returned the existing fork htesd/Megatron-LM-2" in capsys.readouterr().err
    (number,) = w.pulls_from(sc.CHECKPOINT_BRANCH)
    assert w.fork_branch(Path(other.clone_url)) == w.state.pulls[(sc.UPSTREAM, number)].head_sha
    assert sc.NEW_FORK not in w.state.repos


def test_open_recorded_pr_from_another_head_is_not_duplicated(world, capsys):
    w = world()
    w.state.add_pull(
        sc.UPSTREAM,
        number=6339,
        title="t",
        user=sc.OWNER,
        head_ref="elsewhere",
        head_repo=sc.NEW_FORK,
        base_ref="dev",
    )
    w.manifest.write_text(
        w.manifest.read_text().replace(
            'name = "checkpoint-grad"', 'name = "checkpoint-grad"\npr = 6339'
        )
    )
    assert w.run(ENTRY) == 1
    assert w.writes() == []
    assert "#6339 is open from htesd:elsewhere" in capsys.readouterr().out


def test_detached_fork_is_refused_without_any_write(world, capsys):
    w = world(new_fork="detached")
    assert w.run(ENTRY) == 1
    assert w.writes() == [] and w.fork_branch() is None
    out = " ".join(capsys.readouterr().out.split())  # the plan's lines wrap at 120 columns
    assert "REFUSED" in out and "never pushing there" in out and "fork: false" in out


def test_maintainer_closed_is_refused_without_force_and_force_overrides_it(world, capsys):
    """Refused with no write; then `--force` re-submits it without claiming detachment (it
    was test_force_overrides_a_maintainer_close_without_claiming_detachment)."""
    w = world()
    sc.maintainer_closed(w.state, w.upstream.bare, number=6200)
    w.manifest.write_text(
        w.manifest.read_text().replace(
            'name = "checkpoint-grad"', 'name = "checkpoint-grad"\npr = 6200'
        )
    )
    assert w.run(ENTRY) == 1
    assert w.writes() == []
    out = capsys.readouterr().out
    assert "#6200 is closed-by-maintainer" in out and "--force" in out
    assert "closed by yaox12, not by the author htesd" in out
    # --force overrides it, without claiming detachment
    assert w.run("--force", ENTRY) == 0
    (number,) = w.pulls_from(sc.CHECKPOINT_BRANCH)
    (link,) = [c.body for c in w.state.comments if c.issue == 6200 and "cross-link" in c.body]
    assert f"re-submitted as #{number}" in link and "fork network" not in link
    assert f"pr = {number}" in w.manifest.read_text()


def test_merged_pr_is_done(world, capsys):
    w = world()
    sc.merged(w.state, w.upstream.bare, number=6100)
    w.manifest.write_text(
        w.manifest.read_text().replace(
            'name = "checkpoint-grad"', 'name = "checkpoint-grad"\npr = 6100'
        )
    )
    assert w.run("--json", ENTRY) == 0
    assert w.writes() == []
    result = json.loads(capsys.readouterr().out)
    assert result["action"] == "merged" and result["pr"] == 6100


def test_bad_token_is_one_line_exit_6(world, monkeypatch, capsys):
    w = world(token=None)
    monkeypatch.setenv("GITHUB_TOKEN", "not-a-known-token")
    assert w.run(ENTRY) == 6
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "401 Bad credentials" in err and "GITHUB_TOKEN" in err
    assert w.writes() == []


def test_long_rate_limit_stops_saying_when(world, capsys):
    w = world()
    w.gh.rate_limit_next("GET", r"^/user$", reset_in=3600)
    assert w.run(ENTRY) == 6
    err = capsys.readouterr().err
    assert "rate limit" in err and "resets at" in err and "UTC" in err
    assert w.writes() == []


def test_502_on_create_then_rerun_makes_exactly_one_pr(world, capsys):
    w = world()
    w.gh.fail_next("POST", r"/pulls$", 502)
    assert w.run(ENTRY) == 6
    assert "502" in capsys.readouterr().err
    assert w.pulls_from(sc.CHECKPOINT_BRANCH) == []
    assert w.run(ENTRY) == 0
    assert len(w.pulls_from(sc.CHECKPOINT_BRANCH)) == 1
    creates = [r for r in w.gh.requests if (r.method, r.path) == ("POST", PULLS)]
    assert len(creates) == 2  # the failed one (not retried blindly) and the re-run's


# A create applied but its answer lost is found, not duplicated:
# test_resubmit_faults.py::test_create_applied_but_answer_lost_is_reported_created_with_its_write


def test_push_rejected_by_lease_stops_before_any_api_write(world, monkeypatch, capsys):
    w = world()
    intruder = git.rev_parse(f"{w.upstream.base_commit}", cwd=w.fork_git)
    real = git.ls_remote_with_token

    def read_then_someone_pushes(url: str, refs: list[str], *, cwd: Path):  # noqa: ANN202
        seen = real(url, refs, cwd=cwd)
        git.git("update-ref", refs[0], intruder, cwd=w.fork_git)
        return seen

    monkeypatch.setattr(git, "ls_remote_with_token", read_then_someone_pushes)
    assert w.run(ENTRY) == 1
    assert "lease" in capsys.readouterr().err
    assert w.writes() == [] and w.fork_branch() == intruder  # their push survived


def test_scan_lists_detached_closes_until_resubmitted(world, capsys):
    w = world()  # the manifest lists #6117/#6017 under supersedes but records no new PR yet
    assert w.scan("--json") == 1
    found = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(f["pr"], f["planned_in"]) for f in found] == [
        (6017, "hc-mlp-norm-manager"),
        (6117, ENTRY),
    ]
    assert any("same second as #6117" in e for e in found[0]["evidence"])
    assert w.run(ENTRY) == 0
    capsys.readouterr()
    writes = len(w.gh.writes())
    assert w.scan("--json", "--include-resubmitted") == 1
    found = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [(f["pr"], f["resubmitted_by"]) for f in found] == [
        (6017, None),
        (6117, f"#{w.pulls_from(sc.CHECKPOINT_BRANCH)[0]} (manifest entry {ENTRY})"),
    ]
    assert len(w.gh.writes()) == writes  # scan writes nothing


def test_offline_makes_no_api_request_and_says_what_it_could_not_verify(world, capsys):
    w = world()
    assert w.run("--offline", "--dry-run") == 0
    assert w.gh.requests == []
    out = capsys.readouterr().out
    assert out.startswith("OFFLINE: no GitHub API reads")
    assert "NOT VERIFIED: state of #6117 (open/merged/closed" in out
    assert "megatron-core 0.16.1 (installed)" in out


def test_missing_fork_is_created_then_used_and_the_token_never_leaks(
    world, tmp_path, monkeypatch, capfd
):
    """No fork yet: the run makes it and pushes there. Through that run and a re-run the
    token is in no output, no git argv, no file and no request body."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    argv_log = tmp_path / "git-argv.log"
    real_git = shutil.which("git")
    (bin_dir / "git").write_text(
        f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{argv_log}"\nexec "{real_git}" "$@"\n'
    )
    (bin_dir / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    w = world(new_fork="none", token=SENTINEL)
    assert w.run(ENTRY) == 0
    assert w.writes()[0] == ("POST", f"/repos/{sc.UPSTREAM}/forks")
    fork = w.state.repos[sc.NEW_FORK]
    assert fork.fork and fork.source == sc.UPSTREAM
    assert w.gh.writes()[0].body == {"name": "Megatron-LM-oss", "default_branch_only": True}
    (number,) = w.pulls_from(sc.CHECKPOINT_BRANCH)
    assert w.fork_branch(Path(fork.clone_url)) == w.state.pulls[(sc.UPSTREAM, number)].head_sha
    assert w.run(ENTRY) == 0
    captured = capfd.readouterr()
    assert SENTINEL not in captured.out + captured.err
    assert "push" in argv_log.read_text() and SENTINEL not in argv_log.read_text()
    for path in tmp_path.rglob("*"):  # fork/upstream git config, manifest, objects, logs...
        if path.is_file():
            assert SENTINEL.encode() not in path.read_bytes(), path
    assert all(SENTINEL not in json.dumps(r.body) for r in w.gh.requests)


def test_credential_helper_feeds_the_token_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", SENTINEL)
    monkeypatch.setenv("GH_HOST", "github.com")
    git.init(tmp_path / "r")
    _, out, _ = git.git(
        *git.credential_args(),
        "credential",
        "fill",
        cwd=tmp_path / "r",
        stdin="protocol=https\nhost=github.com\n\n",
    )
    assert f"password={SENTINEL}" in out.splitlines()
    assert all(SENTINEL not in a for a in git.credential_args())


def test_rebase_builds_on_the_base_branch_tip(world, capsys):
    w = world()
    assert w.run("--rebase", "--dry-run", ENTRY) == 0
    assert w.writes() == []
    assert f"dev tip {w.upstream.dev_tip[:12]} + 2 patch(es)" in capsys.readouterr().out


def test_missing_evidence_file_is_refused_before_any_request(world, capsys):
    w = world()
    assert w.run("--evidence", str(w.tmp / "nope.json"), ENTRY) == 5  # a missing input file
    assert "run scripts/measure first" in capsys.readouterr().err
    assert w.gh.requests == []


def _rewrite_manifest(w: World, **overrides: dict[str, object]) -> None:
    entries = {ENTRY: {"pr": None}, "hc-mlp-norm-manager": {"pr": None}}
    for name, keys in overrides.items():
        entries[name.replace("_", "-")].update(keys)
    write_manifest(w.tmp, base_commit=w.upstream.base_commit, overrides=entries)


def test_head_branch_that_is_the_forks_default_branch_is_refused(world, capsys):
    w = world()
    _rewrite_manifest(w, checkpoint_grad={"head_branch": "main"})
    before = w.fork_branch()
    assert w.run(ENTRY) == 1
    assert "--allow-default-branch" in capsys.readouterr().err
    assert w.writes() == []
    _, main_tip, _ = git.git("rev-parse", "refs/heads/main", cwd=w.fork_git)
    upstream_main = git.rev_parse("refs/heads/main", cwd=w.upstream.bare)
    assert main_tip.strip() == upstream_main and w.fork_branch() == before
    assert w.run("--allow-default-branch", "--dry-run", ENTRY) == 0


def test_bad_head_branch_of_a_later_entry_stops_everything_before_any_write(world, capsys):
    w = world()
    _rewrite_manifest(w, hc_mlp_norm_manager={"head_branch": "bad..name"})
    assert w.run() == 5
    assert "not a valid branch name" in capsys.readouterr().err
    assert w.gh.requests == [] and w.fork_branch() is None


def test_cross_link_marker_from_another_user_is_not_trusted(world, capsys):
    w = world()
    marker = f"<!-- patchcarry:cross-link entry={ENTRY} supersedes=6117 -->"
    w.state.add_comment(sc.UPSTREAM, 6117, user=sc.MAINTAINER, body=f"fake {marker}")
    assert w.scan("--json", "--include-resubmitted") == 1
    found = {f["pr"]: f for f in map(json.loads, capsys.readouterr().out.splitlines())}
    assert found[6117]["resubmitted_by"] is None
    assert w.run(ENTRY) == 0
    links = [c for c in w.state.comments if c.issue == 6117 and marker in c.body]
    assert [c.user for c in links] == [sc.MAINTAINER, sc.OWNER]


# -- issue 17: what git would apply is what is checked; identities byte for byte.
def test_a_smuggled_diff_section_is_refused_with_zero_writes(world, capsys):
    w = world()
    fix = w.manifest.parent / FIX_0001.name
    fix.write_text(fix.read_text().replace("\n-- \n", f"\n{patch_corpus.SMUGGLED}-- \n", 1))
    before = w.manifest.read_text()
    assert w.run(ENTRY) == 5
    assert "git reads 2 files in it" in capsys.readouterr().err
    assert w.writes() == [] and w.fork_branch() is None
    assert w.manifest.read_text() == before


def test_a_non_ascii_author_is_author_and_committer_on_the_fork(world, tmp_path):
    """A Latin-1-range name, from a format-patch file. Names past Latin-1 (Polish, Chinese)
    make the same trip from their PR through adopt, check and resubmit, their author the
    fork's author and committer: test_adopt's
    test_non_ascii_author_round_trips_through_adopt_check_and_resubmit."""
    name = patch_corpus.LATIN
    w = world()
    sha = patch_corpus.reauthored(w.upstream, FIX_0001, name=name, email="dev@example.invalid")
    written = git.format_patch(sha, number=1, out_dir=tmp_path / "fp", cwd=w.upstream.work)
    (w.manifest.parent / FIX_0001.name).write_bytes(written.read_bytes())
    assert w.run(ENTRY) == 0
    tip = w.fork_branch()
    _, log, _ = git.git("log", "-1", "--format=%an <%ae>%n%cn <%ce>", f"{tip}~1", cwd=w.fork_git)
    assert log.splitlines() == [f"{name} <dev@example.invalid>"] * 2


@pytest.mark.parametrize("flag", ["--fork", "--upstream"])
def test_a_repository_override_that_is_not_owner_repo_is_refused(world, capsys, flag):
    """Each value a command-line mistake (exit 2 and the usage) before anything is read:
    one world for every value, as none of them may change it."""
    w = world()
    for value in ("htesd/..", "htesd/.", "htesd/x y", "htesd/x/y", "htesd"):
        with pytest.raises(SystemExit) as usage:
            w.run(ENTRY, f"{flag}={value}")
        assert usage.value.code == 2, value
        err = capsys.readouterr().err
        assert err.startswith("usage: patchcarry resubmit"), (value, err)
        assert f"{flag}: must be OWNER/REPO" in err, (value, err)
        assert w.writes() == [], value


def test_a_close_with_a_null_actor_is_unknown_and_refused_without_force(world, capsys):
    w = world()
    for event in w.state.events:
        if (event.issue, event.event) == (6117, "closed"):
            event.actor = None  # GitHub's null actor: who closed it cannot be known
    assert w.run(ENTRY) == 1
    out = capsys.readouterr().out
    assert "#6117 is closed-by-unknown" in out and "closer unknown" in out
    assert w.writes() == []


WORKFLOW = ".github/workflows/ci.yml"


def _workflow_on_dev(w: World) -> None:
    """Upstream's dev gains a workflow file the fork (cloned before) has never seen."""
    work = w.upstream.work
    git.git("checkout", "-q", "-B", "dev", w.upstream.dev_tip, cwd=work)
    (work / ".github" / "workflows").mkdir(parents=True)
    (work / WORKFLOW).write_text("on: push\njobs: {}\n")
    git.git("add", "-A", cwd=work)
    git.git("commit", "-q", "-m", "ci: add a workflow", cwd=work, env_extra=PINNED_ENV)
    git.git("push", "-q", "origin", "HEAD:refs/heads/dev", cwd=work)


def _token(w: World, token: str, monkeypatch: pytest.MonkeyPatch, *scopes: str) -> None:
    w.state.add_token(token, sc.OWNER, scopes=scopes)
    monkeypatch.setenv("GITHUB_TOKEN", token)


def test_token_without_workflow_scope_is_refused_before_any_write(world, monkeypatch, capsys):
    w = world()
    _workflow_on_dev(w)
    _token(w, "ghp_publiconly", monkeypatch, "public_repo")
    assert w.run("--rebase", "--json", ENTRY) == 1
    plan = json.loads(capsys.readouterr().out)
    assert plan["action"] == "refused" and "lacks the workflow scope" in plan["reason"]
    assert WORKFLOW in plan["reason"]
    assert plan["token"] == {"kind": "classic", "scopes": ["public_repo"], "needs": [
        f"public_repo (open/refresh the PR on {sc.UPSTREAM})",
        f"workflow (commit {git.rev_parse('dev', cwd=w.upstream.bare)[:12]} of the pushed "
        f"history adds {WORKFLOW}, "
        f"which no branch of {sc.NEW_FORK} holds with those contents)"]}  # fmt: skip
    assert w.writes() == [] and w.fork_branch() is None
    _token(w, "ghp_withworkflow", monkeypatch, "public_repo", "workflow")
    assert w.run("--rebase", ENTRY) == 0  # the same run with the scope goes through
    assert w.fork_branch() is not None and len(w.pulls_from(sc.CHECKPOINT_BRANCH)) == 1


def test_a_fork_of_many_branches_is_judged_by_its_base_branch_first(world, monkeypatch):
    """A fork GitHub made holds all of upstream's branches (Megatron-LM has hundreds), and only
    the first MAX_HEADS are read: the base branch the push builds on is read first, so a
    workflow change the fork's own dev already holds needs no workflow scope."""
    from patchcarry.resubmit import build

    w = world()
    old = git.rev_parse("dev", cwd=w.fork_git)
    _workflow_on_dev(w)
    work = w.upstream.work  # and deletes it again: a deletion is never "held" by a branch
    git.git("rm", "-q", WORKFLOW, cwd=work)
    git.git("commit", "-q", "-m", "ci: drop the workflow", cwd=work, env_extra=PINNED_ENV)
    git.git("push", "-q", "origin", "HEAD:refs/heads/dev", cwd=work)
    dev = git.rev_parse("dev", cwd=w.upstream.bare)
    git.git("fetch", "-q", str(w.upstream.bare), "refs/heads/dev:refs/heads/dev", cwd=w.fork_git)
    # branches of their own, named before "dev": a commit each on `old` (its tree), made by
    # one fast-import rather than a commit-tree and an update-ref each
    who = f"{PINNED_ENV['GIT_COMMITTER_NAME']} <{PINNED_ENV['GIT_COMMITTER_EMAIL']}>"
    stream = "".join(
        f"commit refs/heads/aa-{i:02d}\ncommitter {who} 1767225600 +0000\n"
        f"data {len(f'aa {i}')}\naa {i}\nfrom {old}\n\n"
        for i in range(build.MAX_HEADS + 5)
    )
    git.git("fast-import", "--quiet", cwd=w.fork_git, stdin=stream)
    heads = git.refs_under("refs/heads/", cwd=w.fork_git)
    assert len([r for r in heads if r.startswith("refs/heads/aa-")]) == build.MAX_HEADS + 5
    assert git.rev_parse("dev", cwd=w.fork_git) == dev
    _token(w, "ghp_publiconly", monkeypatch, "public_repo")
    assert w.run("--rebase", ENTRY) == 0
    assert w.fork_branch() is not None


def test_fine_grained_token_is_refused_before_any_write(world, monkeypatch, capsys):
    w = world()
    _token(w, "github_pat_11finegrained", monkeypatch)
    assert w.run(ENTRY) == 1
    out = capsys.readouterr().out
    assert "fine-grained token" in out and "Resource not accessible by personal access token" in out
    assert w.writes() == [] and w.fork_branch() is None
    _token(w, "ghp_noscopes", monkeypatch)  # a classic token without public_repo/repo
    assert w.run(ENTRY) == 1
    assert "lacks the public_repo scope" in capsys.readouterr().out
    assert w.writes() == [] and w.fork_branch() is None


def test_server_refused_push_quotes_githubs_reason_and_writes_nothing_after(
    world, monkeypatch, capsys
):
    from patchcarry.resubmit import build

    w = world()
    _workflow_on_dev(w)
    _token(w, "ghp_publiconly", monkeypatch, "public_repo")
    monkeypatch.setattr(build, "needs_scope", lambda *a: None)  # the preflight misses
    assert w.run("--rebase", ENTRY) == 1
    err = capsys.readouterr().err
    assert (
        f"'refusing to allow a Personal Access Token to create or update workflow `{WORKFLOW}` "
        "without `workflow` scope'"
    ) in err
    assert "gh auth refresh -s workflow" in err and "someone pushed" not in err
    assert w.writes() == [] and w.fork_branch() is None


def test_measured_impact_comes_from_the_repositorys_committed_gpu_evidence(world):
    from patchcarry.measure import pretrain_evidence
    from testing import recorded_gpu

    w = world()
    pretrain_evidence.write(
        recorded_gpu.pretrain_doc(), w.manifest.parent.parent / "evidence" / "loop.json"
    )
    assert w.run(ENTRY) == 0
    (number,) = w.pulls_from(sc.CHECKPOINT_BRANCH)
    pull = w.state.pulls[(sc.UPSTREAM, number)]
    assert "No evidence file was given" not in pull.body
    assert "On NVIDIA H200, upstream's own `pretrain_gpt.py` at c76ff61" in pull.body
    assert "this change frees 268435456 B (268.44 MB) of the allocator floor" in pull.body
    assert f'\n{recorded_gpu.COMMAND} --out "$(mktemp -d)"\n' in pull.body
    assert "step-time ratio 1.000" in pull.body and "both fixes free" not in pull.body


@pytest.mark.parametrize(
    ("setup", "code", "reason", "advice"),
    [
        ("protected", "GH006", "protected branch hook declined", "branch is protected"),
        ("ruleset", "GH013", "push declined due to repository rule violations", "ruleset"),
        ("email", "GH007", "push declined due to email privacy restrictions", "private"),
    ],
)
def test_push_refusals_quote_githubs_reason_and_the_code_from_its_remote_lines(
    world, capsys, setup, code, reason, advice
):
    """GitHub's reason sits in `! [remote rejected] ref (reason)`; its GHxxx code only in the
    `remote:` lines: both are quoted, with what to do, and nothing after the push is written."""
    w = world()
    branch = (sc.NEW_FORK, sc.CHECKPOINT_BRANCH)
    if setup == "protected":
        w.state.protected_branches.add(branch)
    elif setup == "ruleset":
        w.state.ruleset_branches.add(branch)
    else:  # the pusher keeps the patch author's email private (the tool commits with it)
        w.state.private_emails[sc.OWNER] = "1471127927@qq.com"
    w.state.sync_push_rules()
    assert w.run(ENTRY) == 1
    err = capsys.readouterr().err
    assert f"{reason!r}" in err and f"{code}:" in err and advice in err
    assert w.writes() == [] and w.fork_branch() is None


def test_a_body_near_githubs_limit_keeps_the_newest_revisions_within_it(world):
    """GitHub refuses a PR body over 65,536 characters (422 "body is too long"): a section
    whose revision list grew that long lists the newest revisions and counts the rest."""
    from patchcarry import manifest as manifest_mod
    from patchcarry.resubmit import body
    from patchcarry.resubmit.revisions import Revision, Revisions

    w = world()
    assert w.run(ENTRY) == 0
    (number,) = w.pulls_from(sc.CHECKPOINT_BRANCH)
    pull = w.state.pulls[(sc.UPSTREAM, number)]
    entry = manifest_mod.load(w.manifest).select([ENTRY])[0]

    def listing(count: int) -> tuple[list[str], str]:
        """`count` revisions, oldest first, and the body whose section lists them all."""
        revisions = [f"2026-08-{n % 28 + 1:02d} `{n:012x}` rewrite" for n in range(count)]
        listed = Revisions(tuple(Revision(*r.replace("`", "").split()) for r in revisions))
        section = body.render_section(entry, superseded=[], check_lines=[],
                                      impact=None, revisions=listed)  # fmt: skip
        return revisions, body.render_new(entry, section)

    def fits(count: int) -> bool:
        return len(listing(count)[1]) <= 65_536 - 200

    # the fewest revisions whose body passes 65,336 characters, found by halving (each
    # revision makes the body longer), not by rendering every count up to it
    low, high = 0, 1
    while fits(high):
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if fits(middle) else (low, middle)
    revisions, text = listing(high)
    assert not fits(high) and fits(high - 1)
    pull.body = text
    assert w.run(ENTRY) == 0  # re-rendered with its evidence and checks: longer than before
    after = pull.body
    assert len(after) <= 65_536
    assert revisions[-1] in after and f"`{0:012x}`" not in after
    assert "earlier revisions not listed" in after
    assert w.run(ENTRY) == 0 and pull.body == after  # stable: no PATCH again


def test_a_hand_written_body_too_long_for_the_section_is_refused_before_any_write(world, capsys):
    w = world()
    assert w.run(ENTRY) == 0
    (number,) = w.pulls_from(sc.CHECKPOINT_BRANCH)
    pull = w.state.pulls[(sc.UPSTREAM, number)]
    rest = pull.body.split("\n\n", 1)[1]
    pull.body = "x" * (65_536 - 10 - len(rest)) + "\n\n" + rest  # 65,526: GitHub takes it
    assert w.run(ENTRY) == 0  # nothing to change: nothing written, whatever the length
    writes = len(w.writes())
    evidence = Path(__file__).resolve().parent.parent / "evidence" / "hc-gpt-cpu.json"
    assert w.run("--evidence", str(evidence), ENTRY) == 1  # the numbers would not fit
    said = capsys.readouterr()
    assert "over GitHub's 65,536" in said.out + said.err
    assert len(w.writes()) == writes


def test_a_github_without_rulesets_is_not_readable_never_none(world, capsys):
    """A GitHub Enterprise Server without rulesets answers GET rules/branches with 404; the
    run goes on and says the rules are not readable. A classic protection's `protected` flag
    and required checks are readable by anyone (GET branches/{branch}): the plan says what
    that showed, and no limit GitHub does not have (issue 46)."""
    w = world()
    w.state.rulesets_api = False
    assert w.run("--dry-run", ENTRY) == 0
    out = capsys.readouterr().out
    assert "rules for dev: not readable" in out and "none active" not in out
    w.state.rulesets_api = True
    w.state.branch_rules.clear()
    assert w.run("--dry-run", ENTRY) == 0
    out = capsys.readouterr().out
    assert "classic branch protection: none on dev" in out and "none active" not in out
    assert "not readable without admin" not in out


def test_a_pinned_base_pushed_to_a_fork_at_a_newer_dev_needs_no_workflow_scope(
    world, monkeypatch, capsys
):
    """GitHub judges the workflow scope per pushed commit new to the fork: the pinned base's
    history is already in a fork whose default branch is at a newer dev (whose workflows
    differ), so a public_repo token is enough."""
    w = world()
    _workflow_on_dev(w)
    git.git("fetch", "-q", str(w.upstream.bare), "+dev:refs/heads/main", cwd=w.fork_git)
    _token(w, "ghp_publiconly", monkeypatch, "public_repo")
    assert w.run("--json", ENTRY) == 0
    plan = json.loads(capsys.readouterr().out)
    assert not any(n.startswith("workflow") for n in plan["token"]["needs"])
    assert w.fork_branch() is not None


def test_a_workflow_file_the_fork_already_holds_on_a_branch_needs_no_workflow_scope(
    world, monkeypatch
):
    """--rebase brings dev's new workflow commit into the fork, but a branch of the fork
    already holds that file with the same contents: GitHub needs no scope for it."""
    w = world()
    _workflow_on_dev(w)
    work = w.upstream.work  # another commit (not dev's) holding the same file
    git.git("checkout", "-q", "-B", "ci-copy", w.upstream.base_commit, cwd=work)
    (work / ".github" / "workflows").mkdir(parents=True, exist_ok=True)
    (work / WORKFLOW).write_text("on: push\njobs: {}\n")
    git.git("add", "-A", cwd=work)
    git.git("commit", "-q", "-m", "a copy of the workflow", cwd=work, env_extra=PINNED_ENV)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)  # the owner's own push, long ago
    git.git("push", "-q", str(w.fork_git), "HEAD:refs/heads/ci-copy", cwd=work)
    _token(w, "ghp_publiconly", monkeypatch, "public_repo")
    assert w.run("--rebase", ENTRY) == 0
    assert w.fork_branch() is not None


def test_a_live_pr_on_the_tools_own_head_is_not_rebuilt_without_update_live(world, capsys):
    """The tool published the PR's head; the manifest then gains the test patch. The head
    already holds the fix, so a plain run does not force-push a rebuild (the PR's vetting
    would start over): it is held until --update-live, which rebuilds it."""
    w = world()
    no_tests = {ENTRY: {"pr": None, "tests": None}, "hc-mlp-norm-manager": {"pr": None}}
    write_manifest(w.tmp, base_commit=w.upstream.base_commit, overrides=no_tests)
    assert w.run(ENTRY) == 0
    (number,) = w.pulls_from(sc.CHECKPOINT_BRANCH)
    published = w.fork_branch()
    with_tests = {ENTRY: {"pr": number}, "hc-mlp-norm-manager": {"pr": None}}
    write_manifest(w.tmp, base_commit=w.upstream.base_commit, overrides=with_tests)
    capsys.readouterr()
    assert w.run(ENTRY) == 0
    assert w.fork_branch() == published
    assert "Held back until you pass --update-live" in " ".join(capsys.readouterr().out.split())
    assert w.run("--update-live", ENTRY) == 0
    assert w.fork_branch() != published


def _section(body: str) -> str:
    start = body.index(f"<!-- patchcarry:begin entry={ENTRY} ")
    end = body.index(section_end(ENTRY)) + len(section_end(ENTRY))
    return body[start:end]


def test_a_new_pr_reads_as_upstreams_template_with_its_own_fix_measured_and_a_test_line(world):
    w = world()
    sha = pb.commit_evidence(w.manifest.parent.parent, "https://github.com/carrier/patches.git")
    assert w.run(ENTRY) == 0
    (number,) = w.pulls_from(sc.CHECKPOINT_BRANCH)
    body = w.state.pulls[(sc.UPSTREAM, number)].body
    section = _section(body)

    impact_block = section.split("### Measured impact", 1)[1].split("\n### ", 1)[0]
    doc = evidence.load(CHECKOUT / "evidence" / impact.CPU_EVIDENCE)
    fix = next(v for v in doc["runs"][-1]["variants"] if v["name"] == "fix")
    s = doc["runs"][-1]["shape"]
    assert f"This change alone frees {fix['freed']['live_tensor_bytes']:,} B" in impact_block
    assert f", {s['layers']} layers, 4 residual streams, bf16, micro-batch 1, " in impact_block
    assert not re.search(r"0\.27 GB|8192|H200|\breset\b|\bboth\b", impact_block)  # nothing borrowed
    why = section.split("### Why both PRs?", 1)[1].split("\n### ", 1)[0]
    assert re.search(
        r"With (#6338|#6017.s fix) merged, this fix frees nothing more in this measurement", why
    )
    how = section.split("### How to reproduce", 1)[1].split("\n### ", 1)[0]
    link = f"https://github.com/carrier/patches/blob/{sha}/evidence/{impact.CPU_EVIDENCE}"
    assert f"[`evidence/{impact.CPU_EVIDENCE}`]({link}) at {sha[:12]}" in how
    assert "\nscripts/measure --upstream " in how and '--out "$(mktemp -d)"\n' in how
    assert how.index(pb.TEST_COMMAND) < how.index("scripts/measure")  # upstream's test first
    assert "Expected: it fails without this PR's fix and passes with it." in how

    assert f"applies cleanly to dev at {w.upstream.base_commit[:12]} (2026-01-01)" in section
    assert not any(words in body for words in pb.TOOL_WORDS)

    assert section.count("Re-submission of #6117") == 1 and "re-submits" not in body
    assert "<details><summary>How #6117's close was read</summary>" in section

    template = (git.show_file("refs/heads/main", PR_TEMPLATE_PATH, cwd=w.upstream.bare)
                or b"").decode()  # fmt: skip
    assert pb.BOXES.findall(body) == pb.BOXES.findall(template)  # upstream's own items, in order
    assert re.findall(r"^- \[x\] (.*)$", body, re.MULTILINE) == ["I have added relevant unit tests"]
    assert body.startswith(template.split("\n", 1)[0])  # its first line first, as upstream's
    assert body.index("# What does this PR do?") < body.index(section) < body.index("Linked issue")


def test_a_rebase_revision_comment_shows_the_prs_own_changes_not_upstreams(world):
    """Issue 48: rebuilt on a newer base, the revision comment listed every upstream commit in
    between as this PR's change (a simulation: 420 lines, upstream's `random.py | 240`). It
    shows `git range-diff` of the PR's own commits, old against new."""
    w = world()
    no_tests = {ENTRY: {"pr": None, "tests": None}, "hc-mlp-norm-manager": {"pr": None}}
    write_manifest(w.tmp, base_commit=w.upstream.base_commit, overrides=no_tests)
    assert w.run(ENTRY) == 0  # the PR, the fix alone on the pinned base
    (number,) = w.pulls_from(sc.CHECKPOINT_BRANCH)
    old = w.fork_branch()
    with_tests = {ENTRY: {"pr": number}, "hc-mlp-norm-manager": {"pr": None}}
    write_manifest(w.tmp, base_commit=w.upstream.base_commit, overrides=with_tests)
    assert w.run("--rebase", "--update-live", ENTRY) == 0  # rebuilt on dev's tip, with its test
    assert w.fork_branch() != old
    (comment,) = [c.body for c in w.state.comments if c.issue == number and "revision" in c.body]
    assert "dev: add imports above the patched code" not in comment  # upstream's commit
    assert "# dev: new import block added above the patched code" not in comment
    assert "README.md" not in comment
    assert re.search(r"^1:  [0-9a-f]{7,} [=!] 1:  [0-9a-f]{7,} Fix cross", comment, re.MULTILINE)
    assert re.search(r"^\s*-:\s+-+ > 2:\s+[0-9a-f]{7,} Test that", comment, re.MULTILINE)
    assert "+def test_checkpoint_clears_detached_input_grad():" in comment  # the added commit
    assert f"on `dev` at {w.upstream.dev_tip[:12]} (was {w.upstream.base_commit[:12]})" in comment


def test_a_rebase_says_what_it_waits_on_before_each_long_step(world, capsys, monkeypatch):
    """Issue 48: `resubmit --rebase` sat silent for minutes: the branch is built on the base
    branch's tip, fetched shallow, so the fork lacks the history under it; the push is
    refused ("shallow update not allowed") and the whole history of the base branch is
    fetched from upstream before the push is tried again. Each long step is said first."""
    w = world()
    work = w.upstream.work  # dev moves on past what the fork (cloned before) holds
    git.git("checkout", "-q", "-B", "dev", w.upstream.dev_tip, cwd=work)
    (work / "NEWS.md").write_text("upstream moved on\n")
    git.git("add", "-A", cwd=work)
    git.git("commit", "-q", "-m", "docs: news", cwd=work, env_extra=PINNED_ENV)
    git.git("push", "-q", "origin", "HEAD:refs/heads/dev", cwd=work)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)  # a person is watching
    assert w.run("--rebase", ENTRY) == 0
    err = capsys.readouterr().err
    assert f"{ENTRY}: fetching the dev tip from upstream to build on ..." in err
    assert "reading the fork's branches' history" in err
    assert "fetching dev's whole history from upstream so that the push goes through" in err
