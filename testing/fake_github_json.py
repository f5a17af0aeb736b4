"""Whole JSON objects in GitHub's REST shapes, built from the fake's state.

Each builder names the schema of GitHub's OpenAPI description it produces (`simple-user`,
`full-repository`, `pull-request`, ...); tests/test_fake_github.py validates every body the
server serves against githubkit's models of those schemas, so no required field is missing.
`api` is the base URL the client used (API `url` fields point back at the fake).
"""

from __future__ import annotations

from typing import Any

from testing.fake_github_state import WEB, Comment, Event, GitHubState, Pull, Repo, User, fake_sha

DOCS = "https://docs.github.com/rest"
Json = dict[str, Any]


def _node_id(kind: str, ident: int) -> str:
    return f"{kind}_kwDO{ident:010d}"


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
        # GitHub's git side on the server's own host (testing/fake_github_git.py serves it)
        "clone_url": f"{api.removesuffix('/api/v3')}/{repo.full_name}.git",
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
        "archived": repo.archived,
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
        out |= {"subscribers_count": 0, "network_count": 0, "has_pull_requests":
                repo.has_pull_requests,
                "pull_request_creation_policy": repo.pull_request_creation_policy}  # fmt: skip
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
        "locked": pull.locked,
        "title": pull.title,
        "user": user_json(api, state.users[pull.user]),
        "body": pull.body,
        "labels": [],
        "milestone": None,
        "active_lock_reason": pull.active_lock_reason,
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
        "actor": user_json(api, state.users[event.actor]) if event.actor else None,
        "event": event.event,
        "commit_id": event.commit_id,
        "commit_url": f"{base}/commits/{event.commit_id}" if event.commit_id else None,
        "created_at": event.created_at,
        "performed_via_github_app": None,
    }


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
        "locked": pull.locked,
        "assignee": None,
        "assignees": [],
        "milestone": None,
        "comments": n_comments,
        "created_at": pull.created_at,
        "updated_at": pull.updated_at,
        "closed_at": pull.closed_at,
        "author_association": pull.author_association,
        "active_lock_reason": pull.active_lock_reason,
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


def branch_json(
    api: str, state: GitHubState, repo: Repo, branch: str, sha: str, checks: list[str] | None
) -> Json:
    """`branch-with-protection` as GitHub shows it to anyone: `protected`, and of a classic
    protection only `enabled` and its required status checks."""
    base = f"{api}/repos/{repo.full_name}"
    owner = user_json(api, state.users[repo.owner])
    person = {"name": "t", "email": "t@e", "date": "2020-01-01T00:00:00Z"}
    commit = {
        "url": f"{base}/commits/{sha}", "sha": sha, "node_id": f"C_{sha[:12]}",
        "html_url": f"{WEB}/{repo.full_name}/commit/{sha}",
        "comments_url": f"{base}/commits/{sha}/comments",
        "commit": {"url": f"{base}/git/commits/{sha}", "author": person, "committer": person,
                   "message": "", "comment_count": 0,
                   "tree": {"sha": sha, "url": f"{base}/git/trees/{sha}"}},
        "author": owner, "committer": owner, "parents": [],
    }  # fmt: skip
    protection: Json = {"enabled": checks is not None}
    if checks is not None:
        protection["required_status_checks"] = {
            "enforcement_level": "non_admins", "contexts": list(checks),
            "checks": [{"context": c, "app_id": None} for c in checks],
        }  # fmt: skip
    return {
        "name": branch, "commit": commit,
        "_links": {"self": f"{base}/branches/{branch}",
                   "html": f"{WEB}/{repo.full_name}/tree/{branch}"},
        "protected": checks is not None, "protection": protection,
        "protection_url": f"{base}/branches/{branch}/protection",
    }  # fmt: skip
