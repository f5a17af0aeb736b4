"""Which PR to adopt, what GitHub says about it, and the entry name it gets."""

from __future__ import annotations

import dataclasses
import re
import urllib.parse

from patchcarry import hosts
from patchcarry.errors import BadInputError
from patchcarry.github_types import Forge, PullRef
from patchcarry.manifest import check_branch, check_repo
from patchcarry.pulls import classify
from patchcarry.pulls.reads import read_pull_state

_TARGET_RE = re.compile(r"(?P<repo>[^#]+)#(?P<n>[1-9]\d*)")
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


@dataclasses.dataclass(frozen=True)
class Target:
    upstream: str  # OWNER/REPO
    number: int

    def __str__(self) -> str:
        return f"{self.upstream}#{self.number}"


def parse_target(text: str) -> Target:
    """`OWNER/REPO#N` or the PR's web URL (as gh takes it) -> Target; BadInputError otherwise."""
    if re.match(r"^[a-z][a-z0-9+.-]*://", text.strip(), re.IGNORECASE):
        return _from_url(text.strip())
    match = _TARGET_RE.fullmatch(text.strip())
    if not match:
        raise BadInputError(
            f"{text!r}: name the PR as OWNER/REPO#NUMBER or by its URL, "
            "https://HOST/OWNER/REPO/pull/NUMBER"
        )
    return Target(check_repo(match.group("repo"), "the PR's repository"), int(match.group("n")))


def _from_url(text: str) -> Target:
    """A PR's web URL on GH_HOST's host (anything after its number ignored, as gh does)."""
    parts = hosts.split(text, "the PR's URL")
    segments = parts.path.split("/")
    if (
        parts.scheme.lower() not in ("http", "https") or len(segments) < 5 or segments[3] != "pull"
        or not re.fullmatch(r"[1-9]\d*", segments[4])
    ):  # fmt: skip
        raise BadInputError(
            f"{hosts.redact_url(text)!r}: a PR's URL is https://HOST/OWNER/REPO/pull/NUMBER"
        )
    web = hosts.git_host(hosts.api_host())
    ours = urllib.parse.urlsplit(web)
    if (parts.hostname or "").lower() != ours.hostname or _port(parts) != _port(ours):
        raise BadInputError(
            f"{hosts.redact_url(text)!r} is on {parts.netloc.rsplit('@', 1)[-1]}, not on the "
            f"configured GitHub ({web}): set GH_HOST to that host to adopt it"
        )
    repo = check_repo(f"{segments[1]}/{segments[2]}", "the PR's repository")
    return Target(repo, int(segments[4]))


def _port(parts: urllib.parse.SplitResult) -> int | None:
    return parts.port or {"http": 80, "https": 443}.get(parts.scheme.lower())


def read(gh: Forge, target: Target) -> tuple[PullRef, classify.Classification]:
    """The PR as GitHub shows it now, and how it was closed."""
    pull, state = read_pull_state(gh, target.upstream, target.number)
    # the answer names the branches the entry gets: the manifest's own check, before any use
    for value, key in ((pull.base_ref, "base_branch"), (pull.head_ref, "head_branch")):
        check_branch(value, f"{target} (as GitHub answers it): {key}")
    return pull, state


def check_name(name: str) -> str:
    if not NAME_RE.match(name):
        raise BadInputError(
            f"entry name {name!r}: use lowercase letters, digits, '.', '_' and '-', "
            "starting with a letter or digit"
        )
    return name


def default_name(head_ref: str, number: int) -> str:
    """The head branch's last part as an entry name (`fix/x` -> `x`); `pr-N` when none is usable."""
    last = head_ref.rstrip("/").rsplit("/", 1)[-1].lower()
    name = re.sub(r"[^a-z0-9._-]+", "-", last).lstrip("._-").rstrip("-")
    return name if name and NAME_RE.match(name) else f"pr-{number}"
