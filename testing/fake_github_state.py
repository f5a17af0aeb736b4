"""The fake GitHub's data: users, tokens, repositories (forks with parent/source), pull
requests, comments and events, with id counters that start at easy-to-spot values (new pull
requests are numbered from 500; fixed numbers such as 6117 can be preloaded).

Forks made through the API become real bare clones under `fork_storage` when the parent's
`clone_url` is a local repository, so a test can push to them and open a PR from them.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from patchcarry import git as gitmod
from testing import fake_github_push as push_rules

WEB = "https://github.com"


def _ts(when: dt.datetime) -> str:
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def fake_sha(*parts: object) -> str:
    """A stable 40-hex sha for objects that have no real git commit behind them."""
    return hashlib.sha1("\0".join(map(str, parts)).encode()).hexdigest()


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
    # archived: read-only, every write answers 403 "Repository was archived so is read-only."
    archived: bool = False
    # who may open PRs: "all" or "collaborators_only" (GitHub's `pull_request_creation_policy`)
    pull_request_creation_policy: str = "all"
    has_pull_requests: bool = True
    # an interaction limit ("existing_users", "contributors_only", "collaborators_only"):
    # GET .../interaction-limits shows it to admins only, and it refuses non-collaborators' PRs
    interaction_limit: str | None = None
    # draft PRs: public repositories and paid plans' private ones; no field says which
    drafts: bool = True

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
    # a locked conversation: only those with write access to the base may comment (GitHub:
    # "Locking conversations"); others get 403 "Unable to create comment because issue is locked."
    locked: bool = False
    active_lock_reason: str | None = None  # "off-topic", "too heated", "resolved", "spam"


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
    actor: str | None  # None: GitHub's null actor (e.g. a close by the system)
    event: str  # "closed", "reopened", "merged", "head_ref_deleted", ...
    created_at: str
    commit_id: str | None = None


class GitHubState:
    """Users, tokens, repositories, pull requests, comments and events. Not thread-safe alone:
    the server serialises access with `lock`."""

    def __init__(self, fork_storage: Path | None = None, clock: Callable[[], str] | None = None):
        self.users: dict[str, User] = {}
        self.tokens: dict[str, str] = {}
        self.token_scopes: dict[str, tuple[str, ...]] = {}  # classic/OAuth scopes, app perms
        self.repos: dict[str, Repo] = {}
        self.pulls: dict[tuple[str, int], Pull] = {}
        self.comments: list[Comment] = []
        self.events: list[Event] = []
        # (repository, branch) -> its active rules, as GET .../rules/branches/{branch} lists
        # them ({"type": "required_status_checks", "parameters": {...}}, ...)
        self.branch_rules: dict[tuple[str, str], list[dict[str, object]]] = {}
        # False: a GitHub Enterprise Server without rulesets (rules/branches answers 404)
        self.rulesets_api = True
        self.fork_storage = fork_storage  # where POST .../forks puts a bare clone (if set)
        # what a fork's receive-pack refuses (call `sync_push_rules()` after a change):
        # protected branches (GH006), branches a ruleset refuses (GH013), and per user the
        # email that "Block command line pushes that expose my email" keeps private (GH007)
        self.protected_branches: set[tuple[str, str]] = set()
        self.ruleset_branches: set[tuple[str, str]] = set()
        self.private_emails: dict[str, str] = {}
        # GitHub's eventual consistency, as knobs: a PR made through the API is missing from
        # the next `list_lag` list requests; with `fork_git_lag` a new fork's bare clone
        # appears only when `materialize_forks()` is called (its git side lags its API).
        self.list_lag = 0
        self.hidden_from_lists: dict[tuple[str, int], int] = {}
        self.fork_git_lag = False
        # GitHub creates forks asynchronously ("you may have to wait a short period before
        # you can access the git objects"; support after five minutes): a fork made through
        # the API answers 404 to the next `fork_api_lag` reads of it
        self.fork_api_lag = 0
        self.api_hidden: dict[str, int] = {}
        self.pending_forks: list[tuple[list[str], Path]] = []
        # organisations enforcing SAML SSO -> the org's SSO URL; (token, org) pairs a user
        # authorized for that org (GitHub: "Authorizing a personal access token for use with
        # SAML single sign-on"); any other token gets 403 + X-GitHub-SSO, reads included
        self.saml_orgs: dict[str, str] = {}
        self.sso_authorized: set[tuple[str, str]] = set()
        # GitHub enforces SAML SSO for an organisation's members only: outside collaborators
        # and non-members reading or forking its public repositories are not asked (docs:
        # "About authentication with SAML single sign-on"). `sso_not_found`: organisations
        # whose single resources answer such a token 404, not 403 (docs: "you may receive a
        # 404 Not Found or a 403 Forbidden error"); a search leaves their results out and says
        # so in `X-GitHub-SSO: partial-results; organizations=<ids>`.
        self.org_members: dict[str, set[str]] = {}
        self.sso_not_found: set[str] = set()
        # write access beyond ownership: repository full_name -> collaborators' logins
        # (GitHub: "To open or update a pull request in a public repository, you must have
        # write access to the head or the source branch")
        self.collaborators: dict[str, set[str]] = {}
        # GitHub's lag between a push and its compare view: the next `compare_lag` creates
        # of a PR answer 422 "No commits between ..." although the head is ahead of the base
        # (dotnet/buildtools#1140, hub#1258)
        self.compare_lag = 0
        # renamed or transferred repositories: old full_name (casefolded) -> the id its
        # redirect names (GitHub: 301 to /repositories/{id}; "follow the redirect")
        self.moved: dict[str, int] = {}
        # the next `search_timeouts` searches time out part-way: GitHub then answers what it
        # found so far with `incomplete_results: true`
        self.search_timeouts = 0
        # classic branch protection: (repository, branch) -> the status checks it requires
        # (GET .../branches/{branch} shows `protected` and these to anyone; the rest of the
        # protection is shown to admins only)
        self.classic_protection: dict[tuple[str, str], list[str]] = {}
        # tokens with an expiry date -> it, sent back on every answer to them as
        # `GitHub-Authentication-Token-Expiration: 2026-09-27 03:07:38 UTC`
        self.token_expiry: dict[str, str] = {}
        # GitHub's quotas refused once spent (requests without a token: 60 an hour, 10
        # searches a minute, per address); off: counted in the headers only
        self.enforce_quota = False
        self.now = clock or (lambda: _ts(dt.datetime.now(dt.UTC)))
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

    def add_token(
        self, token: str, login: str, *, scopes: tuple[str, ...] = ("repo", "workflow")
    ) -> None:
        """A token for `login`. Its kind is GitHub's, by prefix (`github_pat_` fine-grained,
        `ghp_`/unprefixed classic, `gho_` OAuth, `ghu_`/`ghs_` app); `scopes` are a classic or
        OAuth token's (sent back in `X-OAuth-Scopes`), an app's permissions otherwise."""
        self.add_user(login)
        self.tokens[token] = login
        self.token_scopes[token] = tuple(scopes)
        self.sync_push_rules()

    def token_kind(self, token: str) -> str:
        return push_rules.token_kind(token)

    def sync_push_rules(self) -> None:
        """Every local fork's receive-pack learns GitHub's push rules and the current tokens."""
        tokens: dict[str, dict[str, object]] = {
            push_rules.digest(t): {
                "kind": push_rules.token_kind(t), "scopes": list(s),
                "private_email": self.private_emails.get(self.tokens.get(t, "")),
                "login": self.tokens.get(t, ""),
            }
            for t, s in self.token_scopes.items()
        }  # fmt: skip
        for repo in self.repos.values():
            git_dir = _local_git_dir(repo.clone_url)
            if repo.fork and git_dir is not None and (git_dir / "HEAD").exists():
                name = repo.full_name
                rules = {
                    "repo": name,
                    "protected": sorted(b for r, b in self.protected_branches if r == name),
                    "rulesets": sorted(b for r, b in self.ruleset_branches if r == name),
                    "writers": sorted(self.writers(name)),
                    "maintainer_branches": self._maintainer_branches(name),
                }
                push_rules.install(git_dir, tokens, rules)

    def writers(self, full_name: str) -> set[str]:
        """Logins with write access to a repository: its owner (an organisation's members),
        its collaborators."""
        repo = self.repos.get(full_name)
        if repo is None:
            return set()
        found = {repo.owner} | self.org_members.get(repo.owner, set())
        return found | self.collaborators.get(full_name, set())

    def may_write(self, login: str | None, full_name: str | None) -> bool:
        if login is None or full_name is None:
            return False
        return login.casefold() in {w.casefold() for w in self.writers(full_name)}

    def _maintainer_branches(self, fork: str) -> dict[str, list[str]]:
        """Branch of `fork` -> who else may push to it: the base's writers, for each open PR
        from it with "Allow edits by maintainers" (`maintainer_can_modify`) on."""
        out: dict[str, list[str]] = {}
        for pull in self.pulls.values():
            if pull.head_repo == fork and pull.state == "open" and pull.maintainer_can_modify:
                out.setdefault(pull.head_ref, []).extend(sorted(self.writers(pull.repo)))
        return out

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
        if repo.fork:
            self.sync_push_rules()
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
            args += [upstream.clone_url, str(dest)]
            if self.fork_git_lag:
                self.pending_forks.append((args, dest))
            else:
                gitmod.git(*args, cwd=self.fork_storage)
            clone_url = str(dest)
        if self.fork_api_lag:
            self.api_hidden[target] = self.fork_api_lag
        return self.add_repo(
            target, clone_url, default_branch=upstream.default_branch, fork_of=full_name
        )

    def rename_repo(self, old: str, new: str) -> Repo:
        """A rename or a transfer (`new` may have another owner): the repository keeps its
        id, every name that pointed at it follows, and the old name answers with a redirect
        to `/repositories/{id}` (`moved`) as GitHub's does."""
        repo = self.repos.pop(old)
        owner, name = new.split("/")
        self.add_user(owner)
        repo.owner, repo.name = owner, name
        self.repos[new] = repo
        self.moved[old.casefold()] = repo.id
        for other in self.repos.values():
            other.parent = new if other.parent == old else other.parent
            other.source = new if other.source == old else other.source
        for key in [k for k in self.pulls if k[0] == old]:
            pull = self.pulls.pop(key)
            pull.repo = new
            self.pulls[(new, key[1])] = pull
        for pull in self.pulls.values():
            if pull.head_repo == old:
                pull.head_repo = new
                pull.head_label = f"{owner}:{pull.head_ref}"
        for item in (*self.comments, *self.events):
            item.repo = new if item.repo == old else item.repo
        self.sync_push_rules()
        return repo

    def rename_user(self, old: str, new: str) -> None:
        """A user renamed: their tokens, PRs and comments show the new login, and each of
        their repositories is renamed with them (the old URLs redirect)."""
        user = self.users.pop(old)
        user.login = new
        self.users[new] = user
        self.tokens = {t: (new if u == old else u) for t, u in self.tokens.items()}
        for item in (*self.pulls.values(), *self.comments):
            item.user = new if item.user == old else item.user
        for event in self.events:
            event.actor = new if event.actor == old else event.actor
        for full_name in [n for n, r in self.repos.items() if r.owner == old]:
            self.rename_repo(full_name, f"{new}/{self.repos[full_name].name}")

    def moved_to(self, full_name: str) -> Repo | None:
        """The repository an old name now redirects to (None: the name was never moved)."""
        number = self.moved.get(full_name.casefold())
        return next((r for r in self.repos.values() if r.id == number), None)

    def materialize_forks(self) -> None:
        """The lagging git side of forks made with `fork_git_lag` catches up."""
        assert self.fork_storage is not None
        for args, _ in self.pending_forks:
            gitmod.git(*args, cwd=self.fork_storage)
        self.pending_forks.clear()
        self.sync_push_rules()

    def add_branch_rule(
        self, repo: str, branch: str, type: str, parameters: dict[str, object] | None = None
    ) -> None:
        rule: dict[str, object] = {"type": type}
        if parameters is not None:
            rule["parameters"] = parameters
        self.branch_rules.setdefault((repo, branch), []).append(rule)

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
        self.sync_push_rules()  # maintainers may push to its head branch (if allowed)
        return pull

    def close_pull(
        self, repo: str, number: int, *, actor: str | None, at: str | None = None
    ) -> Pull:
        pull = self.pulls[(repo, number)]
        when = at or self.now()
        pull.state, pull.closed_at, pull.updated_at = "closed", when, when
        self.add_event(repo, number, actor=actor, event="closed", created_at=when)
        self.sync_push_rules()
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
        actor: str | None,
        event: str,
        created_at: str | None = None,
        commit_id: str | None = None,
    ) -> Event:
        if actor is not None:
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

    def dump(self) -> str:
        """One line per pull request and its events, for readable assertions (as ghstack's
        `assert_github_state`), e.g. `#6117 closed unmerged htesd:fix/x -> dev head.repo=null`."""
        lines = []
        for (repo, number), pull in sorted(self.pulls.items()):
            status = "merged" if pull.merged else ("unmerged" if pull.state == "closed" else "")
            lines.append(
                f"{repo}#{number} {pull.state}{' ' + status if status else ''}"
                f"{' draft' if pull.draft else ''} {pull.head_label} -> {pull.base_ref}"
                f" head.repo={pull.head_repo or 'null'} by {pull.user}: {pull.title}"
            )
            for ev in self.events:
                if (ev.repo, ev.issue) == (repo, number):
                    lines.append(f"    {ev.event} by {ev.actor} at {ev.created_at}")
            n = sum(1 for c in self.comments if (c.repo, c.issue) == (repo, number))
            if n:
                lines.append(f"    {n} comment{'s' if n > 1 else ''}")
        return "\n".join(lines)

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
