"""Edits `patches/series.toml` in place: only the tool's values change (tomlkit), atomically."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import AoT, Item, Table

from patchcarry.errors import BadInputError

Validator = Callable[[Path], object]


def _read(path: Path) -> str:
    """The file's text with its own line endings (a CRLF manifest stays CRLF)."""
    with path.open(newline="") as handle:
        return handle.read()


def _entries(doc: tomlkit.TOMLDocument) -> list[Table]:
    entries = doc.get("entry")
    if entries is None:
        return []
    if not isinstance(entries, AoT):
        raise BadInputError("`entry` must be an array of [[entry]] tables")
    return list(entries)


def write_atomic(path: Path, text: str, *, validate: Validator | None = None) -> None:
    """Replace `path` with `text` via a temporary file, after `validate(tmp)`; symlinks kept."""
    path = Path(path).resolve() if Path(path).is_symlink() else Path(path)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "w", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        tmp.chmod(mode)
        if validate is not None:
            validate(tmp)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def _insert_in_key_block(table: Table, key: str, item: Item, newline: str) -> None:
    """Add `key` right after the table's last key, above any comment or blank lines after it."""
    body = table.value.body
    last = max((i for i, (k, _) in enumerate(body) if k is not None), default=-1)
    item.trivia.trail = newline
    if 0 <= last < len(body) - 1:
        table.value._insert_at(last + 1, key, item)  # tomlkit has no public insert at a position
    else:
        table[key] = item


def _parse(text: str) -> tomlkit.TOMLDocument:
    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:
        raise BadInputError(f"manifest is not valid TOML: {exc}") from None


def _set_key(
    path: Path, entry_name: str, key: str, item: Item, *, validate: Validator | None = None
) -> None:
    """Set `key` in entry `entry_name` of the manifest file, atomically; all else (line ends)
    as is. A key already there keeps its trailing comment (tomlkit's replace copies it)."""
    path = Path(path)
    text = _read(path)
    doc = _parse(text)
    for table in _entries(doc):
        if table.get("name") == entry_name:
            if key in table:
                table[key] = item
            else:
                _insert_in_key_block(table, key, item, "\r\n" if "\r\n" in text else "\n")
            write_atomic(path, tomlkit.dumps(doc), validate=validate)
            return
    raise BadInputError(f"no [[entry]] named {entry_name!r} in the manifest")


def record_landed(path: Path, entry_name: str, record: Mapping[str, Any], *,
                  validate: Validator | None = None) -> None:  # fmt: skip
    """Record in the manifest file that the entry landed upstream (`retire`'s `landed = {...}`)."""
    inline = tomlkit.inline_table()
    inline.update(record)
    _set_key(path, entry_name, "landed", inline, validate=validate)


def record_pr(path: Path, entry_name: str, pr: int) -> None:
    """Write the entry's current PR number into the manifest file (atomically)."""
    _set_key(path, entry_name, "pr", tomlkit.item(pr))


def add_entry_text(text: str, fields: Mapping[str, Any]) -> str:
    """Manifest `text` with one more `[[entry]]` holding `fields` (in their order) at the end."""
    doc = _parse(text)
    name = fields.get("name")
    if name in {t.get("name") for t in _entries(doc)}:
        raise BadInputError(f"an [[entry]] named {name!r} is already in the manifest")
    table = tomlkit.table()
    for key, value in fields.items():
        table[key] = value
    if "entry" in doc:
        entries = doc["entry"]
        assert isinstance(entries, AoT)  # _entries checked it
        if not tomlkit.dumps(doc).endswith("\n\n"):
            entries[-1].add(tomlkit.nl())  # a blank line between the last entry and the new one
        entries.append(table)
    else:
        if doc.body and not tomlkit.dumps(doc).endswith("\n\n"):
            doc.add(tomlkit.nl())
        doc.append("entry", tomlkit.aot())
        entries = doc["entry"]
        assert isinstance(entries, AoT)
        entries.append(table)
    return tomlkit.dumps(doc)


def add_entry(path: Path, fields: Mapping[str, Any], *, validate: Validator | None = None) -> None:
    """Append a new `[[entry]]` to the manifest at `path` atomically, after `validate`."""
    path = Path(path)
    text = _read(path) if path.exists() else ""
    write_atomic(path, add_entry_text(text, fields), validate=validate)
