"""The loopback GitHub's git side over smart HTTP, where GitHub serves it: the `clone_url` its
API gives, `<host>/OWNER/NAME.git`, answered by real `git http-backend` (CGI) on the
repository's local directory.

As on github.com: fetching a public repository needs no credentials; a push, or any read of a
private repository, is answered `401` with `WWW-Authenticate: Basic` until git's credential
helper sends a token the fake knows (`GitHubState.tokens`); the pusher's token reaches the
fork's receive hooks (`fake_github_push`) as `GITHUB_TOKEN`, as a local push gave it before.
Unknown repositories are `404 Repository not found.`
"""

from __future__ import annotations

import base64
import gzip
import os
import re
import shutil
import subprocess
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import TYPE_CHECKING

from patchcarry import proc

if TYPE_CHECKING:
    from testing.fake_github_state import GitHubState

# `/OWNER/NAME.git/<service path>`: what git asks of a smart-HTTP remote.
_GIT_PATH = re.compile(
    r"^/(?P<owner>[^/]+)/(?P<name>[^/]+?)\.git(?P<rest>/(?:info/refs|git-upload-pack|git-receive-pack))$"
)

# What GitHub's upload-pack allows and a local one needs to be told (partial and by-sha fetch).
_SERVER_CONFIG = {
    "uploadpack.allowFilter": "true",
    "uploadpack.allowAnySHA1InWant": "true",
    "safe.directory": "*",
}


# The server's own git, found once: a test that puts a wrapping `git` first on PATH (to watch
# what the tool runs) must not see the server's git (http-backend, the receive hooks) too.
_GIT = shutil.which("git") or "git"


def is_git_path(path: str) -> bool:
    return _GIT_PATH.match(path) is not None


def serve(state: GitHubState, h: BaseHTTPRequestHandler, path: str, query: str) -> None:
    """Answer one smart-HTTP request for `path` (`is_git_path`) from `h`."""
    from testing.fake_github_state import _local_git_dir

    found = _GIT_PATH.match(path)
    assert found is not None
    body = _read_body(h)
    with state.lock:
        key = next(
            (k for k in state.repos if k.lower() == f"{found['owner']}/{found['name']}".lower()),
            None,
        )
        repo = state.repos[key] if key else state.moved_to(f"{found['owner']}/{found['name']}")
        git_dir = _local_git_dir(repo.clone_url) if repo else None
        token = _basic_token(h.headers.get("Authorization"))
        known = token is not None and token in state.tokens
    if repo is None or git_dir is None or not git_dir.exists():
        _answer(h, 404, {"Content-Type": "text/plain"}, b"Repository not found.\n")
        return
    push = found["rest"] == "/git-receive-pack" or "service=git-receive-pack" in query
    if (push or repo.private) and not known:
        headers = {"WWW-Authenticate": 'Basic realm="GitHub"', "Content-Type": "text/plain"}
        _answer(h, 401, headers, b"Invalid username or token.\n")
        return
    if push and repo.archived:  # GitHub refuses the push outright, at the HTTP level
        _answer(h, 403, {"Content-Type": "text/plain"},
                b"This repository was archived so it is read-only.\n")  # fmt: skip
        return
    env = _cgi_env(h, git_dir, found["rest"], query, token if known else None, len(body))
    if not push and (found["rest"] != "/info/refs" or "service=git-upload-pack" in query):
        _upload_pack(h, git_dir, found["rest"], body, env)
        return
    done = subprocess.run(
        [_GIT, "http-backend"], input=body, env=env, capture_output=True, check=False
    )
    head, _, payload = done.stdout.partition(b"\r\n\r\n")
    if not _:
        head, _, payload = done.stdout.partition(b"\n\n")
    status, headers = 200, {}
    for line in head.decode("latin-1").splitlines():
        key, _, value = line.partition(":")
        if key.lower() == "status":
            status = int(value.split()[0])
        elif key:
            headers[key.strip()] = value.strip()
    _answer(h, status, headers, payload)


# What `git http-backend` answers a smart-HTTP read with besides the body (http-backend.c).
_NO_CACHE = {
    "Expires": "Fri, 01 Jan 1980 00:00:00 GMT",
    "Pragma": "no-cache",
    "Cache-Control": "no-cache, max-age=0, must-revalidate",
}


def _upload_pack(
    h: BaseHTTPRequestHandler, git_dir: Path, rest: str, body: bytes, env: dict[str, str]
) -> None:
    """A smart-HTTP read (the ref advertisement, or a fetch) answered as `git http-backend`
    answers it, by running `git upload-pack --stateless-rpc` straight away: the same bytes,
    one process fewer for each of the many requests a run's fetches make. Pushes still go
    through http-backend (its receive-pack runs the fork's hooks)."""
    command = [_GIT, "upload-pack", "--stateless-rpc"]
    key = None
    if rest == "/info/refs":
        kind, prefix = "advertisement", b""
        if "version=2" not in env.get("GIT_PROTOCOL", ""):  # v0/v1: the service line first
            line = b"# service=git-upload-pack\n"
            prefix = b"%04x%s0000" % (len(line) + 4, line)
        else:
            key = _capabilities_key(git_dir, env)
        command.append("--http-backend-info-refs")
    else:
        kind, prefix = "result", b""
        if h.headers.get("Content-Encoding", "").lower() in ("gzip", "x-gzip"):
            body = gzip.decompress(body)
    headers = {**_NO_CACHE, "Content-Type": f"application/x-git-upload-pack-{kind}"}
    if key is not None and (said := _CAPABILITIES.get(key)) is not None:
        _answer(h, 200, headers, said)
        return
    done = subprocess.run(
        [*command, str(git_dir)], input=body, env=env, capture_output=True, check=False
    )
    if key is not None and done.returncode == 0:
        _CAPABILITIES[key] = done.stdout
    _answer(h, 200, headers, prefix + done.stdout)


# Protocol v2's answer to `info/refs` is upload-pack's capability advertisement: no refs, only
# what git and the configuration it reads offer. Each is taken once from git's own upload-pack
# and kept (the suite's fetches each asked for it anew: half of its upload-pack processes).
_CAPABILITIES: dict[tuple[str, ...], bytes] = {}


def _capabilities_key(git_dir: Path, env: dict[str, str]) -> tuple[str, ...]:
    """What the v2 advertisement depends on: the protocol asked, the configuration the server
    gives (environment), the repository's own config (its object format, its upload-pack
    settings)."""
    try:
        own = (git_dir / "config").read_bytes().decode("utf-8", "surrogateescape")
    except OSError:
        own = ""
    given = sorted((k, v) for k, v in env.items() if k.startswith("GIT_CONFIG"))
    return (env.get("GIT_PROTOCOL", ""), own, *(f"{k}={v}" for k, v in given))


def _cgi_env(
    h: BaseHTTPRequestHandler, git_dir: Path, rest: str, query: str, token: str | None, size: int
) -> dict[str, str]:
    env = {k: v for k, v in proc.environment().items() if not k.startswith("GIT_")}
    path = os.pathsep.join([os.path.dirname(_GIT), env.get("PATH", os.defpath)])
    env.update(
        PATH=path,
        GIT_HTTP_EXPORT_ALL="1",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        PATH_TRANSLATED=f"{git_dir}{rest}",
        PATH_INFO=rest,
        REQUEST_METHOD=h.command,
        QUERY_STRING=query,
        CONTENT_TYPE=h.headers.get("Content-Type", ""),
        CONTENT_LENGTH=str(size),
        REMOTE_ADDR=h.client_address[0],
        GIT_CONFIG_COUNT=str(len(_SERVER_CONFIG) + (1 if token else 0)),
    )
    config = dict(_SERVER_CONFIG, **({"http.receivepack": "true"} if token else {}))
    for i, (key, value) in enumerate(config.items()):
        env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"] = key, value
    if h.headers.get("Content-Encoding"):
        env["HTTP_CONTENT_ENCODING"] = h.headers["Content-Encoding"]
    if h.headers.get("Git-Protocol"):
        env["GIT_PROTOCOL"] = h.headers["Git-Protocol"]
    if token:
        env["REMOTE_USER"] = "x-access-token"
        env["GITHUB_TOKEN"] = token  # the pusher, as the receive hooks identify it
    return env


def _read_body(h: BaseHTTPRequestHandler) -> bytes:
    if h.headers.get("Transfer-Encoding", "").lower() == "chunked":
        parts = []
        while True:
            size = int(h.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                h.rfile.readline()
                return b"".join(parts)
            parts.append(h.rfile.read(size))
            h.rfile.readline()
    length = int(h.headers.get("Content-Length") or 0)
    return h.rfile.read(length) if length else b""


def _basic_token(auth: str | None) -> str | None:
    """The password of a Basic credential (GitHub reads the token there), or a `token X`."""
    if not auth:
        return None
    kind, _, value = auth.partition(" ")
    if kind.lower() == "basic":
        try:
            return base64.b64decode(value).decode().partition(":")[2] or None
        except ValueError:
            return None
    return value or None


def _answer(h: BaseHTTPRequestHandler, status: int, headers: dict[str, str], data: bytes) -> None:
    h.send_response(status)
    for key, value in headers.items():
        if key.lower() != "content-length":
            h.send_header(key, value)
    h.send_header("Content-Length", str(len(data)))
    h.end_headers()
    h.wfile.write(data)
