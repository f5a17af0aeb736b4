"""A commit message as GitHub should show it in a PR description: git wraps messages at 72
columns, and GitHub renders each newline of a PR body as a line break, so the hard wraps
would show as a ragged narrow block. Each paragraph's lines are joined; a list item's
continuation lines join their item; code (fenced or indented), headings, quotes, tables and
trailers (`Signed-off-by: ...`) are kept line for line."""

from __future__ import annotations

import re

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
