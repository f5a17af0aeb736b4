"""Builds a new PR branch: base + the entry's patches via `git am`, in a scratch repo."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from patchcarry import git, patchrules
from patchcarry.errors import FatalError, UpstreamError
from patchcarry.manifest import Entry
from patchcarry.proc import CalledProcessError


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
    git.checkout_detached(base, cwd=scratch)
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
    patchrules.refuse_special(entry.name, git.special_paths(base, commit, cwd=scratch))
    return Branch(base=base, commit=commit, patches=len(patches))
