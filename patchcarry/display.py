"""Outside text as it may be printed: control characters (ESC, OSC, C1, CR) escaped so they
cannot move the cursor or retitle the terminal; undecodable bytes shown as `\\xNN`."""

from __future__ import annotations

import os
import sys
import unicodedata


def escape(text: str) -> str:
    """`text` with every control character (C0 but newline and tab, DEL, C1, and Unicode's
    format/separator controls such as bidi overrides) written visibly as `\\xNN`/`\\uNNNN`."""
    out = []
    for ch in text:
        if ch in "\n\t":
            out.append(ch)
        elif 0xDC80 <= ord(ch) <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
            out.append(f"\\x{ord(ch) - 0xDC00:02x}")
        elif unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs"):
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def line(text: str) -> str:
    """`escape`d and on one line: a newline is shown too (a subject, a name)."""
    return escape(text).replace("\n", "\\n").replace("\t", "\\t")


NARROWEST = 40  # below this a wrapped line says less than the one it replaces
UNBOUNDED = 1 << 16  # `columns(UNBOUNDED)`: wrapped only where COLUMNS or a terminal says


def columns(widest: int) -> int:
    """The width to lay output out for: `COLUMNS`, else the terminal's, within NARROWEST..widest."""
    wanted = os.environ.get("COLUMNS", "").strip()
    width = int(wanted) if wanted.isdigit() else None
    if width is None:
        try:
            width = os.get_terminal_size(sys.stdout.fileno()).columns
        except (OSError, ValueError, AttributeError):  # not a terminal (a pipe, captured)
            width = widest
    return max(NARROWEST, min(width, widest))


def fit(text: str, width: int = 120, *, hang: int = 4) -> str:
    """`text` wrapped at spaces to `width`, continuations indented `hang` more; long words whole."""
    import textwrap

    out = []
    for row in text.split("\n"):
        if len(row) <= width:
            out.append(row)
            continue
        indent = row[: len(row) - len(row.lstrip(" "))]
        out += textwrap.wrap(row.strip(" "), width=width, initial_indent=indent,
                             subsequent_indent=indent + " " * hang, break_long_words=False,
                             break_on_hyphens=False)  # fmt: skip
    return "\n".join(out)
