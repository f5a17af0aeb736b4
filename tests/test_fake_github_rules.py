"""The loopback GitHub's fourth round of GitHub's rules (issue 38), each in GitHub's wording:
locked conversations, SAML SSO's other answers, installation tokens on GET /user, the title
limit, `fork_collab`, who may edit a PR or push to its head, the lag of "No commits between",
push protection, and a workflow change made only in a merge commit."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchcarry import git
from testing import github_scenarios as sc
from testing.fake_github import FakeGitHub
from tests import test_fake_github
from tests.test_fake_github import M, call

gh = test_fake_github.gh  # the fixtures, shared
repos = test_fake_github.repos

UP = f"/repos/{sc.UPSTREAM}"
ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@e"}  # fmt: skip


def _new_pr(gh: FakeGitHub, **extra: object) -> dict:  # type: ignore[type-arg]
    body = {"title": sc.CHECKPOINT_TITLE, "head": f"{sc.OWNER}:{sc.CHECKPOINT_BRANCH}",
            "base": "dev", "body": "x", **extra}  # fmt: skip
    status, _, created = call(gh, "POST", f"{UP}/pulls", token=sc.TOKEN, body=body)
    assert status == 201, created
    return created  # type: ignore[no-any-return]


def test_a_locked_pr_serves_locked_and_refuses_comments_but_from_base_writers(gh: FakeGitHub):
    pull = gh.state.pulls[(sc.UPSTREAM, 6117)]
    pull.locked, pull.active_lock_reason = True, "resolved"
    status, _, body = call(gh, "GET", f"{UP}/pulls/6117")
    assert status == 200 and body["locked"] is True and body["active_lock_reason"] == "resolved"
    M.PullRequest.model_validate(body)
    status, _, body = call(gh, "POST", f"{UP}/issues/6117/comments", token=sc.TOKEN,
                           body={"body": "x"})  # fmt: skip
    assert (status, body["message"]) == (403, "Unable to create comment because issue is locked.")
    gh.state.org_members["NVIDIA"] = {sc.MAINTAINER}  # a writer of the base may still comment
    status, _, _ = call(gh, "POST", f"{UP}/issues/6117/comments", token=sc.MAINTAINER_TOKEN,
                        body={"body": "x"})  # fmt: skip
    assert status == 201


def test_saml_sso_asks_members_only_and_a_search_says_its_results_are_partial(gh: FakeGitHub):
    gh.state.saml_orgs["NVIDIA"] = "https://github.com/orgs/NVIDIA/sso?authorization_request=A"
    status, _, _ = call(gh, "GET", UP, token=sc.TOKEN)
    assert status == 200  # htesd is no member: reading a public repository is not asked
    query = f"/search/issues?q=is:pr+author:{sc.OWNER}"
    status, headers, found = call(gh, "GET", query, token=sc.TOKEN)
    assert len(found["items"]) == 2 and "X-GitHub-SSO" not in headers
    gh.state.org_members["NVIDIA"] = {sc.OWNER}
    status, headers, _ = call(gh, "GET", UP, token=sc.TOKEN)
    assert status == 403 and headers["X-GitHub-SSO"].startswith("required; url=https://")
    status, headers, found = call(gh, "GET", query, token=sc.TOKEN)
    nvidia = gh.state.users["NVIDIA"].id
    assert status == 200 and found["items"] == []  # left out, and said so
    assert headers["X-GitHub-SSO"] == f"partial-results; organizations={nvidia}"
    gh.state.sso_not_found.add("NVIDIA")  # "you may receive a 404 Not Found or a 403"
    status, headers, _ = call(gh, "GET", f"{UP}/pulls/6117", token=sc.TOKEN)
    assert status == 404 and "X-GitHub-SSO" not in headers
    gh.state.sso_authorized.add((sc.TOKEN, "NVIDIA"))
    assert call(gh, "GET", f"{UP}/pulls/6117", token=sc.TOKEN)[0] == 200


def test_an_installation_token_gets_403_from_get_user(gh: FakeGitHub):
    gh.state.add_token("ghs_installation", sc.OWNER)
    status, _, body = call(gh, "GET", "/user", token="ghs_installation")
    assert (status, body["message"]) == (403, "Resource not accessible by integration")


def test_a_title_over_256_characters_is_refused(gh: FakeGitHub):
    body = {"title": "x" * 257, "head": f"{sc.OWNER}:{sc.CHECKPOINT_BRANCH}", "base": "dev"}
    status, _, refused = call(gh, "POST", f"{UP}/pulls", token=sc.TOKEN, body=body)
    assert status == 422 and refused["errors"][0]["field"] == "title"
    assert refused["errors"][0]["message"] == "title is too long (maximum is 256 characters)"
    created = _new_pr(gh, title="x" * 256)
    status, _, _ = call(gh, "PATCH", f"{UP}/pulls/{created['number']}", token=sc.TOKEN,
                        body={"title": "y" * 257})  # fmt: skip
    assert status == 422


def test_an_organisations_fork_cannot_grant_maintainer_edits(gh: FakeGitHub):
    fork = gh.state.repos[sc.NEW_FORK]
    gh.state.users[sc.OWNER].type = "Organization"
    gh.state.org_members[sc.OWNER] = {sc.OWNER}
    body = {"title": "t", "head": f"{sc.OWNER}:{sc.CHECKPOINT_BRANCH}", "base": "dev",
            "maintainer_can_modify": True}  # fmt: skip
    status, _, refused = call(gh, "POST", f"{UP}/pulls", token=sc.TOKEN, body=body)
    assert status == 422 and refused["errors"] == [{
        "resource": "PullRequest", "code": "custom", "field": "fork_collab",
        "message": "Fork collab can't be granted by someone without permission"}]  # fmt: skip
    M.ValidationError.model_validate(refused)
    assert fork.full_name == sc.NEW_FORK
    created = _new_pr(gh, maintainer_can_modify=False)
    assert created["maintainer_can_modify"] is False


def test_only_writers_of_the_head_or_base_or_its_author_may_edit_a_pr(gh: FakeGitHub):
    """GitHub: "To open or update a pull request in a public repository, you must have write
    access to the head or the source branch". The fork's owner may edit a stranger's PR from
    the fork's branch, so the tool's own stranger rule is what keeps it from doing that."""
    created = _new_pr(gh)
    gh.state.add_token("fake-token-mallory", "mallory")
    path = f"{UP}/pulls/{created['number']}"
    status, _, body = call(gh, "PATCH", path, token="fake-token-mallory", body={"body": "mine"})
    assert status == 403 and "write access" in body["message"]
    theirs = gh.state.add_pull(sc.UPSTREAM, title="someone else's", user="mallory",
                               head_ref=sc.CHECKPOINT_BRANCH, head_repo=sc.NEW_FORK)  # fmt: skip
    status, _, _ = call(gh, "PATCH", f"{UP}/pulls/{theirs.number}", token=sc.TOKEN,
                        body={"body": "taken over"})  # fmt: skip
    assert status == 200  # GitHub allows it: the head is htesd's


def _work(gh: FakeGitHub, tmp_path: Path) -> tuple[Path, Path]:
    fork = Path(gh.state.repos[sc.NEW_FORK].clone_url)
    work = tmp_path / "work"
    git.git("clone", "-q", str(fork), str(work), cwd=tmp_path)
    return fork, work


def _push(fork: Path, work: Path, ref: str) -> tuple[int, str, str]:
    return git.git(*git.credential_args(), "push", "--porcelain", str(fork), f"HEAD:{ref}",
                   cwd=work, check=False)  # fmt: skip


def test_only_writers_push_to_a_fork_and_maintainers_only_where_a_pr_allows_it(
    gh: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    fork, work = _work(gh, tmp_path)
    branch = f"refs/heads/{sc.CHECKPOINT_BRANCH}"
    git.git("checkout", "-q", f"origin/{sc.CHECKPOINT_BRANCH}", cwd=work)
    git.git("commit", "-q", "--allow-empty", "-m", "a maintainer's merge", cwd=work,
            env_extra=ENV)  # fmt: skip
    monkeypatch.setenv("GITHUB_TOKEN", sc.MAINTAINER_TOKEN)
    gh.state.org_members["NVIDIA"] = {sc.MAINTAINER}
    code, out, err = _push(fork, work, branch)
    assert code != 0 and "(permission denied)" in out
    assert f"Permission to {sc.NEW_FORK}.git denied to {sc.MAINTAINER}." in err
    created = _new_pr(gh, maintainer_can_modify=False)
    assert _push(fork, work, branch)[0] != 0
    call(gh, "PATCH", f"{UP}/pulls/{created['number']}", token=sc.TOKEN,
         body={"maintainer_can_modify": True})  # fmt: skip
    assert _push(fork, work, branch)[0] == 0  # "Allow edits by maintainers": the PR's branch
    assert _push(fork, work, "refs/heads/elsewhere")[0] != 0  # and only that one


def test_push_protection_refuses_a_secret_with_githubs_lines(
    gh: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    fork, work = _work(gh, tmp_path)
    (work / "conf.py").write_text("x = 1\nTOKEN = 'ghp_" + "a1" * 18 + "'\n")
    git.git("add", "-A", cwd=work)
    git.git("commit", "-q", "-m", "oops", cwd=work, env_extra=ENV)
    monkeypatch.setenv("GITHUB_TOKEN", sc.TOKEN)
    code, out, err = _push(fork, work, "refs/heads/leak")
    assert code != 0 and "(push declined due to repository rule violations)" in out
    assert "GH013: Repository rule violations found for refs/heads/leak." in err
    assert "- GITHUB PUSH PROTECTION" in err and "- Push cannot contain secrets" in err
    assert "path: conf.py:2" in err


def test_a_workflow_change_made_only_in_a_merge_commit_needs_the_scope(
    gh: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """`git diff-tree` prints nothing for a merge without `-m`: the merge's resulting
    workflow files are judged against its first parent and what the fork holds."""
    fork, work = _work(gh, tmp_path)
    flow = work / ".github" / "workflows" / "x.yml"
    git.git("checkout", "-q", "-b", "side", "origin/main", cwd=work)
    flow.parent.mkdir(parents=True)
    flow.write_text("on: push\n")
    git.git("add", "-A", cwd=work)
    git.git("commit", "-q", "-m", "ci", cwd=work, env_extra=ENV)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    git.git("push", "-q", str(fork), "side:refs/heads/side", cwd=work)  # the fork holds it
    gh.state.add_token("ghp_public", sc.OWNER, scopes=("public_repo",))
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_public")

    def merge(text: str) -> None:
        git.git("checkout", "-q", "--detach", "origin/main", cwd=work)
        git.git("merge", "-q", "--no-ff", "--no-commit", "side", cwd=work, env_extra=ENV)
        flow.write_text(text)
        git.git("add", "-A", cwd=work)
        git.git("commit", "-q", "-m", "merge side", cwd=work, env_extra=ENV)

    merge("on: push\n")  # the merge results in what the fork's side branch holds
    assert _push(fork, work, "refs/heads/merged")[0] == 0
    merge("on: pull_request\n")  # the merge alone changes the workflow
    code, out, _ = _push(fork, work, "refs/heads/merged2")
    assert code != 0 and "create or update workflow `.github/workflows/x.yml`" in out


def test_no_commits_between_can_be_githubs_lag_right_after_a_push(gh: FakeGitHub):
    gh.state.compare_lag = 1
    body = {"title": "t", "head": f"{sc.OWNER}:{sc.CHECKPOINT_BRANCH}", "base": "dev"}
    status, _, refused = call(gh, "POST", f"{UP}/pulls", token=sc.TOKEN, body=body)
    assert status == 422 and refused["errors"][0]["message"].startswith("No commits between")
    assert call(gh, "POST", f"{UP}/pulls", token=sc.TOKEN, body=body)[0] == 201
