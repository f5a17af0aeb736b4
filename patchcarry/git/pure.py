"""git's answers that are pure functions of the question: bytes on stdin (a patch, a message, a
diff), a branch name's spelling, objects named by full hashes (immutable content). Each is asked
once per process and remembered by its content (the sha256 of the bytes, the words git was
given), never by a path, a ref name or a repository's state: a manifest load re-read every patch
with four gits, and a test process asked the same names and diffs thousands of times.

A run's log still shows each answer the run used: the first use in a run of an answer git gave
earlier is logged as remembered (`trace.remembered`), with git's words and exit code."""

from __future__ import annotations

import hashlib
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar, cast

from patchcarry import trace

T = TypeVar("T")
Question = tuple[str, ...]

# Bounds for a long process (a test worker): the largest patch the tool reads is 8 MiB.
MAX_HELD_BYTES = 64 * 1024 * 1024
MAX_ONE_BYTES = 8 * 1024 * 1024 + 4096

_FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")

_answers: OrderedDict[Question, tuple[int, object, int]] = OrderedDict()  # (code, value, size)
_held = 0
_shown: set[Question] = set()  # remembered answers this run's log has shown


def full_shas(*revs: str) -> bool:
    """Whether every rev is a full object id (immutable content), not a ref, range or prefix."""
    return all(_FULL_SHA.fullmatch(rev) for rev in revs)


def question(words: Sequence[str], stdin: bytes | None = None) -> Question:
    """The key of git `words` given `stdin`: the words, then the sha256 of the bytes."""
    digest = () if stdin is None else (f"<stdin sha256:{hashlib.sha256(stdin).hexdigest()}>",)
    return (*words, *digest)


def answer(asked: Question, ask: Callable[[], tuple[int, T]]) -> T:
    """`ask()`'s value (it returns git's exit code and the value read from git's answer), run
    at most once per process for `asked`; a question that raises is not remembered."""
    return answers([asked], lambda missing: [ask()])[0]


def answers(asked: Sequence[Question], ask: Callable[[list[int]], list[tuple[int, T]]]) -> list[T]:
    """Each question's value, `ask` called (once, by one git) only for the indices of those not
    answered before, with (exit code, value) for each in that order."""
    found: dict[int, T] = {}
    for i, one in enumerate(asked):
        if one in _answers:
            _answers.move_to_end(one)
            code, value, _ = _answers[one]
            found[i] = cast(T, value)
            if one not in _shown:
                _shown.add(one)
                trace.remembered(["git", *one], code)
    missing = [i for i in range(len(asked)) if i not in found]
    for i, (code, value) in zip(missing, ask(missing) if missing else [], strict=True):
        found[i] = value
        _keep(asked[i], code, value)
    return [found[i] for i in range(len(asked))]


def _keep(asked: Question, code: int, value: object) -> None:
    """Remember an answer git just gave (within the bounds; the oldest go first)."""
    global _held
    _shown.add(asked)
    size = _size(value) + sum(map(len, asked))
    if size > MAX_ONE_BYTES or asked in _answers:
        return
    _answers[asked] = (code, value, size)
    _held += size
    while _held > MAX_HELD_BYTES:
        _, (_, _, dropped) = _answers.popitem(last=False)
        _held -= dropped


def forget_shown() -> None:
    """A new run: its log shows each remembered answer again once (`git.forget_run_memos`)."""
    _shown.clear()


def _size(value: object) -> int:
    """About how many bytes `value` holds (bytes and text counted; containers walked)."""
    if isinstance(value, bytes | str):
        return len(value)
    if isinstance(value, dict):
        return sum(_size(k) + _size(v) for k, v in value.items())
    if isinstance(value, Iterable):
        return sum(_size(item) for item in value) + 8
    return 8
