"""Whose PR a found PR is: anyone may open a PR from a public fork's branch, so the head label
(`owner:branch`) alone does not make a PR the tool's own. Only the token's user's PRs are
refreshed, recorded or cross-linked; a stranger's is refused with the reason said."""

from __future__ import annotations

from patchcarry.errors import FatalError
from patchcarry.github import Json


def author_of(pull: Json) -> str:
    """The login that opened `pull` ("" when GitHub shows none)."""
    return str((pull.get("user") or {}).get("login") or "")


def is_own_pr(pull: Json, login: str) -> bool:
    """Whether the token's user `login` opened `pull`. Without a login (no token: a dry run
    that writes nothing) it cannot be told, and the plan is not refused for it."""
    return not login or author_of(pull).lower() == login.lower()


def stranger_reason(pull: Json, login: str) -> str:
    """Why a PR from the fork's branch that `login` did not open is not taken as the tool's."""
    head = (pull.get("head") or {}).get("label") or "the fork's branch"
    return (
        f"#{pull.get('number')} from {head} was opened by {author_of(pull) or 'an unknown user'}, "
        f"not by the token's user {login}: anyone can open a PR from a public fork's branch, so "
        "it is not refreshed, recorded or cross-linked; close it or use another head_branch"
    )


def refuse_stranger(pull: Json | None, login: str) -> Json | None:
    """`pull` (or None) when the token's user opened it; FatalError (exit 1, before the write
    that would take it) saying why otherwise."""
    if pull is not None and not is_own_pr(pull, login):
        raise FatalError(stranger_reason(pull, login))
    return pull
