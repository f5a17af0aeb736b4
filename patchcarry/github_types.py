"""The shapes of GitHub's REST answers this tool reads (API version 2022-11-28), typed once
beside the GitHub door: the fields used, none required, since a missing or null field is
an answer the readers handle (a deleted user, a head repository gone)."""

from __future__ import annotations

from typing import TypedDict


class User(TypedDict, total=False):
    login: str


class RepoName(TypedDict, total=False):
    full_name: str


class Permissions(TypedDict, total=False):
    push: bool  # write access (a collaborator's, the owner's)


class Repo(TypedDict, total=False):
    full_name: str
    fork: bool
    source: RepoName | None  # the root of its fork network (forks only)
    clone_url: str
    default_branch: str
    private: bool
    archived: bool  # read-only: every write is refused
    has_pull_requests: bool  # absent on older servers
    pull_request_creation_policy: str  # "all" | "collaborators_only"; absent: not stated
    permissions: Permissions  # the token user's, on an authenticated read


class Ref(TypedDict, total=False):
    label: str  # owner:branch
    ref: str
    sha: str
    repo: RepoName | None  # null: the head repository is gone


class Pull(TypedDict, total=False):
    number: int
    state: str
    merged: bool
    merged_at: str | None
    closed_at: str | None
    html_url: str
    title: str
    body: str | None
    user: User | None
    head: Ref
    base: Ref
    locked: bool  # a locked conversation: only collaborators may comment
    maintainer_can_modify: bool  # the whole PR only (not in a list's items)


class IssueEvent(TypedDict, total=False):
    event: str
    actor: User | None


class Comment(TypedDict, total=False):
    body: str | None
    user: User | None


class SearchItem(TypedDict, total=False):
    number: int
    title: str
    repository_url: str


class StatusCheck(TypedDict, total=False):
    context: str


class RuleParameters(TypedDict, total=False):
    required_status_checks: list[StatusCheck]


class ClassicChecks(TypedDict, total=False):
    contexts: list[str]


class Protection(TypedDict, total=False):
    required_status_checks: ClassicChecks | None


class Branch(TypedDict, total=False):
    """GET .../branches/{branch}: `protected` and a classic protection's required checks
    are shown to anyone (the rest of the protection to admins only)."""

    protected: bool
    protection: Protection | None


class Rule(TypedDict, total=False):
    type: str
    parameters: RuleParameters | None


class CheckRun(TypedDict, total=False):
    name: str
    status: str
    conclusion: str | None
