"""The check's cache folders: only ours (a marker file), one run at a time (an `fcntl` lock)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from patchcarry.errors import BadInputError

MARKER = "patchcarry-cache"
LOCK = "patchcarry.lock"
_held: dict[Path, tuple[int, int]] = {}  # resolved dir -> (fd, depth): reentrant per process


def claim(path: Path, *, adopt_repo: bool = False) -> None:
    """Make `path` ours (created or taken empty, marked); `adopt_repo`: an old bare cache too."""
    marker = path / MARKER
    if marker.is_file():
        return
    if path.exists() and not path.is_dir():
        raise BadInputError(f"{path} is not a directory; pick a new or empty directory")
    if path.is_dir() and any(path.iterdir()) and not (adopt_repo and (path / "HEAD").is_file()):
        raise BadInputError(
            f"{path} is not empty and was not created by patchcarry (no {MARKER} file): "
            "pick a new or empty directory for --work-dir"
        )
    path.mkdir(parents=True, exist_ok=True)
    marker.write_text("A cache made by patchcarry: safe to delete.\n")


def _stale_git_locks(path: Path) -> list[Path]:
    found = [p for p in path.glob("*.lock") if p.name != LOCK]
    found += path.glob("refs/**/*.lock")
    found += path.glob("worktrees/*/*.lock")
    return [p for p in found if p.is_file()]


def _acquire(key: Path) -> int:
    """The lock of `key`, held; the folder claimed anew if its holder removed it meanwhile."""
    waited = False
    while True:
        try:
            fd = os.open(key / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        except FileNotFoundError:  # removed after this run claimed it
            claim(key)
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not waited:
                print(f"waiting for another patchcarry run using {key} ...", file=sys.stderr)
            waited = True
            fcntl.flock(fd, fcntl.LOCK_EX)
        if _is_current(fd, key / LOCK):
            return fd
        os.close(fd)
        claim(key)


def _is_current(fd: int, path: Path) -> bool:
    """Whether the open file `fd` is still the file at `path` (not removed or replaced)."""
    try:
        here = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (here.st_dev, here.st_ino) == (held.st_dev, held.st_ino)


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold the cache's lock, reentrant; git lock files a dead run left are removed first."""
    key = path.resolve()
    if key in _held:
        fd, depth = _held[key]
        _held[key] = (fd, depth + 1)
        try:
            yield
        finally:
            _held[key] = (fd, _held[key][1] - 1)
        return
    fd = _acquire(key)
    try:
        for stale in _stale_git_locks(key):
            stale.unlink(missing_ok=True)
            print(f"removed {stale.relative_to(key)} left by an interrupted run", file=sys.stderr)
        _held[key] = (fd, 1)
        try:
            yield
        finally:
            del _held[key]
    finally:
        os.close(fd)  # releases the flock
