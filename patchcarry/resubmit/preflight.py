"""Read-only refusals that hold for every selected entry before the first write.

The manifest already validated names, branch names (`git check-ref-format`) and patch
content at load. Here what needs the API: a head branch that is the fork's default branch
(a force-push there rewrites what the fork's users clone) is refused unless asked for. And
which comments count as this tool's own: only those written by the token's user.
"""

from __future__ import annotations

from patchcarry.errors import FatalError
from patchcarry.github import Json
from patchcarry.manifest import Entry
from patchcarry.resubmit.reads import Reads


def default_branch_of(reads: Reads, entry: Entry) -> str | None:
    """The fork's default branch; a missing fork would get upstream's (default_branch_only)."""
    repo = reads.repo(entry.fork) or reads.repo(entry.upstream)
    return (repo or {}).get("default_branch")


def refuse_default_branches(reads: Reads, entries: list[Entry], *, allow: bool) -> None:
    """FatalError (exit 1, nothing written) when an entry would push the fork's default branch."""
    if allow:
        return
    for entry in entries:
        default = default_branch_of(reads, entry)
        if default is not None and entry.head_branch == default:
            raise FatalError(
                f"{entry.name}: head_branch {entry.head_branch!r} is {entry.fork}'s default "
                "branch; a force-push would rewrite it. Set another head_branch in the "
                "manifest, or pass --allow-default-branch if you mean it"
            )


def own_comments(comments: list[Json], login: str) -> list[Json]:
    """The comments written by `login` (the token's user): the only ones whose markers count.
    Without a login (no token) none can be trusted as ours."""
    if not login:
        return []
    return [
        c for c in comments if ((c.get("user") or {}).get("login") or "").lower() == login.lower()
    ]
