"""A live branch that holds an EARLIER REVISION of the entry's fix (#6339 and #6338 today: the
same code with an older comment, pushed by hand) is brought up to date by one commit on top.

Neither "apply the patches" nor "already there" holds on such a branch, so without this the
only choices would be refusing or `--rewrite`. The earlier revision is found safely: a
non-merge commit on the branch's own first-parent line (bounded walk, down to the base)
whose change has the fix's `git patch-id`, or touches exactly the fix's files and differs
from the fix only in comment/whitespace lines (`check.judge.identity`, the same judgement
`check` reports against superseded PRs), and whose hunks sit exactly over the fix's (a
comment edit elsewhere in the file is someone's other work: the merge below would undo it, so
such a commit is foreign). Then, per file the fix touches, a 3-way merge:

  base   = the file as that commit left it (the earlier revision's post-image)
  ours   = that commit's parent + this repo's fix (so base -> ours is exactly the interdiff)
  theirs = the file at the live head (the revision plus whatever others did since)

Clean everywhere: the merged tree, plus the entry's other patches (tests) applied on top as
usual, becomes one commit on the live head. Any conflict: refused, nothing written.
"""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

from patchcarry import git
from patchcarry.check import judge
from patchcarry.manifest import Entry
from patchcarry.resubmit.live import Cache

MAX_WALK = 50  # commits of the branch's own line searched for the earlier revision


@dataclasses.dataclass
class Revision:
    """An earlier revision of the fix found on the live branch, and what merging ours gives."""

    old: str  # the commit holding the earlier revision
    author: str
    subject: str
    why: str  # how it was recognised
    tree: str | None = None  # live tree turned into ours (None: refused, see `conflicts`)
    added: list[str] = dataclasses.field(default_factory=list)  # other patches applied on top
    conflicts: list[str] = dataclasses.field(default_factory=list)

    def line(self) -> str:
        return f"{self.old[:12]} ({self.author}: {self.subject})"

    def to_json(self) -> dict[str, object]:
        return {"sha": self.old, "author": self.author, "subject": self.subject, "why": self.why}


def _find(cache: Cache, entry: Entry, remote: str, live: str, stop: str) -> Revision | None:
    """The newest non-merge commit of the branch's first-parent line carrying the fix's
    change (identical, or different only in comments/whitespace on exactly its files)."""
    fix = entry.fix
    for sha in cache.first_parent_history(remote, live, stop=stop, limit=MAX_WALK):
        if len(git.commit_parents(sha, cwd=cache.repo)) != 1:
            continue  # a merge brings others' work; it is never the fix itself
        same = judge.identity(cache.repo, fix, 0, sha)
        if same.result == "identical":
            why = "the same `git patch-id`"
        elif same.comments_only and set(same.files) == set(fix.files):
            why = "the same code and files; only comment/whitespace lines differ"
        else:
            continue
        if not _same_hunks(cache, entry, sha):
            continue  # it also changes something else: a foreign commit, not a revision
        return Revision(sha, *cache.describe(sha), why)
    return None


def _touch(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether two old-side hunk ranges (start, count) overlap or meet."""
    return a[0] <= b[0] + b[1] and b[0] <= a[0] + a[1]


def _same_hunks(cache: Cache, entry: Entry, sha: str) -> bool:
    """Whether `sha`'s change sits exactly where the fix's does on `sha`'s parent: per file,
    as many hunks (`git diff -U0`), each over the fix's own. Comment lines are the only
    freedom a revision has (the identity judgement); a hunk anywhere else, even a comment
    edit, is someone's other work, and revising over it would undo it."""
    fix = entry.fix
    (parent,) = git.commit_parents(sha, cwd=cache.repo)
    ours = cache.apply(parent, [fix])
    if ours.failed:
        return False
    for path in sorted(fix.files):
        theirs = git.hunk_ranges(parent, sha, path, cwd=cache.repo)
        wanted = git.hunk_ranges(parent, ours.tree, path, cwd=cache.repo)
        if len(theirs) != len(wanted) or not all(map(_touch, theirs, wanted)):
            return False
    return True


def revise(cache: Cache, entry: Entry, *, remote: str, live: str, stop: str) -> Revision | None:
    """None when the branch holds no earlier revision of the fix; else the revision, with
    `tree` set when ours merges cleanly over it (and the other patches apply on top)."""
    found = _find(cache, entry, remote, live, stop)
    if found is None:
        return None
    fix = entry.fix
    (parent,) = git.commit_parents(found.old, cwd=cache.repo)
    ours_tree = cache.apply(parent, [fix])
    if ours_tree.failed:
        found.conflicts.append(f"{fix.name} does not apply on {parent[:12]}, its parent")
        return found
    with tempfile.TemporaryDirectory(prefix="patchcarry-revise-") as tmp:
        index = Path(tmp) / "index"
        git.read_tree(live, index=index, cwd=cache.repo)
        for path in sorted(fix.files):
            ours, base, theirs = (
                git.show_file(rev, path, cwd=cache.repo)
                for rev in (ours_tree.tree, found.old, live)
            )
            if ours is None or base is None or theirs is None:
                found.conflicts.append(f"{path} is missing on one side")
                continue
            clean, merged = git.merge_file(ours, base, theirs, cwd=cache.repo)
            if not clean:
                found.conflicts.append(f"{path}: someone else also edited the lines it revises")
                continue
            git.write_blob_to_index(merged, path, index=index, cwd=cache.repo)
        if found.conflicts:
            return found
        for patch in entry.patches():
            there = git.apply_to_index(
                patch.path, index=index, cwd=cache.repo, reverse=True, check=True
            )
            if there:
                continue  # already there (the fix, now that it is revised)
            if patch is fix or not git.apply_to_index(
                patch.path, index=index, cwd=cache.repo, reverse=False, check=False
            ):
                found.conflicts.append(f"{patch.name} does not apply on the revised tree")
                return found
            found.added.append(patch.name)
        found.tree = git.write_tree(index=index, cwd=cache.repo)
    return found
