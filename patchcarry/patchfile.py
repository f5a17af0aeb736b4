"""Reads a `git format-patch` file once, as git reads it; anything else git would apply: refused."""

from __future__ import annotations

import codecs
import dataclasses
import re
from pathlib import Path

from patchcarry import git, inputs, patchrules
from patchcarry.errors import BadInputError

_HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_INDEX_MODE_RE = re.compile(rb"^index [0-9a-f]+\.\.[0-9a-f]+ (\d{6})$", re.MULTILINE)
_SIGNOFF = "signed-off-by"
# Bounds no real patch meets, checked before git reads it (git's reading of a `diff --git` line
# is quadratic in its spaces: 200 KB took 13 s).
MAX_PATCH_BYTES = 8 * 1024 * 1024
MAX_HEADER_BYTES = 2 * 4 * 4096 + 64


@dataclasses.dataclass(frozen=True)
class Hunk:
    path: str
    old_start: int
    old_len: int
    new_start: int
    new_len: int
    lines: tuple[str, ...]

    @property
    def old_range(self) -> range:
        """Old-side lines this hunk spans (context included)."""
        return range(self.old_start, self.old_start + max(self.old_len, 1))

    def changed_old_lines(self) -> set[int]:
        """Old-side line numbers removed, or next to which lines are added."""
        line, changed = self.old_start, set()
        for text in self.lines:
            if text.startswith("-"):
                changed.add(line)
                line += 1
            elif text.startswith("+"):
                changed.update({line - 1, line})
            else:
                line += 1
        return changed


@dataclasses.dataclass(frozen=True)
class Change:
    """One file `git apply` would touch, as its `--numstat --summary -z` says."""

    path: str  # the path written (the old path for a deletion)
    old_path: str  # differs from `path` only for a rename or a copy
    kind: str  # modify | create | delete | rename | copy
    old_mode: str  # "" unless git reports one (deletion, mode change)
    new_mode: str  # "" unless git reports one (creation, mode change)
    binary: bool
    index_mode: str  # the mode on the section's `index` line, "" when it has none
    line: int  # the line of the patch file its `diff --git` header is on


@dataclasses.dataclass(frozen=True)
class Patch:
    """One format-patch file, read. `path` stays for the tools that want a file (git)."""

    name: str
    path: Path
    text: str  # the file's bytes (non-UTF-8 bytes kept as surrogates: `git.encode` restores)
    subject: str
    author: str  # "Name <email>", as `git mailinfo` decodes the From: header
    author_name: str
    author_email: str
    date: str  # the Date: line, kept so a commit rebuilt from this patch is the same commit
    message: str  # the commit message body, without Subject and sign-offs
    files: tuple[str, ...]  # every path git would apply (both sides of a rename), sorted
    hunks: tuple[Hunk, ...]
    signoffs: tuple[str, ...] = ()  # each `Signed-off-by:` value, in order ("Name <email>")
    changes: tuple[Change, ...] = ()  # git's own list, one per `diff --git` section


def load(path: Path) -> Patch:
    """Read the patch file at `path` (the one place a patch file is read) and check it."""
    path = Path(path)
    return parse(inputs.read_bytes(path, "patch file", shown=path.name), name=path.name, path=path)


def parse(text: str | bytes, *, name: str = "patch", path: Path | None = None) -> Patch:
    """Read format-patch `text` as git does and check what it may carry (`patchrules`)."""
    patch = read(text, name=name, path=path)
    patchrules.check(patch.name, patch.author, patch.author_email, patch.signoffs, patch.changes,
                     author_name=patch.author_name)  # fmt: skip
    patchrules.check_text(patch.name, patch.hunks)
    return patch


def read(text: str | bytes, *, name: str = "patch", path: Path | None = None) -> Patch:
    """The facts git reads in format-patch `text` (renames and mode changes read, not judged)."""
    data = text if isinstance(text, bytes) else git.encode(text)
    if len(data) > MAX_PATCH_BYTES:
        raise BadInputError(
            f"{name}: {len(data):,} bytes, over the {MAX_PATCH_BYTES:,} a patch may have "
            "(a fix carried upstream is far smaller); refused"
        )
    patchrules.check_bytes(data, name)
    mails = git.mailsplit(data)
    if len(mails) != 1 or b"\nSubject: " not in data:
        raise BadInputError(
            f"{name}: not `git format-patch` output (git am reads {len(mails)} mails in it, "
            "not one with a Subject:)"
        )
    info, msg, body = git.mailinfo(mails[0])
    author_name, email = (
        patchrules.utf8(git.encode(info.get(key, "")), name, f"its From: {key.lower()}")
        for key in ("Author", "Email")
    )
    patchrules.check_identity(author_name, email, name)
    start = data.rfind(body) if body else -1
    if body and start < 0:  # `git apply` on the file (check) would not read what `git am` does
        raise BadInputError(
            f"{name}: its diff is transfer-encoded (git am decodes it, git apply would not): "
            "re-export it with git format-patch"
        )
    offset = data[:start].count(b"\n") if start >= 0 else 0
    sections = _sections(body, name, offset)
    changes = tuple(_change(section, line, name) for line, section in sections)
    message = patchrules.utf8(msg, name, "its commit message")
    subject = patchrules.utf8(git.encode(info.get("Subject", "")), name, "its Subject:")
    commit_message = subject.encode() + b"\n\n" + msg  # the commit `git am` makes
    signoffs = tuple(v for k, v in git.trailers(commit_message) if k.lower() == _SIGNOFF)
    kept = [ln for ln in message.strip().splitlines() if not ln.startswith("Signed-off-by:")]
    return Patch(
        name=name,
        path=path if path is not None else Path(name),
        text=data.decode("utf-8", "surrogateescape"),
        subject=subject,
        author=f"{author_name} <{email}>",
        author_name=author_name,
        author_email=email,
        date=info.get("Date", ""),
        message="\n".join(kept).strip(),
        files=tuple(sorted({p for c in changes for p in (c.path, c.old_path)})),
        hunks=tuple(
            h for (_, section), c in zip(sections, changes, strict=True) for h in _hunks(section, c)
        ),
        signoffs=signoffs,
        changes=changes,
    )


def _sections(body: bytes, name: str, offset: int) -> list[tuple[int, bytes]]:
    """The `diff --git` sections with their start lines; only format-patch's `---` before."""
    lines = re.findall(rb"[^\n]*\n|[^\n]+$", body)  # by LF only: a CR inside a line is content
    first = next((i for i, ln in enumerate(lines) if ln.startswith(b"diff --git ")), len(lines))
    separators = [i for i, ln in enumerate(lines[:first]) if ln.rstrip(b"\r\n") == b"---"]
    for i, line in enumerate(lines[:first]):
        shown = line.rstrip(b"\r\n").decode("utf-8", "replace")
        if i == 0 and (separators[:1] != [0] or len(separators) > 1):
            raise BadInputError(
                f"{name}: line {offset + 1} (`{shown}`) is where git starts reading the diff: "
                "its commit message holds a line git reads as the start of a diff; refused"
            )
        if i > 0 and not (line.startswith(b" ") or not line.strip()):
            raise BadInputError(
                f"{name}: line {offset + i + 1} (`{shown}`) is outside the patch's `diff --git` "
                "sections, where git would read a diff; refused"
            )
    if first == len(lines):
        raise BadInputError(f"{name}: contains no `diff --git` section")
    starts = [i for i in range(first, len(lines)) if lines[i].startswith(b"diff --git ")]
    for i in starts:
        if len(lines[i]) > MAX_HEADER_BYTES:
            raise BadInputError(
                f"{name}: line {offset + i + 1} (a `diff --git` line of {len(lines[i]):,} "
                f"bytes) names paths longer than any file system allows; refused"
            )
    ends = [*starts[1:], len(lines)]
    return [(offset + i + 1, b"".join(lines[i:end])) for i, end in zip(starts, ends, strict=True)]


def _change(section: bytes, line: int, name: str) -> Change:
    """What git applies from one `diff --git` section: exactly one file, or refused."""
    records, summary, refused = git.apply_numstat(section)
    where = f"{name}: the `diff --git` section at line {line}"
    if refused:
        raise BadInputError(f"{where}: git cannot read it ({refused})")
    if len(records) != 1:
        raise BadInputError(
            f"{where}: git reads {len(records)} files in it (a diff hidden after the first); "
            "refused"
        )
    added, deleted, path = (
        patchrules.utf8(part, name, "a path") for part in records[0].split(b"\t", 2)
    )
    kind, old_path, old_mode, new_mode = "modify", path, "", ""
    for match, text in summary:
        if match is None:
            raise BadInputError(f"{where}: unexpected `git apply --summary` line {text!r}")
        if match["kind"]:
            kind = match["kind"]
            if kind == "delete":
                old_mode = match["mode"]
            else:
                new_mode = match["mode"]
        elif match["old"]:
            old_mode, new_mode = match["old"], match["new"]
        elif match["move"]:
            kind, old_path = match["move"], git.renamed_from(match["names"], path)
    _check_names(section, line, path, kind in ("rename", "copy"), name)
    index = _INDEX_MODE_RE.search(section)
    return Change(path=path, old_path=old_path, kind=kind, old_mode=old_mode, new_mode=new_mode,
                  binary=(added, deleted) == ("-", "-"),
                  index_mode=index.group(1).decode() if index else "", line=line)  # fmt: skip


def _hunks(section: bytes, change: Change) -> list[Hunk]:
    """The hunks of one git-verified section (git counted the lines; this keeps them)."""
    hunks: list[Hunk] = []
    header: tuple[int, int, int, int] | None = None
    current: list[str] = []
    old_left = new_left = 0  # the lines each side still owes (counted once, as read: linear)
    for raw in section.decode("utf-8", "surrogateescape").split("\n"):
        line = raw[:-1] if raw.endswith("\r") and header is None else raw
        if header is None:
            match = _HUNK_RE.match(line)
            if match:
                o, ol, n, nl = match.groups()
                header = (int(o), int(ol or 1), int(n), int(nl or 1))
                current, old_left, new_left = [], header[1], header[3]
            continue
        if line.startswith("\\"):
            continue
        text = line if line else " "
        current.append(text)
        old_left -= not text.startswith("+")
        new_left -= not text.startswith("-")
        if old_left == new_left == 0:
            hunks.append(Hunk(change.path, *header, tuple(current)))
            header = None
    return hunks


# A section's names must agree: git reads the file from `diff --git`, or from `---`/`+++` when
# the header's names differ, and `git apply --numstat` then shows only one of them.
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


def _check_names(section: bytes, line: int, path: str, moved: bool, name: str) -> None:
    """Refuse a section whose `diff --git`, `---`, `+++` names are not all `path`."""
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
