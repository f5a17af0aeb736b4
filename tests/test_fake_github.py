"""The fake GitHub speaks GitHub's REST API: every body it serves validates against githubkit's
models of GitHub's OpenAPI description, and its routes, auth, pagination and faults behave as
GitHub's do (as far as the resubmit flow can observe)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from githubkit_schemas.latest import models as gh_models

from patchcarry import git
from testing import github_scenarios as sc

if TYPE_CHECKING:
    from testing.fake_github import FakeGitHub

# The `fake_github` fixture. The module is not imported above at run time, so that pytest
# loads it here first (with assertion rewriting) instead of warning that it came too late.


def call(
    gh: FakeGitHub,
    method: str,
    path: str,
    *,
    token: str | None = None,
    body: Any = None,
    prefix: str = "",
) -> tuple[int, dict[str, str], Any]:
    """One request with the stdlib client: (status, headers, parsed JSON body)."""
    url = path if path.startswith("http") else f"{gh.url}{prefix}{path}"
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Accept", "application/vnd.github+json")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token is not None:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            status, headers, raw = resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        status, headers, raw = err.code, dict(err.headers), err.read()
    return status, headers, json.loads(raw) if raw else None


def _bare_repo(root: Path, name: str, branches: tuple[str, ...], ahead: str = "") -> Path:
    """A bare repository whose `branches` point at one empty commit, and `ahead` (a branch)
    at a commit on top of it, so a pull request from it has something to merge."""
    work, bare = root / f"{name}-work", root / f"{name}.git"
    git.init(work)
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
           "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}  # fmt: skip
    git.git("commit", "-q", "--allow-empty", "-m", "base", cwd=work, env_extra=env)
    git.git("init", "-q", "--bare", str(bare), cwd=root)
    for branch in branches:
        git.git("push", "-q", str(bare), f"HEAD:refs/heads/{branch}", cwd=work)
    if ahead:
        git.git("commit", "-q", "--allow-empty", "-m", "fix", cwd=work, env_extra=env)
        git.git("push", "-q", str(bare), f"HEAD:refs/heads/{ahead}", cwd=work)
    return bare


@pytest.fixture(scope="session")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("fake-github-repos")
    return {
        "upstream": _bare_repo(root, "upstream", ("main", "dev")),
        "fork": _bare_repo(root, "fork", ("main", "dev"), ahead=sc.CHECKPOINT_BRANCH),
    }


@pytest.fixture
def gh(fake_github: FakeGitHub, repos: dict[str, Path]) -> FakeGitHub:
    """The #6117 situation with the attached fork present."""
    sc.detached_fork_close(fake_github.state, repos["upstream"], repos["fork"])
    return fake_github


# ------------------------------------------------------------------------------------------------
# Faithfulness: every route, success and error, validated against GitHub's published models
# ------------------------------------------------------------------------------------------------

M = gh_models


def _valid(model: Any, body: Any) -> None:
    """Validate a body, or each item of a list."""
    if isinstance(body, list):
        assert body, f"an empty list proves nothing about {model}"
        for item in body:
            _valid(model, item)
    else:
        model.model_validate(body)


class _AnyRule:
    """`repository-rule-detailed`: one of GitHub's rule shapes."""

    @staticmethod
    def model_validate(body: Any) -> None:
        import pydantic

        shapes = [getattr(M, n) for n in dir(M) if n.startswith("RepositoryRuleDetailedOneof")]
        fits = []
        for shape in shapes:
            try:
                shape.model_validate(body)
                fits.append(shape)
            except pydantic.ValidationError:
                pass
        assert fits, body


def test_every_route_serves_githubs_schemas(gh: FakeGitHub) -> None:
    up, tok = "/repos/NVIDIA/Megatron-LM", sc.TOKEN
    seen: set[tuple[str, int]] = set()

    def check(method: str, path: str, status: int, model: Any, **kw: Any) -> Any:
        got, headers, body = call(gh, method, path, **kw)
        assert got == status, body
        assert {"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset",
                "X-RateLimit-Used", "X-RateLimit-Resource"} <= set(headers)  # fmt: skip
        if status < 400:
            _valid(model, body)
        else:
            model.model_validate(body)
            assert body["message"] and body["documentation_url"].startswith("https://docs.")
            assert body["status"] == str(status) and (model is not M.ValidationError
                                                      or body["errors"])  # fmt: skip
        seen.add((gh.requests[-1].method, status))
        return body

    check("GET", "/user", 200, M.PrivateUser, token=tok)
    check("GET", "/user", 401, M.BasicError)
    upstream = check("GET", up, 200, M.FullRepository, token=tok)
    assert upstream["permissions"]["push"] is False and "parent" not in upstream
    fork = check("GET", "/repos/htesd/Megatron-LM-oss", 200, M.FullRepository)
    assert fork["fork"] is True and fork["parent"]["full_name"] == fork["source"]["full_name"]
    M.Repository.model_validate(fork["parent"])
    check("GET", "/repos/htesd/Megatron-LM", 404, M.BasicError)  # private to others
    assert check("GET", "/repos/htesd/Megatron-LM", 200, M.FullRepository, token=tok)["private"]
    again = check("POST", f"{up}/forks", 202, M.FullRepository, token=tok, body={})
    assert again["full_name"] == "htesd/Megatron-LM-oss"  # the existing fork, another name

    old = check("GET", f"{up}/pulls/6117", 200, M.PullRequest)
    assert old["head"]["repo"] is None and old["merged"] is False and old["state"] == "closed"
    check("GET", f"{up}/pulls/6118", 404, M.BasicError)
    check("GET", f"{up}/pulls?state=closed", 200, M.PullRequestSimple)
    new_pr = {
        "title": sc.CHECKPOINT_TITLE,
        "head": f"htesd:{sc.CHECKPOINT_BRANCH}",
        "base": "dev",
        "body": "Re-submission of #6117.",
        "maintainer_can_modify": True,
    }
    created = check("POST", f"{up}/pulls", 201, M.PullRequest, token=tok, body=new_pr)
    assert created["number"] == 500 and created["head"]["repo"]["full_name"] == sc.NEW_FORK
    check("POST", f"{up}/pulls", 422, M.ValidationError, token=tok, body=new_pr)
    check("GET", f"{up}/pulls?state=open&head=htesd:{sc.CHECKPOINT_BRANCH}", 200,
          M.PullRequestSimple)  # fmt: skip
    check("PATCH", f"{up}/pulls/500", 200, M.PullRequest, token=tok, body={"body": "v2"})
    check("PATCH", f"{up}/pulls/6117", 422, M.ValidationError, token=tok, body={"state": "open"})
    check("POST", f"{up}/issues/500/comments", 201, M.IssueComment, token=tok, body={"body": "x"})
    check("POST", f"{up}/issues/500/comments", 422, M.ValidationError, token=tok, body={})
    check("GET", f"{up}/issues/6117/comments", 200, M.IssueComment)
    events = check("GET", f"{up}/issues/6117/events", 200, M.IssueEvent)
    assert [(e["event"], e["actor"]["login"]) for e in events] == [("closed", "htesd")]
    found = check("GET", "/search/issues?q=is:pr+author:htesd+repo:NVIDIA/Megatron-LM+is:closed",
                  200, M.SearchIssuesGetResponse200)  # fmt: skip
    assert [i["number"] for i in found["items"]] == [6117, 6017]
    M.IssueSearchResultItem.model_validate(found["items"][0])
    check("GET", "/search/issues", 422, M.ValidationError)
    check("DELETE", f"{up}/pulls/500", 501, M.BasicError, token=tok)
    rules = check("GET", f"{up}/rules/branches/dev", 200, _AnyRule)  # readable without auth
    assert rules[0]["parameters"]["required_status_checks"] == [{"context": "DCO gate"}]
    head = created["head"]["sha"]
    runs = check("GET", f"{up}/commits/{head}/check-runs", 200,
                 M.ReposOwnerRepoCommitsRefCheckRunsGetResponse200)  # fmt: skip
    assert [(r["name"], r["app"]["slug"], r["conclusion"]) for r in runs["check_runs"]] == [
        ("DCO", "dco", "failure"), ("DCO gate", "github-actions", "failure")]  # fmt: skip
    assert runs["check_runs"][0]["output"]["summary"].endswith("missing a Signed-off-by from "
                                                               "its author")  # fmt: skip
    check("GET", f"{up}/interaction-limits", 404, M.BasicError, token=tok)  # admins only
    check("GET", f"{up}/branches/dev", 200, M.BranchWithProtection)

    from testing.fake_github_routes import ROUTES

    served = {(r.method, r.path) for r in gh.requests}
    for method, regex, handler in ROUTES:
        assert any(m == method and regex.match(p) for m, p in served), handler.__name__
    assert {s for _, s in seen} >= {200, 201, 202, 401, 404, 422, 501}


def test_githubkit_client_parses_every_read_route(gh: FakeGitHub) -> None:
    """githubkit builds paths and query names from GitHub's OpenAPI description and parses the
    bodies into its models: a dialect would fail here."""
    from githubkit import GitHub, TokenAuthStrategy

    with GitHub(TokenAuthStrategy(sc.TOKEN), base_url=gh.url) as kit:
        assert kit.rest.users.get_authenticated().parsed_data.login == "htesd"
        repo = kit.rest.repos.get("htesd", "Megatron-LM-oss").parsed_data
        assert repo.fork and repo.source and repo.source.full_name == sc.UPSTREAM
        pulls = kit.rest.pulls.list("NVIDIA", "Megatron-LM", state="closed").parsed_data
        assert [p.number for p in pulls] == [6117, 6017]
        assert kit.rest.pulls.get("NVIDIA", "Megatron-LM", 6117).parsed_data.head.repo is None
        # GitHub's description types this list as `issue-event-for-issue`, a union that omits
        # the closed/reopened shape GitHub really serves there; so check it as `issue-event`.
        events = kit.rest.issues.list_events("NVIDIA", "Megatron-LM", 6117).json()
        assert M.IssueEvent.model_validate(events[0]).actor.login == "htesd"
        found = kit.rest.search.issues_and_pull_requests(q="is:pr author:htesd").parsed_data
        assert found.total_count == 2
        created = kit.rest.pulls.create(
            "NVIDIA", "Megatron-LM", title="t", base="dev", head=f"htesd:{sc.CHECKPOINT_BRANCH}"
        ).parsed_data
        assert created.head.sha == git.rev_parse(sc.CHECKPOINT_BRANCH, cwd=Path(
            gh.state.repos[sc.NEW_FORK].clone_url))  # fmt: skip


@pytest.mark.parametrize("prefix", ["", "/api/v3"])
def test_ghapi_reaches_routes_with_or_without_api_v3(gh: FakeGitHub, prefix: str) -> None:
    from ghapi.all import GhApi

    api = GhApi(gh_host=gh.url + prefix, token=sc.TOKEN, sync=True)
    assert api.users.get_authenticated().login == "htesd"
    assert api.pulls.get("NVIDIA", "Megatron-LM", 6017).closed_at == sc.CLOSED_AT
    assert [p.number for p in api.pulls.list("NVIDIA", "Megatron-LM", state="all")] == [
        6117, 6017]  # fmt: skip
    assert gh.requests[-1].path == "/repos/NVIDIA/Megatron-LM/pulls"


# ------------------------------------------------------------------------------------------------
# Server behaviour
# ------------------------------------------------------------------------------------------------


def test_unknown_route_is_501_naming_method_and_path(fake_github: FakeGitHub) -> None:
    status, _, body = call(fake_github, "PUT", "/repos/a/b/pulls/1/merge")
    assert status == 501 and body["message"].endswith("PUT /repos/a/b/pulls/1/merge")


def test_auth_bad_token_and_anonymous_writes_are_401(gh: FakeGitHub) -> None:
    up = "/repos/NVIDIA/Megatron-LM"
    assert call(gh, "GET", f"{up}/pulls/6117", token="not-a-token")[2]["message"] == (
        "Bad credentials")  # fmt: skip
    assert call(gh, "GET", f"{up}/pulls/6117")[0] == 200  # public reads need no token
    status, _, body = call(gh, "POST", f"{up}/issues/6117/comments", body={"body": "x"})
    assert (status, body["message"]) == (401, "Requires authentication")
    status, _, _ = call(gh, "POST", f"{up}/forks", token="not-a-token", body={})
    assert status == 401 and len(gh.state.comments) == 3 and len(gh.state.repos) == 3


def test_duplicate_pr_is_refused_until_the_first_is_closed(gh: FakeGitHub) -> None:
    up, head = "/repos/NVIDIA/Megatron-LM", f"htesd:{sc.CHECKPOINT_BRANCH}"
    pr = {"title": "t", "head": head, "base": "dev"}
    assert call(gh, "POST", f"{up}/pulls", token=sc.TOKEN, body=pr)[0] == 201
    status, _, body = call(gh, "POST", f"{up}/pulls", token=sc.TOKEN, body=pr)
    assert status == 422 and body["errors"] == [{"resource": "PullRequest", "code": "custom",
        "message": f"A pull request already exists for {head}."}]  # fmt: skip
    assert call(gh, "POST", f"{up}/pulls", token=sc.TOKEN, body=pr | {"base": "main"})[0] == 201
    call(gh, "PATCH", f"{up}/pulls/500", token=sc.TOKEN, body={"state": "closed"})
    assert call(gh, "POST", f"{up}/pulls", token=sc.TOKEN, body=pr)[2]["number"] == 502


def test_pr_from_detached_fork_or_missing_branch_is_refused(
    fake_github: FakeGitHub, repos: dict[str, Path]
) -> None:
    sc.detached_fork_close(fake_github.state, repos["upstream"], repos["fork"], new_fork="detached")
    up, invalid_head = "/repos/NVIDIA/Megatron-LM", [
        {"resource": "PullRequest", "field": "head", "code": "invalid"}]  # fmt: skip
    pr = {"title": "t", "head": f"htesd:{sc.CHECKPOINT_BRANCH}", "base": "dev"}
    status, _, body = call(fake_github, "POST", f"{up}/pulls", token=sc.TOKEN, body=pr)
    assert (status, body["errors"]) == (422, invalid_head)  # fork: false is another network
    fake_github.state.repos[sc.NEW_FORK].source = sc.UPSTREAM  # re-attach it
    bad = pr | {"head": "htesd:no-such-branch"}
    assert call(fake_github, "POST", f"{up}/pulls", token=sc.TOKEN, body=bad)[2]["errors"] == (
        invalid_head)  # fmt: skip
    same = call(fake_github, "POST", f"{up}/pulls", token=sc.TOKEN, body=pr | {"head": "htesd:dev"})
    assert same[2]["errors"][0]["message"] == "No commits between dev and htesd:dev"
    assert call(fake_github, "POST", f"{up}/pulls", token=sc.TOKEN, body=pr)[0] == 201
    assert not fake_github.state.pulls.get((sc.UPSTREAM, 501))


def test_pagination_link_headers_walk_every_page(gh: FakeGitHub) -> None:
    for i in range(6):
        gh.state.add_comment(sc.UPSTREAM, 6117, user="htesd", body=f"c{i}")
    url: str | None = "/repos/NVIDIA/Megatron-LM/issues/6117/comments?per_page=3"
    bodies, links = [], []
    while url:
        status, headers, page = call(gh, "GET", url, prefix="/api/v3")
        assert status == 200 and len(page) <= 3
        bodies += [c["body"] for c in page]
        links.append(headers.get("Link", ""))
        nxt = [p for p in links[-1].split(", ") if p.endswith('rel="next"')]
        url = nxt[0][1 : nxt[0].index(">")] if nxt else None
    assert len(bodies) == 7 and bodies[-1] == "c5" and len(links) == 3
    assert "/api/v3/" in links[0] and 'page=3>; rel="last"' in links[0]
    assert 'rel="prev"' in links[-1] and 'rel="next"' not in links[-1]


def test_fail_next_applies_nothing_and_fail_after_apply_does(gh: FakeGitHub) -> None:
    up = "/repos/NVIDIA/Megatron-LM"
    pr = {"title": "t", "head": f"htesd:{sc.CHECKPOINT_BRANCH}", "base": "dev"}
    gh.fail_next("POST", r"/pulls$", 502, times=2)
    assert [call(gh, "POST", f"{up}/pulls", token=sc.TOKEN, body=pr)[0] for _ in "ab"] == [502] * 2
    assert (sc.UPSTREAM, 500) not in gh.state.pulls
    gh.fail_after_apply("POST", r"/pulls$")
    assert call(gh, "POST", f"{up}/pulls", token=sc.TOKEN, body=pr)[0] == 502
    assert gh.state.pulls[(sc.UPSTREAM, 500)].state == "open"  # applied; the rerun must find it
    assert call(gh, "POST", f"{up}/pulls", token=sc.TOKEN, body=pr)[0] == 422
    assert [r.status for r in gh.writes()] == [502, 502, 502, 422]


def test_rate_limit_and_dropped_connection(gh: FakeGitHub) -> None:
    gh.rate_limit_next("GET", r"^/user$", reset_in=120)
    status, headers, body = call(gh, "GET", "/user", token=sc.TOKEN)
    assert (status, headers["X-RateLimit-Remaining"]) == (403, "0")
    assert int(headers["X-RateLimit-Reset"]) > 0 and "rate limit" in body["message"]
    gh.drop_next("GET", r"^/user$")
    with pytest.raises((urllib.error.URLError, ConnectionError, OSError)):
        call(gh, "GET", "/user", token=sc.TOKEN)
    assert call(gh, "GET", "/user", token=sc.TOKEN)[0] == 200  # one-shot
    assert [r.status for r in gh.requests] == [403, 0, 200]


def test_request_log_keeps_who_but_never_the_token(gh: FakeGitHub) -> None:
    call(gh, "GET", "/user", token=sc.TOKEN)
    call(gh, "GET", "/user", token="wrong-secret-value")
    call(gh, "GET", "/user")
    assert [(r.authorized, r.user) for r in gh.requests] == [(True, "htesd"), (True, None),
                                                             (False, None)]  # fmt: skip
    dump = repr(gh.requests) + json.dumps([r.__dict__ for r in gh.requests])
    assert sc.TOKEN not in dump and "wrong-secret-value" not in dump


def test_pull_list_filters_like_github(gh: FakeGitHub) -> None:
    def numbers(query: str) -> list[int]:
        return [p["number"] for p in call(gh, "GET", f"/repos/NVIDIA/Megatron-LM/pulls?{query}")[2]]

    assert numbers("") == [] and numbers("state=closed&base=dev") == [6117, 6017]
    assert numbers(f"state=all&head=htesd:{sc.HC_BRANCH}") == [6017]
    assert numbers(f"state=all&head={sc.HC_BRANCH}") == [6117, 6017]  # no owner: ignored
    assert numbers("state=all&base=main") == []
    assert numbers("state=all&sort=updated") == [6017, 6117]  # then direction defaults to asc
    assert numbers("state=all&direction=asc&per_page=1&page=2") == [6117]


def test_search_qualifiers(gh: FakeGitHub, repos: dict[str, Path]) -> None:
    sc.merged(gh.state, repos["upstream"])

    def numbers(q: str) -> list[int]:
        return [i["number"] for i in call(gh, "GET", f"/search/issues?q={q}")[2]["items"]]

    assert numbers("is:pr+author:htesd+is:closed") == [6100, 6117, 6017]
    assert numbers("is:pr+is:merged") == [6100] and numbers("is:pr+is:unmerged") == [6117, 6017]
    assert numbers("is:pr+CheckpointFunction") == [6117] and numbers("is:issue") == []
    assert numbers("is:pr+author:yaox12") == [] and numbers("repo:other/repo") == []


def test_fork_creates_a_bare_clone_renamed_past_the_old_repo(
    fake_github: FakeGitHub, repos: dict[str, Path]
) -> None:
    sc.detached_fork_close(fake_github.state, repos["upstream"], new_fork="none")
    up = "/repos/NVIDIA/Megatron-LM"
    status, _, body = call(fake_github, "POST", f"{up}/forks", token=sc.TOKEN, body={})
    assert (status, body["full_name"], body["fork"]) == (202, "htesd/Megatron-LM-1", True)
    assert body["clone_url"] == f"{fake_github.url}/htesd/Megatron-LM-1.git"  # its git side
    assert git.ls_remote_refs(body["clone_url"], ["refs/heads/dev"])[1]  # the branches copied
    named = call(fake_github, "POST", f"{up}/forks", token=sc.TOKEN, body={"name": "x"})[2]
    assert named["full_name"] == "htesd/Megatron-LM-1"  # one fork per owner and network
    fake_github.state.add_token("fake-token-other", "other")
    only = call(fake_github, "POST", f"{up}/forks", token="fake-token-other",
                body={"default_branch_only": True})[2]  # fmt: skip
    heads = git.ls_remote_refs(only["clone_url"], ["refs/heads/*"])[1]
    assert (only["full_name"], list(heads)) == ("other/Megatron-LM", ["refs/heads/main"])


def test_scenario_6117_and_6017_closed_in_the_same_second_by_the_owner(gh: FakeGitHub) -> None:
    for number in (6117, 6017):
        pull = call(gh, "GET", f"/repos/NVIDIA/Megatron-LM/pulls/{number}")[2]
        assert (pull["closed_at"], pull["merged_at"], pull["head"]["repo"]) == (
            sc.CLOSED_AT, None, None)  # fmt: skip
        events = call(gh, "GET", f"/repos/NVIDIA/Megatron-LM/issues/{number}/events")[2]
        assert [(e["actor"]["login"], e["created_at"]) for e in events] == [
            ("htesd", sc.CLOSED_AT)]  # fmt: skip
    assert gh.state.dump().splitlines() == [
        f"NVIDIA/Megatron-LM#6017 closed unmerged htesd:{sc.HC_BRANCH} -> dev head.repo=null"
        f" by htesd: {sc.HC_TITLE}",
        f"    closed by htesd at {sc.CLOSED_AT}",
        "    2 comments",
        f"NVIDIA/Megatron-LM#6117 closed unmerged htesd:{sc.CHECKPOINT_BRANCH} -> dev"
        f" head.repo=null by htesd: {sc.CHECKPOINT_TITLE}",
        f"    closed by htesd at {sc.CLOSED_AT}",
        "    1 comment",
    ]
    status, _, body = call(gh, "PATCH", "/repos/NVIDIA/Megatron-LM/pulls/6117",
                           token=sc.TOKEN, body={"state": "open"})  # fmt: skip
    assert status == 422 and "has been deleted" in body["errors"][0]["message"]


def test_classic_tokens_carry_their_scopes_and_fine_grained_writes_upstream_are_refused(
    gh: FakeGitHub,
) -> None:
    up = "/repos/NVIDIA/Megatron-LM"
    gh.state.add_token("ghp_nosope", sc.OWNER, scopes=())
    gh.state.add_token("github_pat_11fine", sc.OWNER, scopes=())
    status, headers, _ = call(gh, "GET", "/user", token=sc.TOKEN)
    assert status == 200 and headers["X-OAuth-Scopes"] == "repo, workflow"
    status, headers, body = call(gh, "POST", f"{up}/issues/6117/comments", token="ghp_nosope",
                                 body={"body": "x"})  # fmt: skip
    assert (status, body["message"], headers["X-OAuth-Scopes"]) == (404, "Not Found", "")
    status, headers, _ = call(gh, "GET", "/user", token="github_pat_11fine")
    assert status == 200 and "X-OAuth-Scopes" not in headers
    status, _, body = call(gh, "POST", f"{up}/issues/6117/comments", token="github_pat_11fine",
                           body={"body": "x"})  # fmt: skip
    assert (status, body["message"]) == (403, "Resource not accessible by personal access token")


def test_fork_receive_pack_refuses_workflow_changes_and_hidden_refs_per_ref(
    gh: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fork = Path(gh.state.repos[sc.NEW_FORK].clone_url)
    work = tmp_path / "work"
    git.git("clone", "-q", str(fork), str(work), cwd=tmp_path)
    (work / ".github" / "workflows").mkdir(parents=True)
    (work / ".github" / "workflows" / "x.yml").write_text("on: push\n")
    git.git("add", "-A", cwd=work)
    git.git("commit", "-q", "-m", "ci", cwd=work, env_extra={
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@e"})  # fmt: skip
    gh.state.add_token("ghp_public", sc.OWNER, scopes=("public_repo",))
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_public")
    # the token rides with the tool's credential helper (every other git run is without it)
    code, out, err = git.git(*git.credential_args(), "push", "--porcelain", str(fork),
                             "HEAD:refs/heads/ci", "HEAD:refs/pull/1/head", cwd=work,
                             check=False)  # fmt: skip
    assert code != 0
    assert ("!\tHEAD:refs/heads/ci\t[remote rejected] (refusing to allow a Personal Access Token "
            "to create or update workflow `.github/workflows/x.yml` without `workflow` scope)"
            ) in out  # fmt: skip
    assert "!\tHEAD:refs/pull/1/head\t[remote rejected] (deny updating a hidden ref)" in out
    assert gh.state.branch_sha(gh.state.repos[sc.NEW_FORK], "ci") is None  # nothing moved
    monkeypatch.setenv("GITHUB_TOKEN", sc.TOKEN)  # repo + workflow
    code, out, _ = git.git("push", "--porcelain", str(fork), "HEAD:refs/heads/ci", cwd=work,
                           check=False)  # fmt: skip
    assert code == 0 and gh.state.branch_sha(gh.state.repos[sc.NEW_FORK], "ci") is not None


def test_dco_verdict_wants_the_authors_name_and_email_as_the_dco_app_does(tmp_path):
    """dcoapp/app lib/dco.js: a sign-off matches the author's (or committer's) name AND email,
    case-insensitively; `Signed-off-by: Jane Doe` under `Jane Q. Doe` fails upstream."""
    from patchcarry import git as gitmod
    from testing.fake_github_checks import dco_verdict

    repo = tmp_path / "r"
    gitmod.init(repo)
    env = {"GIT_AUTHOR_NAME": "Jane Q. Doe", "GIT_AUTHOR_EMAIL": "jane@example.invalid",
           "GIT_COMMITTER_NAME": "Bot", "GIT_COMMITTER_EMAIL": "bot@example.invalid"}  # fmt: skip

    def verdict(signoff: str) -> str:
        gitmod.git("commit", "-q", "--allow-empty", "-m", f"x\n\nSigned-off-by: {signoff}",
                   cwd=repo, env_extra=env)  # fmt: skip
        return dco_verdict(repo, "HEAD", None)[0]

    assert verdict("Jane Doe <jane@example.invalid>") == "failure"
    assert verdict("jane q. doe <JANE@example.invalid>") == "success"
    assert verdict("Bot <bot@example.invalid>") == "success"  # the committer's own
    assert verdict("Jane Q. Doe <bot@example.invalid>") == "success"  # as the App pairs them


def test_a_workflow_file_another_branch_already_holds_needs_no_scope_and_each_commit_counts(
    gh: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GitHub's scope documentation: the same path and contents on another branch of the
    repository may be committed without `workflow`; each new commit is judged on its own."""
    fork = Path(gh.state.repos[sc.NEW_FORK].clone_url)
    work = tmp_path / "work"
    git.git("clone", "-q", str(fork), str(work), cwd=tmp_path)
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}  # fmt: skip
    flow = work / ".github" / "workflows" / "x.yml"
    flow.parent.mkdir(parents=True)

    def commit(text: str | None, message: str) -> None:
        if text is None:
            flow.unlink()
        else:
            flow.write_text(text)
        git.git("add", "-A", cwd=work)
        git.git("commit", "-q", "-m", message, cwd=work, env_extra=env)

    commit("on: push\n", "ci")
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)  # the owner's own push: no rule
    git.git("push", "-q", str(fork), "HEAD:refs/heads/has-ci", cwd=work)
    git.git("checkout", "-q", "--orphan", "again", cwd=work)  # a new root, same file
    commit("on: push\n", "the same file again, another commit")
    gh.state.add_token("ghp_public", sc.OWNER, scopes=("public_repo",))
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_public")
    push = (*git.credential_args(), "push", "--porcelain", str(fork), "HEAD:refs/heads/again")
    code, _, _ = git.git(*push, cwd=work, check=False)  # the token rides with the helper only
    assert code == 0  # path and contents exist on has-ci
    commit("on: pull_request\n", "changed")
    commit("on: push\n", "changed back")  # the tree ends as has-ci has it; a commit did not
    code, out, _ = git.git(*push, cwd=work, check=False)
    assert code != 0 and "without `workflow` scope" in out
