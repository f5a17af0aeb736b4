"""Text from someone other than the token's user (judged by commit author email, `own_emails`),
made inert before the tool posts it under that user's account: no mentions, remote images, raw
HTML or control characters; it stays all there and reads the same. `reflow` joins git's
72-column hard wraps, which GitHub would render as line breaks."""

from __future__ import annotations

import re
from collections.abc import Iterable

from patchcarry.github_types import UserRef

# U+2060 WORD JOINER: invisible, and GitHub's mention needs `@` right before the name
_JOIN = "\u2060"

# `@name` or `@org/team` where GitHub links one (not an email's `a@b`)
_MENTION_RE = re.compile(
    r"(?<![\w@/`])@(?=[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:/[A-Za-z0-9][\w.-]*)?(?![\w-]))"
)
# the start of raw HTML CommonMark renders (not an autolink `<https://…>` or `<a@b.c>`)
_HTML_RE = re.compile(r"<(?=[A-Za-z][A-Za-z0-9-]*(?:[\s/>]|\Z)|/[A-Za-z]|!|\?)")
# a Markdown image: GitHub fetches it (through its proxy) from the host it names
_IMAGE_RE = re.compile(r"!\[")
# C0 controls but tab and newline, DEL, C1, and the bidirectional overrides
_CONTROL_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def own_emails(user: UserRef) -> frozenset[str]:
    """The token user's public email and noreply addresses (lowercase), from `GET /user`."""
    login, ident, email = user.login, user.id, user.email
    found = set()
    if login:
        found.add(f"{login}@users.noreply.github.com")
        if ident is not None:
            found.add(f"{ident}+{login}@users.noreply.github.com")
    if email:
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


_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ITEM_RE = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,9}[.)])\s+\S")
_KEEP_RE = re.compile(r"^(?: {4}|\t|\s{0,3}(?:#{1,6}\s|>|\|))")  # code, heading, quote, table
_TRAILER_RE = re.compile(r"^[A-Za-z][A-Za-z0-9-]*: \S")


def _joined(lines: list[str]) -> list[str]:
    """One paragraph's lines, reflowed: items and plain text joined, kept lines kept."""
    if any(_KEEP_RE.match(line) for line in lines) or all(
        _TRAILER_RE.match(line) for line in lines
    ):
        return lines
    out: list[str] = []
    for line in lines:
        hard_break = bool(out) and out[-1].endswith("  ")  # Markdown's own line break
        if out and not _ITEM_RE.match(line) and not hard_break:
            out[-1] = f"{out[-1].rstrip()} {line.strip()}"
        else:
            out.append(line.rstrip() if not line.endswith("  ") else line)
    return out


def reflow(text: str) -> str:
    """`text` with its hard-wrapped paragraphs joined into one line each (see the module)."""
    out: list[str] = []
    paragraph: list[str] = []
    fence: str | None = None

    def flush() -> None:
        out.extend(_joined(paragraph))
        paragraph.clear()

    for line in text.replace("\r\n", "\n").split("\n"):
        opened = _FENCE_RE.match(line)
        if fence is not None:
            out.append(line)
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            flush()
            fence = opened.group(1)
            out.append(line)
        elif not line.strip():
            flush()
            out.append(line)
        else:
            paragraph.append(line)
    flush()
    return "\n".join(out)
