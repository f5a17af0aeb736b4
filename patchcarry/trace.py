"""The log of the last run: each git command and GitHub request; never a token, header or body."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from patchcarry import hosts, tokens

_path: Path | None = None


def log_path() -> Path:
    """Where the last run's log is: under the tool's cache directory."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "patchcarry" / "last-run.log"


def active() -> Path | None:
    """The log this run writes, None before `start` (or when it could not be made)."""
    return _path


def start(argv: Sequence[str]) -> None:
    """Begin a new log for this run (the previous run's is replaced)."""
    global _path
    from patchcarry import __version__

    path = log_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"patchcarry {__version__}: {' '.join(_words(argv))}\n")
    except OSError:
        _path = None
        return
    _path = path


def stop() -> None:
    """No more records (a test running commands in one process starts each anew)."""
    global _path
    _path = None


def _words(argv: Sequence[str]) -> list[str]:
    """argv as it may be logged: URLs without credentials, git's `-c` values that set a
    credential helper elided (the helper reads the token from its environment, never argv)."""
    words, hide_next = [], False
    for word in map(str, argv):
        if hide_next and "credential" in word:
            word = word.split("=", 1)[0] + "=…"
        hide_next = word == "-c"
        words.append(hosts.redact_url(word) if "://" in word else word)
    return words


def _write(text: str) -> None:
    if _path is None:
        return
    for name in tokens.ALL:
        secret = os.environ.get(name)
        if secret:
            text = text.replace(secret, "***")
    try:
        with _path.open("a") as log:
            log.write(f"{time.strftime('%H:%M:%S')} {text}\n")
    except OSError:
        pass


def command(cmd: Sequence[str], code: int | None) -> None:
    """A child process that ran (`code` None: killed after its timeout)."""
    said = "timed out" if code is None else f"exit {code}"
    _write(f"run  {' '.join(_words(cmd))} -> {said}")


def remembered(cmd: Sequence[str], code: int) -> None:
    """A git answer this run used that git gave earlier in this process (`git.pure`): not run
    again; logged once a run, so the log still shows every answer the run relied on."""
    _write(f"run  {' '.join(_words(cmd))} -> exit {code} (remembered: not run again)")


def response(answer: Any) -> None:
    """An HTTP answer (an httpx response hook): its request's method and path, its status."""
    request = answer.request
    path = request.url.raw_path.decode("ascii", "replace")
    _write(f"http {request.method} {path} -> {answer.status_code}")


def no_answer(label: str, why: str) -> None:
    """An HTTP request (`label`: "GET /path") that got no answer (refused, reset, timed out)."""
    _write(f"http {label} -> no answer ({why})")
