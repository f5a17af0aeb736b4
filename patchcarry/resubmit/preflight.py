"""Which comments count as this tool's own: only those written by the token's user (a
marker anyone can copy into a comment of theirs is no evidence)."""

from __future__ import annotations

from patchcarry.github import Json


def own_comments(comments: list[Json], login: str) -> list[Json]:
    """The comments written by `login` (the token's user): the only ones whose markers count.
    Without a login (no token) none can be trusted as ours."""
    if not login:
        return []
    return [
        c for c in comments if ((c.get("user") or {}).get("login") or "").lower() == login.lower()
    ]
