"""The only place that runs `git` (the package's other modules name what it does)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import NewType

from patchcarry import proc
from patchcarry.git.env import no_git_env, secrets_for

GitCommitHash = NewType("GitCommitHash", str)


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
        secrets=secrets_for(args),
    )


def git_bytes(
    *args: str,
    cwd: Path | str,
    check: bool = True,
    env_extra: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
) -> tuple[int, bytes, str]:
    """`git` for contents that must stay bytes (blobs, patch text): (code, stdout, stderr)."""
    return proc.cmd_output_bytes(
        "git",
        *args,
        cwd=cwd,
        env=no_git_env(env_extra),
        check=check,
        stdin=stdin,
        secrets=secrets_for(args),
    )
