"""Commits whose metadata git holds as bytes that are not UTF-8 (git allows any bytes in a
subject or an author's name; `git commit` re-encodes them, so these are written as raw commit
objects with `git hash-object`, as another tool or an old git would have left them).

    sha = rewrite_head(work, subject=b"caf\\xe9", author_name=b"Jos\\xe9")   # HEAD, re-made
"""

from __future__ import annotations

import subprocess
from pathlib import Path

LATIN1_SUBJECT = b"Clear detached grads, caf\xe9 (#101)"
LATIN1_NAME = b"Jos\xe9 Garc\xeda"


def _git(work: Path, *args: str, stdin: bytes | None = None) -> bytes:
    done = subprocess.run(["git", *args], cwd=work, input=stdin, capture_output=True, check=True)
    return done.stdout


def rewrite_head(work: Path, *, subject: bytes, author_name: bytes, body: bytes = b"") -> str:
    """HEAD's commit again with `subject` (and `body`) as its message and `author_name` as its
    author's name, bytes as given; the branch moved to it. Its sha."""
    raw = _git(work, "cat-file", "commit", "HEAD")
    header, _, _ = raw.partition(b"\n\n")
    lines = []
    for line in header.split(b"\n"):
        if line.startswith(b"author "):
            email_and_date = line[line.index(b" <") :]
            line = b"author " + author_name + email_and_date
        lines.append(line)
    message = subject + b"\n" + (b"\n" + body if body else b"")
    obj = b"\n".join(lines) + b"\n\n" + message
    sha = _git(work, "hash-object", "-t", "commit", "-w", "--stdin", stdin=obj).strip().decode()
    _git(work, "reset", "-q", "--soft", sha)
    return sha
