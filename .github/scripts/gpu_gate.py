#!/usr/bin/env python3
"""Which commit may run on the self-hosted GPU runner: gpu.yml's `authorize` job.

Reads the event that started the run (GITHUB_EVENT_NAME, GITHUB_EVENT_PATH), asks the REST
API (GITHUB_API_URL, GITHUB_REPOSITORY, GITHUB_TOKEN: the job's read-only token) and writes
`sha`, `ref` and `pr` to GITHUB_OUTPUT for the GPU job, which checks out `ref` and refuses
unless HEAD is exactly `sha`.

  push               the pushed commit (gpu.yml limits the trigger to main).
  workflow_dispatch  input `pr` empty: the commit of the ref it was run on. Otherwise input
                     `sha` (40 hex) must be that pull request's head right now.
  issue_comment      a comment `/ok to test <40-hex sha>` on a pull request, by a user the API
                     says has write access (admin, maintain or write), the pull request open
                     and `sha` its head right now (as upstream's copy-pr-bot: a maintainer
                     vets one commit; a new push needs a new comment).

Exit 0: allowed (outputs written); 1: refused (the reason as an ::error:: line); 2: the
environment is not a GitHub Actions run. Standard library only: it runs before, and without,
any install.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

OK_TO_TEST = re.compile(r"\A\s*/ok to test ([0-9a-fA-F]{40})\s*\Z")
_SHA = re.compile(r"\A[0-9a-f]{40}\Z")
_PR_NUMBER = re.compile(r"\A[1-9][0-9]{0,9}\Z")
WRITE_ROLES = frozenset({"admin", "maintain", "write"})


class Refused(Exception):
    """The run must not reach the GPU runner; the message says why and what to do."""


@dataclasses.dataclass(frozen=True)
class Decision:
    sha: str
    ref: str
    pr: str = ""


def _origin(url: str) -> tuple[str, str]:
    parts = urllib.parse.urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()


class _SameOriginCredentials(urllib.request.HTTPRedirectHandler):
    """Follows redirects as urllib does, but drops the token on any redirect to another
    scheme, host or port (urllib itself would send `Authorization` wherever it is sent)."""

    def redirect_request(  # type: ignore[no-untyped-def]
        self, req, fp, code, msg, headers, newurl
    ):
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and _origin(newurl) != _origin(req.full_url):
            new.remove_header("Authorization")
        return new


_OPENER = urllib.request.build_opener(_SameOriginCredentials)


class Api:
    """GET-only REST client over urllib (nothing to install)."""

    def __init__(self, base: str, repo: str, token: str) -> None:
        self.base = base.rstrip("/")
        self.repo = repo
        self.token = token

    def get(self, path: str) -> tuple[int, Any]:
        request = urllib.request.Request(
            f"{self.base}/repos/{self.repo}/{path}",
            headers={
                "Accept": "application/vnd.github+json",
                "Authorization": f"Bearer {self.token}",
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": "patchcarry-gpu-gate",
            },
        )
        try:
            with _OPENER.open(request, timeout=30) as response:
                return response.status, json.load(response)
        except urllib.error.HTTPError as exc:
            return exc.code, None


def _has_write_access(api: Api, login: str) -> bool:
    status, body = api.get(f"collaborators/{login}/permission")
    if status != 200 or not isinstance(body, dict):
        return False
    return body.get("role_name") in WRITE_ROLES or body.get("permission") in {"admin", "write"}


def _vetted_head(api: Api, pr: str, sha: str) -> Decision:
    status, body = api.get(f"pulls/{pr}")
    if status != 200 or not isinstance(body, dict):
        raise Refused(f"pull request #{pr} could not be read (HTTP {status})")
    if body.get("state") != "open":
        raise Refused(f"pull request #{pr} is {body.get('state')}, not open")
    head = str((body.get("head") or {}).get("sha", ""))
    if head != sha:
        raise Refused(
            f"pull request #{pr}'s head moved: {sha} was vetted, the head is now {head}; "
            f"read the new commits, then comment `/ok to test {head}`"
        )
    return Decision(sha=sha, ref=f"refs/pull/{pr}/head", pr=pr)


def _from_comment(api: Api, event: Mapping[str, Any]) -> Decision:
    issue = event.get("issue") or {}
    comment = event.get("comment") or {}
    if not issue.get("pull_request"):
        raise Refused("the comment is on an issue, not a pull request")
    match = OK_TO_TEST.match(str(comment.get("body", "")))
    if not match:
        raise Refused("the comment is not `/ok to test <the full 40-hex head sha>`")
    login = str((comment.get("user") or {}).get("login", ""))
    if not login or not _has_write_access(api, login):
        raise Refused(f"{login or 'the commenter'} does not have write access to {api.repo}")
    return _vetted_head(api, str(issue.get("number", "")), match.group(1).lower())


def _from_dispatch(api: Api, event: Mapping[str, Any], env: Mapping[str, str]) -> Decision:
    inputs = event.get("inputs") or {}
    pr = str(inputs.get("pr") or "").strip().lstrip("#")
    sha = str(inputs.get("sha") or "").strip().lower()
    if not pr:
        return Decision(sha=env["GITHUB_SHA"], ref=env["GITHUB_SHA"])
    if not _PR_NUMBER.match(pr):
        raise Refused(f"input pr must be a pull request number, not {pr!r}")
    if not _SHA.match(sha):
        raise Refused("with input pr, input sha must be the full 40-hex head commit you vetted")
    actor = env.get("GITHUB_TRIGGERING_ACTOR") or env.get("GITHUB_ACTOR", "")
    if not _has_write_access(api, actor):
        raise Refused(f"{actor or 'the actor'} does not have write access to {api.repo}")
    return _vetted_head(api, pr, sha)


def decide(event_name: str, event: Mapping[str, Any], env: Mapping[str, str], api: Api) -> Decision:
    """The commit this run may take to the GPU runner, or Refused."""
    if event_name == "push":
        return Decision(sha=env["GITHUB_SHA"], ref=env["GITHUB_SHA"])
    if event_name == "workflow_dispatch":
        return _from_dispatch(api, event, env)
    if event_name == "issue_comment":
        return _from_comment(api, event)
    raise Refused(f"event {event_name} never reaches the GPU runner")


def main(env: Mapping[str, str] | None = None) -> int:
    env = os.environ if env is None else env
    try:
        event_name = env["GITHUB_EVENT_NAME"]
        event = json.loads(Path(env["GITHUB_EVENT_PATH"]).read_text())
        api = Api(env["GITHUB_API_URL"], env["GITHUB_REPOSITORY"], env["GITHUB_TOKEN"])
        output = Path(env["GITHUB_OUTPUT"])
    except (KeyError, OSError, ValueError) as exc:
        print(f"gpu_gate: not a GitHub Actions run ({exc!r})", file=sys.stderr)
        return 2
    try:
        decision = decide(event_name, event, env, api)
    except Refused as exc:
        print(f"::error::not running on the GPU: {exc}")
        return 1
    with output.open("a") as out:
        out.write(f"sha={decision.sha}\nref={decision.ref}\npr={decision.pr}\n")
    what = f"pull request #{decision.pr} at" if decision.pr else "commit"
    print(f"gpu_gate: {event_name}: {what} {decision.sha} may run on the GPU runner")
    summary = env.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a") as out:
            out.write(f"GPU run allowed ({event_name}): {what} `{decision.sha}`\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
