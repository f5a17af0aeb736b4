"""The PR's fork: attached, missing (created, then waited for), or detached (never pushed)."""

from __future__ import annotations

import dataclasses
import enum
import time
from collections.abc import Callable

from patchcarry import hosts, limits
from patchcarry.errors import FatalError, GitHubError
from patchcarry.github_types import Forge
from patchcarry.pulls import classify
from patchcarry.pulls.reads import Reads


class ForkKind(enum.StrEnum):
    ATTACHED = "attached"
    MISSING = "missing"
    DETACHED = "detached"


@dataclasses.dataclass
class ForkStatus:
    kind: ForkKind
    full_name: str
    clone_url: str | None = None
    note: str = ""
    waited: float = 0.0  # seconds spent waiting for GitHub to create it (this run)

    def describe(self, upstream: str) -> str:
        if self.kind == ForkKind.ATTACHED:
            return f"{self.full_name} is an attached fork of {upstream}"
        if self.kind == ForkKind.MISSING:
            return f"{self.full_name} does not exist: it would be created as a fork of {upstream}"
        return f"{self.full_name} is NOT an attached fork of {upstream}: {self.note}"


def inspect(gh: Forge | Reads, fork: str, upstream: str) -> ForkStatus:
    """Read-only: what `fork` is right now (fresh from `GitHub`, or the run's one read)."""
    repo = gh.repo(fork)
    if repo is None:
        return ForkStatus(ForkKind.MISSING, fork)
    top = classify.root(gh, upstream)
    if classify.same_network(repo, top):
        url = hosts.answered_git_url(gh.host, fork, repo.clone_url)
        return ForkStatus(ForkKind.ATTACHED, repo.full_name, url)
    where = f" (the root of {upstream}'s network)" if top.lower() != upstream.lower() else ""
    why = f"its source is {repo.source or None}, not {top}{where}" if repo.fork else "fork: false"
    return ForkStatus(ForkKind.DETACHED, repo.full_name or fork, None, why)


def refuse_detached(status: ForkStatus, upstream: str) -> FatalError:
    return FatalError(
        f"{status.full_name} exists but is not an attached fork of {upstream} ({status.note}); "
        f"never pushing there. Rename or delete it on GitHub, or set `fork` in the manifest "
        f"to a new name (it will be created), then re-run"
    )


@dataclasses.dataclass
class Backoff:
    budget: float = limits.FORK_WAIT_S
    sleep: Callable[[float], None] = time.sleep
    first: float = 1.0
    cap: float = 30.0
    spent: float = 0.0
    progress: Callable[[str], None] | None = None  # one line before each sleep (stderr)
    what: str = "the new fork"
    _tries: int = dataclasses.field(default=0, init=False)

    def wait(self) -> bool:
        """Sleep the next step (doubling, at most `cap`, in budget); False once it is spent."""
        left = self.budget - self.spent
        if left <= 0:
            return False
        step = min(self.first * 2**self._tries, self.cap, left)
        if self.progress is not None:
            self.progress(
                f"waiting for {self.what} (GitHub creates forks asynchronously): next try in "
                f"{step:.0f} s, {self.spent:.0f} of {self.budget:.0f} s waited (--fork-wait)"
            )
        self._tries += 1
        self.spent += step
        self.sleep(step)
        return True


def create(gh: Forge, name: str, upstream: str, *, login: str, wait: Backoff) -> ForkStatus:
    """POST the fork and `wait` until attached; an existing fork GitHub returns is used."""
    owner, repo = name.split("/", 1)
    made = gh.create_fork(upstream, name=repo, organization=None if owner == login else owner)
    full_name = made.full_name or name
    if full_name.split("/")[0].lower() != owner.lower():
        raise hosts.ForeignGitURLError(
            f"POST /repos/{upstream}/forks answered {hosts.shown(full_name)}, not a fork owned by "
            f"{owner}: refusing to push where an API answer chose"
        )
    while True:
        status = inspect(gh, full_name, upstream)
        if status.kind == ForkKind.ATTACHED:
            if full_name.lower() != name.lower():
                status.note = (
                    f"GitHub returned the existing fork {full_name} instead of creating {name}: "
                    f'using it; set `fork = "{full_name}"` in the manifest'
                )
            return status
        if not wait.wait():
            break
    raise GitHubError(
        f"POST /repos/{upstream}/forks accepted, but {full_name} did not answer as a fork "
        f"within {wait.budget:.0f} s; GitHub creates forks asynchronously (its documentation: "
        "contact GitHub Support when it takes more than five minutes): re-run later"
    )
