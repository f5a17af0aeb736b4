"""What on a PR is the tool's own: only what the token's user wrote (a marker is copyable)."""

from __future__ import annotations

from patchcarry.errors import FatalError
from patchcarry.github_types import CommentRef, PullRef
from patchcarry.markers import marker, opening, start

# Every cross-link comment starts with this; a scan counts a PR carrying one as re-submitted.
LINK_PREFIX = start("cross-link")


def written_by(item: PullRef | CommentRef, login: str) -> bool | None:
    """Whether the token's user `login` wrote `item`; None without a login: not known."""
    if not login:
        return None
    return item.author.lower() == login.lower()


def is_own_pr(pull: PullRef, login: str) -> bool:
    """Refused as a stranger's only when known not ours (a tokenless dry run cannot tell)."""
    return written_by(pull, login) is not False


def own_comments(comments: list[CommentRef], login: str) -> list[CommentRef]:
    """The comments known to be the token's user's: the only ones whose markers count."""
    return [c for c in comments if written_by(c, login) is True]


def stranger_reason(pull: PullRef, login: str) -> str:
    """Why a PR from the fork's branch that `login` did not open is not taken as the tool's."""
    head = pull.head_label or "the fork's branch"
    return (
        f"#{pull.number} from {head} was opened by {pull.author or 'an unknown user'}, "
        f"not by the token's user {login}: anyone can open a PR from a public fork's branch, so "
        "it is not refreshed, recorded or cross-linked; close it or use another head_branch"
    )


def refuse_stranger(pull: PullRef | None, login: str) -> PullRef | None:
    """`pull` (or None) when the token's user opened it; else FatalError before the write."""
    if pull is not None and not is_own_pr(pull, login):
        raise FatalError(stranger_reason(pull, login))
    return pull


def link_marker(entry_name: str, superseded: int) -> str:
    return f"{LINK_PREFIX}entry={entry_name} supersedes={superseded} -->"


def revision_marker(entry_name: str, head: str) -> str:
    return marker("revision", f"entry={entry_name}", f"head={head}")


def marked(comments: list[CommentRef], marker: str, login: str) -> bool:
    """Whether the token's user left a comment opening with `marker` among `comments`."""
    return any(opening(c.body) == marker for c in own_comments(comments, login))
