"""The one place that runs subprocesses. No child sees a token: every environment passes
through `environment`, which drops the token variables; the one caller that needs the token
(git's credential helper, in `patchcarry.git`) hands it over as `secrets`, for that call.
No Python child imports from its working folder: each is started as `PYTHON` (`-P`), and
`environment` sets PYTHONSAFEPATH for the Pythons those start in turn (torchrun's workers)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from patchcarry import trace
from patchcarry.errors import FatalError

# The variables a GitHub token lives in (this tool's, gh's and their Enterprise forms, and
# the resubmit workflow's secret).
TOKEN_VARS = frozenset(
    {"GITHUB_TOKEN", "GH_TOKEN", "GITHUB_ENTERPRISE_TOKEN", "GH_ENTERPRISE_TOKEN", "RESUBMIT_TOKEN"}
)

# This interpreter, started so that neither the working folder nor a script's folder is put on
# its import path: a `json.py` where the child runs is never imported (Python 3.11's -P).
PYTHON = (sys.executable, "-P")


def environment(
    base: Mapping[str, str] | None = None, secrets: Mapping[str, str] | None = None
) -> dict[str, str]:
    """`base` (default: this process's environment) without the token variables, plus
    `secrets`: what a child is started with. Measuring, audit and upstream-test children run
    upstream's code, and hooks or helpers git starts would inherit the token: none need it.
    PYTHONSAFEPATH makes any Python it starts import nothing from its working folder."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in TOKEN_VARS}
    env["PYTHONSAFEPATH"] = "1"
    env.update(secrets or {})
    return env


class OutOfBounds(FatalError):
    """A bounded command ran past its deadline or printed past its cap; it was killed. The
    caller says what it was (the message here names only the limit)."""

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
        """What the face prints: the program and its subcommand and the last line it said,
        not the command line (it can hold -c options, URLs and paths)."""
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
    *cmd: str,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    stdin: str | None = None,
    stream_stderr: bool = False,
    timeout: float | None = None,
    secrets: Mapping[str, str] | None = None,
) -> tuple[int, str, str]:
    """Run `cmd`, return (code, stdout, stderr); raise CalledProcessError when check fails.

    With `stream_stderr`, stderr goes to the terminal (git's progress) and is returned empty.
    A command still running after `timeout` seconds is killed and reported as a FatalError.
    `env` never carries a token to the child; `secrets` (git's credential helper alone) do.
    """
    try:
        proc = _run(cmd, cwd, environment(env, secrets), stdin, stream_stderr, timeout)
    except subprocess.TimeoutExpired:
        trace.command(cmd, None)
        raise TimedOut(f"command timed out after {timeout:g} s: {' '.join(cmd)}") from None
    out, err = proc.stdout or "", proc.stderr or ""
    if check and proc.returncode != 0:
        raise CalledProcessError(cmd, proc.returncode, out, err)
    return proc.returncode, out, err


def cmd_output_bytes(
    *cmd: str,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    stdin: bytes | None = None,
    secrets: Mapping[str, str] | None = None,
) -> tuple[int, bytes, str]:
    """Run `cmd` on bytes: (code, stdout as bytes, stderr as text); for file contents and patch
    text, which must reach git and come back byte for byte (CRLF, any encoding)."""
    proc = subprocess.run(
        list(cmd),
        cwd=cwd,
        env=environment(env, secrets),
        input=stdin,
        capture_output=True,
        check=False,
    )
    trace.command(cmd, proc.returncode)
    err = proc.stderr.decode("utf-8", "replace")
    if check and proc.returncode != 0:
        out = proc.stdout.decode("utf-8", "replace")
        raise CalledProcessError(cmd, proc.returncode, out, err)
    return proc.returncode, proc.stdout, err


def cmd_output_bounded(
    *cmd: str,
    cwd: Path | str | None,
    env: Mapping[str, str],
    deadline_s: float,
    max_output: int,
    stdin: bytes | None = None,
    secrets: Mapping[str, str] | None = None,
    stream_stderr: bool = False,
) -> tuple[int, bytes, bytes]:
    """Run `cmd` with a total deadline and a cap on what it prints (stdout and stderr each):
    (code, stdout, stderr). Past either the child is killed and OutOfBounds is raised: a
    network call (git's) must not wait or read without end, whatever the server does. With
    `stream_stderr`, stderr goes to the terminal (git's progress) and comes back empty."""
    child = subprocess.Popen(
        list(cmd),
        cwd=cwd,
        env=environment(env, secrets),
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=None if stream_stderr else subprocess.PIPE,
        process_group=0,  # its own group: git's helpers (git-remote-https) are killed with it
    )
    over: list[str] = []
    outputs: list[bytearray] = [bytearray(), bytearray()]

    def kill() -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)

    def drain(stream: IO[bytes], into: bytearray) -> None:
        while chunk := stream.read1(65536):  # type: ignore[attr-defined]
            into += chunk
            if len(into) > max_output:
                over.append(f"printed more than {max_output} bytes")
                kill()
                return

    streams = [child.stdout, child.stderr]
    readers = [
        threading.Thread(target=drain, args=(stream, into), daemon=True)
        for stream, into in zip(streams, outputs, strict=True)
        if stream is not None
    ]
    try:
        for reader in readers:
            reader.start()
        if stdin is not None:
            assert child.stdin is not None
            with contextlib.suppress(BrokenPipeError):
                child.stdin.write(stdin)
                child.stdin.close()
        try:
            code = child.wait(timeout=deadline_s)
        except subprocess.TimeoutExpired:
            over.append(f"still running after {deadline_s:g} s")
            kill()  # the helpers it started (git-remote-https) go with it
            code = child.wait()
        for reader in readers:
            reader.join()
    except BaseException:
        kill()
        raise
    trace.command(cmd, None if over else code)
    if over:
        raise OutOfBounds(over[0])
    return code, bytes(outputs[0]), bytes(outputs[1])


def _run(
    cmd: Sequence[str],
    cwd: Path | str | None,
    env: Mapping[str, str],
    stdin: str | None,
    stream_stderr: bool,
    timeout: float | None,
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        list(cmd),
        cwd=cwd,
        env=dict(env),
        input=stdin,
        stdout=subprocess.PIPE,
        stderr=None if stream_stderr else subprocess.PIPE,
        text=True,
        errors="surrogateescape",  # git prints what a commit holds: any bytes, kept as data
        check=False,
        timeout=timeout,
    )
    trace.command(cmd, done.returncode)
    return done
