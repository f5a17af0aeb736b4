"""The names a `diff --git` section gives its file must agree with each other.

git reads a section's file from its `diff --git` header, but when the header's two names
differ (and there is no `rename`/`copy` header) it takes the `---`/`+++` lines instead, and a
`+++` name that differs from the header's makes `git apply` move the file: `git apply
--numstat` then shows only one of the names, so the rules would never see the other. A
section whose names disagree is refused, its line named."""

from __future__ import annotations

import codecs

from patchcarry.errors import BadInputError

_DEV_NULL = b"/dev/null"


def _unquote(name: bytes) -> bytes:
    """A name as git writes it: C-quoted (`"a/\\303\\251"`) when it holds special bytes."""
    if len(name) >= 2 and name.startswith(b'"') and name.endswith(b'"'):
        return bytes(codecs.escape_decode(name[1:-1])[0])
    return name


def _strip_prefix(name: bytes) -> bytes:
    """`a/path` -> `path` (git apply's -p1)."""
    return name.split(b"/", 1)[1] if b"/" in name else b""


def _header_names(rest: bytes) -> tuple[bytes, ...]:
    """The two names of `diff --git <rest>`: quoted or, unquoted, split where both name the
    same path (git's own reading when they agree); () when they cannot be told apart."""
    if rest.startswith(b'"'):
        end = rest.find(b'" ', 1)
        if end > 0:
            return _unquote(rest[: end + 1]), _unquote(rest[end + 2 :])
        return ()
    if rest.endswith(b'"'):
        start = rest.rfind(b' "')
        return (rest[:start], _unquote(rest[start + 1 :])) if start > 0 else ()
    for i in range(len(rest)):
        if rest[i : i + 1] == b" " and _strip_prefix(rest[:i]) == _strip_prefix(rest[i + 1 :]):
            return rest[:i], rest[i + 1 :]
    return ()


def check(section: bytes, line: int, path: str, moved: bool, name: str) -> None:
    """Refuse (exit 5) a section whose `diff --git`, `---` and `+++` names are not all `path`
    (git's own reading of the section); `moved`: a rename or copy (its own rules apply)."""
    if moved:
        return
    lines = section.split(b"\n")
    names = _header_names(lines[0].rstrip(b"\r")[len(b"diff --git ") :])
    header = _strip_prefix(names[0]) if len(names) == 2 else None
    for n, raw in enumerate(lines[1:], 1):
        text = raw.rstrip(b"\r")
        if text.startswith(b"@@"):
            break
        if text.startswith((b"--- ", b"+++ ")):
            named = _unquote(text[4:].split(b"\t", 1)[0])
            if named != _DEV_NULL and _strip_prefix(named) != header:
                _refuse(name, line + n, text, path)
    if header != path.encode("utf-8", "surrogateescape"):
        _refuse(name, line, lines[0].rstrip(b"\r"), path)


def _refuse(name: str, line: int, text: bytes, path: str) -> None:
    shown = text.decode("utf-8", "replace")
    raise BadInputError(
        f"{name}: line {line} (`{shown}`) disagrees with its section's `diff --git` header "
        f"and there is no rename header: git would move or change a file the rules did not "
        f"see (it reads {path}); refused"
    )
