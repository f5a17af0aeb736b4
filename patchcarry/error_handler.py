"""Maps exceptions around a command's dispatch to exit codes."""

from __future__ import annotations

import contextlib
import sys
import traceback
from collections.abc import Iterator

from patchcarry.display import escape
from patchcarry.errors import ExitCode, FatalError


class CommandResult:
    """Holds the exit code chosen by `error_handler`."""

    code: int = ExitCode.OK


@contextlib.contextmanager
def error_handler() -> Iterator[CommandResult]:
    """FatalError -> its code and a one-line message; Ctrl-C -> 130; anything else -> 3."""
    result = CommandResult()
    try:
        yield result
    except FatalError as exc:
        print(f"error: {escape(str(exc))}", file=sys.stderr)  # may quote git's stderr
        result.code = exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        result.code = ExitCode.INTERRUPTED
    except Exception:  # noqa: BLE001 - the last resort: report the bug, do not hide it
        traceback.print_exc()
        print("error: unexpected failure (a bug in patchcarry); traceback above", file=sys.stderr)
        result.code = ExitCode.UNEXPECTED
