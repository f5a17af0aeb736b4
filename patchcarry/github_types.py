"""The shapes of GitHub's REST answers this tool reads (API version 2022-11-28), typed once
beside the GitHub door and checked there (`malformed`): the fields used, none required, since
a missing field is an answer the readers handle; a null only where GitHub documents one (a
deleted user, a head repository gone)."""

from __future__ import annotations

import functools
import types
from typing import Any, TypedDict, get_args, get_origin, get_type_hints, is_typeddict


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


class SearchResult(TypedDict, total=False):
    items: list[SearchItem]


class CheckRuns(TypedDict, total=False):
    check_runs: list[CheckRun]


def malformed(value: Any, shape: Any, where: str = "") -> str | None:
    """What in `value` is not of `shape` (a class above, `list[...]`, `X | None`, str, int,
    bool, Any), in a few words naming the field; None when it all is. Fields not named here
    pass."""
    at = where or "the answer"
    if get_origin(shape) is types.UnionType:
        if value is None and type(None) in get_args(shape):
            return None
        shape = next(o for o in get_args(shape) if o is not type(None))
    if shape is Any:
        return None
    kind = get_origin(shape) or (dict if is_typeddict(shape) else shape)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        return f"{at} is {_kind(value)}, not {_kind(kind())}"
    if kind is list:
        items = (malformed(v, get_args(shape)[0], f"{where}[{i}]") for i, v in enumerate(value))
        return next(filter(None, items), None)
    if kind is dict:
        fields = (malformed(value[k], h, f"{where}.{k}".lstrip(".")) for k, h in
                  _fields(shape).items() if k in value)  # fmt: skip
        return next(filter(None, fields), None)
    return None


@functools.cache
def _fields(shape: Any) -> dict[str, Any]:
    return get_type_hints(shape)


def _kind(value: Any) -> str:
    """JSON's name for `value`'s type."""
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string",
             list: "a list", dict: "an object", type(None): "null"}  # fmt: skip
    return names.get(type(value), type(value).__name__)
