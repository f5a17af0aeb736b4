"""Reads the fork's live branch into the blob-less cache `check` already filled, and works out
what "live branch + this repo's patches" is without a checkout.

Everything happens in upstream.py's cache repo: the fork is added there as a second promisor
remote, its head is fetched `--depth=1 --filter=blob:none` once (kept under a ref, so a re-run
fetches nothing), and patches are applied to a scratch index, so only the blobs of the files
the patches touch are ever downloaded. That is what makes a no-op refresh cost kilobytes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import tempfile
from pathlib import Path

from patchcarry import git, patchrules
from patchcarry.errors import FatalError
from patchcarry.manifest import Entry
from patchcarry.patchfile import Patch
from patchcarry.proc import CalledProcessError
from patchcarry.upstream import remote_url

# In the message of every commit this tool adds on top of a live branch.
FAST_FORWARD_NOTE = "Brings this branch up to date with patchcarry entry"


@dataclasses.dataclass
class Applied:
    """What applying the entry's patches on a tree found, patch by patch."""

    tree: str  # the resulting tree (equal to the input tree when nothing was added)
    contained: list[str]  # patches the tree already holds (they reverse-apply)
    added: list[str]  # patches applied on top
    failed: list[Patch]  # patches that neither apply nor are already there


def author_signoff(entry: Entry, author: Patch | None = None) -> str:
    """The commit author's own `Signed-off-by:` value (`author`: the fix patch whose author
    the commit takes, by default the entry's first), carried from the entry's patch that holds
    it: the commit this tool writes in their name certifies the DCO with their own words
    (upstream's DCO gate wants every non-merge commit signed off by its author). Never made
    up: without one the commit is refused, before anything is pushed."""
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

    def add_fork(self, url: str) -> str:
        """A named promisor remote for the fork (lazy blob fetches fall back to it)."""
        url = remote_url(url)
        name = "fork-" + hashlib.sha256(url.encode()).hexdigest()[:12]
        for key, value in (
            ("url", url),
            ("promisor", "true"),
            ("partialclonefilter", "blob:none"),
        ):
            git.set_config(f"remote.{name}.{key}", value, cwd=self.repo)
        if url.startswith("file://"):
            git.set_config(f"remote.{name}.uploadpack", git.LOCAL_UPLOAD_PACK, cwd=self.repo)
        return name

    def _has_ref(self, ref: str) -> bool:
        return git.rev_exists(ref, cwd=self.repo)

    def fetch_head(self, remote: str, sha: str) -> None:
        """The commit `sha` and its trees (no blobs, no history), once per cache."""
        ref = f"refs/patchcarry/live/{sha}"
        if not self._has_ref(ref):
            git.fetch_blobless(remote, [f"+{sha}:{ref}"], cwd=self.repo)

    def first_parent_history(self, remote: str, sha: str, stop: str, limit: int = 50) -> list[str]:
        """`sha`'s first-parent chain down to (not including) `stop`, at most `limit` commits:
        the commits made on the branch itself (commits only, no trees). Fetched only for a
        `--rewrite`, which must name what it drops."""
        ref = f"refs/patchcarry/history/{sha}"
        if not self._has_ref(ref):
            git.fetch_blobless(
                remote, [f"+{sha}:{ref}"], cwd=self.repo, depth=limit, filter="tree:0"
            )
        out: list[str] = []
        current: str | None = sha
        while current and current != stop and len(out) < limit:
            out.append(current)
            current = git.first_parent(current, cwd=self.repo)
        return out

    def commits_between(self, remote: str, sha: str, stop: str) -> list[str]:
        """Every commit in `stop..sha`, all parents (a merged side branch's commits too),
        newest first: what replacing the branch by `stop` + patches takes off it. Fetched
        (commits only, no trees) only for a `--rewrite`, which must name what it drops."""
        self.fetch_history(remote, sha)
        return git.rev_list(sha, stop, cwd=self.repo)

    def fetch_history(self, remote: str, sha: str) -> None:
        """All of `sha`'s history, commits only (trees and blobs come lazily when read),
        deepening what `fetch_head` cut; once per cache."""
        ref = f"refs/patchcarry/all-history/{sha}"
        if not self._has_ref(ref):
            git.fetch_blobless(
                remote, [f"+{sha}:{ref}"], cwd=self.repo, depth=git.DEEPEST, filter="tree:0"
            )

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
        """One commit on `live` holding `tree`: the fix's author, message and date, so the
        same live head and patches give the same commit on every run. `revises` (a sentence
        naming the earlier revision it updates) makes it an update of the fix, so titled."""
        fix = entry.fix
        what = ", ".join(added) if added else fix.name
        if revises:
            head = f'Update "{fix.subject}" to the revision carried by patchcarry\n\n{revises}'
        else:  # every added patch of the series, in order; its first one is the author
            carried = [p for p in entry.patches() if p.name in added] or [fix]
            fix = carried[0]
            head = "\n\n".join(f"{f.subject}\n\n{f.message.strip()}" for f in carried)
        message = (
            f"{head}\n\n{FAST_FORWARD_NOTE} {entry.name} "
            f"({what}), on top of the commits already here.\n\n"
            f"Signed-off-by: {author_signoff(entry, fix)}\n"
        ).replace("\n\n\n", "\n\n")
        when = fix.date or "1970-01-01T00:00:00+0000"
        author = (fix.author_name, fix.author_email, when)
        try:
            return git.commit_tree(tree, [live], message, author=author, cwd=self.repo)
        except CalledProcessError as exc:  # pragma: no cover - git refuses odd identities
            raise RuntimeError(f"git commit-tree failed: {exc}") from None
