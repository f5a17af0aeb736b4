"""The only place that runs `git` (the package's other modules name what it does).

A network call (one carrying `NETWORK_ARGS`) runs under `limits`' total deadline and output
cap: past either, git and its transport helper are killed and the run stops in one line
naming the host (exit 4), whatever the server does."""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import NewType

from patchcarry import hosts, limits, proc
from patchcarry.errors import NetworkError
from patchcarry.git.env import NETWORK_ARGS, no_git_env, secrets_for

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
    if _is_network(args):
        data = None if stdin is None else stdin.encode()
        code, raw_out, raw_err = _bounded(args, cwd, env_extra, data, stream_stderr)
        out, err = raw_out.decode("utf-8", "surrogateescape"), raw_err.decode("utf-8", "replace")
        if check and code != 0:
            raise proc.CalledProcessError(["git", *args], code, out, err)
        return code, out, err
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
    if _is_network(args):
        code, out, raw_err = _bounded(args, cwd, env_extra, stdin, False)
        err = raw_err.decode("utf-8", "replace")
        if check and code != 0:
            said = out.decode("utf-8", "replace")
            raise proc.CalledProcessError(["git", *args], code, said, err)
        return code, out, err
    return proc.cmd_output_bytes(
        "git",
        *args,
        cwd=cwd,
        env=no_git_env(env_extra),
        check=check,
        stdin=stdin,
        secrets=secrets_for(args),
    )


def _is_network(args: tuple[str, ...]) -> bool:
    return NETWORK_ARGS[1] in args


def _bounded(
    args: tuple[str, ...],
    cwd: Path | str,
    env_extra: Mapping[str, str] | None,
    stdin: bytes | None,
    stream_stderr: bool,
) -> tuple[int, bytes, bytes]:
    try:
        return proc.cmd_output_bounded(
            "git",
            *args,
            cwd=cwd,
            env=no_git_env(env_extra),
            deadline_s=limits.GIT_DEADLINE_S,
            max_output=limits.GIT_MAX_OUTPUT,
            stdin=stdin,
            secrets=secrets_for(args),
            stream_stderr=stream_stderr,
        )
    except proc.OutOfBounds as exc:
        verb = next((a for a in args if a in _VERBS), "network call")
        raise NetworkError(
            f"git {verb} from {_remote_host(args)}: {exc.what}, more than any real answer "
            "needs; stopped. Check the URL and the network, then re-run"
        ) from None


_VERBS = ("fetch", "ls-remote", "push", "clone", "apply", "range-diff", "diff")


def _remote_host(args: tuple[str, ...]) -> str:
    """`scheme://host[:port]` of the URL a git call names after `--end-of-options` (never
    credentials or a path on it), the remote's name, or "the remote"."""
    words = list(args)
    after = words[words.index("--end-of-options") + 1 :][:1] if "--end-of-options" in words else []
    if not after:
        return "the remote"
    if "://" not in after[0]:
        return ascii(after[0])[1:-1]
    try:
        parts = urllib.parse.urlsplit(after[0])
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return hosts.redact_url(after[0])
    return f"{parts.scheme}://{parts.hostname}{port}"
