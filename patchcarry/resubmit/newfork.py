"""Creates a missing fork in the write phase, then waits (bounded) until GitHub answers it as
an attached fork: GitHub creates forks asynchronously."""

from __future__ import annotations

from patchcarry import hosts
from patchcarry.errors import GitHubError
from patchcarry.github import GitHub
from patchcarry.resubmit import fork
from patchcarry.resubmit.backoff import Backoff


def create(gh: GitHub, name: str, upstream: str, *, login: str, wait: Backoff) -> fork.ForkStatus:
    """POST the fork, then poll with `wait`'s back-off until it answers as an attached fork
    (GitHub creates forks asynchronously: it may 404 for a while).

    GitHub may hand back an existing fork of the owner under another name: that one is used,
    and `note` says so (the manifest's `fork` should then be updated).
    """
    owner, repo = name.split("/", 1)
    made = gh.create_fork(upstream, name=repo, organization=None if owner == login else owner)
    full_name = str(made.get("full_name") or name)
    if full_name.split("/")[0].lower() != owner.lower():
        raise hosts.ForeignGitURLError(
            f"POST /repos/{upstream}/forks answered {hosts.shown(full_name)}, not a fork owned by "
            f"{owner}: refusing to push where an API answer chose"
        )
    while True:
        status = fork.inspect(gh, full_name, upstream)
        if status.kind == fork.ATTACHED:
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
