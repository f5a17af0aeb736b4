"""Waiting for a fork GitHub is still creating: bounded, doubling back-off.

GitHub creates forks asynchronously ("you may have to wait a short period before you can
access the git objects"; its documentation says to contact support when a fork takes longer
than five minutes). The new fork may 404 on the API, then refuse git for a while; one budget
(default five minutes, `--fork-wait`) covers both, counted in the sleeps asked for."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

FORK_WAIT = 300.0  # seconds: GitHub's "contact support after five minutes"


@dataclasses.dataclass
class Backoff:
    budget: float = FORK_WAIT
    sleep: Callable[[float], None] = time.sleep
    first: float = 1.0
    cap: float = 30.0
    spent: float = 0.0
    progress: Callable[[str], None] | None = None  # one line before each sleep (stderr)
    what: str = "the new fork"
    _tries: int = dataclasses.field(default=0, init=False)

    def wait(self) -> bool:
        """Sleep the next step (first, doubling, at most `cap`, never past the budget);
        False, without sleeping, once the budget is spent. Each step says so first: a new
        fork can take minutes, and a silent wait looks like a hang."""
        left = self.budget - self.spent
        if left <= 0:
            return False
        step = min(self.first * 2**self._tries, self.cap, left)
        if self.progress is not None:
            self.progress(
                f"waiting for {self.what} (GitHub creates forks asynchronously): next try in "
                f"{step:.0f} s, {self.spent:.0f} of {self.budget:.0f} s waited (--fork-wait)"
            )
        self._tries += 1
        self.spent += step
        self.sleep(step)
        return True
