"""A loopback fake of GitHub's REST API, on a real HTTP server.

Design after ghstack's `github_fake.py` (a state store with easy-to-spot id counters and regex
routing by method), but served by `ThreadingHTTPServer` on 127.0.0.1 so the production client
(ghapi) runs unmodified against it. The data lives in `fake_github_state`, the JSON shapes in
`fake_github_json` (validated against githubkit's models of GitHub's OpenAPI description by
tests/test_fake_github.py), the routes in `fake_github_routes`.

Use it as a context manager (`with FakeGitHub() as gh:`) or via the `fake_github` fixture
(`pytest_plugins = ["testing.fake_github"]`); point a client at `gh.url` (ghapi:
`GhApi(gh_host=gh.url)`; an `/api/v3` prefix, as GitHub Enterprise uses, works too).
"""

from __future__ import annotations

import datetime as dt
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

from testing import fake_github_checks as _checks  # noqa: F401 (registers its routes)
from testing import fake_github_git as git_side
from testing import fake_github_push as push_rules
from testing import fake_github_routes as routes
from testing.fake_github_json import DOCS, error_json
from testing.fake_github_routes import HttpError, Reply, Request
from testing.fake_github_state import Comment, Event, GitHubState, Pull, Repo, User, fake_sha

__all__ = ["FakeGitHub", "GitHubState", "RequestRecord", "fake_github", "fake_sha",
           "Comment", "Event", "Pull", "Repo", "User"]  # fmt: skip


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
    api_version: str | None = None  # the X-GitHub-Api-Version the client pinned, if any

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


@dataclass
class _Hook:
    """Someone else's act at a chosen moment of a run (a maintainer's edit while the tool
    pushes): `act(state)` when a matching request arrives (or, `after`, once it is answered)."""

    method: str
    pattern: re.Pattern[str]
    act: Callable[[GitHubState], None]
    after: bool
    times: int


_REASONS = {301: "Moved Permanently", 307: "Temporary Redirect",
            400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
            422: "Unprocessable Entity", 500: "Internal Server Error", 502: "Bad Gateway",
            503: "Service Unavailable"}  # fmt: skip


# (resource, with a token) -> (requests, window in seconds): GitHub's primary rate limits
_LIMITS = {("core", True): (5000, 3600), ("search", True): (30, 60),
           ("core", False): (60, 3600), ("search", False): (10, 60)}  # fmt: skip

# REST API versions GitHub serves (docs: "API Versions"); any other pinned one is a 400.
API_VERSIONS = ("2022-11-28", "2026-03-10")


class FakeGitHub:
    """The fake GitHub server. `with FakeGitHub() as gh:` starts it on 127.0.0.1:<free port>."""

    def __init__(self, state: GitHubState | None = None):
        self.state = state or GitHubState()
        self.requests: list[RequestRecord] = []
        self._faults: list[_Fault] = []
        self._hooks: list[_Hook] = []
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
        reset = int(dt.datetime.now(dt.UTC).timestamp()) + reset_in
        body = {
            "message": "API rate limit exceeded for user ID 1.",
            "documentation_url": f"{DOCS}/overview/rate-limits-for-the-rest-api",
        }
        headers = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset)}
        self.fail_next(method, path_regex, 403, body=body, headers=headers)  # fmt: skip

    def secondary_rate_limit_next(
        self, method: str, path_regex: str, *, retry_after: int | str | None = None, times: int = 1
    ) -> None:
        """GitHub's secondary rate-limit refusal: 403 while the primary quota remains (the
        server's usual X-RateLimit-Remaining > 0), GitHub's message, maybe Retry-After."""
        body = {
            "message": "You have exceeded a secondary rate limit. Please wait a few minutes "
            "before you try again. If you reach out to GitHub Support for help, please include "
            "the request ID 0000:0000:0000000:0000000:00000000.",
            "documentation_url": f"{DOCS}/overview/rate-limits-for-the-rest-api"
            "#about-secondary-rate-limits",
        }
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
        self.fail_next(method, path_regex, 403, times=times, body=body, headers=headers)

    def on_request(
        self,
        method: str,
        path_regex: str,
        act: Callable[[GitHubState], None],
        *,
        after: bool = False,
        times: int = 1,
    ) -> None:
        """Run `act(state)` for the next `times` matching requests (the git side's too,
        before only: `POST /OWNER/NAME.git/git-receive-pack` is a push), before each is
        processed or, `after`, once it is done but before it is answered: another person's
        edit between a run's read and its write. GitHub has no conditional write; whatever
        lands last is what stays."""
        self._hooks.append(_Hook(method, re.compile(path_regex), act, after, times))

    def _run_hooks(self, method: str, path: str, *, after: bool) -> None:
        for hook in list(self._hooks):
            if hook.after == after and hook.method == method and hook.pattern.search(path):
                hook.times -= 1
                if hook.times <= 0:
                    self._hooks.remove(hook)
                with self.state.lock:
                    hook.act(self.state)

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
        if git_side.is_git_path(split.path):  # GitHub's git side, at the API's clone_url
            self._run_hooks(h.command, split.path, after=False)
            git_side.serve(self.state, h, split.path, split.query)
            return
        prefix = "/api/v3" if split.path.startswith("/api/v3/") else ""
        path = split.path[len(prefix) :]
        query = {k: v[-1] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        auth = h.headers.get("Authorization")
        version = h.headers.get("X-GitHub-Api-Version")
        self._run_hooks(h.command, path, after=False)
        with self.state.lock:
            user, reply, body = self._dispatch(h.command, path, query, raw, auth, self.url + prefix)
            if reply is not None and version is not None and version not in API_VERSIONS:
                message = f"Unsupported 'X-GitHub-Api-Version' header: {version}"
                reply = Reply(400, error_json(400, message, "/overview/api-versions"))
            self.requests.append(RequestRecord(h.command, path, query, body, auth is not None,
                                               user, reply.status if reply else 0,
                                               version))  # fmt: skip
            self._run_hooks(h.command, path, after=True)  # done, not yet answered: no race
            if reply is None:  # drop: no status line, no headers, just a closed socket
                h.close_connection = True
                return
            headers = (
                self._rate_limit_headers(path, user) | self._scope_headers(auth) | reply.headers
            )
        headers["Content-Type"] = "application/json; charset=utf-8"
        data = b"" if reply.body is None else json.dumps(reply.body).encode()
        h.send_response(reply.status, _REASONS.get(reply.status))
        for key, value in headers.items():
            h.send_header(key, value)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _rate_limit_headers(self, path: str, user: str | None) -> dict[str, str]:
        """GitHub's quota headers: with a token core 5000/hour and search 30/minute, without
        one 60/hour and 10/minute (per address). Counted; refused only with
        `GitHubState.enforce_quota` (or `rate_limit_next`)."""
        resource = "search" if path.startswith("/search/") else "core"
        used = self._used.get((resource, user), 0)
        limit, window = _LIMITS[(resource, user is not None)]
        return {
            "X-RateLimit-Limit": str(limit),
            "X-RateLimit-Remaining": str(max(limit - used, 0)),
            "X-RateLimit-Reset": str(int(dt.datetime.now(dt.UTC).timestamp()) + window),
            "X-RateLimit-Used": str(min(used, limit)),
            "X-RateLimit-Resource": resource,
        }

    def _spend_quota(self, path: str, user: str | None, base: str) -> Reply | None:
        """Count one request against its quota; GitHub's refusal once it is spent (with
        `enforce_quota`): 403, X-RateLimit-Remaining 0, the reset time in the headers."""
        resource = "search" if path.startswith("/search/") else "core"
        used = self._used[(resource, user)] = self._used.get((resource, user), 0) + 1
        limit, _ = _LIMITS[(resource, user is not None)]
        if not self.state.enforce_quota or used <= limit:
            return None
        who = f"user ID {self.state.users[user].id}" if user else "127.0.0.1"
        message = f"API rate limit exceeded for {who}."
        if user is None:
            message += (" (But here's the good news: Authenticated requests get a higher rate "
                        "limit. Check out the documentation for more details.)")  # fmt: skip
        return Reply(403, error_json(403, message, "/overview/rate-limits-for-the-rest-api"))

    def _scope_headers(self, auth: str | None) -> dict[str, str]:
        """Classic and OAuth tokens: their scopes on every answer (`X-OAuth-Scopes`)."""
        token = _token(auth)
        if token is None or token not in self.state.tokens:
            return {}
        if token in self.state.token_expiry:  # classic and fine-grained tokens alike
            expiry = {"GitHub-Authentication-Token-Expiration": self.state.token_expiry[token]}
            return expiry | self._scope_headers_of(token)
        return self._scope_headers_of(token)

    def _scope_headers_of(self, token: str) -> dict[str, str]:
        if self.state.token_kind(token) not in (push_rules.CLASSIC, push_rules.OAUTH):
            return {}
        return {"X-OAuth-Scopes": ", ".join(self.state.token_scopes.get(token, ())),
                "X-Accepted-OAuth-Scopes": "repo"}  # fmt: skip

    def _saml_refusal(self, path: str, token: str) -> Reply | None:
        """GitHub's answer to a member's token not authorized for an organisation that
        enforces SAML SSO, on any request to its repositories (public ones too): 403, this
        message, and `X-GitHub-SSO: required; url=<where to authorize it>`; or a bare 404
        (`GitHubState.sso_not_found`). Outside collaborators and non-members are not asked."""
        match = re.match(r"^/(?:repos|orgs)/([^/]+)", path)
        if match is None:
            return None
        org = next((o for o in self.state.saml_orgs if o.casefold() == match[1].casefold()), None)
        if org is None or (token, org) in self.state.sso_authorized:
            return None
        user = self.state.tokens.get(token, "")
        members = {m.casefold() for m in self.state.org_members.get(org, set())}
        if user.casefold() not in members:
            return None
        if org in self.state.sso_not_found:
            return Reply(404, error_json(404, "Not Found"))
        body = error_json(403, "Resource protected by organization SAML enforcement. You must "
                          "grant your Personal Access token access to this organization.",
                          "/authentication/authenticating-with-saml-single-sign-on")  # fmt: skip
        return Reply(403, body, {"X-GitHub-SSO": f"required; url={self.state.saml_orgs[org]}"})

    def _may_write(self, method: str, path: str, token: str, user: str) -> Reply | None:
        """GitHub's refusal of a write the token's kind or scopes do not allow (None: allowed).
        Fine-grained and app tokens reach only their owner's repositories (forking is a write
        to the user's own account); a classic token needs `repo` or `public_repo`."""
        match = re.match(r"^/repos/([^/]+)/([^/]+)(/.*)?$", path)
        if method == "GET" or match is None:
            return None
        kind = self.state.token_kind(token)
        scopes = set(self.state.token_scopes.get(token, ()))
        own = match.group(1).casefold() == user.casefold()
        forking = method == "POST" and (match.group(3) or "") == "/forks"
        if kind == push_rules.FINE_GRAINED and not own and not forking:
            body = error_json(403, "Resource not accessible by personal access token",
                              "/pulls/pulls")  # fmt: skip
            return Reply(403, body)
        if kind in (push_rules.APP, push_rules.APP_USER) and not own and not forking:
            return Reply(403, error_json(403, "Resource not accessible by integration"))
        if kind in (push_rules.CLASSIC, push_rules.OAUTH) and not scopes & {"repo", "public_repo"}:
            return Reply(404, error_json(404, "Not Found"), {"X-Accepted-OAuth-Scopes": "repo"})
        return None

    def _moved(self, method: str, path: str, query: dict[str, str], base: str) -> Reply | None:
        """GitHub's answer to a repository's old name (renamed, transferred, or its owner
        renamed): 301 (307 for a write, which keeps its method and body) to the same path
        under `/repositories/{id}`; its docs say to follow it and use the new name."""
        match = re.match(r"^/repos/([^/]+)/([^/]+)(/.*)?$", path)
        if match is None:
            return None
        wanted = f"{match[1]}/{match[2]}".casefold()
        if any(r.full_name.casefold() == wanted for r in self.state.repos.values()):
            return None
        repo = self.state.moved_to(wanted)
        if repo is None:
            return None
        url = f"{base}/repositories/{repo.id}{match[3] or ''}"
        url += f"?{urlencode(query)}" if query else ""
        body = {"message": "Moved Permanently", "url": url, "documentation_url":
                "https://docs.github.com/rest/guides/best-practices-for-using-the-rest-api"
                "#follow-redirects"}  # fmt: skip
        return Reply(301 if method == "GET" else 307, body, {"Location": url})

    def _by_id(self, path: str) -> str:
        """`/repositories/{id}/...` (where a redirect points) as `/repos/{owner}/{name}/...`."""
        match = re.match(r"^/repositories/(\d+)(/.*)?$", path)
        repo = next((r for r in self.state.repos.values() if match and r.id == int(match[1])),
                    None)  # fmt: skip
        if match is None or repo is None:
            return path
        return f"/repos/{repo.full_name}{match[2] or ''}"

    def _archived_refusal(self, method: str, path: str) -> Reply | None:
        """GitHub's answer to any write on an archived repository (forking it is allowed:
        the fork is a write to the forker's account)."""
        match = re.match(r"^/repos/([^/]+)/([^/]+)(/.*)?$", path)
        if method == "GET" or match is None or (method, match[3]) == ("POST", "/forks"):
            return None
        wanted = f"{match[1]}/{match[2]}".casefold()
        repo = next((r for r in self.state.repos.values() if r.full_name.casefold() == wanted),
                    None)  # fmt: skip
        if repo is None or not repo.archived:
            return None
        return Reply(403, error_json(403, "Repository was archived so is read-only.",
                                     "/repos/repos#update-a-repository"))  # fmt: skip

    def _dispatch(
        self, method: str, path: str, query: dict[str, str], raw: bytes, auth: str | None, base: str
    ) -> tuple[str | None, Reply | None, Any]:
        """(user, reply, parsed body); reply None means: drop the connection."""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            return None, Reply(400, error_json(400, "Problems parsing JSON")), raw.decode("replace")
        user = None
        token = _token(auth)
        if token is not None:
            user = self.state.tokens.get(token)
            if user is None:
                return None, Reply(401, error_json(401, "Bad credentials")), body
        if token is not None:
            refused_sso = self._saml_refusal(path, token)
            if refused_sso is not None:
                return user, refused_sso, body
        moved = self._moved(method, path, query, base)
        if moved is not None:
            return user, moved, body
        path = self._by_id(path)
        spent = self._spend_quota(path, user, base)
        if spent is not None:
            return user, spent, body
        fault = self._take_fault(method, path, {"fail", "drop"})
        if fault is not None:
            if fault.kind == "drop":
                return user, None, body
            fail_body = fault.body or error_json(fault.status, _REASONS.get(fault.status, "Err"))
            return user, Reply(fault.status, fail_body, dict(fault.headers)), body
        found = routes.find(method, path)
        if found is None:
            message = f"fake GitHub has no route for {method} {path}"
            return user, Reply(501, error_json(501, message)), body
        if method != "GET" and user is None:
            return user, Reply(401, error_json(401, "Requires authentication")), body
        handler, params = found
        if token is not None and user is not None:
            refused = self._may_write(method, path, token, user)
            if refused is not None:
                return user, refused, body
        refused_archived = self._archived_refusal(method, path)
        if refused_archived is not None:
            return user, refused_archived, body
        try:
            kind = self.state.token_kind(token) if token is not None else None
            request = Request(method, path, query, body, user, base, kind, token)
            reply = handler(self.state, request, **params)
        except HttpError as err:
            reply = Reply(err.status, err.body, err.headers)
        after = self._take_fault(method, path, {"after"})
        if after is not None:
            fail_body = after.body or error_json(after.status, _REASONS.get(after.status, "Err"))
            reply = Reply(after.status, fail_body)
        return user, reply, body


def _token(auth: str | None) -> str | None:
    if auth is None:
        return None
    return auth.split(" ", 1)[1] if " " in auth else auth


@pytest.fixture
def fake_github(tmp_path: Path) -> Iterator[FakeGitHub]:
    """A started FakeGitHub whose forks (POST .../forks) become bare clones under tmp_path."""
    storage = tmp_path / "fake-github-forks"
    storage.mkdir()
    with FakeGitHub(GitHubState(fork_storage=storage)) as gh:
        yield gh
