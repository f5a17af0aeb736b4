"""Text from someone other than the token's user, made inert before the tool posts it under
that user's account: a commit message another person wrote (an adopted PR's) would otherwise
notify people in the user's name (`@user`, `@org/team`), load an image from another host (a
tracking pixel: `<img>`, `![](url)`), render raw HTML, or carry control characters into the
title. The text stays all there and reads the same; only GitHub's rendering of it changes.

Whose text: a commit's author email against the token user's (`own_emails`: the public email
GitHub answers and its noreply forms). Not one of them, or no token to ask, is someone else's:
neutralised (what is kept byte for byte is the user's own). Pure Python."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

# U+2060 WORD JOINER: invisible, and GitHub's mention needs `@` right before the name
_JOIN = "\u2060"

# `@name` or `@org/team` where GitHub links one: not after a word character (an email's
# `a@b`), a slash or a backtick
_MENTION_RE = re.compile(
    r"(?<![\w@/`])@(?=[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:/[A-Za-z0-9][\w.-]*)?(?![\w-]))"
)
# the start of raw HTML CommonMark renders: a tag (not an autolink `<https://…>` or
# `<a@b.c>`), a closing tag, a comment, a declaration or a processing instruction
_HTML_RE = re.compile(r"<(?=[A-Za-z][A-Za-z0-9-]*(?:[\s/>]|\Z)|/[A-Za-z]|!|\?)")
# a Markdown image: GitHub fetches it (through its proxy) from the host it names
_IMAGE_RE = re.compile(r"!\[")
# C0 controls but tab and newline, DEL, C1, and the bidirectional overrides that reorder
# what a reviewer sees
_CONTROL_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def own_emails(user: Mapping[str, Any]) -> frozenset[str]:
    """The commit emails that are the token user's own, from GitHub's `GET /user` answer:
    its public email and its noreply addresses (lowercase). Empty without a user."""
    login, ident, email = user.get("login"), user.get("id"), user.get("email")
    found = set()
    if isinstance(login, str) and login:
        found.add(f"{login}@users.noreply.github.com")
        if isinstance(ident, int):
            found.add(f"{ident}+{login}@users.noreply.github.com")
    if isinstance(email, str) and email:
        found.add(email)
    return frozenset(e.lower() for e in found)


def is_own(author_email: str, own: Iterable[str] | None) -> bool:
    """Whether a commit by `author_email` is the token user's own text."""
    return own is not None and author_email.strip().lower() in own


def body_text(text: str) -> tuple[str, list[str]]:
    """`text` for a PR body, inert: (the text, what was neutralised, one phrase each kind)."""
    said: list[str] = []
    text = _count(_MENTION_RE, text, f"@{_JOIN}", "mention", said)
    text = _count(_HTML_RE, text, "&lt;", "raw HTML tag", said)
    text = _count(_IMAGE_RE, text, "!\\[", "image", said)
    text = _controls(text, said)
    return text, said


def title_text(text: str) -> tuple[str, list[str]]:
    """`text` for a PR title (plain text on GitHub: no HTML to escape), inert."""
    said: list[str] = []
    text = _count(_MENTION_RE, text, f"@{_JOIN}", "mention", said)
    return _controls(text, said), said


def _count(pattern: re.Pattern[str], text: str, into: str, what: str, said: list[str]) -> str:
    new, count = pattern.subn(into, text)
    if count:
        said.append(f"{count} {what}{'s' if count > 1 else ''}")
    return new


def _controls(text: str, said: list[str]) -> str:
    """Each control character as its visible escape (`\\x1b`, `\\u202e`)."""
    new, count = _CONTROL_RE.subn(lambda m: ascii(m.group())[1:-1], text)
    if count:
        said.append(f"{count} control character{'s' if count > 1 else ''}")
    return new
