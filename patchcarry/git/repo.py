"""Local repositories: create, configure, check out (no network)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from patchcarry.git.env import plain_tree_env
from patchcarry.git.runner import git


def init(path: Path) -> None:
    """`git init` a fresh repository at `path` (created if missing)."""
    path.mkdir(parents=True, exist_ok=True)
    git("init", "-q", cwd=path)


def init_bare(path: Path) -> None:
    """`git init --bare` at `path` (an existing directory)."""
    git("init", "-q", "--bare", str(path), cwd=path)


def set_config(key: str, value: str, *, cwd: Path) -> None:
    """Set `key` in the repository's own config (`git config key value`)."""
    git("config", key, value, cwd=cwd)


def unset_config(key: str, *, cwd: Path) -> None:
    """Remove every value of `key` from the repository's config; none there is fine."""
    git("config", "--unset-all", key, cwd=cwd, check=False)


def is_valid_branch_name(name: str) -> bool:
    """Whether `refs/heads/<name>` is a valid ref name (`git check-ref-format`), asked in an
    empty directory: no repository (the caller's least of all) is read for it."""
    with tempfile.TemporaryDirectory(prefix="patchcarry-ref-") as tmp:
        code, _, _ = git(
            "check-ref-format",
            f"refs/heads/{name}",
            cwd=tmp,
            check=False,
            env_extra=plain_tree_env(Path(tmp) / "x"),
        )
    return code == 0


def sparse_worktree(repo: Path, commit: str, paths: list[str], dest: Path) -> None:
    """Check out `paths` (cone-mode directories) of `commit` from `repo` into a new worktree
    at `dest`. In a blob-less partial clone the missing blobs come in one batched fetch."""
    git("worktree", "add", "-q", "--no-checkout", "--detach", str(dest), commit, cwd=repo)
    git("sparse-checkout", "set", "--", *paths, cwd=dest)
    git("checkout", "-q", "--detach", commit, cwd=dest)


def prune_worktrees(repo: Path) -> None:
    """Forget the worktrees of `repo` whose folders are gone (`git worktree prune`)."""
    git("worktree", "prune", cwd=repo)


def checkout_detached(commit: str, *, cwd: Path) -> None:
    """Check out `commit` at `cwd` with a detached HEAD."""
    git("checkout", "-q", "--detach", commit, cwd=cwd)
