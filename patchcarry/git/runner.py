"""The only place that runs `git`, under `limits`' deadline and caps (past any: exit 4)."""

from __future__ import annotations

import contextlib
import os
import re
import time
import urllib.parse
from collections.abc import Mapping
from pathlib import Path

from patchcarry import cachedir, hosts, limits, proc
from patchcarry.errors import NetworkError
from patchcarry.git.env import NETWORK_ARGS, no_git_env, secrets_for


class GitError(proc.CalledProcessError):
    """git exited non-zero: caught by that name outside `git/`; `said`: git's last word."""

    @property
    def said(self) -> str:
        lines = (self.err.strip() or self.out.strip()).splitlines()
        return lines[-1] if lines else f"git exited {self.code}"


def git(
    *args: str, cwd: Path | str, check: bool = True, env_extra: Mapping[str, str] | None = None,
    stdin: str | None = None, stream_stderr: bool = False,
) -> tuple[int, str, str]:  # fmt: skip
    """Run `git ARGS` in `cwd`: (code, stdout, stderr), any bytes kept (surrogateescape)."""
    data = None if stdin is None else stdin.encode("utf-8", "surrogateescape")
    code, raw_out, raw_err = _bounded(args, cwd, env_extra, data, stream_stderr)
    out, err = (raw.decode("utf-8", "surrogateescape") for raw in (raw_out, raw_err))
    if check and code != 0:
        raise GitError(["git", *args], code, out, err)
    return code, out, err


def git_bytes(
    *args: str, cwd: Path | str, check: bool = True, env_extra: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
) -> tuple[int, bytes, str]:  # fmt: skip
    """`git` for contents that must stay bytes (blobs, patch text): (code, stdout, stderr)."""
    code, out, raw_err = _bounded(args, cwd, env_extra, stdin, False)
    err = raw_err.decode("utf-8", "replace")
    if check and code != 0:
        raise GitError(["git", *args], code, out.decode("utf-8", "replace"), err)
    return code, out, err


def _bounded(
    args: tuple[str, ...], cwd: Path | str, env_extra: Mapping[str, str] | None,
    stdin: bytes | None, stream_stderr: bool,
) -> tuple[int, bytes, bytes]:  # fmt: skip
    """Every git call is bounded: in a partial clone any read may fetch a missing blob."""
    watch = ObjectStoreGrowth.of(cwd, limits.GIT_MAX_WRITTEN)
    try:
        return proc.cmd_output_bounded("git", *args, cwd=cwd, env=no_git_env(env_extra),
                                       deadline_s=limits.GIT_DEADLINE_S,
                                       max_output=limits.GIT_MAX_OUTPUT, stdin=stdin,
                                       secrets=secrets_for(args), stream_stderr=stream_stderr,
                                       watch=watch, max_processes=limits.GIT_MAX_PROCESSES,
                                       max_memory=limits.GIT_MAX_MEMORY)  # fmt: skip
    except proc.OutOfBounds as exc:
        if watch is not None:
            watch.remove_unfinished()
        if NETWORK_ARGS[1] in args:
            verb = next((a for a in args if a in _VERBS), "network call")
            where = f"git {verb} from {_remote_host(args, cwd)}"
        else:
            verb = next((a for a in args if not a.startswith("-") and "=" not in a), "")
            where = (f"git {verb} in {ascii(str(cwd))[1:-1]} (fetching what it lacks from "
                     f"{_promisor_hosts(cwd)})")  # fmt: skip
        raise NetworkError(f"{where}: {exc.what}, more than any real answer needs; stopped. "
                           "Check the URL and the network, then re-run") from None  # fmt: skip


class ObjectStoreGrowth:
    """What a git call wrote to the object store so far (an endless sender fills the disk)."""

    def __init__(self, objects: Path, cap: int) -> None:
        self.objects, self.cap = objects, cap
        self.began = time.time() - _CLOCK_SLACK_S

    @classmethod
    def of(cls, cwd: Path | str, cap: int) -> ObjectStoreGrowth | None:
        """The watch for the repository at `cwd` (bare or not), None where there is none."""
        for objects in (Path(cwd) / "objects", Path(cwd) / ".git" / "objects"):
            if (objects / "pack").is_dir():
                return cls(objects, cap)
        return None

    def _written(self) -> list[tuple[str, int]]:
        """(path, size) of each watched file written since the call began."""
        found = []
        for folder in (self.objects, self.objects / "pack"):
            with contextlib.suppress(OSError), os.scandir(folder) as entries:
                for entry in entries:
                    with contextlib.suppress(OSError):
                        if entry.is_file() and (st := entry.stat()).st_mtime >= self.began:
                            found.append((entry.path, st.st_size))
        return found

    def remove_unfinished(self) -> None:
        """Remove what a killed git left (`tmp_*`) since the call began, in our caches only."""
        if not (self.objects.parent / cachedir.MARKER).is_file():
            return
        for path, _ in self._written():
            if os.path.basename(path).startswith("tmp_"):
                with contextlib.suppress(OSError):
                    os.unlink(path)

    def __call__(self) -> str | None:
        grown = sum(size for _, size in self._written())
        return f"wrote more than {self.cap} bytes to disk" if grown > self.cap else None


# file times lag the clock by up to a tick of the kernel's coarse clock
_CLOCK_SLACK_S = 0.05


def _promisor_hosts(cwd: Path | str) -> str:
    """The hosts of `cwd`'s remotes, where a lazy fetch goes."""
    _, out, _ = git("config", "--get-regexp", r"^remote\..*\.url$", cwd=cwd, check=False)
    return ", ".join(sorted({_host(line.split(" ", 1)[-1]) for line in out.splitlines()})) or (
        "no remote"
    )


_VERBS = ("fetch", "ls-remote", "push", "clone", "apply", "range-diff", "diff")


def _remote_host(args: tuple[str, ...], cwd: Path | str) -> str:
    """`scheme://host[:port]` of the URL or remote a git call names, or "the remote"."""
    words = list(args)
    after = words[words.index("--end-of-options") + 1 :][:1] if "--end-of-options" in words else []
    if after and re.fullmatch(r"[\w.-]+", after[0]):
        _, url, _ = git("config", "--get", f"remote.{after[0]}.url", cwd=cwd, check=False)
        after = [url.strip() or after[0]]
    return _host(after[0]) if after else "the remote"


def _host(url: str) -> str:
    """`scheme://host[:port]` of `url`, or `url` escaped when it is a remote's name or a path."""
    if "://" not in url:
        return ascii(url)[1:-1]
    try:
        parts = urllib.parse.urlsplit(url)
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return hosts.redact_url(url)
    return f"{parts.scheme}://{parts.hostname}{port}" if parts.hostname else ascii(url)[1:-1]
