"""The fork's live branch, patched in a scratch index (a no-op refresh costs kilobytes)."""

from __future__ import annotations

import dataclasses
import hashlib
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

from patchcarry import git, patchrules
from patchcarry.check import judge
from patchcarry.errors import FatalError
from patchcarry.manifest import Entry
from patchcarry.patchfile import Patch
from patchcarry.upstream import remote_url

# In the message of every commit this tool adds on top of a live branch: the paragraph right
# above its sign-off (`on_top` reads it there alone; the fix's own words may quote it).
FAST_FORWARD_NOTE = "Brings this branch up to date with patchcarry entry"
_NOTE_END = ", on top of the commits already here."


def on_top(message: str, entry_name: str) -> bool:
    """Whether `message` is that of a commit `Cache.commit_on` added for `entry_name`."""
    note = re.escape(f"{FAST_FORWARD_NOTE} {entry_name} (") + r"[^\n]*" + re.escape(_NOTE_END)
    return re.search(rf"\n\n{note}\n\nSigned-off-by: [^\n]*\s*\Z", message) is not None


@dataclasses.dataclass
class Applied:
    """What applying the entry's patches on a tree found, patch by patch."""

    tree: str  # the resulting tree (equal to the input tree when nothing was added)
    contained: list[str]  # patches the tree already holds (they reverse-apply)
    added: list[str]  # patches applied on top
    failed: list[Patch]  # patches that neither apply nor are already there


def author_signoff(entry: Entry, author: Patch | None = None) -> str:
    """The `Signed-off-by:` of the commit's author (default the first fix's), taken from a
    patch, never made up: a commit in their name certifies the DCO in their own words."""
    who = author if author is not None else entry.fix
    for patch in entry.patches():
        for value in patch.signoffs:
            if patchrules.signed_off_by(value, [who.author_name], [who.author_email]):
                return value
    raise FatalError(
        f"{entry.name}: no patch carries a `Signed-off-by:` of {who.author}, the author "
        "of the commit this tool would add; upstream's DCO gate would fail it. Add the "
        "author's sign-off to the patch (git commit --amend -s; git format-patch), then re-run"
    )


class Cache:
    """The cache repo of upstream.py (`repo`), with forks added as promisor remotes."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self._forks: dict[str, str] = {}  # url -> remote name, configured by this object

    def add_fork(self, url: str) -> str:
        """A named promisor remote for the fork (lazy blob fetches fall back to it)."""
        url = remote_url(url)
        if (known := self._forks.get(url)) is not None:
            return known
        name = "fork-" + hashlib.sha256(url.encode()).hexdigest()[:12]
        wanted = {"url": url, "promisor": "true", "partialclonefilter": "blob:none"}
        if url.startswith("file://"):
            wanted["uploadpack"] = git.LOCAL_UPLOAD_PACK
        git.configure(self.repo, {f"remote.{name}.{key}": v for key, v in wanted.items()})
        self._forks[url] = name
        return name

    def fetch_head(self, remote: str, sha: str) -> None:
        """The commit `sha` and its trees (no blobs, no history), once per cache."""
        self.fetch_heads(remote, [sha])

    def fetch_heads(self, remote: str, shas: Sequence[str]) -> None:
        """Each commit of `shas` and its trees (no blobs, no history): one fetch for those not
        fetched into this cache before."""
        if wanted := self._not_here("live", shas):
            git.fetch_blobless(remote, wanted, cwd=self.repo)

    def _not_here(self, kind: str, shas: Sequence[str]) -> list[str]:
        """Refspecs `+sha:` then own_ref(KIND, sha) of the `shas` without that ref here yet."""
        here = git.refs_under(git.own_ref(kind, ""), cwd=self.repo) if shas else {}
        refs = {sha: git.own_ref(kind, sha) for sha in shas}
        return [f"+{sha}:{ref}" for sha, ref in refs.items() if ref not in here]

    def first_parent_history(self, remote: str, sha: str, stop: str, limit: int = 50) -> list[str]:
        """`sha`'s first-parent chain down to (not including) `stop`, at most `limit` commits."""
        ref = git.own_ref("history", sha)
        if not git.rev_exists(ref, cwd=self.repo):
            git.fetch_blobless(remote, [f"+{sha}:{ref}"], cwd=self.repo, depth=limit,
                               filter="tree:0")  # fmt: skip
        out: list[str] = []
        current: str | None = sha
        while current and current != stop and len(out) < limit:
            out.append(current)
            current = git.first_parent(current, cwd=self.repo)
        return out

    def commits_between(self, remote: str, sha: str, stop: str) -> list[str]:
        """Every commit in `stop..sha`, newest first: what a `--rewrite` drops and names."""
        self.fetch_history(remote, sha)
        return git.rev_list(sha, stop, cwd=self.repo)

    def fetch_history(self, remote: str, sha: str) -> None:
        """All of `sha`'s history, commits only (trees and blobs come lazily); once per cache."""
        self.fetch_histories(remote, [sha])

    def fetch_histories(self, remote: str, shas: Sequence[str]) -> None:
        """`fetch_history` of each of `shas`, in one fetch for those not fetched before."""
        if wanted := self._not_here("all-history", shas):
            git.fetch_blobless(remote, wanted, cwd=self.repo, depth=git.DEEPEST, filter="tree:0")

    def describe(self, sha: str) -> tuple[str, str]:
        """(author, subject) of a commit that is here."""
        _, author, subject, _ = git.commit_fields(sha, cwd=self.repo)
        return author, subject

    def message(self, sha: str) -> str:
        return git.commit_message(sha, cwd=self.repo)

    def apply(self, commit: str, patches: list[Patch]) -> Applied:
        """Apply each patch to `commit`'s tree unless the tree already holds it."""
        with tempfile.TemporaryDirectory(prefix="patchcarry-index-") as tmp:
            index = Path(tmp) / "index"
            git.read_tree(commit, index=index, cwd=self.repo)
            result = Applied("", [], [], [])
            for patch in patches:
                if git.apply_to_index(
                    patch.path, index=index, cwd=self.repo, reverse=True, check=True
                ):
                    result.contained.append(patch.name)
                elif git.apply_to_index(
                    patch.path, index=index, cwd=self.repo, reverse=False, check=False
                ):
                    result.added.append(patch.name)
                else:
                    result.failed.append(patch)
            result.tree = git.write_tree(index=index, cwd=self.repo)
        changed = git.special_paths(commit, result.tree, cwd=self.repo)
        patchrules.refuse_special(", ".join(p.name for p in patches), changed)
        return result

    def commit_on(
        self, live: str, tree: str, entry: Entry, added: list[str], revises: str = ""
    ) -> str:
        """One commit on `live` holding `tree`, with the fix's author, message and date (the
        same on every run); `revises` (a sentence) makes it titled an update of the fix."""
        fix = entry.fix
        what = ", ".join(added) if added else fix.name
        if revises:
            head = f'Update "{fix.subject}" to the revision carried by patchcarry\n\n{revises}'
        else:  # every added patch of the series, in order; its first one is the author
            carried = [p for p in entry.patches() if p.name in added] or [fix]
            fix = carried[0]
            head = "\n\n".join(f"{f.subject}\n\n{f.message.strip()}" for f in carried)
        message = (
            f"{head}\n\n{FAST_FORWARD_NOTE} {entry.name} ({what}){_NOTE_END}\n\n"
            f"Signed-off-by: {author_signoff(entry, fix)}\n"
        ).replace("\n\n\n", "\n\n")
        when = fix.date or "1970-01-01T00:00:00+0000"
        author = (fix.author_name, fix.author_email, when)
        # git refuses an odd identity: its GitError is the one line the user sees
        return git.commit_tree(tree, [live], message, author=author, cwd=self.repo)


# An earlier revision of the fix on the live branch (same code, older comment) is brought up
# to date by one commit on top: per file a 3-way merge of that commit's file, its parent + our
# fix, and the live head's; any conflict: refused, nothing written.
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
        return f"{git.short(self.old)} ({self.author}: {self.subject})"

    def to_json(self) -> dict[str, object]:
        return {"sha": self.old, "author": self.author, "subject": self.subject, "why": self.why}


def _find(cache: Cache, entry: Entry, remote: str, live: str, stop: str) -> Revision | None:
    """The newest non-merge commit of the branch's line carrying the fix (comments aside)."""
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
    """Whether `sha` has per file the fix's hunks alone (revising would undo others' work)."""
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
    """The earlier revision of the fix on the branch (None: none), `tree` set if ours merges."""
    found = _find(cache, entry, remote, live, stop)
    if found is None:
        return None
    fix = entry.fix
    (parent,) = git.commit_parents(found.old, cwd=cache.repo)
    ours_tree = cache.apply(parent, [fix])
    if ours_tree.failed:
        found.conflicts.append(f"{fix.name} does not apply on {git.short(parent)}, its parent")
        return found
    with tempfile.TemporaryDirectory(prefix="patchcarry-revise-") as tmp:
        index = Path(tmp) / "index"
        git.read_tree(live, index=index, cwd=cache.repo)
        for path in sorted(fix.files):
            revs = (ours_tree.tree, found.old, live)
            ours, base, theirs = (git.show_file(rev, path, cwd=cache.repo) for rev in revs)
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
            if git.apply_to_index(
                patch.path, index=index, cwd=cache.repo, reverse=True, check=True
            ):
                continue  # already there (the fix, now that it is revised)
            if patch is fix or not git.apply_to_index(
                patch.path, index=index, cwd=cache.repo, reverse=False, check=False
            ):
                found.conflicts.append(f"{patch.name} does not apply on the revised tree")
                return found
            found.added.append(patch.name)
        found.tree = git.write_tree(index=index, cwd=cache.repo)
    return found
