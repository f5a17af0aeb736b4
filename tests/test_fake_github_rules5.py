"""The loopback GitHub's fifth round of GitHub's rules (issue 46), each in GitHub's wording:
no conditional write (the last PATCH wins), archived repositories, who may open a pull
request (`pull_request_creation_policy`, interaction limits)."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchcarry import git
from testing import github_scenarios as sc
from testing.fake_github import FakeGitHub, GitHubState
from tests import test_fake_github
from tests.test_fake_github import M, call

gh = test_fake_github.gh  # the fixtures, shared
repos = test_fake_github.repos

UP = f"/repos/{sc.UPSTREAM}"
ARCHIVED = "Repository was archived so is read-only."


def _new_pr(gh: FakeGitHub, token: str = sc.TOKEN) -> tuple[int, dict]:  # type: ignore[type-arg]
    body = {"title": sc.CHECKPOINT_TITLE, "head": f"{sc.OWNER}:{sc.CHECKPOINT_BRANCH}",
            "base": "dev", "body": "x"}  # fmt: skip
    status, _, answer = call(gh, "POST", f"{UP}/pulls", token=token, body=body)
    return status, answer


def test_the_last_patch_wins_and_a_hook_edits_between_a_read_and_a_write(gh: FakeGitHub):
    """GitHub has no conditional write (no ETag/If-Match on PATCH): a body computed from an
    old read silently replaces an edit made since."""
    status, created = _new_pr(gh)
    assert status == 201
    path = f"{UP}/pulls/{created['number']}"

    def tick(state: GitHubState) -> None:
        state.pulls[(sc.UPSTREAM, created["number"])].body = "- [x] ticked"

    gh.on_request("GET", rf"/pulls/{created['number']}$", tick)
    assert call(gh, "GET", path)[2]["body"] == "- [x] ticked"  # made before the answer
    assert call(gh, "GET", path)[2]["body"] == "- [x] ticked"  # once only
    gh.on_request("GET", rf"/pulls/{created['number']}$", lambda s: None, after=True)
    status, _, _ = call(gh, "PATCH", path, token=sc.TOKEN, body={"body": "stale"})
    assert status == 200 and call(gh, "GET", path)[2]["body"] == "stale"


def test_an_archived_repository_is_read_only_for_the_api_and_for_pushes(
    gh: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    gh.state.repos[sc.UPSTREAM].archived = True
    status, _, repo = call(gh, "GET", UP, token=sc.TOKEN)
    assert status == 200 and repo["archived"] is True
    M.FullRepository.model_validate(repo)
    status, refused = _new_pr(gh)
    assert (status, refused["message"]) == (403, ARCHIVED)
    status, _, refused = call(gh, "POST", f"{UP}/issues/6117/comments", token=sc.TOKEN,
                              body={"body": "x"})  # fmt: skip
    assert (status, refused["message"]) == (403, ARCHIVED)
    assert call(gh, "POST", f"{UP}/forks", token=sc.TOKEN, body={})[0] == 202  # forking is not
    gh.state.repos[sc.NEW_FORK].archived = True
    work = tmp_path / "work"
    url = f"{gh.url}/{sc.NEW_FORK}.git"
    monkeypatch.setenv("GITHUB_TOKEN", sc.TOKEN)
    monkeypatch.setenv("GH_HOST", gh.url)
    git.git("clone", "-q", url, str(work), cwd=tmp_path)
    refspec = f"origin/{sc.CHECKPOINT_BRANCH}:refs/heads/x"
    code, _, err = git.git(*git.credential_args(), "push", url, refspec, cwd=work, check=False)
    assert code != 0 and "403" in err


def test_prs_for_collaborators_only_are_refused_to_others_and_the_policy_is_readable(
    gh: FakeGitHub,
):
    status, _, repo = call(gh, "GET", UP, token=sc.TOKEN)
    assert repo["pull_request_creation_policy"] == "all"
    gh.state.repos[sc.UPSTREAM].pull_request_creation_policy = "collaborators_only"
    assert call(gh, "GET", UP, token=sc.TOKEN)[2]["pull_request_creation_policy"] == (
        "collaborators_only"
    )
    status, refused = _new_pr(gh)
    assert status == 422 and refused["errors"][0]["message"] == "must be a collaborator"
    M.ValidationError.model_validate(refused)
    gh.state.collaborators[sc.UPSTREAM] = {sc.OWNER}
    assert _new_pr(gh)[0] == 201


def test_an_interaction_limit_is_shown_to_admins_only_and_refuses_others(gh: FakeGitHub):
    gh.state.repos[sc.UPSTREAM].interaction_limit = "contributors_only"
    status, _, _ = call(gh, "GET", f"{UP}/interaction-limits", token=sc.TOKEN)
    assert status == 404  # "Administration" read: not htesd's
    assert "interaction" not in str(call(gh, "GET", UP, token=sc.TOKEN)[2])
    status, refused = _new_pr(gh)
    assert status == 422 and refused["errors"][0]["message"] == "must be a collaborator"


def test_a_repository_with_pull_requests_off_answers_404_to_a_create(gh: FakeGitHub):
    gh.state.repos[sc.UPSTREAM].has_pull_requests = False
    assert call(gh, "GET", UP, token=sc.TOKEN)[2]["has_pull_requests"] is False
    assert _new_pr(gh)[0] == 404


def test_a_repository_without_drafts_refuses_a_draft_and_takes_a_ready_pr(gh: FakeGitHub):
    gh.state.repos[sc.UPSTREAM].drafts = False
    body = {"title": "t", "head": f"{sc.OWNER}:{sc.CHECKPOINT_BRANCH}", "base": "dev",
            "draft": True}  # fmt: skip
    status, _, refused = call(gh, "POST", f"{UP}/pulls", token=sc.TOKEN, body=body)
    assert status == 422 and refused["errors"][0]["message"] == (
        "Draft pull requests are not supported in this repository."
    )
    M.ValidationError.model_validate(refused)
    status, _, created = call(gh, "POST", f"{UP}/pulls", token=sc.TOKEN,
                              body={**body, "draft": False})  # fmt: skip
    assert status == 201 and created["draft"] is False


def test_a_renamed_repository_answers_its_old_name_with_a_redirect_to_its_id(
    gh: FakeGitHub, tmp_path: Path
):
    repo = gh.state.rename_repo(sc.UPSTREAM, "NVIDIA/Megatron-Core")
    status, _, body = call(gh, "GET", f"{UP}/pulls?state=closed", token=sc.TOKEN)
    assert status == 200 and {p["base"]["repo"]["full_name"] for p in body} == {
        "NVIDIA/Megatron-Core"}  # fmt: skip
    first, then = gh.requests[-2:]
    assert (first.status, first.path, then.path) == (301, f"{UP}/pulls",
                                                     f"/repositories/{repo.id}/pulls")  # fmt: skip
    assert then.query == {"state": "closed"}  # the redirect keeps the query
    assert call(gh, "GET", "/repos/NVIDIA/Megatron-Core", token=sc.TOKEN)[0] == 200
    git.git("ls-remote", f"{gh.url}/{sc.UPSTREAM}.git", cwd=tmp_path)  # git follows too


def test_a_renamed_user_takes_their_forks_prs_and_token_along(gh: FakeGitHub):
    gh.state.rename_user(sc.OWNER, "htesd-renamed")
    status, _, me = call(gh, "GET", "/user", token=sc.TOKEN)
    assert me["login"] == "htesd-renamed"
    status, _, fork = call(gh, "GET", f"/repos/{sc.NEW_FORK}", token=sc.TOKEN)
    assert status == 200 and fork["full_name"] == "htesd-renamed/Megatron-LM-oss"
    status, _, old = call(gh, "GET", f"{UP}/pulls/6117")
    assert old["user"]["login"] == "htesd-renamed"


def _many_closed_pulls(gh: FakeGitHub, count: int) -> None:
    for n in range(count):
        pull = gh.state.add_pull(sc.UPSTREAM, title=f"pr {n}", user=sc.OWNER,
                                 head_ref=f"b{n}", head_repo=None)  # fmt: skip
        pull.state = "closed"


def test_search_serves_1000_results_at_most_and_says_when_it_timed_out(
    gh: FakeGitHub, monkeypatch: pytest.MonkeyPatch
):
    from testing import fake_github_routes

    assert fake_github_routes.SEARCH_CAP == 1000  # GitHub's: "up to 1,000 results"
    monkeypatch.setattr(fake_github_routes, "SEARCH_CAP", 10)  # scaled down
    _many_closed_pulls(gh, 9)
    query = f"/search/issues?q=author:{sc.OWNER}+is:pr&per_page=5"
    status, _, found = call(gh, "GET", query + "&page=2", token=sc.TOKEN)
    assert status == 200 and found["total_count"] == 11 and len(found["items"]) == 5
    M.IssueSearchResultItem.model_validate(found["items"][0])
    status, _, refused = call(gh, "GET", query + "&page=3", token=sc.TOKEN)
    assert (status, refused["message"]) == (422, "Only the first 10 search results are "
                                                 "available")  # fmt: skip
    gh.state.search_timeouts = 1
    status, _, found = call(gh, "GET", query, token=sc.TOKEN)
    assert found["incomplete_results"] is True and found["total_count"] == 11
    assert call(gh, "GET", query, token=sc.TOKEN)[2]["incomplete_results"] is False


def test_without_a_token_github_grants_60_requests_and_10_searches(gh: FakeGitHub):
    status, headers, _ = call(gh, "GET", f"{UP}/pulls/6117")
    assert (headers["X-RateLimit-Limit"], headers["X-RateLimit-Remaining"]) == ("60", "59")
    status, headers, _ = call(gh, "GET", f"/search/issues?q=author:{sc.OWNER}")
    assert (headers["X-RateLimit-Limit"], headers["X-RateLimit-Resource"]) == ("10", "search")
    assert call(gh, "GET", UP, token=sc.TOKEN)[1]["X-RateLimit-Limit"] == "5000"
    gh.state.enforce_quota = True
    for _ in range(59):
        assert call(gh, "GET", UP)[0] == 200
    status, headers, refused = call(gh, "GET", UP)
    assert status == 403 and headers["X-RateLimit-Remaining"] == "0"
    assert refused["message"].startswith("API rate limit exceeded for 127.0.0.1.")
    assert call(gh, "GET", UP, token=sc.TOKEN)[0] == 200  # a token has its own quota


def test_a_branchs_classic_protection_shows_its_required_checks_to_anyone(gh: FakeGitHub):
    status, _, branch = call(gh, "GET", f"{UP}/branches/dev")
    assert status == 200 and branch["protected"] is False
    M.BranchWithProtection.model_validate(branch)
    gh.state.classic_protection[(sc.UPSTREAM, "dev")] = ["DCO", "build"]
    status, _, branch = call(gh, "GET", f"{UP}/branches/dev")  # no token: still readable
    assert branch["protected"] is True
    assert branch["protection"]["required_status_checks"]["contexts"] == ["DCO", "build"]
    M.BranchWithProtection.model_validate(branch)
    assert call(gh, "GET", f"{UP}/branches/nope")[0] == 404


def test_a_branch_named_with_40_hex_characters_is_refused_gh002(
    gh: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from tests.test_fake_github_rules import _push, _work

    fork, work = _work(gh, tmp_path)
    git.git("checkout", "-q", f"origin/{sc.CHECKPOINT_BRANCH}", cwd=work)
    monkeypatch.setenv("GITHUB_TOKEN", sc.TOKEN)
    code, out, err = _push(fork, work, "refs/heads/" + "ab12" * 10)
    assert code != 0 and "(pre-receive hook declined)" in out
    assert ("GH002: Sorry, branch or tag names consisting of 40 hex characters are not "
            "allowed.") in err  # fmt: skip
    assert _push(fork, work, "refs/heads/" + "ab12" * 10 + "x")[0] == 0  # 41: fine


def test_a_token_with_an_expiry_date_is_told_it_on_every_answer(gh: FakeGitHub):
    gh.state.token_expiry[sc.TOKEN] = "2026-09-27 03:07:38 UTC"
    _, headers, _ = call(gh, "GET", UP, token=sc.TOKEN)
    assert headers["GitHub-Authentication-Token-Expiration"] == "2026-09-27 03:07:38 UTC"
    assert "GitHub-Authentication-Token-Expiration" not in call(gh, "GET", UP)[1]
