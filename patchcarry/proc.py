"""The one place that runs subprocesses: no child sees a token or imports from its folder."""

from __future__ import annotations

import contextlib
import os
import re
import resource
import select
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from patchcarry import tokens, trace
from patchcarry.errors import FatalError

TOKEN_VARS = tokens.ALL  # the variables a token lives in: no child sees them


# This interpreter, started so that neither the working folder nor a script's folder is put on
# its import path: a `json.py` where the child runs is never imported (Python 3.11's -P).
PYTHON = (sys.executable, "-P")


def environment(base: Mapping[str, str] | None = None,
                secrets: Mapping[str, str] | None = None) -> dict[str, str]:  # fmt: skip
    """What a child is started with: `base` without token variables, plus `secrets`, safe path."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in TOKEN_VARS}
    env["PYTHONSAFEPATH"] = "1"
    env.update(secrets or {})
    return env


class OutOfBounds(FatalError):
    """A bounded command ran past its deadline or printed past its cap; it was killed."""

    def __init__(self, what: str) -> None:
        self.what = what
        super().__init__(what)


class TimedOut(FatalError):
    """A command still running after its timeout, killed."""


class CalledProcessError(FatalError):
    """A command exited non-zero; the message carries the command, code, stdout and stderr."""

    def __init__(self, cmd: Sequence[str], code: int, out: str, err: str) -> None:
        self.cmd = list(cmd)
        self.code = code
        self.out = out
        self.err = err
        super().__init__(
            f"command failed: {' '.join(self.cmd)}\n  return code: {code}\n"
            f"  stdout: {out.strip() or '(none)'}\n  stderr: {err.strip() or '(none)'}"
        )

    def one_line(self) -> str:
        """The program, its subcommand and its last line (the command line may hold URLs)."""
        words = iter(self.cmd)
        name = Path(next(words, "?")).name
        verb = ""
        for word in words:
            if word in ("-c", "-C"):
                next(words, None)
            elif not word.startswith("-"):
                verb = f" {word}"
                break
        said = (self.err.strip() or self.out.strip()).splitlines()[-1:] or ["no output"]
        return f"{name}{verb} failed (exit {self.code}): {said[0]}"


def cmd_output(
    *cmd: str, cwd: Path | str | None = None, env: Mapping[str, str] | None = None,
    check: bool = True, stdin: str | None = None, stream_stderr: bool = False,
    timeout: float | None = None, secrets: Mapping[str, str] | None = None,
) -> tuple[int, str, str]:  # fmt: skip
    """Run `cmd`: (code, stdout, stderr); CalledProcessError on `check`, FatalError on timeout."""
    try:  # errors="surrogateescape": git prints what a commit holds, any bytes, kept as data
        proc = subprocess.run(
            list(cmd), cwd=cwd, env=environment(env, secrets), input=stdin, text=True,
            stdout=subprocess.PIPE, stderr=None if stream_stderr else subprocess.PIPE,
            errors="surrogateescape", check=False, timeout=timeout,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        trace.command(cmd, None)
        raise TimedOut(f"command timed out after {timeout:g} s: {' '.join(cmd)}") from None
    trace.command(cmd, proc.returncode)
    out, err = proc.stdout or "", proc.stderr or ""
    if check and proc.returncode != 0:
        raise CalledProcessError(cmd, proc.returncode, out, err)
    return proc.returncode, out, err


def cmd_output_bounded(
    *cmd: str, cwd: Path | str | None, env: Mapping[str, str], deadline_s: float, max_output: int,
    stdin: bytes | None = None, secrets: Mapping[str, str] | None = None,
    stream_stderr: bool = False, watch: Callable[[], str | None] | None = None,
    max_processes: int = 0, max_memory: int = 0,
) -> tuple[int, bytes, bytes]:  # fmt: skip
    """Run `cmd` with a total deadline and output caps; past either, or a reason from `watch`
    (asked every `WATCH_EVERY_S`), the child is killed and OutOfBounds raised. `max_processes`
    and `max_memory` (0: none) bound its process tree."""
    child = subprocess.Popen(
        list(cmd),
        cwd=cwd,
        env=environment(env, secrets),
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=None if stream_stderr else subprocess.PIPE,
        process_group=0,  # its own group: git's helpers (git-remote-https) are killed with it
    )
    try:
        if max_memory:
            _cap_data(child.pid, max_memory)
        if max_processes or max_memory:
            watch = _group_usage(child.pid, max_processes, max_memory, watch)
        code, out, err, over = _communicate(child, stdin, deadline_s, max_output, watch)
        if over is None and code and max_memory and _OUT_OF_MEMORY.search(err):
            over = f"needed more than {max_memory} bytes of memory"  # its data cap, met
        if over is not None:
            _kill_group(child)  # the helpers it started (git-remote-https, a lazy fetch) go too
            child.wait()
    except BaseException:
        _kill_group(child)
        raise
    finally:
        for stream in filter(None, (child.stdin, child.stdout, child.stderr)):
            with contextlib.suppress(OSError):
                stream.close()
    trace.command(cmd, None if over is not None else code)
    if over is not None:
        raise OutOfBounds(over)
    assert code is not None
    return code, out, err


WATCH_EVERY_S = 0.2

# What git (and its transport) say when an allocation fails: its data cap was met.
_OUT_OF_MEMORY = re.compile(rb"out of memory|malloc failed|cannot allocate memory", re.I)


def _cap_data(pid: int, limit: int) -> None:
    """Cap the data of `pid`'s tree (RLIMIT_DATA, via prlimit: no slow `preexec_fn`); or no-op."""
    with contextlib.suppress(AttributeError, OSError, ValueError):
        resource.prlimit(pid, resource.RLIMIT_DATA, (limit, limit))


def _group_usage(
    leader: int, max_processes: int, max_memory: int, then: Callable[[], str | None] | None
) -> Callable[[], str | None]:
    """The child's process group counted from /proc when asked: past `max_processes` processes
    or `max_memory` resident bytes, the reason to stop it (RLIMIT_NPROC cannot: it counts the
    user's processes); then asks `then`."""

    def over() -> str | None:
        count = resident = 0
        with contextlib.suppress(OSError), os.scandir("/proc") as entries:
            for entry in entries:
                if not entry.name.isdigit():
                    continue
                try:
                    with open(f"/proc/{entry.name}/stat", "rb") as stat:
                        fields = stat.read().rsplit(b")", 1)[1].split()
                except OSError:
                    continue  # gone meanwhile
                if int(fields[2]) == leader:  # its process group
                    count += 1
                    resident += int(fields[21]) * _PAGE
        if max_processes and count > max_processes:
            return f"started more than {max_processes} processes"
        if max_memory and resident > max_memory:
            return f"needed more than {max_memory} bytes of memory"
        return then() if then is not None else None

    return over


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _kill_group(child: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, signal.SIGKILL)


def _communicate(
    child: subprocess.Popen[bytes], stdin: bytes | None, deadline_s: float, max_output: int,
    watch: Callable[[], str | None] | None,
) -> tuple[int | None, bytes, bytes, str | None]:  # fmt: skip
    """Feed, read and wait in this thread (a run makes thousands): (code, out, err, why stopped)."""
    end = time.monotonic() + deadline_s
    out, err = bytearray(), bytearray()
    reads = {s.fileno(): into for s, into in ((child.stdout, out), (child.stderr, err)) if s}
    send, to_send = (child.stdin.fileno() if child.stdin else -1), memoryview(stdin or b"")
    with selectors.DefaultSelector() as pipes, _exit_waiter(child) as exited:
        for fd in reads:
            pipes.register(fd, selectors.EVENT_READ)
        if send >= 0:
            os.set_blocking(send, False)
            pipes.register(send, selectors.EVENT_WRITE)
        next_watch = time.monotonic() + WATCH_EVERY_S
        while pipes.get_map():
            if send >= 0 and not to_send:  # all sent (or the child stopped reading)
                pipes.unregister(send)
                with contextlib.suppress(BrokenPipeError):
                    child.stdin.close()  # type: ignore[union-attr]  # send >= 0: there is one
                send = -1
                continue
            left = end - time.monotonic()
            if left <= 0:
                return None, b"", b"", f"still running after {deadline_s:g} s"
            for key, _ in pipes.select(min(left, WATCH_EVERY_S) if watch else left):
                if key.fd == send:
                    with contextlib.suppress(BlockingIOError):
                        try:
                            to_send = to_send[os.write(send, to_send[:65536]) :]
                        except BrokenPipeError:
                            to_send = to_send[:0]
                    continue
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    pipes.unregister(key.fd)
                reads[key.fd] += chunk
                if len(reads[key.fd]) > max_output:
                    return None, b"", b"", f"printed more than {max_output} bytes"
            if watch is not None and time.monotonic() >= next_watch:  # not at every chunk
                next_watch = time.monotonic() + WATCH_EVERY_S
                if (reason := watch()) is not None:
                    return None, b"", b"", reason
        code, over = _wait(exited, end, deadline_s, watch)
    return code, bytes(out), bytes(err), over


@contextlib.contextmanager
def _exit_waiter(child: subprocess.Popen[bytes]) -> Iterator[Callable[[float], int | None]]:
    """`wait(seconds)`: the child's exit code or None; woken by a pidfd, not by polling."""
    try:
        pidfd: int | None = os.pidfd_open(child.pid)
    except (AttributeError, OSError):  # not Linux: Popen.wait's own polling
        pidfd = None

    def wait(seconds: float) -> int | None:
        if pidfd is not None and not select.select([pidfd], [], [], seconds)[0]:
            return None
        try:
            return child.wait(timeout=None if pidfd is not None else seconds)
        except subprocess.TimeoutExpired:
            return None

    try:
        yield wait
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _wait(exited: Callable[[float], int | None], end: float, deadline_s: float,
          watch: Callable[[], str | None] | None) -> tuple[int | None, str | None]:  # fmt: skip
    """The child's exit code, or None and the reason once past the deadline or `watch` names one."""
    while True:
        left = end - time.monotonic()
        code = exited(max(0.0, min(left, WATCH_EVERY_S if watch else left)))
        if code is not None:
            return code, None
        reason = watch() if watch is not None else None
        if reason is not None:
            return None, reason
        if time.monotonic() >= end:
            return None, f"still running after {deadline_s:g} s"
