"""Whether GitHub will want the `workflow` scope for a push, judged as GitHub judges it.

GitHub's receive-pack looks at each commit the push makes new to the fork and refuses one
that creates, updates or deletes a file under `.github/workflows/` unless the token has the
`workflow` scope; a file whose path and contents already exist on a branch of the fork needs
no scope (GitHub's documentation of the scope). So the judgement is per new commit, never a
comparison of whole trees: a branch at the pinned base pushed to a fork whose default branch
is at a newer dev makes no upstream commit new (that history is the fork's already), and a
commit that changes a workflow followed by one that changes it back still needs the scope.

The commits this tool writes never touch a workflow (`patchrules` refuses such a patch, the
commit on a live branch is its tree plus the patches), so only the base's history can bring
one. The fork's heads are what the read phase observed; their commits and trees, and the
base's history (commits only), come into the check's cache by those ids."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from patchcarry import git
from patchcarry.resubmit import branch as branches
from patchcarry.resubmit.live import Cache

if TYPE_CHECKING:
    from patchcarry.resubmit.observe import ForkSide

WORKFLOWS = ".github/workflows"
MAX_HEADS = 20  # fork branches whose history is read to tell which commits are new to it
MAX_NEW = 200  # new commits judged one by one (each reads its trees lazily)


def _changes(commit: str, cwd: Path) -> list[tuple[str, str, str]]:
    """(status, path, new blob) of each workflow file `commit` changes against its first
    parent (all of them for a root commit)."""
    return git.changes_under(commit, WORKFLOWS, cwd=cwd)


def _held(heads: tuple[str, ...], cwd: Path) -> set[tuple[str, str]]:
    """Every (path, blob) of a workflow file on the fork's branches (trees only)."""
    return {held for sha in heads for held in git.blobs_under(sha, WORKFLOWS, cwd=cwd)}


def needs_scope(
    target: str | None,
    push_from: Path | None,
    kind: str,
    patches: int,
    cache: Cache,
    side: ForkSide | None,
) -> str | None:
    """Why the push of `target` (base + `patches` commits, or one commit on the live head)
    needs the `workflow` scope, or None when it does not."""
    if target is None or push_from is None or kind == branches.FAST_FORWARD:
        return None  # nothing pushed, or one commit on the live head, which the fork has
    base = git.rev_parse(f"{target}~{patches}", cwd=push_from)
    heads = side.heads if side is not None else ()
    name = side.where if side is not None else "the fork"
    if not heads:
        if not git.rev_exists(f"{base}:{WORKFLOWS}", cwd=push_from):
            return None
        return (
            f"{name.split(',')[0]} has no branch yet: all of the pushed history is new to it, "
            f"its {WORKFLOWS}/ included"
        )
    assert side is not None
    remote = cache.add_fork(side.url)
    for sha in heads:
        cache.fetch_head(remote, sha)
    for sha in heads[:MAX_HEADS]:
        cache.fetch_history(remote, sha)
    cache.fetch_history("origin", base)
    new = git.rev_list(base, *heads[:MAX_HEADS], cwd=cache.repo)[::-1]  # oldest first
    if not new:
        return None
    owner = name.split(",")[0]
    if len(new) > MAX_NEW:
        return (
            f"{len(new)} commits of the pushed history are new to {owner} (more than the "
            f"{MAX_NEW} judged one by one); any of them may change {WORKFLOWS}/"
        )
    held = _held(heads, cache.repo)
    for commit in new:
        for status, path, blob in _changes(commit, cache.repo):
            if status != "D" and (path, blob) in held:
                continue
            verb = {"A": "adds", "D": "deletes"}.get(status, "changes")
            return (
                f"commit {commit[:12]} of the pushed history {verb} {path}, which no branch "
                f"of {owner} holds with those contents"
            )
    return None
