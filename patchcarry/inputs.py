"""Reading a file the user named: any way it is unreadable is one line and exit 5, naming it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from patchcarry.errors import BadInputError


def read_bytes(path: Path, what: str, *, shown: str | None = None) -> bytes:
    """The bytes of `path`; `what` names the input, `shown` the file (default: `path`)."""
    label = shown or str(path)
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise BadInputError(f"{label}: {what} not found") from None
    except IsADirectoryError:
        raise BadInputError(f"{label}: {what} is a directory, not a file") from None
    except OSError as exc:
        raise BadInputError(f"{label}: {what} cannot be read ({exc.strerror})") from None


def read_text(path: Path, what: str, *, shown: str | None = None) -> str:
    """`path` as UTF-8 text; another encoding is refused at its first bad byte."""
    data = read_bytes(path, what, shown=shown)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInputError(
            f"{shown or path}: {what} is not UTF-8 (byte {exc.start}): save it as UTF-8"
        ) from None


def read_json(path: Path, what: str) -> Any:
    """`path` parsed as JSON (see `read_text`); where it stops being JSON is named."""
    text = read_text(path, what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInputError(
            f"{path}: {what} is not JSON (line {exc.lineno} column {exc.colno}: {exc.msg})"
        ) from None
