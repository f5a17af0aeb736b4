"""patchcarry.proc, the one subprocess door: what its failures are, as types callers test."""

from __future__ import annotations

import os
import sys
import time

import pytest

from patchcarry import proc


def test_a_command_past_its_timeout_is_timed_out_a_type_not_a_phrase(tmp_path) -> None:
    """The audit tells a timeout from other failures by this type (not by the words "timed
    out" in the message, which stays as it was)."""
    sleeper = (sys.executable, "-c", "import time; time.sleep(30)")
    with pytest.raises(proc.TimedOut, match=r"^command timed out after 0\.2 s: "):
        proc.cmd_output(*sleeper, cwd=tmp_path, timeout=0.2)


# A child that starts `helpers` sleepers in its own process group (as git starts
# git-remote-https), writes their pids to argv[1], closes its pipes (so the door waits on
# its exit, not on its output) and then sleeps, or exits with argv[3] after argv[2] s.
_PARENT = """
import os, subprocess, sys, time
with open(sys.argv[1], "w") as pids:
    for _ in range(int(sys.argv[4])):
        helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        pids.write(f"{helper.pid} "); pids.flush()
os.close(1); os.close(2)
time.sleep(float(sys.argv[2]))
sys.exit(int(sys.argv[3]))
"""


def _gone(pid: int) -> bool:
    """True once `pid` is dead (gone, or a zombie left for its new parent to reap)."""
    for _ in range(200):
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                if stat.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def _run(tmp_path, *, sleep_s: float, code: int = 0, helpers: int = 1, **bounds):
    pids = tmp_path / "pids"
    argv = (sys.executable, "-c", _PARENT, str(pids), str(sleep_s), str(code), str(helpers))
    try:
        return proc.cmd_output_bounded(*argv, cwd=tmp_path, env={}, max_output=1 << 16, **bounds)
    finally:
        started = [int(p) for p in pids.read_text().split()] if pids.exists() else []
        assert all(_gone(pid) for pid in started), "a helper outlived the door"


def test_a_bounded_command_past_its_deadline_is_killed_with_its_whole_process_group(tmp_path):
    """The deadline met while waiting on its exit: the child and the helpers it started in
    its group are killed (a lone kill of the child would leave them running)."""
    with pytest.raises(proc.OutOfBounds, match=r"still running after 1 s"):
        _run(tmp_path, sleep_s=60, deadline_s=1)
    assert len((tmp_path / "pids").read_text().split()) == 1  # started before the deadline


def test_a_bounded_command_that_exits_gives_its_code_and_leaves_no_descriptor_open(tmp_path):
    """Its exit is seen (a pidfd on Linux) and its code returned; the pidfd is closed."""
    before = len(os.listdir("/proc/self/fd"))
    code, out, err = _run(tmp_path, sleep_s=0.1, code=3, helpers=0, deadline_s=30)
    assert (code, out, err) == (3, b"", b"")
    assert len(os.listdir("/proc/self/fd")) == before


def test_a_bounded_command_past_its_process_count_is_killed_with_its_group(tmp_path):
    """Its group counted from /proc: more processes than allowed stops it, helpers too."""
    with pytest.raises(proc.OutOfBounds, match="started more than 2 processes"):
        _run(tmp_path, sleep_s=60, helpers=3, deadline_s=30, max_processes=2)


def test_the_group_count_asks_the_callers_watch_when_within_its_bounds(tmp_path):
    """The caller's own `watch` is still asked behind the process count: its reason stops it."""
    with pytest.raises(proc.OutOfBounds, match="the caller's reason"):
        _run(tmp_path, sleep_s=60, deadline_s=30, max_processes=50,
             watch=lambda: "the caller's reason")  # fmt: skip
