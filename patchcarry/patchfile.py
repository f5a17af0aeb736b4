"""Parses `git format-patch` files: header, touched files, hunks. Pure Python, no git."""

from __future__ import annotations

import dataclasses
import re

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
    subject: str
    author: str
    hunks: tuple[Hunk, ...]

    @property
    def files(self) -> list[str]:
        return sorted({h.path for h in self.hunks})


def touched_files(text: str) -> list[str]:
    """Paths a patch touches (its `diff --git` headers)."""
    return sorted({m.group(2) for m in _DIFF_RE.finditer(text)})


def parse(text: str, *, name: str = "patch") -> Patch:
    """Parse a format-patch file; BadInputError says what is malformed."""
    if not text.startswith("From ") or "\nSubject: " not in text:
        raise BadInputError(f"{name}: not `git format-patch` output (no From/Subject header)")
    author = re.search(r"^From: (.+)$", text, re.MULTILINE)
    subject = re.search(r"^Subject: (?:\[PATCH[^\]]*\] )?(.+(?:\n .+)*)$", text, re.MULTILINE)
    hunks: list[Hunk] = []
    path: str | None = None
    current: list[str] | None = None
    header: tuple[int, int, int, int] | None = None

    def close() -> None:
        if current is not None and header is not None and path is not None:
            old_seen = sum(1 for t in current if not t.startswith("+"))
            new_seen = sum(1 for t in current if not t.startswith("-"))
            if (old_seen, new_seen) != (header[1], header[3]):
                raise BadInputError(
                    f"{name}: hunk at {path}:{header[0]} is corrupt "
                    f"(header says -{header[1]} +{header[3]}, body has -{old_seen} +{new_seen})"
                )
            hunks.append(Hunk(path, header[0], header[1], header[2], header[3], tuple(current)))

    for line in text.splitlines():
        if line.startswith("diff --git "):
            close()
            current, header = None, None
            match = _DIFF_RE.match(line)
            if not match:
                raise BadInputError(f"{name}: bad diff header {line!r}")
            path = match.group(2)
        elif line.startswith("@@"):
            close()
            match = _HUNK_RE.match(line)
            if not match or path is None:
                raise BadInputError(f"{name}: bad hunk header {line!r}")
            o, ol, n, nl = match.groups()
            header = (int(o), int(ol or 1), int(n), int(nl or 1))
            current = []
        elif current is not None:
            if line == "-- " or line.startswith("diff --git"):
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
        subject=" ".join(subject.group(1).split()) if subject else "",
        author=author.group(1).strip() if author else "",
        hunks=tuple(hunks),
    )
