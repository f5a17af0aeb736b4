"""A loopback fake of GitHub's REST API: `GitHubState` (the data) behind a real HTTP server.

Design after ghstack's `github_fake.py` (a state store with easy-to-spot id counters and regex
routing by method), but served by `ThreadingHTTPServer` on 127.0.0.1 so the production client
(ghapi) runs unmodified against it. Every JSON body is built whole by the `*_json` builders and
validated against githubkit's models of GitHub's OpenAPI description in tests/test_fake_github.py.

Use it as a context manager (`with FakeGitHub() as gh:`) or via the `fake_github` fixture; point a
client at `gh.url` (ghapi: `GhApi(gh_host=gh.url)`; a `/api/v3` prefix is accepted too).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from patchcarry import git as gitmod

DOCS = "https://docs.github.com/rest"
WEB = "https://github.com"
Json = dict[str, Any]


def _ts(when: dt.datetime) -> str:
    return when.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _node_id(kind: str, ident: int) -> str:
    return f"{kind}_kwDO{ident:010d}"


def fake_sha(*parts: object) -> str:
    """A stable 40-hex sha for objects that have no real git commit behind them."""
    return hashlib.sha1("\0".join(map(str, parts)).encode()).hexdigest()


# ----------------------------------------------------------------------------------------------
# State
# ----------------------------------------------------------------------------------------------


@dataclass
class User:
    login: str
    id: int
    type: str = "User"  # or "Organization"
    name: str | None = None
    created_at: str = "2020-01-01T00:00:00Z"


@dataclass
class Repo:
    owner: str
    name: str
    id: int
    clone_url: str
    default_branch: str = "main"
    private: bool = False
    fork: bool = False
    parent: str | None = None  # full_name of the repository this was forked from
    source: str | None = None  # full_name of the root of the fork network
    created_at: str = "2020-01-01T00:00:00Z"

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    @property
    def network(self) -> str:
        return self.source or self.full_name


@dataclass
class Pull:
    repo: str  # base repository full_name
    number: int
    id: int
    title: str
    body: str | None
    user: str
    head_ref: str
    head_sha: str
    head_repo: str | None  # None: the head repository is gone or left the network
    head_label: str | None
    base_ref: str
    base_sha: str
    created_at: str
    updated_at: str
    state: str = "open"
    draft: bool = False
    merged: bool = False
    merged_at: str | None = None
    merged_by: str | None = None
    closed_at: str | None = None
    maintainer_can_modify: bool = True
    author_association: str = "CONTRIBUTOR"


@dataclass
class Comment:
    repo: str
    issue: int
    id: int
    user: str
    body: str
    created_at: str
    updated_at: str


@dataclass
class Event:
    repo: str
    issue: int
    id: int
    actor: str
    event: str  # "closed", "reopened", "merged", "head_ref_deleted", ...
    created_at: str
    commit_id: str | None = None


class GitHubState:
    """Users, tokens, repositories, pull requests, comments and events. Not thread-safe alone:
    the server serialises access with `lock`."""

    def __init__(self, fork_storage: Path | None = None, clock: Callable[[], str] | None = None):
        self.users: dict[str, User] = {}
        self.tokens: dict[str, str] = {}
        self.repos: dict[str, Repo] = {}
        self.pulls: dict[tuple[str, int], Pull] = {}
        self.comments: list[Comment] = []
        self.events: list[Event] = []
        self.fork_storage = fork_storage  # where POST .../forks puts a bare clone (if set)
        self.now = clock or (lambda: _ts(dt.datetime.now(dt.timezone.utc)))
        self.lock = threading.RLock()
        self._next_number = 500
        self._ids = {"user": 1000, "repo": 2000, "pull": 3000, "comment": 4000, "event": 5000}

    def _id(self, kind: str) -> int:
        self._ids[kind] += 1
        return self._ids[kind]

    # -- users and tokens --
    def add_user(self, login: str, *, type: str = "User", name: str | None = None) -> User:
        if login not in self.users:
            self.users[login] = User(login, self._id("user"), type, name)
        return self.users[login]

    def add_token(self, token: str, login: str) -> None:
        self.add_user(login)
        self.tokens[token] = login

    # -- repositories --
    def add_repo(
        self,
        full_name: str,
        clone_url: str | Path | None = None,
        *,
        default_branch: str = "main",
        private: bool = False,
        fork_of: str | None = None,
        created_at: str | None = None,
    ) -> Repo:
        """A repository; `fork_of` makes it an attached fork (parent/source set)."""
        owner, name = full_name.split("/")
        self.add_user(owner)
        parent = self.repos[fork_of] if fork_of else None
        repo = Repo(
            owner,
            name,
            self._id("repo"),
            str(clone_url) if clone_url else f"{WEB}/{full_name}.git",
            default_branch,
            private,
            fork=parent is not None,
            parent=parent.full_name if parent else None,
            source=parent.network if parent else None,
            created_at=created_at or self.now(),
        )
        self.repos[full_name] = repo
        return repo

    def fork(
        self, full_name: str, owner: str, name: str | None = None, default_branch_only: bool = False
    ) -> Repo:
        """GitHub's fork: the owner's existing fork in the network if any, else a new one
        (renamed `NAME-1`, `NAME-2`, ... when the owner already has a repository of that name)
        holding a copy of the branches (only the default one if `default_branch_only`)."""
        upstream = self.repos[full_name]
        for repo in self.repos.values():
            if repo.owner == owner and repo.fork and repo.network == upstream.network:
                return repo
        base = name or upstream.name
        candidate, n = base, 0
        while f"{owner}/{candidate}" in self.repos:
            n += 1
            candidate = f"{base}-{n}"
        target = f"{owner}/{candidate}"
        clone_url: str | None = None
        if self.fork_storage is not None and _local_git_dir(upstream.clone_url):
            dest = self.fork_storage / f"{owner}+{candidate}.git"
            only = ["--single-branch", "--branch", upstream.default_branch]
            args = ["clone", "--bare", "-q", *(only if default_branch_only else [])]
            gitmod.git(*args, upstream.clone_url, str(dest), cwd=self.fork_storage)
            clone_url = str(dest)
        return self.add_repo(
            target, clone_url, default_branch=upstream.default_branch, fork_of=full_name
        )

    # -- pull requests --
    def add_pull(
        self,
        repo: str,
        *,
        title: str,
        user: str,
        head_ref: str,
        head_repo: str | None,
        head_sha: str | None = None,
        head_label: str | None = None,
        base_ref: str | None = None,
        base_sha: str | None = None,
        body: str | None = None,
        number: int | None = None,
        draft: bool = False,
        maintainer_can_modify: bool = True,
        created_at: str | None = None,
    ) -> Pull:
        """An open PR. `number` preloads a fixed one (6117); otherwise 500, 501, ..."""
        self.add_user(user)
        if number is None:
            while any(r == repo and n == self._next_number for r, n in self.pulls):
                self._next_number += 1
            number, self._next_number = self._next_number, self._next_number + 1
        base = self.repos[repo]
        when = created_at or self.now()
        head_owner = head_repo.split("/")[0] if head_repo else user
        pull = Pull(
            repo=repo,
            number=number,
            id=self._id("pull"),
            title=title,
            body=body,
            user=user,
            head_ref=head_ref,
            head_sha=head_sha or fake_sha(repo, number, "head"),
            head_repo=head_repo,
            head_label=head_label or f"{head_owner}:{head_ref}",
            base_ref=base_ref or base.default_branch,
            base_sha=base_sha or fake_sha(repo, number, "base"),
            created_at=when,
            updated_at=when,
            draft=draft,
            maintainer_can_modify=maintainer_can_modify,
            author_association="OWNER" if user == base.owner else "CONTRIBUTOR",
        )
        self.pulls[(repo, number)] = pull
        return pull

    def close_pull(self, repo: str, number: int, *, actor: str, at: str | None = None) -> Pull:
        pull = self.pulls[(repo, number)]
        when = at or self.now()
        pull.state, pull.closed_at, pull.updated_at = "closed", when, when
        self.add_event(repo, number, actor=actor, event="closed", created_at=when)
        return pull

    def reopen_pull(self, repo: str, number: int, *, actor: str) -> Pull:
        pull = self.pulls[(repo, number)]
        pull.state, pull.closed_at, pull.updated_at = "open", None, self.now()
        self.add_event(repo, number, actor=actor, event="reopened", created_at=pull.updated_at)
        return pull

    def merge_pull(self, repo: str, number: int, *, actor: str, at: str | None = None) -> Pull:
        pull = self.pulls[(repo, number)]
        when = at or self.now()
        pull.merged, pull.merged_at, pull.merged_by = True, when, actor
        sha = fake_sha(repo, number, "merge")
        self.add_event(repo, number, actor=actor, event="merged", created_at=when, commit_id=sha)
        return self.close_pull(repo, number, actor=actor, at=when)

    # -- conversation --
    def add_comment(
        self, repo: str, issue: int, *, user: str, body: str, at: str | None = None
    ) -> Comment:
        self.add_user(user)
        when = at or self.now()
        comment = Comment(repo, issue, self._id("comment"), user, body, when, when)
        self.comments.append(comment)
        return comment

    def add_event(
        self,
        repo: str,
        issue: int,
        *,
        actor: str,
        event: str,
        created_at: str | None = None,
        commit_id: str | None = None,
    ) -> Event:
        self.add_user(actor)
        when = created_at or self.now()
        ev = Event(repo, issue, self._id("event"), actor, event, when, commit_id)
        self.events.append(ev)
        return ev

    def find_open_pull(self, repo: str, head_label: str, base_ref: str) -> Pull | None:
        for pull in self.pulls.values():
            if (pull.repo, pull.head_label, pull.base_ref, pull.state) == (
                repo,
                head_label,
                base_ref,
                "open",
            ):
                return pull
        return None

    def branch_sha(self, repo: Repo, branch: str) -> str | None:
        """The commit `branch` names in `repo`'s local bare clone; a fake sha if not local."""
        git_dir = _local_git_dir(repo.clone_url)
        if git_dir is None:
            return fake_sha(repo.full_name, branch)
        code, out, _ = gitmod.git(
            "rev-parse", "--verify", "-q", f"refs/heads/{branch}^{{commit}}",
            cwd=git_dir, check=False,
        )  # fmt: skip
        return out.strip() if code == 0 else None


def _local_git_dir(clone_url: str) -> Path | None:
    path = Path(clone_url[len("file://") :] if clone_url.startswith("file://") else clone_url)
    return path if path.is_absolute() and path.is_dir() else None


# ----------------------------------------------------------------------------------------------
# JSON builders: whole objects in GitHub's shapes (checked against githubkit's models)
# ----------------------------------------------------------------------------------------------

_USER_URLS = {
    "followers_url": "/followers",
    "following_url": "/following{/other_user}",
    "gists_url": "/gists{/gist_id}",
    "starred_url": "/starred{/owner}{/repo}",
    "subscriptions_url": "/subscriptions",
    "organizations_url": "/orgs",
    "repos_url": "/repos",
    "events_url": "/events{/privacy}",
    "received_events_url": "/received_events",
}
_REPO_URLS = {
    "archive_url": "/{archive_format}{/ref}",
    "assignees_url": "/assignees{/user}",
    "blobs_url": "/git/blobs{/sha}",
    "branches_url": "/branches{/branch}",
    "collaborators_url": "/collaborators{/collaborator}",
    "comments_url": "/comments{/number}",
    "commits_url": "/commits{/sha}",
    "compare_url": "/compare/{base}...{head}",
    "contents_url": "/contents/{+path}",
    "contributors_url": "/contributors",
    "deployments_url": "/deployments",
    "downloads_url": "/downloads",
    "events_url": "/events",
    "forks_url": "/forks",
    "git_commits_url": "/git/commits{/sha}",
    "git_refs_url": "/git/refs{/sha}",
    "git_tags_url": "/git/tags{/sha}",
    "hooks_url": "/hooks",
    "issue_comment_url": "/issues/comments{/number}",
    "issue_events_url": "/issues/events{/number}",
    "issues_url": "/issues{/number}",
    "keys_url": "/keys{/key_id}",
    "labels_url": "/labels{/name}",
    "languages_url": "/languages",
    "merges_url": "/merges",
    "milestones_url": "/milestones{/number}",
    "notifications_url": "/notifications{?since,all,participating}",
    "pulls_url": "/pulls{/number}",
    "releases_url": "/releases{/id}",
    "stargazers_url": "/stargazers",
    "statuses_url": "/statuses/{sha}",
    "subscribers_url": "/subscribers",
    "subscription_url": "/subscription",
    "tags_url": "/tags",
    "teams_url": "/teams",
    "trees_url": "/git/trees{/sha}",
}


def user_json(api: str, user: User) -> Json:
    """GitHub's `simple-user`."""
    base = f"{api}/users/{user.login}"
    return {
        "login": user.login,
        "id": user.id,
        "node_id": _node_id("U", user.id),
        "avatar_url": f"https://avatars.githubusercontent.com/u/{user.id}?v=4",
        "gravatar_id": "",
        "url": base,
        "html_url": f"{WEB}/{user.login}",
        **{key: base + suffix for key, suffix in _USER_URLS.items()},
        "type": user.type,
        "user_view_type": "public",
        "site_admin": False,
    }


def public_user_json(api: str, user: User, *, private: bool = False) -> Json:
    """`public-user` (GET /users/{login}); `private-user` (GET /user) when `private`."""
    out = user_json(api, user) | {
        "name": user.name,
        "company": None,
        "blog": "",
        "location": None,
        "email": None,
        "hireable": None,
        "bio": None,
        "twitter_username": None,
        "public_repos": 0,
        "public_gists": 0,
        "followers": 0,
        "following": 0,
        "created_at": user.created_at,
        "updated_at": user.created_at,
    }
    if private:
        out |= {
            "private_gists": 0,
            "total_private_repos": 0,
            "owned_private_repos": 0,
            "disk_usage": 0,
            "collaborators": 0,
            "two_factor_authentication": True,
        }
    return out


def repo_json(api: str, state: GitHubState, repo: Repo, *, full: bool = False) -> Json:
    """`repository` (nested in PRs); `full-repository` (GET /repos/{o}/{r}) when `full`."""
    base = f"{api}/repos/{repo.full_name}"
    out: Json = {
        "id": repo.id,
        "node_id": _node_id("R", repo.id),
        "name": repo.name,
        "full_name": repo.full_name,
        "private": repo.private,
        "owner": user_json(api, state.users[repo.owner]),
        "html_url": f"{WEB}/{repo.full_name}",
        "description": None,
        "fork": repo.fork,
        "url": base,
        **{key: base + suffix for key, suffix in _REPO_URLS.items()},
        "git_url": f"git://github.com/{repo.full_name}.git",
        "ssh_url": f"git@github.com:{repo.full_name}.git",
        "clone_url": repo.clone_url,
        "svn_url": f"{WEB}/{repo.full_name}",
        "mirror_url": None,
        "homepage": None,
        "language": "Python",
        "forks_count": 0,
        "forks": 0,
        "stargazers_count": 0,
        "watchers_count": 0,
        "watchers": 0,
        "size": 1,
        "default_branch": repo.default_branch,
        "open_issues_count": 0,
        "open_issues": 0,
        "is_template": False,
        "topics": [],
        "has_issues": not repo.fork,
        "has_projects": True,
        "has_wiki": False,
        "has_pages": False,
        "has_discussions": False,
        "archived": False,
        "disabled": False,
        "visibility": "private" if repo.private else "public",
        "pushed_at": repo.created_at,
        "created_at": repo.created_at,
        "updated_at": repo.created_at,
        "license": None,
        "allow_forking": True,
        "web_commit_signoff_required": False,
    }
    if full:
        out |= {"subscribers_count": 0, "network_count": 0}
        for key in ("parent", "source"):
            name = getattr(repo, key)
            if name in state.repos:
                out[key] = repo_json(api, state, state.repos[name])
    return out


def _links(api: str, pull: Pull) -> Json:
    base = f"{api}/repos/{pull.repo}"
    hrefs = {
        "self": f"{base}/pulls/{pull.number}",
        "html": f"{WEB}/{pull.repo}/pull/{pull.number}",
        "issue": f"{base}/issues/{pull.number}",
        "comments": f"{base}/issues/{pull.number}/comments",
        "review_comments": f"{base}/pulls/{pull.number}/comments",
        "review_comment": f"{base}/pulls/comments{{/number}}",
        "commits": f"{base}/pulls/{pull.number}/commits",
        "statuses": f"{base}/statuses/{pull.head_sha}",
    }
    return {key: {"href": href} for key, href in hrefs.items()}


def pull_json(api: str, state: GitHubState, pull: Pull, *, simple: bool = False) -> Json:
    """`pull-request` (GET/POST/PATCH one PR); `pull-request-simple` (lists) when `simple`."""
    base = f"{api}/repos/{pull.repo}"
    head_repo = state.repos.get(pull.head_repo) if pull.head_repo else None
    head_user = state.users.get(pull.head_label.split(":")[0]) if pull.head_label else None
    base_repo = state.repos[pull.repo]
    out: Json = {
        "url": f"{base}/pulls/{pull.number}",
        "id": pull.id,
        "node_id": _node_id("PR", pull.id),
        "html_url": f"{WEB}/{pull.repo}/pull/{pull.number}",
        "diff_url": f"{WEB}/{pull.repo}/pull/{pull.number}.diff",
        "patch_url": f"{WEB}/{pull.repo}/pull/{pull.number}.patch",
        "issue_url": f"{base}/issues/{pull.number}",
        "commits_url": f"{base}/pulls/{pull.number}/commits",
        "review_comments_url": f"{base}/pulls/{pull.number}/comments",
        "review_comment_url": f"{base}/pulls/comments{{/number}}",
        "comments_url": f"{base}/issues/{pull.number}/comments",
        "statuses_url": f"{base}/statuses/{pull.head_sha}",
        "number": pull.number,
        "state": pull.state,
        "locked": False,
        "title": pull.title,
        "user": user_json(api, state.users[pull.user]),
        "body": pull.body,
        "labels": [],
        "milestone": None,
        "active_lock_reason": None,
        "created_at": pull.created_at,
        "updated_at": pull.updated_at,
        "closed_at": pull.closed_at,
        "merged_at": pull.merged_at,
        "merge_commit_sha": fake_sha(pull.repo, pull.number, "merge") if pull.merged else None,
        "assignee": None,
        "assignees": [],
        "requested_reviewers": [],
        "requested_teams": [],
        "head": {
            "label": pull.head_label,
            "ref": pull.head_ref,
            "sha": pull.head_sha,
            "user": user_json(api, head_user) if head_user else None,
            "repo": repo_json(api, state, head_repo) if head_repo else None,
        },
        "base": {
            "label": f"{base_repo.owner}:{pull.base_ref}",
            "ref": pull.base_ref,
            "sha": pull.base_sha,
            "user": user_json(api, state.users[base_repo.owner]),
            "repo": repo_json(api, state, base_repo),
        },
        "_links": _links(api, pull),
        "author_association": pull.author_association,
        "auto_merge": None,
        "draft": pull.draft,
    }
    if simple:
        return out
    n_comments = sum(1 for c in state.comments if (c.repo, c.issue) == (pull.repo, pull.number))
    merged_by = state.users.get(pull.merged_by) if pull.merged_by else None
    return out | {
        "merged": pull.merged,
        "mergeable": None if pull.state == "closed" else True,
        "rebaseable": None if pull.state == "closed" else True,
        "mergeable_state": "unknown" if pull.state == "closed" else "clean",
        "merged_by": user_json(api, merged_by) if merged_by else None,
        "comments": n_comments,
        "review_comments": 0,
        "maintainer_can_modify": pull.maintainer_can_modify,
        "commits": 1,
        "additions": 1,
        "deletions": 0,
        "changed_files": 1,
    }


def comment_json(api: str, state: GitHubState, comment: Comment) -> Json:
    """`issue-comment`."""
    base = f"{api}/repos/{comment.repo}/issues"
    base_owner = comment.repo.split("/")[0]
    return {
        "id": comment.id,
        "node_id": _node_id("IC", comment.id),
        "url": f"{base}/comments/{comment.id}",
        "html_url": f"{WEB}/{comment.repo}/pull/{comment.issue}#issuecomment-{comment.id}",
        "body": comment.body,
        "user": user_json(api, state.users[comment.user]),
        "created_at": comment.created_at,
        "updated_at": comment.updated_at,
        "issue_url": f"{base}/{comment.issue}",
        "author_association": "OWNER" if comment.user == base_owner else "NONE",
        "performed_via_github_app": None,
        "reactions": _reactions(f"{base}/comments/{comment.id}/reactions"),
    }


def _reactions(url: str) -> Json:
    keys = ("+1", "-1", "laugh", "confused", "heart", "hooray", "eyes", "rocket")
    return {"url": url, "total_count": 0} | {key: 0 for key in keys}


def event_json(api: str, state: GitHubState, event: Event) -> Json:
    """`issue-event` as listed by GET .../issues/{n}/events (without the nested issue)."""
    base = f"{api}/repos/{event.repo}"
    return {
        "id": event.id,
        "node_id": _node_id("CE", event.id),
        "url": f"{base}/issues/events/{event.id}",
        "actor": user_json(api, state.users[event.actor]),
        "event": event.event,
        "commit_id": event.commit_id,
        "commit_url": f"{base}/commits/{event.commit_id}" if event.commit_id else None,
        "created_at": event.created_at,
        "performed_via_github_app": None,
    }


def timeline_json(api: str, state: GitHubState, repo: str, number: int) -> list[Json]:
    """The issue timeline: events (`state-change-issue-event` shape) and comments
    (`timeline-comment-event`), oldest first."""
    items: list[tuple[str, int, Json]] = []
    for ev in state.events:
        if (ev.repo, ev.issue) == (repo, number):
            items.append((ev.created_at, ev.id, event_json(api, state, ev)))
    for c in state.comments:
        if (c.repo, c.issue) == (repo, number):
            actor = user_json(api, state.users[c.user])
            items.append((c.created_at, c.id, {"event": "commented", "actor": actor}
                          | comment_json(api, state, c)))  # fmt: skip
    return [body for _, _, body in sorted(items, key=lambda t: (t[0], t[1]))]


def search_item_json(api: str, state: GitHubState, pull: Pull) -> Json:
    """`issue-search-result-item` for a pull request."""
    base = f"{api}/repos/{pull.repo}"
    n_comments = sum(1 for c in state.comments if (c.repo, c.issue) == (pull.repo, pull.number))
    html = f"{WEB}/{pull.repo}/pull/{pull.number}"
    return {
        "url": f"{base}/issues/{pull.number}",
        "repository_url": base,
        "labels_url": f"{base}/issues/{pull.number}/labels{{/name}}",
        "comments_url": f"{base}/issues/{pull.number}/comments",
        "events_url": f"{base}/issues/{pull.number}/events",
        "html_url": html,
        "id": pull.id + 10_000_000,  # the issue id differs from the pull request id
        "node_id": _node_id("PR", pull.id),
        "number": pull.number,
        "title": pull.title,
        "user": user_json(api, state.users[pull.user]),
        "labels": [],
        "state": pull.state,
        "state_reason": None,
        "locked": False,
        "assignee": None,
        "assignees": [],
        "milestone": None,
        "comments": n_comments,
        "created_at": pull.created_at,
        "updated_at": pull.updated_at,
        "closed_at": pull.closed_at,
        "author_association": pull.author_association,
        "active_lock_reason": None,
        "draft": pull.draft,
        "pull_request": {
            "url": f"{base}/pulls/{pull.number}",
            "html_url": html,
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "merged_at": pull.merged_at,
        },
        "body": pull.body,
        "timeline_url": f"{base}/issues/{pull.number}/timeline",
        "performed_via_github_app": None,
        "score": 1.0,
    }


def error_json(status: int, message: str, doc: str = "", errors: list[Json] | None = None) -> Json:
    """`basic-error`, or `validation-error` when `errors` is given (GitHub's 422 shape)."""
    out: Json = {"message": message, "documentation_url": f"{DOCS}{doc}", "status": str(status)}
    if errors is not None:
        out["errors"] = errors
    return out


# ----------------------------------------------------------------------------------------------
# Server
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RequestRecord:
    """One request as the server saw it. The Authorization value is never kept: only whether
    the header was present and which user its token mapped to."""

    method: str
    path: str  # without query and without an /api/v3 prefix
    query: dict[str, str]
    body: Any
    authorized: bool
    user: str | None
    status: int

    @property
    def is_write(self) -> bool:
        return self.method in {"POST", "PATCH", "PUT", "DELETE"}


@dataclass
class _Fault:
    kind: str  # "fail" (before processing), "after" (applied, then failed), "drop" (no response)
    method: str
    pattern: re.Pattern[str]
    times: int
    status: int = 502
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


class HttpError(Exception):
    def __init__(self, status: int, body: Json, headers: dict[str, str] | None = None):
        super().__init__(body.get("message"))
        self.status, self.body, self.headers = status, body, headers or {}


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    body: Any
    user: str | None
    base: str  # scheme://host:port plus the /api/v3 prefix if the client used one


@dataclass
class Reply:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


_Handler = Callable[..., Reply]
_ROUTES: list[tuple[str, re.Pattern[str], _Handler]] = []


def _route(method: str, pattern: str) -> Callable[[_Handler], _Handler]:
    def register(fn: _Handler) -> _Handler:
        regex = re.compile("^" + re.sub(r"{(\w+)}", r"(?P<\1>[^/]+)", pattern) + "$")
        _ROUTES.append((method, regex, fn))
        return fn

    return register


_REASONS = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
            422: "Unprocessable Entity", 500: "Internal Server Error", 502: "Bad Gateway",
            503: "Service Unavailable"}  # fmt: skip


class FakeGitHub:
    """The fake GitHub server. `with FakeGitHub() as gh:` starts it on 127.0.0.1:<free port>."""

    def __init__(self, state: GitHubState | None = None):
        self.state = state or GitHubState()
        self.requests: list[RequestRecord] = []
        self._faults: list[_Fault] = []
        self._used: dict[tuple[str, str | None], int] = {}  # (resource, user) -> requests
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --
    def start(self) -> FakeGitHub:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                fake._serve(self)

            do_POST = do_PATCH = do_PUT = do_DELETE = do_GET

            def log_message(self, format: str, *args: Any) -> None:
                pass  # the request log is `fake.requests`; stderr stays quiet

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None, "FakeGitHub is not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # -- inspection and fault injection --
    def writes(self) -> list[RequestRecord]:
        return [r for r in self.requests if r.is_write]

    def fail_next(
        self,
        method: str,
        path_regex: str,
        status: int,
        times: int = 1,
        body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Answer the next `times` matching requests with `status` before processing them."""
        self._faults.append(_Fault("fail", method, re.compile(path_regex), times, status,
                                   body, headers or {}))  # fmt: skip

    def fail_after_apply(
        self, method: str, path_regex: str, status: int = 502, times: int = 1, body: Any = None
    ) -> None:
        """Process the next matching requests (state changes happen), then answer `status`."""
        self._faults.append(_Fault("after", method, re.compile(path_regex), times, status, body))

    def drop_next(self, method: str, path_regex: str, times: int = 1) -> None:
        """Close the connection of the next matching requests without any response."""
        self._faults.append(_Fault("drop", method, re.compile(path_regex), times))

    def rate_limit_next(self, method: str, path_regex: str, reset_in: int = 60) -> None:
        """GitHub's primary rate-limit refusal: 403, X-RateLimit-Remaining: 0 and a reset time."""
        reset = int(dt.datetime.now(dt.timezone.utc).timestamp()) + reset_in
        body = {
            "message": "API rate limit exceeded for user ID 1.",
            "documentation_url": f"{DOCS}/overview/rate-limits-for-the-rest-api",
        }
        headers = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset)}
        self.fail_next(method, path_regex, 403, body=body, headers=headers)  # fmt: skip

    def _take_fault(self, method: str, path: str, kinds: set[str]) -> _Fault | None:
        for fault in self._faults:
            if fault.kind in kinds and fault.method == method and fault.pattern.search(path):
                fault.times -= 1
                if fault.times <= 0:
                    self._faults.remove(fault)
                return fault
        return None

    # -- request handling --
    def _serve(self, h: BaseHTTPRequestHandler) -> None:
        split = urlsplit(h.path)
        prefix = "/api/v3" if split.path.startswith("/api/v3/") else ""
        path = split.path[len(prefix) :]
        query = {k: v[-1] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        auth = h.headers.get("Authorization")
        with self.state.lock:
            user, reply, body = self._dispatch(h.command, path, query, raw, auth, self.url + prefix)
            self.requests.append(RequestRecord(h.command, path, query, body, auth is not None,
                                               user, reply.status if reply else 0))  # fmt: skip
            if reply is None:  # drop: no status line, no headers, just a closed socket
                h.close_connection = True
                return
            headers = self._rate_limit_headers(path, user) | reply.headers
        headers["Content-Type"] = "application/json; charset=utf-8"
        data = b"" if reply.body is None else json.dumps(reply.body).encode()
        h.send_response(reply.status, _REASONS.get(reply.status))
        for key, value in headers.items():
            h.send_header(key, value)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _rate_limit_headers(self, path: str, user: str | None) -> dict[str, str]:
        """GitHub's per-user quota headers: core 5000/hour, search 30/minute. Counted, never
        enforced (use `rate_limit_next` for a refusal)."""
        resource = "search" if path.startswith("/search/") else "core"
        used = self._used[(resource, user)] = self._used.get((resource, user), 0) + 1
        limit, window = (30, 60) if resource == "search" else (5000, 3600)
        return {
            "X-RateLimit-Limit": str(limit),
            "X-RateLimit-Remaining": str(max(limit - used, 0)),
            "X-RateLimit-Reset": str(int(dt.datetime.now(dt.timezone.utc).timestamp()) + window),
            "X-RateLimit-Used": str(used),
            "X-RateLimit-Resource": resource,
        }

    def _dispatch(
        self, method: str, path: str, query: dict[str, str], raw: bytes, auth: str | None, base: str
    ) -> tuple[str | None, Reply | None, Any]:
        """(user, reply, parsed body); reply None means: drop the connection."""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            return None, Reply(400, error_json(400, "Problems parsing JSON")), raw.decode("replace")
        user = None
        if auth is not None:
            token = auth.split(" ", 1)[1] if " " in auth else auth
            user = self.state.tokens.get(token)
            if user is None:
                return None, Reply(401, error_json(401, "Bad credentials")), body
        fault = self._take_fault(method, path, {"fail", "drop"})
        if fault is not None:
            if fault.kind == "drop":
                return user, None, body
            fail_body = fault.body or error_json(fault.status, _REASONS.get(fault.status, "Err"))
            return user, Reply(fault.status, fail_body, dict(fault.headers)), body
        for route_method, regex, handler in _ROUTES:
            match = regex.match(path)
            if match and route_method == method:
                break
        else:
            message = f"fake GitHub has no route for {method} {path}"
            return user, Reply(501, error_json(501, message)), body
        if method != "GET" and user is None:
            return user, Reply(401, error_json(401, "Requires authentication")), body
        request = Request(method, path, query, body, user, base)
        try:
            reply = handler(self.state, request, **match.groupdict())
        except HttpError as err:
            reply = Reply(err.status, err.body, err.headers)
        after = self._take_fault(method, path, {"after"})
        if after is not None:
            fail_body = after.body or error_json(after.status, _REASONS.get(after.status, "Err"))
            reply = Reply(after.status, fail_body)
        return user, reply, body


@pytest.fixture
def fake_github(tmp_path: Path) -> Iterator[FakeGitHub]:
    """A started FakeGitHub whose forks (POST .../forks) become bare clones under tmp_path."""
    storage = tmp_path / "fake-github-forks"
    storage.mkdir()
    with FakeGitHub(GitHubState(fork_storage=storage)) as gh:
        yield gh


# ----------------------------------------------------------------------------------------------
# Routes: GitHub's REST paths, query parameters, status codes and bodies
# ----------------------------------------------------------------------------------------------


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


@_route("GET", "/user")
def get_authenticated_user(state: GitHubState, req: Request) -> Reply:
    doc = "/users/users#get-the-authenticated-user"
    if req.user is None:
        raise HttpError(401, error_json(401, "Requires authentication", doc))
    return Reply(200, public_user_json(req.base, state.users[req.user], private=True))


@_route("GET", "/users/{login}")
def get_user(state: GitHubState, req: Request, login: str) -> Reply:
    for user in state.users.values():
        if user.login.casefold() == login.casefold():
            return Reply(200, public_user_json(req.base, user))
    raise _not_found("/users/users#get-a-user")


@_route("GET", "/repos/{owner}/{repo}")
def get_repo(state: GitHubState, req: Request, owner: str, repo: str) -> Reply:
    found = _repo(state, req, owner, repo, "/repos/repos#get-a-repository")
    body = repo_json(req.base, state, found, full=True)
    if req.user is not None:
        is_owner = req.user == found.owner
        body["permissions"] = {"admin": is_owner, "maintain": is_owner, "push": is_owner,
                               "triage": is_owner, "pull": True}  # fmt: skip
    return Reply(200, body)


@_route("POST", "/repos/{owner}/{repo}/forks")
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


@_route("GET", "/repos/{owner}/{repo}/pulls")
def list_pulls(state: GitHubState, req: Request, owner: str, repo: str) -> Reply:
    found = _repo(state, req, owner, repo, "/pulls/pulls#list-pull-requests")
    if (req.query.get("state") or "open") not in {"open", "closed", "all"}:
        raise _invalid("/pulls/pulls#list-pull-requests",
                       {"resource": "PullRequest", "field": "state", "code": "invalid"})  # fmt: skip
    chunk, headers = _page(req, _pulls_matching(state, found, req.query))
    return Reply(200, [pull_json(req.base, state, p, simple=True) for p in chunk], headers)


@_route("POST", "/repos/{owner}/{repo}/pulls")
def create_pull(state: GitHubState, req: Request, owner: str, repo: str) -> Reply:
    doc = "/pulls/pulls#create-a-pull-request"
    base_repo = _repo(state, req, owner, repo, doc)
    body = req.body or {}
    for name in ("title", "head", "base"):
        if not body.get(name):
            raise _invalid(doc, {"resource": "PullRequest", "field": name, "code": "missing_field"})
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
    if head_sha == base_sha:
        message = f"No commits between {body['base']} and {label}"
        raise _invalid(doc, {"resource": "PullRequest", "code": "custom", "message": message})
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
        maintainer_can_modify=bool(body.get("maintainer_can_modify", True)),
    )
    headers = {"Location": f"{req.base}/repos/{pull.repo}/pulls/{pull.number}"}
    return Reply(201, pull_json(req.base, state, pull), headers)


def _head_repo(state: GitHubState, base: Repo, owner: str, name: str | None) -> Repo | None:
    """The head owner's repository in the base's fork network (GitHub refuses any other)."""
    for repo in state.repos.values():
        if repo.owner.casefold() != owner.casefold() or repo.network != base.network:
            continue
        if name is None or repo.name == name:
            return repo
    return None


@_route("GET", "/repos/{owner}/{repo}/pulls/{number}")
def get_pull(state: GitHubState, req: Request, owner: str, repo: str, number: str) -> Reply:
    pull = _pull(state, req, owner, repo, number, "/pulls/pulls#get-a-pull-request")
    return Reply(200, pull_json(req.base, state, pull))


@_route("PATCH", "/repos/{owner}/{repo}/pulls/{number}")
def update_pull(state: GitHubState, req: Request, owner: str, repo: str, number: str) -> Reply:
    doc = "/pulls/pulls#update-a-pull-request"
    pull = _pull(state, req, owner, repo, number, doc)
    body = req.body or {}
    assert req.user is not None
    new_state = body.get("state")
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
    if new_state == "closed" and pull.state == "open":
        state.close_pull(pull.repo, pull.number, actor=req.user)
    elif new_state == "open" and pull.state == "closed" and not pull.merged:
        state.reopen_pull(pull.repo, pull.number, actor=req.user)
    return Reply(200, pull_json(req.base, state, pull))


@_route("GET", "/repos/{owner}/{repo}/issues/{number}/comments")
def list_comments(state: GitHubState, req: Request, owner: str, repo: str, number: str) -> Reply:
    pull = _pull(state, req, owner, repo, number, "/issues/comments#list-issue-comments")
    mine = [c for c in state.comments if (c.repo, c.issue) == (pull.repo, pull.number)]
    chunk, headers = _page(req, mine)
    return Reply(200, [comment_json(req.base, state, c) for c in chunk], headers)


@_route("POST", "/repos/{owner}/{repo}/issues/{number}/comments")
def create_comment(state: GitHubState, req: Request, owner: str, repo: str, number: str) -> Reply:
    doc = "/issues/comments#create-an-issue-comment"
    pull = _pull(state, req, owner, repo, number, doc)
    text = (req.body or {}).get("body")
    if not text:
        raise _invalid(doc, {"resource": "IssueComment", "field": "body", "code": "missing_field"})
    assert req.user is not None
    comment = state.add_comment(pull.repo, pull.number, user=req.user, body=text)
    headers = {"Location": f"{req.base}/repos/{pull.repo}/issues/comments/{comment.id}"}
    return Reply(201, comment_json(req.base, state, comment), headers)


@_route("GET", "/repos/{owner}/{repo}/issues/{number}/events")
def list_events(state: GitHubState, req: Request, owner: str, repo: str, number: str) -> Reply:
    pull = _pull(state, req, owner, repo, number, "/issues/events#list-issue-events")
    mine = [e for e in state.events if (e.repo, e.issue) == (pull.repo, pull.number)]
    chunk, headers = _page(req, mine)
    return Reply(200, [event_json(req.base, state, e) for e in chunk], headers)


@_route("GET", "/repos/{owner}/{repo}/issues/{number}/timeline")
def list_timeline(state: GitHubState, req: Request, owner: str, repo: str, number: str) -> Reply:
    doc = "/issues/timeline#list-timeline-events-for-an-issue"
    pull = _pull(state, req, owner, repo, number, doc)
    chunk, headers = _page(req, timeline_json(req.base, state, pull.repo, pull.number))
    return Reply(200, chunk, headers)


def _search_matches(state: GitHubState, req: Request, pull: Pull, terms: list[str]) -> bool:
    repo = state.repos[pull.repo]
    if repo.private and req.user != repo.owner:
        return False
    checks: dict[str, Callable[[str], bool]] = {
        "is": lambda v: v in {"pr", "pull-request"}
        or v == pull.state
        or (v == "merged") == pull.merged
        and v in {"merged", "unmerged"},
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


@_route("GET", "/search/issues")
def search_issues(state: GitHubState, req: Request) -> Reply:
    """Pull requests only (this fake has no plain issues); `is:issue` finds nothing."""
    doc = "/search/search#search-issues-and-pull-requests"
    query = (req.query.get("q") or "").strip()
    if not query:
        raise _invalid(doc, {"resource": "Search", "field": "q", "code": "missing"})
    terms = query.split()
    found = [p for p in state.pulls.values() if _search_matches(state, req, p, terms)]
    sort_key = {"updated": "updated_at", "created": "created_at"}.get(req.query.get("sort") or "")
    found.sort(key=lambda p: (getattr(p, sort_key or "created_at"), p.number),
               reverse=(req.query.get("order") or "desc") == "desc")  # fmt: skip
    chunk, headers = _page(req, found)
    items = [search_item_json(req.base, state, p) for p in chunk]
    body = {"total_count": len(found), "incomplete_results": False, "items": items,
            "search_type": "lexical"}  # fmt: skip
    return Reply(200, body, headers)
