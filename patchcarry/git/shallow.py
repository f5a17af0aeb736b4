"""The shallow boundary of the tool's caches, drawn by the commits they hold: a `--depth` fetch
marks commits shallow even when their parents are here, hiding history an earlier fetch
brought; `keep_known_history` takes those marks back after each shallow fetch."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from patchcarry.git.runner import git, git_bytes

# `shallow_file`'s answers in this run, by repository (asked a dozen times a resubmit);
# emptied when a run starts (`git.forget_run_memos`).
_shallow_files: dict[Path, Path] = {}


def forget_shallow_files() -> None:
    """Forget `shallow_file`'s answers (`git.forget_run_memos`)."""
    _shallow_files.clear()


def shallow_file(*, cwd: Path) -> Path:
    """`.git/shallow` (a bare repository's `shallow`) of the repository at `cwd`."""
    at = Path(cwd).absolute()
    if at not in _shallow_files:
        _, out, _ = git("rev-parse", "--git-path", "shallow", cwd=cwd)
        relative = Path(out.strip())
        if relative.is_absolute() or ".." in relative.parts:  # not this folder's own: not kept
            return at / relative
        _shallow_files[at] = at / relative
    return _shallow_files[at]


def _parents(commits: set[str], *, cwd: Path) -> dict[str, list[str]]:
    """Each commit's parents as its object records them (the shallow file hides them elsewhere)."""
    wanted = sorted(commits)
    if not wanted:
        return {}
    _, out, _ = git_bytes("cat-file", "--batch", cwd=cwd,
                          stdin="".join(f"{c}\n" for c in wanted).encode())  # fmt: skip
    found: dict[str, list[str]] = {}
    at = 0
    while at < len(out):
        end = out.index(b"\n", at)
        sha, kind, *rest = out[at:end].decode().split(" ")
        size = int(rest[0]) if rest else 0
        header = out[end + 1 : end + 1 + size].split(b"\n\n", 1)[0]
        at = end + 1 + size + (1 if rest else 0)
        if kind == "commit":
            found[sha] = [line.removeprefix(b"parent ").decode() for line in header.split(b"\n")
                          if line.startswith(b"parent ")]  # fmt: skip
    return found


def _present(commits: set[str], *, cwd: Path) -> set[str]:
    """Which of `commits` are here, asked without a lazy fetch (`--missing=allow-any`)."""
    if not commits:
        return set()
    _, out, _ = git("rev-list", "--missing=allow-any", "--ignore-missing", "--no-walk", "--stdin",
                    cwd=cwd, stdin="".join(f"{c}\n" for c in sorted(commits)))  # fmt: skip
    return set(out.split())


def keep_known_history(*, cwd: Path) -> set[str]:
    """Unshallow every commit whose parents are all here (written under `shallow.lock`)."""
    path = shallow_file(cwd=cwd)
    if not path.is_file():
        return set()
    boundary = path.read_text().split()
    parents = _parents(_present(set(boundary), cwd=cwd), cwd=cwd)
    present = _present({p for ps in parents.values() for p in ps}, cwd=cwd)
    known = {c for c, ps in parents.items() if ps and all(p in present for p in ps)}
    if not known:
        return set()
    lock = path.with_name(path.name + ".lock")
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return set()
    try:
        kept = [c for c in boundary if c not in known]
        with os.fdopen(fd, "w") as handle:
            handle.write("".join(f"{c}\n" for c in kept))
        if kept:
            os.replace(lock, path)
        else:  # no boundary left: a complete repository has no shallow file (as git leaves it)
            path.unlink()
    finally:
        with contextlib.suppress(FileNotFoundError):
            lock.unlink()
    return known
