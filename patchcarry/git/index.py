"""Trees built in a scratch index of the blob-less cache: only touched blobs are fetched."""

from __future__ import annotations

import tempfile
from pathlib import Path

from patchcarry.errors import GitReadError
from patchcarry.git.env import credential_args
from patchcarry.git.runner import git, git_bytes
from patchcarry.git.sha import Sha


def read_tree(commit: str, *, index: Path, cwd: Path) -> None:
    """Load `commit`'s tree into the scratch index file `index` (trees only, no blobs)."""
    git("read-tree", "--end-of-options", commit, cwd=cwd, env_extra={"GIT_INDEX_FILE": str(index)})


def apply_to_index(patch: Path, *, index: Path, cwd: Path, reverse: bool, check: bool) -> bool:
    """`git apply --cached` (`-R`, `--check`) of `patch` on the scratch index: did it apply?"""
    args = ["apply", "--cached", *(["-R"] if reverse else []), *(["--check"] if check else [])]
    args = [*credential_args(), *args, str(patch.resolve())]
    code, _, _ = git(*args, cwd=cwd, check=False, env_extra={"GIT_INDEX_FILE": str(index)})
    return code == 0


def apply_many_to_index(patches: list[Path], *, index: Path, cwd: Path) -> bool:
    """`git apply --cached` of `patches` in one call; whether all applied (all or nothing)."""
    args = [*credential_args(), "apply", "--cached", *(str(p.resolve()) for p in patches)]
    code, _, _ = git(*args, cwd=cwd, check=False, env_extra={"GIT_INDEX_FILE": str(index)})
    return code == 0


def merge_file(ours: bytes, base: bytes, theirs: bytes, *, cwd: Path) -> tuple[bool, bytes]:
    """`git merge-file -p` of one file's three contents (bytes): (clean, merged)."""
    with tempfile.TemporaryDirectory(prefix="patchcarry-merge-") as tmp:
        paths = []
        for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = Path(tmp) / name
            path.write_bytes(data)
            paths.append(str(path))
        code, out, err = git_bytes("merge-file", "-p", "--", *paths, cwd=cwd, check=False)
    if code < 0 or code > 127:
        raise GitReadError(f"git merge-file failed: {err.strip()[:300]}")
    return code == 0, out


def write_blob_to_index(data: bytes, path: str, *, index: Path, cwd: Path) -> None:
    """Store `data` as a blob (no filters) at `path` in the scratch index, keeping its mode."""
    env = {"GIT_INDEX_FILE": str(index)}
    _, raw, _ = git_bytes("hash-object", "-w", "--no-filters", "--stdin", cwd=cwd, stdin=data)
    blob = raw.decode()
    _, entry, _ = git("ls-files", "-s", "--", path, cwd=cwd, env_extra=env)
    mode = entry.split()[0] if entry.strip() else "100644"
    git("update-index", "--cacheinfo", f"{mode},{blob.strip()},{path}", cwd=cwd, env_extra=env)


def write_tree(*, index: Path, cwd: Path) -> str:
    """The scratch index's tree; `--missing-ok`, else git fetches every blob to check it exists."""
    _, out, _ = git("write-tree", "--missing-ok", cwd=cwd, env_extra={"GIT_INDEX_FILE": str(index)})
    return out.strip()


def commit_tree(tree: str, parents: list[str], message: str, *, author: tuple[str, str, str],
                cwd: Path) -> Sha:  # fmt: skip
    """A commit of `tree` on `parents`, `author` also committer: the same hash every run."""
    name, email, date = author
    env = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": date,
           "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email,
           "GIT_COMMITTER_DATE": date}  # fmt: skip
    parent_args = [a for p in parents for a in ("-p", p)]
    _, out, _ = git("commit-tree", tree, *parent_args, cwd=cwd, env_extra=env, stdin=message)
    return Sha(out.strip())
