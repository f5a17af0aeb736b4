"""gpu.yml's gate (.github/scripts/gpu_gate.py) against a loopback REST server.

Each case is a real event payload and real HTTP: who commented, what the API says about
their permission and about the pull request's head right now.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
REPO = "owner/patchcarry"
VETTED = "a" * 40
MOVED = "b" * 40
PUSHED = "c" * 40


def _load() -> ModuleType:
    path = ROOT / ".github" / "scripts" / "gpu_gate.py"
    spec = importlib.util.spec_from_file_location("gpu_gate", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


gate = _load()


class _Api:
    """Routes: path -> (status, body); every request is recorded with its auth header."""

    def __init__(self) -> None:
        self.routes: dict[str, tuple[int, Any]] = {}
        self.redirects: dict[str, str] = {}  # path -> Location of a 307
        self.seen: list[tuple[str, str | None]] = []

    def user(self, login: str, permission: str, role: str) -> None:
        self.routes[f"/repos/{REPO}/collaborators/{login}/permission"] = (
            200,
            {"permission": permission, "role_name": role, "user": {"login": login}},
        )

    def pull(self, number: int, head: str, state: str = "open") -> None:
        self.routes[f"/repos/{REPO}/pulls/{number}"] = (
            200,
            {"number": number, "state": state, "head": {"sha": head}},
        )


@pytest.fixture
def api() -> Iterator[tuple[_Api, str]]:
    state = _Api()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            state.seen.append((self.path, self.headers.get("Authorization")))
            if self.path in state.redirects:
                self.send_response(307)
                self.send_header("Location", state.redirects[self.path])
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            status, body = state.routes.get(self.path, (404, {"message": "Not Found"}))
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _run(
    tmp_path: Path, base: str, event_name: str, event: dict[str, Any], **extra: str
) -> tuple[int, dict[str, str]]:
    (tmp_path / "event.json").write_text(json.dumps(event))
    output = tmp_path / "output"
    output.write_text("")
    env = {
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
        "GITHUB_API_URL": base,
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_TOKEN": "read-only-job-token",
        "GITHUB_OUTPUT": str(output),
        "GITHUB_SHA": PUSHED,
        **extra,
    }
    code = gate.main(env)
    pairs = (line.split("=", 1) for line in output.read_text().splitlines())
    return code, dict(pairs)


def _comment(body: str, login: str = "maintainer", on_pr: bool = True) -> dict[str, Any]:
    issue: dict[str, Any] = {"number": 7}
    if on_pr:
        issue["pull_request"] = {"url": f"https://api.github.com/repos/{REPO}/pulls/7"}
    return {"issue": issue, "comment": {"body": body, "user": {"login": login}}}


def test_ok_to_test_by_a_writer_on_the_current_head_runs_that_commit(
    api: tuple[_Api, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state, base = api
    state.user("maintainer", "write", "maintain")
    state.pull(7, VETTED)
    code, out = _run(tmp_path, base, "issue_comment", _comment(f"/ok to test {VETTED}\n"))
    assert code == 0
    assert out == {"sha": VETTED, "ref": "refs/pull/7/head", "pr": "7"}
    assert [path for path, _ in state.seen] == [
        f"/repos/{REPO}/collaborators/maintainer/permission",
        f"/repos/{REPO}/pulls/7",
    ]
    assert all(auth == "Bearer read-only-job-token" for _, auth in state.seen)
    assert "may run on the GPU runner" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("event", "permission", "role", "head", "why"),
    [
        (_comment(f"/ok to test {VETTED}", "outsider"), "read", "read", VETTED, "write access"),
        (_comment(f"/ok to test {VETTED}", "triager"), "read", "triage", VETTED, "write access"),
        (_comment(f"/ok to test {VETTED}", "stranger"), None, None, VETTED, "write access"),
        (_comment(f"/ok to test {VETTED}"), "write", "write", MOVED, "head moved"),
        (_comment("/ok to test"), "admin", "admin", VETTED, "/ok to test <the full"),
        (_comment(f"/ok to test {VETTED[:12]}"), "admin", "admin", VETTED, "/ok to test <the"),
        (_comment(f"lgtm\n/ok to test {VETTED}"), "admin", "admin", VETTED, "/ok to test <the"),
        (_comment(f"/ok to test {VETTED}", on_pr=False), "admin", "admin", VETTED, "an issue"),
    ],
    ids=[
        "reader",
        "triage-role",
        "no-collaborator",
        "head-moved",
        "no-sha",
        "short-sha",
        "not-the-whole-comment",
        "issue-not-pr",
    ],
)
def test_comment_refused(
    api: tuple[_Api, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    event: dict[str, Any],
    permission: str | None,
    role: str | None,
    head: str,
    why: str,
) -> None:
    state, base = api
    login = event["comment"]["user"]["login"]
    if permission:
        state.user(login, permission, str(role))
    state.pull(7, head)
    code, out = _run(tmp_path, base, "issue_comment", event)
    assert code == 1 and out == {}
    printed = capsys.readouterr().out
    assert printed.startswith("::error::not running on the GPU: ") and why in printed


def test_head_moved_names_the_new_head_to_vet(
    api: tuple[_Api, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state, base = api
    state.user("maintainer", "admin", "admin")
    state.pull(7, MOVED)
    assert _run(tmp_path, base, "issue_comment", _comment(f"/ok to test {VETTED}"))[0] == 1
    assert f"comment `/ok to test {MOVED}`" in capsys.readouterr().out


def test_closed_pull_request_is_refused(api: tuple[_Api, str], tmp_path: Path) -> None:
    state, base = api
    state.user("maintainer", "admin", "admin")
    state.pull(7, VETTED, state="closed")
    assert _run(tmp_path, base, "issue_comment", _comment(f"/ok to test {VETTED}"))[0] == 1


def test_push_runs_the_pushed_commit_without_asking_the_api(
    api: tuple[_Api, str], tmp_path: Path
) -> None:
    state, base = api
    assert _run(tmp_path, base, "push", {}) == (0, {"sha": PUSHED, "ref": PUSHED, "pr": ""})
    assert state.seen == []


def test_dispatch_without_pr_runs_the_dispatched_commit(
    api: tuple[_Api, str], tmp_path: Path
) -> None:
    _, base = api
    event = {"inputs": {"pr": "", "sha": ""}}
    assert _run(tmp_path, base, "workflow_dispatch", event)[1]["sha"] == PUSHED


def test_dispatch_with_pr_and_the_current_head(api: tuple[_Api, str], tmp_path: Path) -> None:
    state, base = api
    state.user("maintainer", "write", "write")
    state.pull(7, VETTED)
    event = {"inputs": {"pr": "7", "sha": VETTED.upper()}}
    code, out = _run(
        tmp_path, base, "workflow_dispatch", event, GITHUB_TRIGGERING_ACTOR="maintainer"
    )
    assert (code, out) == (0, {"sha": VETTED, "ref": "refs/pull/7/head", "pr": "7"})


@pytest.mark.parametrize(
    ("inputs", "head"),
    [
        ({"pr": "7", "sha": VETTED}, MOVED),
        ({"pr": "7", "sha": ""}, VETTED),
        ({"pr": "7; rm -rf /", "sha": VETTED}, VETTED),
    ],
    ids=["head-moved", "no-sha", "bad-number"],
)
def test_dispatch_refused(
    api: tuple[_Api, str], tmp_path: Path, inputs: dict[str, str], head: str
) -> None:
    state, base = api
    state.user("maintainer", "write", "write")
    state.pull(7, head)
    event = {"inputs": inputs}
    code, out = _run(
        tmp_path, base, "workflow_dispatch", event, GITHUB_TRIGGERING_ACTOR="maintainer"
    )
    assert code == 1 and out == {}


def test_any_other_event_is_refused(api: tuple[_Api, str], tmp_path: Path) -> None:
    _, base = api
    assert _run(tmp_path, base, "pull_request", {"number": 7})[0] == 1


def test_outside_actions_it_says_so(tmp_path: Path) -> None:
    assert gate.main({}) == 2


def test_the_token_follows_a_redirect_on_the_same_host_only(
    api: tuple[_Api, str], tmp_path: Path
) -> None:
    state, base = api
    state.user("maintainer", "write", "maintain")
    port = base.rsplit(":", 1)[1]
    state.routes["/elsewhere/pulls/7"] = (
        200,
        {"number": 7, "state": "open", "head": {"sha": VETTED}},
    )
    state.redirects[f"/repos/{REPO}/pulls/7"] = f"http://localhost:{port}/elsewhere/pulls/7"
    code, out = _run(tmp_path, base, "issue_comment", _comment(f"/ok to test {VETTED}"))
    assert code == 0 and out["sha"] == VETTED
    assert state.seen[-1] == ("/elsewhere/pulls/7", None)  # another host: no credentials
    state.seen.clear()
    state.redirects[f"/repos/{REPO}/pulls/7"] = f"{base}/elsewhere/pulls/7"
    code, out = _run(tmp_path, base, "issue_comment", _comment(f"/ok to test {VETTED}"))
    assert code == 0 and state.seen[-1] == ("/elsewhere/pulls/7", "Bearer read-only-job-token")
