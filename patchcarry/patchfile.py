"""Parses `git format-patch` files once: header, message, touched files, hunks. Pure Python.

What a patch may carry (paths, modes, sign-off, encoding) is checked here too, by
`patchrules`, so a bad patch stops every command at load time, before any write.
The manifest loads each patch file through `load` when it is parsed, so every later step
(check, proof, resubmit) works on the same `Patch` and no module reads a patch file again.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from patchcarry import patchrules
from patchcarry.errors import BadInputError

_DIFF_RE = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.MULTILINE)
_HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


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
class Patch:
    """One format-patch file, parsed. `path` stays for the tools that want a file (git)."""

    name: str
    path: Path
    text: str
    subject: str
    author: str  # "Name <email>", as the From: line says
    author_name: str
    author_email: str
    date: str  # the Date: line, kept so a commit rebuilt from this patch is the same commit
    message: str  # the commit message body, without Subject and sign-offs
    files: tuple[str, ...]  # every path its `diff --git` headers name, sorted
    hunks: tuple[Hunk, ...]
    signoffs: tuple[str, ...] = ()  # each `Signed-off-by:` value ("Name <email>"), in order


def load(path: Path) -> Patch:
    """Read and parse the patch file at `path` (the one place a patch file is read)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise BadInputError(f"{path.name}: patch file not found") from None
    return parse(patchrules.decode(data, path.name), name=path.name, path=path)


_IDENT_RE = re.compile(r"^(.*?)\s*<([^>]+)>$")
_MESSAGE_RE = re.compile(r"^Subject: .*?\n(?!\s)(.*?)\n---\n", re.MULTILINE | re.DOTALL)


def _message(text: str) -> str:
    match = _MESSAGE_RE.search(text)
    if not match:
        return ""
    kept = [ln for ln in match.group(1).strip().splitlines() if not ln.startswith("Signed-off-by:")]
    return "\n".join(kept).strip()


def parse(text: str, *, name: str = "patch", path: Path | None = None) -> Patch:
    """Parse format-patch `text`; BadInputError says what is malformed (`name` labels it,
    `path` is the file it came from)."""
    file = path if path is not None else Path(name)
    if not text.startswith("From ") or "\nSubject: " not in text:
        raise BadInputError(f"{name}: not `git format-patch` output (no From/Subject header)")
    patchrules.check_header(text, name)
    patchrules.check_diff_headers(text, name)
    author = re.search(r"^From: (.+)$", text, re.MULTILINE)
    ident = _IDENT_RE.match(author.group(1).strip()) if author else None
    if ident is None:
        raise BadInputError(f"{name}: its From: line is not `Name <email>`")
    date = re.search(r"^Date: (.+)$", text, re.MULTILINE)
    subject = re.search(r"^Subject: (?:\[PATCH[^\]]*\] )?(.+(?:\n .+)*)$", text, re.MULTILINE)
    hunks: list[Hunk] = []
    target: str | None = None
    current: list[str] | None = None
    header: tuple[int, int, int, int] | None = None

    def close() -> None:
        if current is not None and header is not None and target is not None:
            old_seen = sum(1 for t in current if not t.startswith("+"))
            new_seen = sum(1 for t in current if not t.startswith("-"))
            if (old_seen, new_seen) != (header[1], header[3]):
                raise BadInputError(
                    f"{name}: hunk at {target}:{header[0]} is corrupt "
                    f"(header says -{header[1]} +{header[3]}, body has -{old_seen} +{new_seen})"
                )
            hunks.append(Hunk(target, header[0], header[1], header[2], header[3], tuple(current)))

    for line in text.splitlines():
        if line.startswith("diff --git "):
            close()
            current, header = None, None
            match = _DIFF_RE.match(line)
            if not match:
                raise BadInputError(f"{name}: bad diff header {line!r}")
            target = match.group(2)
        elif line.startswith("@@"):
            close()
            match = _HUNK_RE.match(line)
            if not match or target is None:
                raise BadInputError(f"{name}: bad hunk header {line!r}")
            o, ol, n, nl = match.groups()
            header = (int(o), int(ol or 1), int(n), int(nl or 1))
            current = []
        elif current is not None:
            if line == "-- ":
                close()
                current, header = None, None
            elif line[:1] in (" ", "+", "-") or line == "":
                current.append(line if line else " ")
            elif line.startswith("\\"):
                continue
            else:
                close()
                current, header = None, None
    close()
    if not hunks:
        raise BadInputError(f"{name}: contains no hunks")
    return Patch(
        name=name,
        path=file,
        text=text,
        subject=" ".join(subject.group(1).split()) if subject else "",
        author=author.group(1).strip() if author else "",
        author_name=ident.group(1),
        author_email=ident.group(2),
        date=date.group(1).strip() if date else "",
        message=_message(text),
        files=tuple(sorted({m.group(2) for m in _DIFF_RE.finditer(text)})),
        hunks=tuple(hunks),
        signoffs=_signoffs(text),
    )


def _signoffs(text: str) -> tuple[str, ...]:
    match = _MESSAGE_RE.search(text)
    body = match.group(1) if match else ""
    return tuple(m.strip() for m in re.findall(r"^Signed-off-by: (.+)$", body, re.MULTILINE))
