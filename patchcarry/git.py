"""The only module that runs `git`. Small named functions, each taking an explicit cwd."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import NewType

from patchcarry import proc

GitCommitHash = NewType("GitCommitHash", str)

# Variables that would redirect git away from the repository we name (set by hooks, `git
# rebase -x`, or a parent git). Removing them keeps every call about its own cwd.
_GIT_ENV_KEEP = {"GIT_EXEC_PATH", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSL_CAINFO", "GIT_SSL_NO_VERIFY"}


def no_git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The current environment without stray GIT_* variables, never prompting, C locale."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in _GIT_ENV_KEEP}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["LC_ALL"] = "C"
    env["LANGUAGE"] = "C"
    if extra:
        env.update(extra)
    return env


def git(
    *args: str,
    cwd: Path | str,
    check: bool = True,
    env_extra: Mapping[str, str] | None = None,
    stdin: str | None = None,
    stream_stderr: bool = False,
) -> tuple[int, str, str]:
    """Run `git ARGS` in `cwd`; (code, stdout, stderr). Raises CalledProcessError if `check`."""
    return proc.cmd_output(
        "git",
        *args,
        cwd=cwd,
        env=no_git_env(env_extra),
        check=check,
        stdin=stdin,
        stream_stderr=stream_stderr,
    )


def plain_tree_env(tree: Path) -> dict[str, str]:
    """Env that stops git from finding a repository above `tree` (a plain source tree).

    Without it, `git apply` inside e.g. site-packages of a venv that lives in a git checkout
    treats paths as relative to that checkout and silently skips every file.
    """
    return {"GIT_CEILING_DIRECTORIES": str(Path(tree).resolve().parent)}


def init(path: Path) -> None:
    """`git init` a fresh repository at `path` (created if missing)."""
    path.mkdir(parents=True, exist_ok=True)
    git("init", "-q", cwd=path)


def rev_parse(rev: str, *, cwd: Path) -> GitCommitHash:
    """The full hash `rev` names in the repository at `cwd`."""
    _, out, _ = git("rev-parse", "--verify", "--end-of-options", f"{rev}^{{commit}}", cwd=cwd)
    return GitCommitHash(out.strip())
