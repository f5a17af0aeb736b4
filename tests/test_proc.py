"""patchcarry.proc, the one subprocess door: what its failures are, as types callers test."""

from __future__ import annotations

import sys

import pytest

from patchcarry import proc


def test_a_command_past_its_timeout_is_timed_out_a_type_not_a_phrase(tmp_path) -> None:
    """The audit tells a timeout from other failures by this type (not by the words "timed
    out" in the message, which stays as it was)."""
    sleeper = (sys.executable, "-c", "import time; time.sleep(30)")
    with pytest.raises(proc.TimedOut, match=r"^command timed out after 0\.2 s: "):
        proc.cmd_output(*sleeper, cwd=tmp_path, timeout=0.2)
