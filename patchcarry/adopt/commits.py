"""A PR's own commits (on its head, not its base branch, base merges dropped) and their base."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from patchcarry import git
from patchcarry.errors import FatalError
from patchcarry.upstream import PullHistory


@dataclasses.dataclass(frozen=True)
class Commit:
    sha: str
    author: str
    subject: str


@dataclasses.dataclass(frozen=True)
class Series:
    """The commits to carry, oldest first, on `base` (a commit of the base branch)."""

    base: str
    commits: tuple[Commit, ...]
    dropped_merges: tuple[Commit, ...]  # merges of the base branch into the PR


def own_commits(history: PullHistory) -> Series:
    """The PR's own commits; FatalError when none is left or it merged another of its lines."""
    repo, number = history.repo, history.number
    listed = git.rev_list_parents(history.head, history.branch_tip, cwd=repo)
    if not listed:
        raise FatalError(
            f"PR #{number}'s head {git.short(history.head)} is already in {history.branch}: "
            "nothing of its own to adopt"
        )
    own = {sha for sha, _ in listed}

    def summary(sha: str) -> Commit:
        author, subject = git.commit_summary(sha, cwd=repo)
        return Commit(sha, author, subject)

    commits, merges, roots = [], [], []
    for sha, parents in listed:
        if len(parents) > 1:
            if all(p in own for p in parents):
                raise FatalError(
                    f"PR #{number}'s commit {git.short(sha)} merges two of the PR's own lines; "
                    "its conflict resolution cannot be carried as patches: rebase the PR by hand"
                )
            merges.append(summary(sha))
            continue
        commits.append(summary(sha))
        if not parents or parents[0] not in own:
            roots.append((sha, parents))
    if not commits:
        raise FatalError(f"PR #{number} holds only merges of {history.branch}: nothing to adopt")
    if len(roots) != 1 or not roots[0][1]:
        raise FatalError(
            f"PR #{number}'s commits start from {len(roots)} places in {history.branch}; "
            "adopt takes one line of commits: rebase the PR by hand"
        )
    return Series(roots[0][1][0], tuple(commits), tuple(merges))


def write_patches(history: PullHistory, series: Series, out_dir: Path, first: int) -> list[Path]:
    """`git format-patch` each commit of `series` into `out_dir`, numbered from `first`."""
    return [git.format_patch(c.sha, number=first + i, out_dir=out_dir, cwd=history.repo)
            for i, c in enumerate(series.commits)]  # fmt: skip
