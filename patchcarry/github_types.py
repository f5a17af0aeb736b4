"""The tool's records of GitHub's answers, read once where they enter (`read`): only the
fields used, a null only where GitHub documents one, any other shape refused."""

from __future__ import annotations

import dataclasses
import datetime
import functools
import types
from collections.abc import Mapping
from typing import Any, Protocol, get_args, get_origin, get_type_hints


def at(*path: str, default: Any = dataclasses.MISSING) -> Any:
    """A field read from `path` in the answer ("user", "login"), not from its own name."""
    return dataclasses.field(default=default, metadata={"path": path})


def path_of(field: dataclasses.Field[Any]) -> tuple[str, ...]:
    """Where in the answer `field` is read."""
    return tuple(field.metadata.get("path", (field.name,)))


@dataclasses.dataclass(frozen=True, slots=True)
class UserRef:
    login: str = ""
    id: int | None = None
    email: str | None = None  # the public one


@dataclasses.dataclass(frozen=True, slots=True)
class RepoRef:
    full_name: str = ""
    fork: bool = False
    source: str = at("source", "full_name", default="")  # its fork network's root (forks)
    clone_url: str | None = None
    default_branch: str | None = None
    private: bool = False
    archived: bool = False  # read-only: every write is refused
    has_pull_requests: bool | None = None  # absent on older servers
    pull_request_creation_policy: str | None = None  # "all" | "collaborators_only"
    can_push: bool | None = at("permissions", "push", default=None)  # the token user's


@dataclasses.dataclass(frozen=True, slots=True)
class PullRef:
    number: int
    state: str = ""
    merged: bool = False
    merged_at: str | None = None
    closed_at: str | None = None
    html_url: str = ""
    title: str = ""
    body: str | None = None
    author: str = at("user", "login", default="")  # "": GitHub shows none
    head_label: str = at("head", "label", default="")  # owner:branch
    head_ref: str = at("head", "ref", default="")
    head_sha: str = at("head", "sha", default="")
    head_repo: str | None = at("head", "repo", "full_name", default=None)  # None: gone
    base_ref: str = at("base", "ref", default="")
    locked: bool = False  # a locked conversation: only collaborators may comment
    maintainer_can_modify: bool | None = None  # the whole PR only (not in a list's items)


@dataclasses.dataclass(frozen=True, slots=True)
class EventRef:
    event: str = ""
    actor: str = at("actor", "login", default="")


@dataclasses.dataclass(frozen=True, slots=True)
class CommentRef:
    body: str | None = None
    author: str = at("user", "login", default="")


@dataclasses.dataclass(frozen=True, slots=True)
class SearchHit:
    number: int
    title: str = ""
    repository_url: str = ""  # .../repos/OWNER/REPO

    @property
    def repo(self) -> str:
        return "/".join(self.repository_url.rstrip("/").split("/")[-2:])


@dataclasses.dataclass(frozen=True, slots=True)
class BranchRef:
    """GET .../branches/{branch}: what of a classic protection anyone may read."""

    protected: bool = False
    contexts: tuple[str, ...] = at("protection", "required_status_checks", "contexts", default=())


@dataclasses.dataclass(frozen=True, slots=True)
class StatusCheck:
    context: str = ""


@dataclasses.dataclass(frozen=True, slots=True)
class RuleRef:
    type: str = ""
    checks: tuple[StatusCheck, ...] = at("parameters", "required_status_checks", default=())


@dataclasses.dataclass(frozen=True, slots=True)
class CheckRunRef:
    name: str = ""
    status: str = ""
    conclusion: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class SearchPage:
    items: tuple[SearchHit, ...] = ()
    total_count: int = 0
    incomplete_results: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class CheckRuns:
    check_runs: tuple[CheckRunRef, ...] = ()


@dataclasses.dataclass(frozen=True)
class Quota:
    """GitHub's rate-limit headers: what is left of which quota, and when it resets."""

    resource: str
    limit: int
    remaining: int
    reset: float  # epoch seconds

    @classmethod
    def read(cls, headers: Mapping[str, str]) -> Quota | None:
        try:
            return cls(headers.get("X-RateLimit-Resource") or "core",
                       int(headers["X-RateLimit-Limit"]), int(headers["X-RateLimit-Remaining"]),
                       float(headers.get("X-RateLimit-Reset") or 0))  # fmt: skip
        except (KeyError, ValueError):
            return None


class Forge(Protocol):
    """What the tool asks of a forge: `github.GitHub`'s verbs, each answer a record."""

    host: str
    token_kind: str | None  # by the token's prefix (None: no token)
    scopes: frozenset[str] | None  # the token's, as the last answer names them
    token_expires: datetime.datetime | None
    quotas: dict[str, Quota]  # per resource, as the last answer left them
    max_rate_wait: float  # seconds the client waits for a quota's reset itself
    partial: list[str]  # why a list read is incomplete: said, never claimed complete
    reads: int  # requests that read: the run's cost

    def user(self) -> UserRef: ...
    def repo(self, full_name: str) -> RepoRef | None: ...
    def pull(self, repo: str, number: int) -> PullRef: ...
    def pulls(
        self, repo: str, *, state: str = ..., head: str | None = ..., base: str | None = ...
    ) -> list[PullRef]: ...
    def issue_events(self, repo: str, number: int) -> list[EventRef]: ...
    def issue_comments(self, repo: str, number: int) -> list[CommentRef]: ...
    def branch(self, repo: str, branch: str) -> BranchRef | None: ...
    def branch_rules(self, repo: str, branch: str) -> list[RuleRef]: ...
    def check_runs(self, repo: str, sha: str) -> list[CheckRunRef]: ...
    def search_issues(self, query: str, *, per_page: int = ..., max_pages: int = ...
                      ) -> list[SearchHit]: ...  # fmt: skip
    def create_fork(self, upstream: str, *, name: str, organization: str | None = ...
                    ) -> RepoRef: ...  # fmt: skip
    def create_pull(self, repo: str, *, title: str, head: str, base: str, body: str,
                    maintainer_can_modify: bool = ..., draft: bool = ...
                    ) -> PullRef: ...  # fmt: skip
    def update_pull(self, repo: str, number: int, **fields: str | bool) -> PullRef: ...
    def create_comment(self, repo: str, number: int, body: str) -> CommentRef: ...


class Refused(Exception):
    """What in an answer is not of its record's shape, in a few words naming the field."""


def read(shape: Any, value: Any, where: str = "") -> Any:
    """`value` as `shape` (a record, tuple, `X | None`, str, int, bool); `Refused` if not."""
    if get_origin(shape) is types.UnionType:
        if value is None and type(None) in get_args(shape):
            return None
        shape = next(o for o in get_args(shape) if o is not type(None))
    if shape is Any:
        return value
    if isinstance(shape, type) and dataclasses.is_dataclass(shape):
        _expect(value, dict, where)
        found = {f.name: _field(value, f, hints[f.name], where)
                 for hints in [_hints(shape)] for f in dataclasses.fields(shape)}  # fmt: skip
        return shape(**{k: v for k, v in found.items() if v is not _ABSENT})
    if get_origin(shape) is tuple:
        _expect(value, list, where)
        return tuple(read(get_args(shape)[0], v, f"{where}[{i}]") for i, v in enumerate(value))
    _expect(value, shape, where)
    return value


_ABSENT = object()


def _field(answer: dict[str, Any], field: dataclasses.Field[Any], hint: Any, where: str) -> Any:
    *through, last = path_of(field)
    for key in through:
        where = f"{where}.{key}".lstrip(".")
        answer = {} if answer.get(key) is None else answer[key]
        _expect(answer, dict, where)
    if last in answer:
        return read(hint, answer[last], f"{where}.{last}".lstrip("."))
    if field.default is dataclasses.MISSING:
        raise Refused(f"{where}.{last}".lstrip(".") + " is missing")
    return _ABSENT


def _expect(value: Any, kind: type, where: str) -> None:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise Refused(f"{where or 'the answer'} is {_kind(value)}, not {_kind(kind())}")


_hints = functools.cache(get_type_hints)


def _kind(value: Any) -> str:
    """JSON's name for `value`'s type."""
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string",
             list: "a list", dict: "an object", type(None): "null"}  # fmt: skip
    return names.get(type(value), type(value).__name__)
