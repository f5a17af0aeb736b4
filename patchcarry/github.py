"""The only module importing ghapi: REST verbs whose answers become `github_types` records;
retries, rate limits and messages decided here, one `HostApi` per host (a GhApi costs 0.2 s)."""

from __future__ import annotations

import datetime
import email.utils
import functools
import re
import time
from collections.abc import Callable
from typing import Any, cast
from urllib.parse import urlsplit

import httpx2
from fastcore.apisurface import snake  # type: ignore[import-untyped]
from fastcore.basics import listify  # type: ignore[import-untyped]
from fastspec.oapi import SyncOpFunc  # type: ignore[import-untyped]
from fasttransport.errors import APIError  # type: ignore[import-untyped]
from ghapi.core import GhSyncTransport, pspec

from patchcarry import http_transport, limits, progress, tokens, trace
from patchcarry.errors import ExitCode, GitHubError
from patchcarry.github_types import (
    BranchRef,
    CheckRunRef,
    CheckRuns,
    CommentRef,
    EventRef,
    PullRef,
    Quota,
    Refused,
    RepoRef,
    RuleRef,
    SearchHit,
    SearchPage,
    UserRef,
    read,
)
from patchcarry.hosts import api_host as api_host  # re-exported for callers and tests

Json = dict[str, Any]  # a request's query or body (answers: github_types' records)

# The REST API version every request pins (`X-GitHub-Api-Version`): answers keep this shape
# whatever GitHub's default becomes. The loopback GitHub in testing/ serves the same one.
API_VERSION = "2022-11-28"

# Token kinds, by the prefix GitHub gives each (docs: "About authentication to GitHub",
# token formats). A token without one of these prefixes is a legacy classic token.
CLASSIC, FINE_GRAINED, OAUTH, APP_USER, ACTIONS = (
    "classic", "fine-grained", "oauth", "github-app", "github-app-installation",
)  # fmt: skip
_PREFIXES = (("github_pat_", FINE_GRAINED), ("ghp_", CLASSIC), ("gho_", OAUTH),
             ("ghu_", APP_USER), ("ghs_", ACTIONS))  # fmt: skip


def token_kind(token: str | None) -> str | None:
    """The kind of `token` from its prefix (None without a token)."""
    if not token:
        return None
    return next((kind for prefix, kind in _PREFIXES if token.startswith(prefix)), CLASSIC)


class PagingCapError(GitHubError):
    """A list longer than the page cap: reading on is unbounded, stopping acts on part of it."""


class MalformedAnswerError(GitHubError):
    """An answer not of the shape GitHub documents: refused where it enters."""


class NotFoundError(GitHubError):
    """404 from GitHub."""


class UnprocessableError(GitHubError):
    """422 (validation failed); `said`: GitHub's message and errors, lower-cased, to judge by."""

    said = ""


class ForbiddenError(GitHubError):
    """403 from GitHub (not a rate limit, not SAML SSO): a permission the token lacks."""


class TokenKindError(GitHubError):
    """A token whose kind cannot do what the run needs, whatever its scopes."""

    exit_code = ExitCode.FAILED


class LockedError(ForbiddenError):
    """403 "... because issue is locked.": only writers may comment; no scope fixes it."""


class RateLimited(GitHubError):
    """The rate limit is spent and resets later than the run may wait; what was read stands."""


class TransientError(GitHubError):
    """A 5xx answer or a dropped connection: the request may or may not have taken effect."""


class ConnectionFailed(TransientError):
    """No answer at all (refused, reset, timed out): a failed network read, like git's."""

    exit_code = ExitCode.NETWORK


# Each operation's answer as the record it is read into (a page of a list: null is empty).
SHAPES: dict[str, Any] = {
    "users.get_authenticated": UserRef, "repos.get": RepoRef, "repos.create_fork": RepoRef,
    "pulls.get": PullRef, "pulls.create": PullRef, "pulls.update": PullRef,
    "pulls.list": tuple[PullRef, ...] | None, "issues.list_events": tuple[EventRef, ...] | None,
    "issues.create_comment": CommentRef, "issues.list_comments": tuple[CommentRef, ...] | None,
    "repos.get_branch_rules": tuple[RuleRef, ...] | None, "repos.get_branch": BranchRef,
    "search.issues_and_pull_requests": SearchPage, "checks.list_for_ref": CheckRuns,
}  # fmt: skip


# The media type GhApi's own transport asks for on every request.
_ACCEPT = {"Accept": "application/vnd.github.v3+json"}


@functools.cache
def _operation_specs() -> dict[str, Any]:
    """ghapi's operations by GhApi's name ("pulls.list"), indexed once per process."""
    return {
        ".".join([*(snake(g) for g in listify(spec.group)), spec.name]): spec
        for spec in pspec.ops
    }  # fmt: skip


class HostApi:
    """One API host: ghapi's transport (no retries of its own) and its operations, built lazily."""

    def __init__(self, host: str) -> None:
        client = http_transport.client(host, on_response=trace.response)  # first: it may refuse
        self.gh_host = host
        self.transport = GhSyncTransport(  # type: ignore[no-untyped-call]
            client=client, retries=0, base_headers=dict(_ACCEPT)
        )
        self.operations: dict[str, SyncOpFunc] = {}

    def operation(self, name: str) -> SyncOpFunc:
        """ghapi's operation `name` ("pulls.list") on this host."""
        if name not in self.operations:
            spec = _operation_specs()[name]
            self.operations[name] = SyncOpFunc(spec, self.transport, self.gh_host)
        return self.operations[name]


_ghapi = functools.cache(HostApi)


# 422s a re-run cannot fix, by GitHub's message text: what to change instead.
_HINTS_422 = (
    ("fork_collab", ": GitHub refuses `maintainer_can_modify` for this fork (an organization's "
     "fork cannot grant maintainers push access); use a fork owned by a user account"),
    ("maintainer_can_modify", ": GitHub refuses `maintainer_can_modify` for this fork; use a "
     "fork owned by a user account"),
    ("must be a collaborator", ": the upstream repository takes pull requests from its "
     "collaborators only (its pull request creation policy, or an interaction limit, which "
     "GitHub shows to its admins alone); a re-run will not change that: ask a maintainer to "
     "open the PR from the pushed branch, or to lift the limit"),
    ("draft pull requests are not supported", ": the upstream repository's plan does not "
     "allow draft PRs (a private repository's owner's plan decides)"),
    ("no commits between", ": the fork branch holds nothing beyond the base branch; check the "
     "manifest's head_branch and that the push went to it"),
)  # fmt: skip


def _sso(response: httpx2.Response | None) -> tuple[str, dict[str, str]] | None:
    """`X-GitHub-SSO` (`required; url=<url>`, `partial-results; organizations=<ids>`): its
    first word lower-cased and its `key=value` parts; None without the header."""
    value = response.headers.get("X-GitHub-SSO") if response is not None else None
    if value is None:
        return None
    parts = dict(p.strip().partition("=")[::2] for p in value.split(";") if "=" in p)
    return value.strip().lower(), parts


def sso_partial(response: httpx2.Response | None) -> tuple[str, ...]:
    """Org ids of `X-GitHub-SSO: partial-results`: left out for SSO the token lacks."""
    sso = _sso(response)
    if sso is None or not sso[0].startswith("partial-results"):
        return ()
    ids = (i.strip() for i in sso[1].get("organizations", "").split(","))
    return tuple(_one_line(i)[:20] for i in ids if i)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())[:300]


def _exchange(send: Callable[[], httpx2.Response]) -> httpx2.Response:
    """`send()`; a failed connection is httpx's own error (ghapi wraps it in an APIError)."""
    try:
        return send()
    except APIError as exc:
        if exc.response is None and isinstance(exc.raw, httpx2.RequestError):
            raise exc.raw from None
        raise


class GitHub:
    """Blocking REST client: bounded retries, rate-limit waits, writes `WRITE_SPACING` apart."""

    WRITE_SPACING = 1.0
    READ_RETRIES = 3  # a 5xx or a dropped connection, for a read or an idempotent write
    BACKOFF = 0.5  # the first retry's wait; each next one doubles it

    def __init__(
        self, *, host: str | None = None, token: str | None = None, max_rate_wait: float = 60.0,
        backoff: float | None = None, sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:  # fmt: skip
        self.host = api_host(host)
        self.token_kind = token_kind(token)
        self._api = _ghapi(self.host)
        self._auth = {"Authorization": f"token {token}"} if token else {}
        self._headers = {**self._auth, "X-GitHub-Api-Version": API_VERSION}
        self.scopes: frozenset[str] | None = None  # X-OAuth-Scopes of the last answer
        # organisations (ids) whose results an answer left out for SAML SSO: a list read
        # through this client is incomplete while this is not empty
        self.sso_left_out: tuple[str, ...] = ()
        # why a list read through this client is partial (search caps and timeouts, a
        # quota spent part-way): said to the user, never claimed complete
        self.partial: list[str] = []
        self.quotas: dict[str, Quota] = {}  # per resource (core, search): the last headers
        self.token_expires: datetime.datetime | None = None  # a token with an expiry date
        self._next: str | None = None  # the last answer's Link rel="next"
        self.max_rate_wait = max_rate_wait
        self.backoff = self.BACKOFF if backoff is None else backoff
        self.sleep = sleep
        self.clock = clock
        self.reads = 0  # GET requests sent, for the run's cost report
        self.write_spacing = self.WRITE_SPACING
        self._last_write: float | None = None

    # -- transport ---------------------------------------------------------------------------
    def request(self, method: str, path: str, *, query: Json | None = None) -> Any:
        """One REST call to `path` (or an absolute `Link` URL on the API host); plain data."""
        url = path if path.startswith(("http://", "https://")) else self._api.gh_host + path
        there, here = urlsplit(url), urlsplit(self._api.gh_host)
        if (there.scheme, there.netloc) != (here.scheme, here.netloc):  # the token rides along
            raise GitHubError(
                f"{method} {there.scheme}://{there.netloc}/…: an answer sent this tool to another "
                f"host than {here.netloc}; refusing to send the token there"
            )

        def send() -> httpx2.Response:
            response: httpx2.Response = self._api.transport.request(  # type: ignore[no-untyped-call]
                method, url, headers=self._headers, params=query, raw=True
            )
            return response

        return self._with_retries(method, f"{method} {path}", send, retry=None)

    def _op(
        self, operation: str, route: dict[str, str | int], /, retry: bool | None = None,
        **params: Any,
    ) -> Any:  # fmt: skip
        """ghapi's `operation` ("pulls.list"), its answer read as its record (`SHAPES`)."""
        op = self._api.operation(operation)
        path = op.path.format(**route)
        label = f"{op.verb} {path}"
        send = lambda: op(**route, **params, headers_=self._headers, raw_=True)  # noqa: E731
        answer = self._with_retries(op.verb, label, send, retry=retry)
        return _shaped(answer, SHAPES[operation], label)

    def _with_retries(self, method: str, label: str, send: Callable[[], httpx2.Response], *,
                      retry: bool | None) -> Any:  # fmt: skip
        """`send()` with bounded retries (rate-limit waits; 5xx or drops for reads and `retry`)."""
        is_write = method != "GET"
        may_retry = (not is_write) if retry is None else retry
        attempt = 0
        secondary = 0
        waits = 0  # primary rate-limit waits: counted, like every other retry
        netloc = urlsplit(self.host).netloc
        # one total deadline for the tries of a request nobody answers (an answer, even a
        # 5xx or a rate limit, starts it again): the tries never add up past it
        until: float | None = None
        while True:
            if is_write:
                self._space_writes()
            else:
                self.reads += 1
            until = until if until is not None else time.monotonic() + limits.HTTP_DEADLINE_S
            notice = (f"{label}: waiting for {netloc} to answer (it gives up "
                      f"{limits.HTTP_DEADLINE_S:g} s after the first try)")  # fmt: skip
            try:
                with (
                    progress.unless_done_within(limits.HTTP_WAIT_NOTICE_S, notice),
                    http_transport.exchange(
                        netloc,
                        deadline_s=limits.HTTP_DEADLINE_S,
                        max_bytes=limits.HTTP_MAX_BYTES,
                        until=until,
                    ),
                ):
                    response = _exchange(send)
            except (httpx2.HTTPStatusError, APIError) as exc:
                until = None
                response = exc.response
                self._read_headers(response)
                status = response.status_code if response is not None else 0
                wait = self._secondary_wait(response, label, secondary)
                if wait is not None:
                    secondary += 1
                    self.sleep(wait)
                    continue
                wait = self._rate_limit_wait(response, label, waits)
                if wait is not None:
                    waits += 1
                    self.sleep(wait)
                    continue  # a rate-limited request was not performed: safe to repeat
                error = self._status_error(status, response, label)
                if isinstance(error, TransientError) and may_retry and attempt < self.READ_RETRIES:
                    attempt += 1
                    self.sleep(self.backoff * 2 ** (attempt - 1))
                    continue
                raise error from None
            except httpx2.RequestError as exc:
                trace.no_answer(label, type(exc).__name__)
                left = until - time.monotonic()
                if may_retry and attempt < self.READ_RETRIES:
                    if left <= 0:
                        raise http_transport.past_deadline(netloc, limits.HTTP_DEADLINE_S) from None
                    attempt += 1
                    if isinstance(exc, httpx2.TimeoutException):  # it waited: it says so
                        progress.waiting(
                            f"{label}: no answer from {netloc} ({type(exc).__name__}); "
                            f"trying again, for at most {left:.3g} s more"
                        )
                    self.sleep(min(self.backoff * 2 ** (attempt - 1), left))
                    continue
                raise ConnectionFailed(
                    f"{label}: connection to {self.host} failed or dropped ({type(exc).__name__}); "
                    "check GH_HOST and the network, then re-run (it re-reads state before writing)"
                ) from None
            self._read_headers(response)
            if not response.content:  # the body as plain data: JSON, else its text
                return None
            kind = (response.headers.get("content-type") or "").lower()
            return http_transport.json_body(response, label) if "json" in kind else response.text

    def _read_headers(self, response: httpx2.Response | None) -> None:
        """What every answer tells about the token and the list: scopes and the next page."""
        if response is None:
            return
        scopes = response.headers.get("X-OAuth-Scopes")
        if scopes is not None:
            self.scopes = frozenset(s.strip() for s in scopes.split(",") if s.strip())
        left_out = sso_partial(response)
        if left_out:
            self.sso_left_out = tuple(dict.fromkeys((*self.sso_left_out, *left_out)))
        self._next = response.links.get("next", {}).get("url")
        expires = token_expiry(response.headers.get("GitHub-Authentication-Token-Expiration"))
        self.token_expires = expires or self.token_expires
        quota = Quota.read(response.headers)
        if quota is not None:
            self.quotas[quota.resource] = quota

    def _space_writes(self) -> None:
        now = self.clock()
        if self._last_write is not None and now - self._last_write < self.write_spacing:
            self.sleep(self.write_spacing - (now - self._last_write))
        self._last_write = self.clock()

    def _secondary_wait(self, response: httpx2.Response | None, label: str,
                        tries: int) -> float | None:  # fmt: skip
        """A secondary rate limit (403/429 naming it): wait as GitHub advises, or stop."""
        if response is None or response.status_code not in (403, 429):
            return None
        if "secondary rate limit" not in response.text.lower():
            return None
        wait = retry_after_seconds(response.headers.get("Retry-After"), time.time())
        if wait is None:
            wait = min(60.0 * 2**tries, 900.0)
        if wait <= self.max_rate_wait and tries < 3:
            return wait
        raise GitHubError(
            f"{label}: GitHub's secondary rate limit (too many requests in a short time); "
            f"it asks to wait {wait:.0f} s, over the {self.max_rate_wait:.0f} s wait limit: "
            "re-run in a few minutes"
        )

    RATE_WAITS = 3  # rate-limit waits per request: an answer that says "wait" forever is refused

    def _rate_limit_wait(self, response: httpx2.Response | None, label: str,
                         tries: int) -> float | None:  # fmt: skip
        """Primary rate limit: wait while short, under `RATE_WAITS` times, else stop saying so."""
        if response is None or response.status_code not in (403, 429):
            return None
        headers = response.headers
        if headers.get("X-RateLimit-Remaining") != "0" and "Retry-After" not in headers:
            return None
        wait = retry_after_seconds(headers.get("Retry-After"), time.time())
        if wait is None:
            wait = until_reset(headers.get("X-RateLimit-Reset"), time.time()) + 1
        if wait <= self.max_rate_wait and tries < self.RATE_WAITS:
            return wait
        if tries >= self.RATE_WAITS:
            raise RateLimited(
                f"{label}: GitHub still answers {response.status_code} (rate limited) after "
                f"{tries} waits; re-run later"
            )
        when = datetime.datetime.fromtimestamp(time.time() + wait, tz=datetime.UTC)
        raise RateLimited(
            f"{label}: GitHub rate limit exhausted; it resets at {when:%Y-%m-%d %H:%M:%S} UTC "
            f"(in {wait:.0f} s, over the {self.max_rate_wait:.0f} s wait limit): re-run after that"
        )

    def _status_error(self, status: int, response: httpx2.Response | None,
                      label: str) -> GitHubError:  # fmt: skip
        message = ""
        fields: tuple[str, ...] = ()
        if response is not None:
            try:
                data = http_transport.json_body(response, label)
                data = data if isinstance(data, dict) else {}  # an error's shape, read leniently
                message = str(data.get("message") or "")
                errors = data.get("errors")
                errors = errors if isinstance(errors, list) else [errors] if errors else []
                fields = tuple(str(e.get("field")) for e in errors
                               if isinstance(e, dict) and e.get("field"))  # fmt: skip
                if errors:
                    message += " " + "; ".join(
                        str(e.get("message", e)) if isinstance(e, dict) else str(e) for e in errors
                    )
            except http_transport.ReplyShapeError:
                message = response.text[:300]
        said = f" ({_one_line(message)})" if message.strip() else ""
        if status == 401:
            return GitHubError(
                f"{label}: 401 Bad credentials{said}: {tokens.variable(self.host)} is missing, "
                "expired or revoked"
            )
        sso = _sso(response)
        if status == 403 and sso is not None:  # `required; url=<url>`: where to authorize it
            url = sso[1].get("url", "")
            url = _one_line(url) if url.startswith(("https://", "http://")) else ""
            return GitHubError(
                f"{label}: 403 Forbidden{said}: the organisation enforces SAML single sign-on and "
                f"the token is not authorized for it: authorize it at {url or '(no URL given)'} "
                "(or Settings > Developer settings > your token > Configure SSO), then re-run"
            )
        if status == 403 and "issue is locked" in message.lower():
            return LockedError(
                f"{label}: 403 Forbidden{said}: the conversation is locked; only those with "
                "write access to the repository may comment"
            )
        if status == 403 and "archived" in message.lower():
            return GitHubError(
                f"{label}: 403 Forbidden{said}: the repository is archived (read-only) since "
                "this run read it; no token or scope changes that: its owner must unarchive it"
            )
        if status == 403:
            return ForbiddenError(
                f"{label}: 403 Forbidden{said}: the token lacks a scope (classic: public_repo; "
                "fine-grained: Contents, Pull requests, Administration write) or an org blocks it"
            )
        if status == 404:
            return NotFoundError(
                f"{label}: 404 Not Found{said}: the repository or PR does not exist, was renamed, "
                "or the token cannot see it"
            )
        if status == 422:
            low = " ".join((message, *fields)).lower()  # a key of _HINTS_422 in either
            hint = next((hint for key, hint in _HINTS_422 if key in low), "")
            error = UnprocessableError(f"{label}: 422 Unprocessable{said}{hint}")
            error.said = message.lower()
            return error
        if status >= 500:
            return TransientError(f"{label}: GitHub answered {status}{said}; re-run later")
        return GitHubError(f"{label}: GitHub answered {status}{said}")

    MAX_PAGES = 30  # 3000 items of one list: past that a PR's history is not what we expect

    # Lists follow `Link: rel="next"` as GitHub documents; ghapi's `paged` asks for page
    # numbers until an empty one, or all at once, unbounded.
    def _pages(self, path: str, query: Json | None = None, *, max_pages: int = 0) -> list[Any]:
        """Every item of the list at `path`; more than `max_pages` pages is an error."""
        first = self.request("GET", path, query={**(query or {}), "per_page": 100})
        shape = tuple[Any, ...] | None
        return self._following(path, _shaped(first, shape, f"GET {path}"), max_pages, shape)

    def _list(self, name: str, route: dict[str, str | int], **query: Any) -> list[Any]:
        """Every item of ghapi's list operation `name`, 100 a page."""
        first = self._op(name, route, **query, per_page=100)
        path = self._api.operation(name).path.format(**route)
        return self._following(path, first, 0, SHAPES[name])

    def _following(self, path: str, chunk: Any, max_pages: int, shape: Any) -> list[Any]:
        """`chunk` (the first page) and every page after it by next links, read as `shape`."""
        cap = max_pages or self.MAX_PAGES
        items: list[Any] = list(chunk or ())
        pages = 1
        while True:
            following = self._next
            if not following:
                return items
            if pages >= cap:
                raise PagingCapError(
                    f"GET {path}: more than {cap} pages of 100; refusing to act on part of "
                    "the list (raise the cap if this is expected)"
                )
            items.extend(_shaped(self.request("GET", following), shape, f"GET {path}") or ())
            pages += 1

    # -- verbs -------------------------------------------------------------------------------
    def user(self) -> UserRef:
        """The token's user; 403 to an installation token (`ghs_`) is its kind, not a scope."""
        try:
            result: UserRef = self._op("users.get_authenticated", {})
        except ForbiddenError:
            if self.token_kind == ACTIONS:
                raise TokenKindError(
                    f"{tokens.variable(self.host)} is a GitHub App installation token (ghs_): "
                    "it acts as the app, not as a user, so GitHub answers GET /user with 403 "
                    '"Resource not accessible by integration" and its writes reach only '
                    "repositories the app is installed on; use a classic token with the "
                    "public_repo and workflow scopes (docs/operations.md)"
                ) from None
            raise
        return result

    def repo(self, full_name: str) -> RepoRef | None:
        """The repository, or None when it does not exist (404)."""
        try:
            result: RepoRef = self._op("repos.get", _route(full_name))
        except NotFoundError:
            return None
        return result

    def create_fork(self, upstream: str, *, name: str, organization: str | None = None) -> RepoRef:
        extra = {"organization": organization} if organization else {}
        fork = self._op("repos.create_fork", _route(upstream), name=name,
                        default_branch_only=True, body_=extra)  # fmt: skip
        return cast(RepoRef, fork)

    def pull(self, repo: str, number: int) -> PullRef:
        return cast(PullRef, self._op("pulls.get", _route(repo, pull_number=number)))

    def pulls(
        self, repo: str, *, state: str = "open", head: str | None = None, base: str | None = None
    ) -> list[PullRef]:
        query = {"state": state, "head": head, "base": base}
        return self._list("pulls.list", _route(repo), **{k: v for k, v in query.items() if v})

    def search_issues(self, query: str, *, per_page: int = 100,
                      max_pages: int = 10) -> list[SearchHit]:  # fmt: skip
        """Every item the search API finds for `query`, page by page (it serves 1000 at most)."""
        items: list[SearchHit] = []
        total, timed_out = 0, False
        for page in range(1, max_pages + 1):
            found: SearchPage = self._op("search.issues_and_pull_requests", {}, q=query,
                                         per_page=per_page, page=page)  # fmt: skip
            items.extend(found.items)
            total = max(total, found.total_count)
            timed_out = timed_out or found.incomplete_results
            if len(found.items) < per_page:
                break
        self.partial.extend(search_gaps(query, len(items), total, timed_out, per_page * max_pages))
        return items

    def issue_events(self, repo: str, number: int) -> list[EventRef]:
        return self._list("issues.list_events", _route(repo, issue_number=number))

    def issue_comments(self, repo: str, number: int) -> list[CommentRef]:
        return self._list("issues.list_comments", _route(repo, issue_number=number))

    def branch_rules(self, repo: str, branch: str) -> list[RuleRef]:
        """The active rules for `branch` (rulesets of every level; public repos: no auth)."""
        return self._list("repos.get_branch_rules", _route(repo, branch=branch))

    def branch(self, repo: str, branch: str) -> BranchRef | None:
        """The branch with what anyone may read of its classic protection (None: 404)."""
        try:
            result: BranchRef = self._op("repos.get_branch", _route(repo, branch=branch))
        except NotFoundError:
            return None
        return result

    def check_runs(self, repo: str, sha: str) -> list[CheckRunRef]:
        """The check runs reported for commit `sha` on `repo` (one page of 100)."""
        found: CheckRuns = self._op("checks.list_for_ref", _route(repo, ref=sha), per_page=100,
                                    filter="latest")  # fmt: skip
        return list(found.check_runs)

    def create_pull(
        self, repo: str, *, title: str, head: str, base: str, body: str,
        maintainer_can_modify: bool = False, draft: bool = True,
    ) -> PullRef:  # fmt: skip
        """A PR, a draft unless told otherwise. Never retried: the caller re-queries."""
        fields = {"title": title, "head": head, "base": base, "body": body, "draft": draft}
        fields["maintainer_can_modify"] = maintainer_can_modify
        return cast(PullRef, self._op("pulls.create", _route(repo), retry=False, **fields))

    def update_pull(self, repo: str, number: int, **fields: str | bool) -> PullRef:
        """PATCH title/body/maintainer_can_modify; idempotent, so retried like a read."""
        route = _route(repo, pull_number=number)
        return cast(PullRef, self._op("pulls.update", route, retry=True, body_=dict(fields)))

    def create_comment(self, repo: str, number: int, body: str) -> CommentRef:
        """Never retried: the caller re-reads the comments for its marker first."""
        route = _route(repo, issue_number=number)
        return cast(CommentRef, self._op("issues.create_comment", route, retry=False, body=body))


def _shaped(answer: Any, shape: Any, label: str) -> Any:
    """`answer` read into `shape`'s record; else one line naming the request and the field."""
    try:
        return read(shape, answer)
    except Refused as problem:
        raise MalformedAnswerError(
            f"{label}: GitHub's answer is not of the documented shape ({problem}); nothing "
            "was done with it: re-run later"
        ) from None


def token_expiry(value: str | None) -> datetime.datetime | None:
    """`GitHub-Authentication-Token-Expiration` as an aware time; None when absent or unread."""
    for form in ("%Y-%m-%d %H:%M:%S UTC", "%Y-%m-%d %H:%M:%S %z"):
        try:
            found = datetime.datetime.strptime((value or "").strip(), form)
        except ValueError:
            continue
        return found if found.tzinfo else found.replace(tzinfo=datetime.UTC)
    return None


SEARCH_CAP = 1000  # GitHub's search API: "up to 1,000 results for each search"


def search_gaps(query: str, got: int, total: int, timed_out: bool, cap: int) -> list[str]:
    """Why a search's results are not all of them: a timeout, GitHub's 1,000 cap, or ours."""
    gaps = []
    if timed_out:
        gaps.append(f"GitHub's search timed out and answered part of its results "
                    f"(incomplete_results: true) for `{_one_line(query)}`")  # fmt: skip
    if total > got:
        limit = min(cap, SEARCH_CAP)
        whose = "GitHub serves at most 1,000 per search" if limit == SEARCH_CAP else (
            f"this tool reads at most {cap} of them")  # fmt: skip
        gaps.append(f"GitHub counts {total} results for `{_one_line(query)}`, {got} read: "
                    f"{whose}")  # fmt: skip
    return gaps


def _route(full_name: str, **more: str | int) -> dict[str, str | int]:
    """An operation's route parameters: `owner` and `repo` from "OWNER/REPO", and `more`."""
    owner, _, repo = full_name.partition("/")
    return {"owner": owner, "repo": repo, **more}


# RFC 9110 delay-seconds are ASCII digits (float() would take "inf" and "1_0"); a wait is
# capped at a day.
_DELAY = re.compile(r"-?[0-9]+")
MAX_WAIT_S = 86_400.0


def retry_after_seconds(value: str | None, now: float) -> float | None:
    """The wait a `Retry-After` asks for (seconds or an HTTP-date, >= 0); None if unreadable."""
    if value is None:
        return None
    text = value.strip()
    if _DELAY.fullmatch(text):
        return min(MAX_WAIT_S, max(0.0, float(text)))
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # RFC 9110: an HTTP-date is GMT
        return None
    return min(MAX_WAIT_S, max(0.0, when.timestamp() - now))


def until_reset(value: str | None, now: float) -> float:
    """Seconds from `now` to an `X-RateLimit-Reset` epoch (capped); 0 when absent or no number."""
    text = (value or "").strip()
    return min(MAX_WAIT_S, max(0.0, float(text) - now)) if _DELAY.fullmatch(text) else 0.0
