"""Phase lines on stderr for the steps that can take more than a few seconds (fetching from
upstream): shown on a terminal, as git shows its own progress there, and never with --json
(the command line sets `quiet`), so that captured output stays what it was."""

from __future__ import annotations

import sys

quiet = False


def say(text: str) -> None:
    """One phase line on stderr, when a person is watching it."""
    if not quiet and sys.stderr.isatty():
        print(text, file=sys.stderr, flush=True)
