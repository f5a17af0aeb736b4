"""resubmit against GitHub's fifth round of rules (issue 46), each taught to the loopback
GitHub first: no conditional write (a maintainer's edit made during a run stays), archived
repositories, restricted pull requests, drafts a repository does not support, 40-hex branch
names, and a token that expires. Real git, the CLI in-process."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchcarry import git, pr_template
from patchcarry.resubmit.section import section_end
from testing import github_scenarios as sc
from testing.fake_github import GitHubState
from testing.upstream_repos import write_manifest
from tests import test_resubmit
from tests.test_resubmit import ENTRY, PULLS, World

template_upstream = test_resubmit.template_upstream  # the fixtures, shared
world = test_resubmit.world

PUSH = r"/Megatron-LM-oss\.git/git-receive-pack$"


def _opened(w: World) -> int:
    """A first run opens the PR (without the carried test); the manifest then records it,
    as a user's would, and carries the test: the next run pushes a new revision."""
    write_manifest(
        w.tmp,
        base_commit=w.upstream.base_commit,
        overrides={ENTRY: {"pr": None, "tests": None}, "hc-mlp-norm-manager": {"pr": None}},
    )
    assert w.run(ENTRY) == 0
    (number,) = w.pulls_from(sc.CHECKPOINT_BRANCH)
    write_manifest(
        w.tmp,
        base_commit=w.upstream.base_commit,
        overrides={ENTRY: {"pr": number}, "hc-mlp-norm-manager": {"pr": None}},
    )
    return number


# -- no conditional write: the body is merged into as it is right before the PATCH ----------


def test_an_edit_made_while_the_run_pushes_survives_the_write_byte_for_byte(world, capsys):
    """A box ticked and a title changed on GitHub between the run's first read and its
    PATCH: the body is re-read right before the PATCH (the last request before it) and
    only the tool's section is merged into it; the title stays the maintainer's."""
    w: World = world()
    number = _opened(w)
    pull = w.state.pulls[(sc.UPSTREAM, number)]
    text = w.manifest.read_text().replace(sc.CHECKPOINT_TITLE, "Fix grad retention (v2)")
    w.manifest.write_text(text)  # the manifest's title changed: the tool would set it
    ticked = "- [x] Reviewed by hand\r\n\r\nA maintainer's note, CRLF and all.  \r\n\r\n"

    def edit(state: GitHubState) -> None:  # the web UI, between the run's read and its write
        found = state.pulls[(sc.UPSTREAM, number)]
        found.body = ticked + (found.body or "")
        found.title = "[core] A maintainer's title"

    w.gh.on_request("POST", PUSH, edit)
    assert w.run("--update-live", ENTRY) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "body: edited on GitHub during this run" in out
    assert "title: changed on GitHub during this run" in out
    assert pull.body is not None and pull.body.startswith(ticked)
    assert pull.body.count(section_end(ENTRY)) == 1
    assert pull.title == "[core] A maintainer's title"
    at = max(i for i, r in enumerate(w.gh.requests) if r.method == "PATCH")
    before, patch = w.gh.requests[at - 1], w.gh.requests[at]
    assert (before.method, before.path) == ("GET", f"{PULLS}/{number}")
    assert patch.body["body"].startswith(ticked) and "title" not in patch.body


@pytest.mark.parametrize("where", ["section"])
def test_a_section_edited_by_hand_during_the_run_is_left_as_is(world, where, capsys):
    w: World = world()
    number = _opened(w)
    pull = w.state.pulls[(sc.UPSTREAM, number)]

    def edit(state: GitHubState) -> None:
        found = state.pulls[(sc.UPSTREAM, number)]
        assert found.body is not None
        found.body = found.body.replace(section_end(ENTRY), "hand edit\n" + section_end(ENTRY))

    w.gh.on_request("POST", PUSH, edit)
    assert w.run("--update-live", ENTRY) == 0
    assert pull.body is not None and "hand edit\n" + section_end(ENTRY) in pull.body


# -- archived repositories: refused before any write, with the true reason ------------------


@pytest.mark.parametrize("which", [sc.UPSTREAM, sc.NEW_FORK])
def test_an_archived_upstream_or_fork_is_refused_before_any_write(world, which, capsys):
    w: World = world()
    w.state.repos[which].archived = True
    before = w.fork_branch()
    assert w.run(ENTRY) == 1
    assert w.writes() == [] and w.fork_branch() == before
    out = " ".join(capsys.readouterr().out.split())
    assert f"{which} is archived" in out and "lacks a scope" not in out


def test_an_archived_upstream_is_refused_before_its_fork_is_made(world, capsys):
    w: World = world(new_fork="none")
    w.state.repos[sc.UPSTREAM].archived = True
    assert w.run(ENTRY) == 1
    assert w.writes() == [] and sc.NEW_FORK not in w.state.repos
    assert "is archived" in capsys.readouterr().out


# -- who may open a pull request --------------------------------------------------------------


def test_prs_for_collaborators_only_are_refused_before_the_push(world, capsys):
    w: World = world()
    w.state.repos[sc.UPSTREAM].pull_request_creation_policy = "collaborators_only"
    before = w.fork_branch()
    assert w.run(ENTRY) == 1
    assert w.writes() == [] and w.fork_branch() == before
    out = " ".join(capsys.readouterr().out.split())
    assert "collaborators_only" in out and "must be a collaborator" in out


def test_a_collaborator_opens_the_pr_where_only_collaborators_may(world, capsys):
    w: World = world()
    w.state.repos[sc.UPSTREAM].pull_request_creation_policy = "collaborators_only"
    w.state.collaborators[sc.UPSTREAM] = {sc.OWNER}
    assert w.run(ENTRY) == 0
    assert w.pulls_from(sc.CHECKPOINT_BRANCH)
    assert "the token's user is a collaborator there" in " ".join(capsys.readouterr().out.split())


def test_the_plan_says_interaction_limits_are_not_known_and_the_refusal_names_them(world, capsys):
    w: World = world()
    assert w.run("--dry-run", ENTRY) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "who may open PRs on NVIDIA/Megatron-LM: all" in out
    assert "not known: NVIDIA/Megatron-LM's interaction limits" in out
    w.state.repos[sc.UPSTREAM].interaction_limit = "contributors_only"
    assert w.run(ENTRY) != 0
    said = " ".join("".join(capsys.readouterr()).split())
    assert "must be a collaborator" in said and "interaction limit" in said
    assert "re-run will not change that" in said


# -- drafts a repository does not support ------------------------------------------------------


def test_without_drafts_the_pr_is_opened_ready_for_review_and_said_so(world, capsys):
    w: World = world()
    w.state.repos[sc.UPSTREAM].drafts = False
    assert w.run(ENTRY) == 0
    (number,) = w.pulls_from(sc.CHECKPOINT_BRANCH)
    assert w.state.pulls[(sc.UPSTREAM, number)].draft is False
    assert f"pr = {number}" in w.manifest.read_text()
    out = " ".join(capsys.readouterr().out.split())
    assert "does not support draft PRs" in out and "ready for review" in out
    creates = [r for r in w.gh.requests if (r.method, r.path) == ("POST", PULLS)]
    assert [r.body["draft"] for r in creates] == [True, False]


# -- renamed or transferred repositories, renamed users: the new name from then on ------------


@pytest.mark.parametrize(
    ("rename", "key", "old", "new"),
    [
        ("repo", "upstream", sc.UPSTREAM, "NVIDIA-Labs/Megatron-Core"),  # transferred
        ("repo", "fork", sc.NEW_FORK, "htesd/megatron-fork"),  # the fork renamed
        ("user", "fork", sc.NEW_FORK, "htesd-new/Megatron-LM-oss"),  # its owner renamed
    ],
)
def test_a_moved_name_is_followed_and_used_everywhere_after(world, rename, key, old, new, capsys):
    w: World = world()
    if rename == "user":
        w.state.rename_user(sc.OWNER, "htesd-new")
    else:
        w.state.rename_repo(old, new)
    assert w.run(ENTRY) == 0
    upstream = new if key == "upstream" else sc.UPSTREAM
    fork_owner = new.split("/")[0] if key == "fork" else sc.OWNER
    (pull,) = [p for p in w.state.pulls.values() if p.state == "open"]
    assert (pull.repo, pull.head_label) == (upstream, f"{fork_owner}:{sc.CHECKPOINT_BRANCH}")
    out = " ".join("".join(capsys.readouterr()).split())
    assert f"{old} is now {new}" in out and f'set `{key} = "{new}"`' in out
    for wrong in ("refusing to fetch", "NOT an attached fork", "only htesd", "check GH_HOST"):
        assert wrong not in out


# -- scan: search completeness and tokenless quotas -------------------------------------------


def test_scan_all_says_a_timed_out_search_is_partial_and_lists_what_it_found(world, capsys):
    w: World = world()
    w.state.search_timeouts = 1  # GitHub answers half of the two PRs
    assert w.scan("--all") == 6
    out = " ".join(capsys.readouterr().out.split())
    assert "incomplete_results: true" in out and "this list is incomplete" in out
    assert "#6017" in out or "#6117" in out  # what it found is kept


def test_scan_says_a_search_over_githubs_cap_is_partial(world, capsys, monkeypatch):
    from testing import fake_github_routes

    w: World = world()
    monkeypatch.setattr(fake_github_routes, "SEARCH_CAP", 1)  # a GitHub scaled down: 1 of 2
    assert w.scan("--json") == 6
    out, err = capsys.readouterr()
    assert "GitHub counts 2 results" in " ".join(err.split()) and len(out.splitlines()) == 1


def test_scan_all_without_a_token_budgets_githubs_60_an_hour_and_keeps_what_it_found(
    world, capsys, monkeypatch
):
    from testing import fake_github

    w: World = world(token=None)
    w.state.enforce_quota = True
    monkeypatch.setitem(fake_github._LIMITS, ("core", False), (3, 3600))  # 60, scaled down
    assert w.scan("--all", "--author", sc.OWNER) == 6
    out = " ".join(capsys.readouterr().out.split())
    assert "stopped after 1 of 2 PRs" in out and "without a token" in out
    assert "for 5,000 an hour" in out
    assert out.count("NVIDIA/Megatron-LM#") == 1  # the one PR read is listed
    assert not [r for r in w.gh.requests if r.status == 403]  # stopped before GitHub refused


# -- classic branch protection: partly readable by anyone ---------------------------------------


def test_the_plan_lists_the_checks_classic_protection_requires_and_no_false_limit(world, capsys):
    w: World = world()
    w.state.classic_protection[(sc.UPSTREAM, "dev")] = ["DCO", "build / unit"]
    assert w.run("--dry-run", ENTRY) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "classic branch protection on dev: required checks: DCO, build / unit" in out
    assert "check DCO: satisfied" in out and "check build / unit: decided by upstream" in out
    assert "not readable without admin" not in out


# -- PR templates where GitHub finds them -------------------------------------------------------

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}  # fmt: skip


def _repo_with(tmp: Path, files: dict[str, str]) -> Path:
    work = tmp / "tpl"
    git.git("init", "-q", "-b", "main", str(work), cwd=tmp)
    for path, text in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    git.git("add", "-A", cwd=work)
    git.git("commit", "-q", "-m", "t", cwd=work, env_extra=GIT_ENV)
    return work


@pytest.mark.parametrize(
    ("path", "found"),
    [
        ("PULL_REQUEST_TEMPLATE.md", True),
        ("docs/pull_request_template.txt", True),
        (".github/Pull_Request_Template", True),
        (".GitHub/pull_request_template.md", True),
        (".github/PULL_REQUEST_TEMPLATE/feature.md", False),  # chosen by ?template=, only
        ("src/pull_request_template.md", False),
    ],
)
def test_a_pr_template_is_found_where_github_finds_one(tmp_path, path, found):
    work = _repo_with(tmp_path, {path: "## What does this PR do?\n", "README": "x\n"})
    got = pr_template.read(work, "HEAD")
    assert (got is not None) == found


def test_the_owners_github_repository_gives_the_template_when_upstream_has_none(world):
    w: World = world()
    clone = w.tmp / "up-main"
    git.git("clone", "-q", "-b", "main", str(w.upstream.bare), str(clone), cwd=w.tmp)
    git.git("rm", "-q", ".github/pull_request_template.md", cwd=clone)
    git.git("commit", "-q", "-m", "no template", cwd=clone, env_extra=GIT_ENV)
    git.git("push", "-q", "origin", "main", cwd=clone)
    org = _repo_with(w.tmp, {"docs/PULL_REQUEST_TEMPLATE.md": "The organisation's own line.\n"
                                                               "- [ ] a box\n"})  # fmt: skip
    bare = w.tmp / "org-github.git"
    git.git("clone", "-q", "--bare", str(org), str(bare), cwd=w.tmp)
    w.state.add_repo("NVIDIA/.github", bare, default_branch="main")
    assert w.run(ENTRY) == 0
    (number,) = w.pulls_from(sc.CHECKPOINT_BRANCH)
    assert "The organisation's own line." in (w.state.pulls[(sc.UPSTREAM, number)].body or "")


# -- smaller: 40-hex branch names (GH002), a token about to expire -----------------------------


def test_a_40_hex_head_branch_is_refused_at_load_before_any_read(world, capsys):
    w: World = world()
    write_manifest(
        w.tmp,
        base_commit=w.upstream.base_commit,
        overrides={ENTRY: {"pr": None, "head_branch": "0123456789" * 4},
                   "hc-mlp-norm-manager": {"pr": None}},
    )  # fmt: skip
    assert w.run(ENTRY) == 5
    said = " ".join("".join(capsys.readouterr()).split())
    assert "GH002" in said and "40 hex characters" in said
    assert w.gh.requests == []  # refused at load: not one read, not one write


def test_a_token_expiring_within_the_hour_is_warned_of_before_the_first_write(world, capsys):
    import datetime

    w: World = world()
    soon = datetime.datetime.now(datetime.UTC) + datetime.timedelta(minutes=20)
    w.state.token_expiry[sc.TOKEN] = f"{soon:%Y-%m-%d %H:%M:%S} UTC"
    assert w.run("--dry-run", ENTRY) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "expires at" in err and "GitHub-Authentication-Token-Expiration" in err
    w.state.token_expiry[sc.TOKEN] = "2099-01-01 00:00:00 UTC"
    assert w.run("--dry-run", ENTRY) == 0
    assert "expires at" not in capsys.readouterr().err
