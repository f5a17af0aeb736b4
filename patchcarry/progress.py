"""Phase lines on stderr for slow steps, on a terminal only and never with --json (`quiet`)."""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator

quiet = False


def say(text: str) -> None:
    """One phase line on stderr, when a person is watching it."""
    if not quiet and sys.stderr.isatty():
        print(text, file=sys.stderr, flush=True)


def waiting(text: str) -> None:
    """A line while the run waits on someone else (a silent wait looks hung); not with --json."""
    if not quiet:
        print(text, file=sys.stderr, flush=True)


@contextlib.contextmanager
def unless_done_within(seconds: float, text: str) -> Iterator[None]:
    """`waiting(text)` once, if what runs inside has not ended after `seconds`."""
    timer = threading.Timer(seconds, waiting, [text])
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
