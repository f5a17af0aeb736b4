"""Creates a missing fork in the write phase, then waits (bounded) until GitHub answers it as
an attached fork: GitHub creates forks asynchronously."""

from __future__ import annotations

import time
from collections.abc import Callable

from patchcarry.errors import GitHubError
from patchcarry.github import GitHub
from patchcarry.resubmit import fork


def create(
    gh: GitHub,
    name: str,
    upstream: str,
    *,
    login: str,
    attempts: int = 10,
    interval: float = 1.0,
    sleep: Callable[[float], None] = time.sleep,
) -> fork.ForkStatus:
    """POST the fork, then poll (bounded) until it answers as an attached fork.

    GitHub may hand back an existing fork of the owner under another name: that one is used,
    and `note` says so (the manifest's `fork` should then be updated).
    """
    owner, repo = name.split("/", 1)
    made = gh.create_fork(upstream, name=repo, organization=None if owner == login else owner)
    full_name = made.get("full_name", name)
    for attempt in range(attempts):
        status = fork.inspect(gh, full_name, upstream)
        if status.kind == fork.ATTACHED:
            if full_name.lower() != name.lower():
                status.note = (
                    f"GitHub returned the existing fork {full_name} instead of creating {name}: "
                    f'using it; set `fork = "{full_name}"` in the manifest'
                )
            return status
        if attempt + 1 < attempts:
            sleep(interval)
    raise GitHubError(
        f"POST /repos/{upstream}/forks accepted, but {full_name} did not answer as a fork after "
        f"{attempts} tries; GitHub creates forks asynchronously: re-run in a minute"
    )
