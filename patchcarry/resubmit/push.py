"""Builds the PR branch (base + the entry's patches via `git am`) and pushes it with a lease."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from patchcarry import git
from patchcarry.errors import FatalError, UpstreamError
from patchcarry.manifest import Entry
from patchcarry.proc import CalledProcessError


class LeaseRejected(FatalError):
    """The fork branch moved since it was read: someone else pushed."""


@dataclasses.dataclass
class Branch:
    base: str  # the commit the patches were applied on
    commit: str  # the branch tip to push
    patches: int


def build(entry: Entry, upstream_url: str, scratch: Path, *, rebase: bool) -> Branch:
    """In `scratch` (a fresh repo), check out the base and `git am` the entry's patches.

    The base is the pinned `base_commit`, or with `rebase` the current `base_branch` tip.
    The base is fetched shallow (Megatron-LM's history is large); `push` deepens the repo
    only if the fork lacks the base's history (e.g. a fork made with default_branch_only).
    """
    git.init(scratch)
    ref = f"refs/heads/{entry.base_branch}" if rebase else entry.base_commit
    try:
        base = git.fetch_commit(upstream_url, ref, cwd=scratch, shallow=True)
    except CalledProcessError as exc:
        raise UpstreamError(
            f"could not fetch {ref} from {upstream_url} ({exc.err.strip().splitlines()[-1:]}); "
            "check --upstream-url and that the commit exists upstream"
        ) from None
    git.git("checkout", "-q", "--detach", base, cwd=scratch)
    name, email = entry.fix.author_name, entry.fix.author_email
    patches = entry.patches()
    try:
        commit = git.am(
            [p.path for p in patches], cwd=scratch, committer_name=name, committer_email=email
        )
    except CalledProcessError as exc:
        where = f"{entry.base_branch} tip" if rebase else "the pinned base"
        raise FatalError(
            f"{entry.name}: the patches do not apply with `git am` on {where} {base[:12]}: "
            f"{exc.err.strip().splitlines()[:1]}; run scripts/check {entry.name}"
        ) from None
    return Branch(base=base, commit=commit, patches=len(patches))


def raise_push_failure(
    message: str, branch: str, expected: str | None, *, lagging: bool = False
) -> None:
    """The one clear line for a refused push."""
    if "stale info" in message or "rejected" in message or "fetch first" in message:
        raise LeaseRejected(
            f"push to {branch} refused by the lease: the fork branch is no longer at "
            f"{(expected or 'absent')[:12]} (someone pushed to it); inspect it, then re-run"
        )
    if lagging:
        raise FatalError(
            f"the fork does not accept the push to {branch} yet (a new fork's git side lags "
            "its API): retry in a minute"
        )
    last = message.splitlines()[-1] if message else "no output"
    raise FatalError(f"git push to the fork failed: {last}; check GITHUB_TOKEN's push access")
