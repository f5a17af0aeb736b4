"""The tool's markers in what it posts (HTML comments): written and read back only here."""

from __future__ import annotations

import re

OPEN, CLOSE = "<!-- patchcarry:", " -->"


def marker(kind: str, *fields: str) -> str:
    """The whole marker: `<!-- patchcarry:KIND FIELD ... -->` (empty fields left out)."""
    return start(kind, *fields).rstrip(" ") + CLOSE


def start(kind: str, *fields: str) -> str:
    """What every marker of `kind` with these first `fields` starts with (a space after)."""
    return f"{OPEN}{kind} " + "".join(f"{f} " for f in fields if f)


def pattern(kind: str, fields: str) -> str:
    """The anchored regular expression of a marker whose fields match `fields` (a regex)."""
    return re.escape(f"{OPEN}{kind} ") + fields + re.escape(CLOSE)


def opening(text: str | None) -> str:
    """The marker a comment opens with as its whole first line ("": none; quoted is text)."""
    first = (text or "").partition("\n")[0].rstrip()  # GitHub stores a web edit with CRLF
    return first if first.startswith(OPEN) and first.endswith(CLOSE) else ""
