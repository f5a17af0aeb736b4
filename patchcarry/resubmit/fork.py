"""The fork the PR comes from: attached (a fork of upstream), missing, or detached (read-only;
`newfork` creates a missing one in the write phase)."""

from __future__ import annotations

import dataclasses

from patchcarry import hosts
from patchcarry.errors import FatalError
from patchcarry.github import GitHub
from patchcarry.resubmit import network
from patchcarry.resubmit.reads import Reads

ATTACHED = "attached"
MISSING = "missing"
DETACHED = "detached"


@dataclasses.dataclass
class ForkStatus:
    kind: str
    full_name: str
    clone_url: str | None = None
    note: str = ""
    waited: float = 0.0  # seconds spent waiting for GitHub to create it (this run)

    def describe(self, upstream: str) -> str:
        if self.kind == ATTACHED:
            return f"{self.full_name} is an attached fork of {upstream}"
        if self.kind == MISSING:
            return f"{self.full_name} does not exist: it would be created as a fork of {upstream}"
        return f"{self.full_name} is NOT an attached fork of {upstream}: {self.note}"


def inspect(gh: GitHub | Reads, fork: str, upstream: str) -> ForkStatus:
    """Read-only: what `fork` is right now (fresh from `GitHub`, or the run's one read)."""
    repo = gh.repo(fork)
    if repo is None:
        return ForkStatus(MISSING, fork)
    source = (repo.get("source") or {}).get("full_name")
    top = network.root(gh, upstream)
    if network.same_network(repo, top):
        url = hosts.answered_git_url(gh.host, fork, repo.get("clone_url"))
        return ForkStatus(ATTACHED, repo["full_name"], url)
    where = f" (the root of {upstream}'s network)" if top.lower() != upstream.lower() else ""
    why = "fork: false" if not repo.get("fork") else f"its source is {source}, not {top}{where}"
    return ForkStatus(DETACHED, repo.get("full_name", fork), None, why)


def refuse_detached(status: ForkStatus, upstream: str) -> FatalError:
    return FatalError(
        f"{status.full_name} exists but is not an attached fork of {upstream} ({status.note}); "
        f"never pushing there. Rename or delete it on GitHub, or set `fork` in the manifest "
        f"to a new name (it will be created), then re-run"
    )
