"""The fake GitHub's routes: GitHub's REST paths, query parameters, status codes and bodies.

Each handler takes the state and the parsed request and returns a `Reply`, or raises
`HttpError` with GitHub's error body. `route` registers a handler in `ROUTES` (regex by
method, as in ghstack's github_fake); the server answers 501 for anything unregistered.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from testing import fake_github_push as push_rules
from testing.fake_github_json import (
    Json,
    branch_json,
    comment_json,
    error_json,
    event_json,
    public_user_json,
    pull_json,
    repo_json,
    search_item_json,
)
from testing.fake_github_state import GitHubState, Pull, Repo


class HttpError(Exception):
    """An error answer: GitHub's status and JSON body (see `error_json`)."""

    def __init__(self, status: int, body: Json, headers: dict[str, str] | None = None):
        super().__init__(body.get("message"))
        self.status, self.body, self.headers = status, body, headers or {}


@dataclass
class Request:
    """A parsed request as a handler sees it (`user`: whom the token maps to, or None)."""

    method: str
    path: str
    query: dict[str, str]
    body: Any
    user: str | None
    base: str  # scheme://host:port plus the /api/v3 prefix if the client used one
    token_kind: str | None = None  # GitHub's kind of the token (by its prefix), if any
    token: str | None = field(default=None, repr=False)  # for SSO authorization lookups


@dataclass
class Reply:
    """Status, JSON body and extra headers (Location, Link) of an answer."""

    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


_Handler = Callable[..., Reply]
ROUTES: list[tuple[str, re.Pattern[str], _Handler]] = []


def route(method: str, pattern: str) -> Callable[[_Handler], _Handler]:
    """Register a handler for METHOD and a path pattern with `{name}` parameters."""

    def register(fn: _Handler) -> _Handler:
        regex = re.compile("^" + re.sub(r"{(\w+)}", r"(?P<\1>[^/]+)", pattern) + "$")
        ROUTES.append((method, regex, fn))
        return fn

    return register


def find(method: str, path: str) -> tuple[_Handler, dict[str, str]] | None:
    """The handler for METHOD PATH and its path parameters; None when GitHub-as-faked has none."""
    for route_method, regex, handler in ROUTES:
        match = regex.match(path)
        if match and route_method == method:
            return handler, match.groupdict()
    return None


def _not_found(doc: str) -> HttpError:
    return HttpError(404, error_json(404, "Not Found", doc))


def _repo(state: GitHubState, req: Request, owner: str, repo: str, doc: str) -> Repo:
    """Case-insensitive lookup, as GitHub's; private repositories are 404 to non-owners."""
    wanted = f"{owner}/{repo}".casefold()
    for found in state.repos.values():
        if found.full_name.casefold() == wanted and (not found.private or req.user == found.owner):
            return found
    raise _not_found(doc)


def _pull(state: GitHubState, req: Request, owner: str, repo: str, number: str, doc: str) -> Pull:
    found = _repo(state, req, owner, repo, doc)
    pull = state.pulls.get((found.full_name, int(number))) if number.isdigit() else None
    if pull is None:
        raise _not_found(doc)
    return pull


def _page(req: Request, items: list[Any]) -> tuple[list[Any], dict[str, str]]:
    """GitHub pagination: per_page (default 30, max 100), page (from 1), and a Link header."""
    per_page = min(max(int(req.query.get("per_page") or 30), 1), 100)
    page = max(int(req.query.get("page") or 1), 1)
    last = max((len(items) + per_page - 1) // per_page, 1)
    chunk = items[(page - 1) * per_page : page * per_page]
    if last == 1:
        return chunk, {}

    def link(n: int, rel: str) -> str:
        return f'<{req.base}{req.path}?{urlencode(req.query | {"page": str(n)})}>; rel="{rel}"'

    rels = []
    if page > 1:
        rels += [link(page - 1, "prev")]
    if page < last:
        rels += [link(page + 1, "next"), link(last, "last")]
    if page > 1:
        rels += [link(1, "first")]
    return chunk, {"Link": ", ".join(rels)}


def _invalid(doc: str, *errors: Json) -> HttpError:
    return HttpError(422, error_json(422, "Validation Failed", doc, list(errors)))


MAX_BODY = 65_536  # GitHub's limit on a PR's, an issue's or a comment's body, in characters
MAX_TITLE = 256  # GitHub's limit on a PR's or an issue's title, in characters


def _check_title(doc: str, title: object) -> None:
    """GitHub's 422 for a title over 256 characters."""
    if isinstance(title, str) and len(title) > MAX_TITLE:
        message = f"title is too long (maximum is {MAX_TITLE} characters)"
        raise _invalid(doc, {"resource": "PullRequest", "code": "custom", "field": "title",
                             "message": message})  # fmt: skip


def _check_body_size(doc: str, resource: str, text: object) -> None:
    """GitHub's 422 for a body over 65,536 characters."""
    if isinstance(text, str) and len(text) > MAX_BODY:
        message = f"body is too long (maximum is {MAX_BODY} characters)"
        raise _invalid(doc, {"resource": resource, "code": "custom", "field": "body",
                             "message": message})  # fmt: skip


@route("GET", "/user")
def get_authenticated_user(state: GitHubState, req: Request) -> Reply:
    doc = "/users/users#get-the-authenticated-user"
    if req.user is None:
        raise HttpError(401, error_json(401, "Requires authentication", doc))
    if req.token_kind == push_rules.APP:  # an installation token acts as the app, no user
        raise HttpError(403, error_json(403, "Resource not accessible by integration", doc))
    return Reply(200, public_user_json(req.base, state.users[req.user], private=True))


@route("GET", "/repos/{owner}/{repo}")
def get_repo(state: GitHubState, req: Request, owner: str, repo: str) -> Reply:
    found = _repo(state, req, owner, repo, "/repos/repos#get-a-repository")
    if state.api_hidden.get(found.full_name, 0) > 0:  # a fork GitHub is still creating
        state.api_hidden[found.full_name] -= 1
        raise _not_found("/repos/repos#get-a-repository")
    body = repo_json(req.base, state, found, full=True)
    if req.user is not None:
        is_owner = req.user == found.owner
        writer = is_owner or state.may_write(req.user, found.full_name)  # collaborators too
        body["permissions"] = {"admin": is_owner, "maintain": is_owner, "push": writer,
                               "triage": writer, "pull": True}  # fmt: skip
    return Reply(200, body)


@route("GET", "/repos/{owner}/{repo}/branches/{branch}")
def get_branch(state: GitHubState, req: Request, owner: str, repo: str, branch: str) -> Reply:
    """`branch-with-protection`: `protected` and a classic protection's required status
    checks are public; GET .../branches/{branch}/protection (the rest) is for admins."""
    doc = "/branches/branches#get-a-branch"
    found = _repo(state, req, owner, repo, doc)
    sha = state.branch_sha(found, branch)
    if sha is None:
        raise HttpError(404, error_json(404, "Branch not found", doc))
    return Reply(
        200,
        branch_json(
            req.base,
            state,
            found,
            branch,
            sha,
            state.classic_protection.get((found.full_name, branch)),
        ),
    )


@route("POST", "/repos/{owner}/{repo}/forks")
def create_fork(state: GitHubState, req: Request, owner: str, repo: str) -> Reply:
    """202 with the fork; an existing fork in the network is returned as is (any name)."""
    upstream = _repo(state, req, owner, repo, "/repos/forks#create-a-fork")
    body = req.body or {}
    assert req.user is not None
    owner = body.get("organization") or req.user
    fork = state.fork(
        upstream.full_name, owner, body.get("name"), bool(body.get("default_branch_only"))
    )
    return Reply(202, repo_json(req.base, state, fork, full=True))


def _pulls_matching(state: GitHubState, repo: Repo, query: dict[str, str]) -> list[Pull]:
    """GET .../pulls filters. Like GitHub, `head` without an `owner:` prefix is ignored."""
    wanted_state = query.get("state") or "open"
    head = query.get("head") or ""
    out = []
    for pull in state.pulls.values():
        if pull.repo != repo.full_name:
            continue
        if wanted_state != "all" and pull.state != wanted_state:
            continue
        if ":" in head and (pull.head_label or "").casefold() != head.casefold():
            continue
        if query.get("base") and pull.base_ref != query["base"]:
            continue
        out.append(pull)
    sort = query.get("sort") or "created"
    key = "updated_at" if sort == "updated" else "created_at"  # popularity etc.: by creation
    out.sort(key=lambda p: (getattr(p, key), p.number))
    # GitHub: direction defaults to desc for sort=created (the default sort), else to asc.
    if (query.get("direction") or ("desc" if sort == "created" else "asc")) == "desc":
        out.reverse()
    return out


@route("GET", "/repos/{owner}/{repo}/pulls")
def list_pulls(state: GitHubState, req: Request, owner: str, repo: str) -> Reply:
    found = _repo(state, req, owner, repo, "/pulls/pulls#list-pull-requests")
    if (req.query.get("state") or "open") not in {"open", "closed", "all"}:
        error = {"resource": "PullRequest", "field": "state", "code": "invalid"}
        raise _invalid("/pulls/pulls#list-pull-requests", error)
    matching = []
    for pull in _pulls_matching(state, found, req.query):
        key = (pull.repo, pull.number)
        if state.hidden_from_lists.get(key, 0) > 0:  # list lag: not indexed yet
            state.hidden_from_lists[key] -= 1
            continue
        matching.append(pull)
    chunk, headers = _page(req, matching)
    return Reply(200, [pull_json(req.base, state, p, simple=True) for p in chunk], headers)


@route("POST", "/repos/{owner}/{repo}/pulls")
def create_pull(state: GitHubState, req: Request, owner: str, repo: str) -> Reply:
    doc = "/pulls/pulls#create-a-pull-request"
    base_repo = _repo(state, req, owner, repo, doc)
    body = req.body or {}
    _may_open_pulls(state, base_repo, req.user, doc)
    for name in ("title", "head", "base"):
        if not body.get(name):
            raise _invalid(doc, {"resource": "PullRequest", "field": name, "code": "missing_field"})
    _check_body_size(doc, "PullRequest", body.get("body"))
    _check_title(doc, body.get("title"))
    head_owner, _, branch = body["head"].rpartition(":")
    head_owner = head_owner or base_repo.owner
    head_repo = _head_repo(state, base_repo, head_owner, body.get("head_repo"))
    head_sha = state.branch_sha(head_repo, branch) if head_repo else None
    if head_repo is None or head_sha is None:
        raise _invalid(doc, {"resource": "PullRequest", "field": "head", "code": "invalid"})
    base_sha = state.branch_sha(base_repo, body["base"])
    if base_sha is None:
        raise _invalid(doc, {"resource": "PullRequest", "field": "base", "code": "invalid"})
    label = f"{head_repo.owner}:{branch}"
    lagging = state.compare_lag > 0
    state.compare_lag = max(state.compare_lag - 1, 0)
    if head_sha == base_sha or lagging:
        message = f"No commits between {body['base']} and {label}"
        raise _invalid(doc, {"resource": "PullRequest", "code": "custom", "message": message})
    if body.get("draft") and not base_repo.drafts:
        message = "Draft pull requests are not supported in this repository."
        raise _invalid(doc, {"resource": "PullRequest", "code": "custom", "message": message})
    may_modify = bool(body.get("maintainer_can_modify", True))
    owner_user = state.users.get(head_repo.owner)
    if may_modify and (
        not state.may_write(req.user, head_repo.full_name)
        or (owner_user is not None and owner_user.type == "Organization")
    ):  # only someone with write access to a user's fork can grant maintainers its branch
        message = "Fork collab can't be granted by someone without permission"
        raise _invalid(doc, {"resource": "PullRequest", "code": "custom", "field": "fork_collab",
                             "message": message})  # fmt: skip
    if state.find_open_pull(base_repo.full_name, label, body["base"]) is not None:
        message = f"A pull request already exists for {label}."
        raise _invalid(doc, {"resource": "PullRequest", "code": "custom", "message": message})
    assert req.user is not None
    pull = state.add_pull(
        base_repo.full_name,
        title=body["title"],
        body=body.get("body"),
        user=req.user,
        head_ref=branch,
        head_repo=head_repo.full_name,
        head_sha=head_sha,
        head_label=label,
        base_ref=body["base"],
        base_sha=base_sha,
        draft=bool(body.get("draft", False)),
        maintainer_can_modify=may_modify,
    )
    if state.list_lag:
        state.hidden_from_lists[(pull.repo, pull.number)] = state.list_lag
    headers = {"Location": f"{req.base}/repos/{pull.repo}/pulls/{pull.number}"}
    return Reply(201, pull_json(req.base, state, pull), headers)


def _may_open_pulls(state: GitHubState, repo: Repo, user: str | None, doc: str) -> None:
    """Who may open a PR: pull requests turned off (404, as for any absent feature), only
    collaborators (`pull_request_creation_policy`, or an interaction limit GitHub shows to
    admins only): 422 "must be a collaborator" to anyone else."""
    if not repo.has_pull_requests:
        raise _not_found(doc)
    limited = repo.pull_request_creation_policy == "collaborators_only" or repo.interaction_limit
    if limited and not state.may_write(user, repo.full_name):
        raise _invalid(doc, {"resource": "PullRequest", "code": "custom",
                             "message": "must be a collaborator"})  # fmt: skip


@route("GET", "/repos/{owner}/{repo}/interaction-limits")
def get_interaction_limits(state: GitHubState, req: Request, owner: str, repo: str) -> Reply:
    """Admins only ("Administration" read): anyone else gets 404, as GitHub hides it."""
    doc = "/interactions/repos#get-interaction-restrictions-for-a-repository"
    found = _repo(state, req, owner, repo, doc)
    if req.user != found.owner:
        raise _not_found(doc)
    if found.interaction_limit is None:
        return Reply(200, {})
    return Reply(200, {"limit": found.interaction_limit, "origin": "repository",
                       "expires_at": "2026-12-31T00:00:00Z"})  # fmt: skip


def _head_repo(state: GitHubState, base: Repo, owner: str, name: str | None) -> Repo | None:
    """The head owner's repository in the base's fork network (GitHub refuses any other)."""
    for repo in state.repos.values():
        if repo.owner.casefold() != owner.casefold() or repo.network != base.network:
            continue
        if name is None or repo.name == name:
            return repo
    return None


@route("GET", "/repos/{owner}/{repo}/pulls/{number}")
def get_pull(state: GitHubState, req: Request, owner: str, repo: str, number: str) -> Reply:
    pull = _pull(state, req, owner, repo, number, "/pulls/pulls#get-a-pull-request")
    return Reply(200, pull_json(req.base, state, pull))


@route("PATCH", "/repos/{owner}/{repo}/pulls/{number}")
def update_pull(state: GitHubState, req: Request, owner: str, repo: str, number: str) -> Reply:
    doc = "/pulls/pulls#update-a-pull-request"
    pull = _pull(state, req, owner, repo, number, doc)
    body = req.body or {}
    assert req.user is not None
    if req.user != pull.user and not (
        state.may_write(req.user, pull.repo) or state.may_write(req.user, pull.head_repo)
    ):  # GitHub: "To open or update a pull request in a public repository, you must have
        # write access to the head or the source branch"
        raise HttpError(403, error_json(403, "Must have write access to the head or the base "
                                        "repository to update a pull request.", doc))  # fmt: skip
    new_state = body.get("state")
    _check_body_size(doc, "PullRequest", body.get("body"))
    _check_title(doc, body.get("title"))
    if new_state not in (None, "open", "closed"):
        raise _invalid(doc, {"resource": "PullRequest", "field": "state", "code": "invalid"})
    if new_state and new_state != pull.state and pull.head_repo is None:
        message = ("state cannot be changed. The repository that submitted this pull request "
                   "has been deleted.")  # fmt: skip
        raise _invalid(doc, {"resource": "PullRequest", "code": "custom", "field": "state",
                             "message": message})  # fmt: skip
    if body.get("base"):
        if state.branch_sha(state.repos[pull.repo], body["base"]) is None:
            raise _invalid(doc, {"resource": "PullRequest", "field": "base", "code": "invalid"})
        pull.base_ref = body["base"]
    for key in ("title", "body", "maintainer_can_modify"):
        if key in body:
            setattr(pull, key, body[key])
    pull.updated_at = state.now()
    state.sync_push_rules()  # "Allow edits by maintainers" may have changed
    if new_state == "closed" and pull.state == "open":
        state.close_pull(pull.repo, pull.number, actor=req.user)
    elif new_state == "open" and pull.state == "closed" and not pull.merged:
        state.reopen_pull(pull.repo, pull.number, actor=req.user)
    return Reply(200, pull_json(req.base, state, pull))


@route("GET", "/repos/{owner}/{repo}/issues/{number}/comments")
def list_comments(state: GitHubState, req: Request, owner: str, repo: str, number: str) -> Reply:
    pull = _pull(state, req, owner, repo, number, "/issues/comments#list-issue-comments")
    mine = [c for c in state.comments if (c.repo, c.issue) == (pull.repo, pull.number)]
    chunk, headers = _page(req, mine)
    return Reply(200, [comment_json(req.base, state, c) for c in chunk], headers)


@route("POST", "/repos/{owner}/{repo}/issues/{number}/comments")
def create_comment(state: GitHubState, req: Request, owner: str, repo: str, number: str) -> Reply:
    doc = "/issues/comments#create-an-issue-comment"
    pull = _pull(state, req, owner, repo, number, doc)
    text = (req.body or {}).get("body")
    if not text:
        raise _invalid(doc, {"resource": "IssueComment", "field": "body", "code": "missing_field"})
    _check_body_size(doc, "IssueComment", text)
    assert req.user is not None
    if pull.locked and not state.may_write(req.user, pull.repo):
        raise HttpError(403, {"message": "Unable to create comment because issue is locked.",
                              "documentation_url": "https://help.github.com/articles/"
                              "locking-conversations/"})  # fmt: skip
    comment = state.add_comment(pull.repo, pull.number, user=req.user, body=text)
    headers = {"Location": f"{req.base}/repos/{pull.repo}/issues/comments/{comment.id}"}
    return Reply(201, comment_json(req.base, state, comment), headers)


@route("GET", "/repos/{owner}/{repo}/issues/{number}/events")
def list_events(state: GitHubState, req: Request, owner: str, repo: str, number: str) -> Reply:
    pull = _pull(state, req, owner, repo, number, "/issues/events#list-issue-events")
    mine = [e for e in state.events if (e.repo, e.issue) == (pull.repo, pull.number)]
    chunk, headers = _page(req, mine)
    return Reply(200, [event_json(req.base, state, e) for e in chunk], headers)


def _search_matches(state: GitHubState, req: Request, pull: Pull, terms: list[str]) -> bool:
    repo = state.repos[pull.repo]
    if repo.private and req.user != repo.owner:
        return False
    is_values = {
        "pr": True,
        "pull-request": True,
        "issue": False,  # this fake holds pull requests only
        "open": pull.state == "open",
        "closed": pull.state == "closed",
        "merged": pull.merged,
        "unmerged": not pull.merged,
        "draft": pull.draft,
    }
    checks: dict[str, Callable[[str], bool]] = {
        "is": lambda v: is_values.get(v, False),
        "type": lambda v: v in {"pr", "pull-request"},
        "state": lambda v: v == pull.state,
        "author": lambda v: v.casefold() == pull.user.casefold(),
        "repo": lambda v: v.casefold() == pull.repo.casefold(),
        "user": lambda v: v.casefold() == repo.owner.casefold(),
        "org": lambda v: v.casefold() == repo.owner.casefold(),
        "head": lambda v: v == pull.head_ref,
        "base": lambda v: v == pull.base_ref,
        "in": lambda v: True,
    }
    text = f"{pull.title}\n{pull.body or ''}".casefold()
    for term in terms:
        key, sep, value = term.partition(":")
        if sep and key in checks:
            if not checks[key](value):
                return False
        elif term.casefold() not in text:
            return False
    return True


SEARCH_CAP = 1000  # GitHub's search API serves up to 1,000 results for each search


@route("GET", "/search/issues")
def search_issues(state: GitHubState, req: Request) -> Reply:
    """Pull requests only (this fake has no plain issues); `is:issue` finds nothing."""
    doc = "/search/search#search-issues-and-pull-requests"
    query = (req.query.get("q") or "").strip()
    if not query:
        raise _invalid(doc, {"resource": "Search", "field": "q", "code": "missing"})
    terms = query.split()
    hidden = _sso_hidden_orgs(state, req)
    found = [p for p in state.pulls.values() if _search_matches(state, req, p, terms)
             and state.repos[p.repo].owner not in hidden]  # fmt: skip
    sort_key = {"updated": "updated_at", "created": "created_at"}.get(req.query.get("sort") or "")
    found.sort(key=lambda p: (getattr(p, sort_key or "created_at"), p.number),
               reverse=(req.query.get("order") or "desc") == "desc")  # fmt: skip
    total = len(found)
    per_page = min(max(int(req.query.get("per_page") or 30), 1), 100)
    if (max(int(req.query.get("page") or 1), 1) - 1) * per_page >= SEARCH_CAP:
        message = f"Only the first {SEARCH_CAP} search results are available"
        raise HttpError(422, error_json(422, message, doc))
    found = found[:SEARCH_CAP]  # "up to 1,000 results for each search"
    incomplete = state.search_timeouts > 0  # GitHub's search timed out: what it had so far
    if incomplete:
        state.search_timeouts -= 1
        found = found[: len(found) // 2]
    chunk, headers = _page(req, found)
    items = [search_item_json(req.base, state, p) for p in chunk]
    body = {"total_count": total, "incomplete_results": incomplete, "items": items,
            "search_type": "lexical"}  # fmt: skip
    if hidden:  # docs: "the API will not return results from the organizations that require
        # SAML SSO"; the header names them by id
        ids = ",".join(str(state.users[o].id) for o in sorted(hidden))
        headers["X-GitHub-SSO"] = f"partial-results; organizations={ids}"
    return Reply(200, body, headers)


def _sso_hidden_orgs(state: GitHubState, req: Request) -> set[str]:
    """Organisations enforcing SAML SSO whose member `req.user` sent a token not authorized
    for them: their results are left out of what could come from several organisations."""
    hidden = set()
    for org in state.saml_orgs:
        members = {m.casefold() for m in state.org_members.get(org, set())}
        if (req.user or "").casefold() in members and (req.token, org) not in state.sso_authorized:
            hidden.add(org)
    return hidden
