"""Maps exceptions around a command's dispatch to exit codes, and says each in one line."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import traceback
from collections.abc import Iterator

from patchcarry import trace
from patchcarry.display import escape
from patchcarry.errors import ExitCode, FatalError
from patchcarry.proc import CalledProcessError

# Whether --offline checks anything for the running command's entries: False keeps the
# `--offline` hint from a failure where it would check nothing.
offline_checks: bool | None = None


def note_offline_checks(upstreams: list[str]) -> None:
    """Record whether `--offline` would check something for entries on `upstreams`."""
    from patchcarry.runtime.tree import has_offline_source

    global offline_checks
    offline_checks = any(has_offline_source(u) for u in upstreams)


class CommandResult:
    """Holds the exit code chosen by `error_handler`."""

    code: int = ExitCode.OK


def _message(exc: FatalError, options: frozenset[str]) -> str:
    text = exc.one_line() if isinstance(exc, CalledProcessError) else str(exc)
    # a network failure points at --offline where the command has it and it checks something
    if exc.exit_code == ExitCode.NETWORK and "--offline" in options and offline_checks is not False:
        text += "; --offline works without the network (reads nothing remote)"
    return text


@contextlib.contextmanager
def error_handler(
    options: frozenset[str] = frozenset(), *, json_out: bool = False, usage: str = ""
) -> Iterator[CommandResult]:
    """FatalError -> code and a line, Ctrl-C -> 130, else 3; hints of `options`; `json_out`: JSON"""
    global offline_checks
    offline_checks = None  # not known until the command says
    result = CommandResult()
    message = ""
    try:
        yield result
    except FatalError as exc:
        message = _message(exc, options)
        if exc.exit_code == ExitCode.USAGE and usage:
            print(usage, end="", file=sys.stderr)
        log = trace.active()
        if log is not None and exc.exit_code != ExitCode.USAGE:
            message += f" (log of this run: {log})"
        print(f"error: {escape(message)}", file=sys.stderr)  # may quote git's stderr
        result.code = exc.exit_code
    except KeyboardInterrupt:
        message = "interrupted"
        print(message, file=sys.stderr)
        result.code = ExitCode.INTERRUPTED
    except BrokenPipeError:  # whoever read the output went away (`| head -1`): end quietly
        _drop_output()
        result.code = ExitCode.INTERRUPTED
    except Exception:  # noqa: BLE001 - the last resort: report the bug, do not hide it
        traceback.print_exc()
        message = "unexpected failure (a bug in patchcarry); traceback above"
        if trace.active() is not None:
            message += f"; log of this run: {trace.active()}"
        print(f"error: {message}", file=sys.stderr)
        result.code = ExitCode.UNEXPECTED
    if json_out and message:
        print(json.dumps({"error": message, "exit_code": int(result.code)}))


def _drop_output() -> None:
    """Point stdout and stderr at /dev/null: their reader is gone, so exiting must not raise."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        try:
            os.dup2(devnull, stream.fileno())
        except (OSError, ValueError):  # not a real file (captured): nothing left to flush
            continue
    os.close(devnull)
