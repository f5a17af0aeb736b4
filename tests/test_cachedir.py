"""The check's cache: only a directory this tool made or an empty one, one run at a time,
and git lock files a killed run left behind are recovered."""

from __future__ import annotations

import fcntl
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from patchcarry import cachedir, cli, git, proc
from patchcarry import upstream as upstream_mod
from patchcarry.errors import NetworkError
from testing.upstream_repos import FIX_0001, FIX_0003, UpstreamRepo, make_upstream, write_manifest


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> UpstreamRepo:
    repo = make_upstream(tmp_path_factory.mktemp("upstream"))
    repo.add_pull_head(6117, FIX_0001)
    repo.add_pull_head(6017, FIX_0003)
    return repo


def _check(upstream: UpstreamRepo, tmp_path: Path, work_dir: Path, *entries: str) -> int:
    manifest = write_manifest(tmp_path / "m", base_commit=upstream.base_commit)
    argv = ["check", "--manifest", str(manifest), "--upstream", str(upstream.bare)]
    return cli.main([*argv, "--work-dir", str(work_dir), *entries])


def _snapshot(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*") if p.is_file()}


def test_work_dir_that_is_someone_elses_checkout_is_refused_untouched(upstream, tmp_path, capsys):
    checkout = tmp_path / "checkout"
    git.init(checkout)
    (checkout / "file.txt").write_text("mine\n")
    before = _snapshot(checkout)
    assert _check(upstream, tmp_path, checkout) == 5
    assert "was not created by patchcarry" in capsys.readouterr().err
    assert _snapshot(checkout) == before


def test_new_or_empty_work_dir_is_claimed_and_reused(upstream, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _check(upstream, tmp_path, empty) == 0
    assert (empty / cachedir.MARKER).is_file()
    assert _check(upstream, tmp_path, empty) == 0
    assert _check(upstream, tmp_path, tmp_path / "new" / "cache") == 0


def test_stale_git_lock_of_a_killed_run_is_recovered(upstream, tmp_path, capsys):
    work_dir = tmp_path / "wd"
    assert _check(upstream, tmp_path, work_dir, "checkpoint-grad") == 0
    (work_dir / "shallow.lock").write_text("")  # a fetch killed mid-way leaves this
    assert _check(upstream, tmp_path, work_dir, "hc-mlp-norm-manager") == 0  # fetches #6017
    assert "removed shallow.lock left by an interrupted run" in capsys.readouterr().err
    assert not (work_dir / "shallow.lock").exists()


def test_a_second_run_waits_for_the_lock_instead_of_colliding(upstream, tmp_path, capsys):
    work_dir = tmp_path / "wd"
    cachedir.claim(work_dir)
    fd = os.open(work_dir / cachedir.LOCK, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another run holds the cache
    codes: list[int] = []
    worker = threading.Thread(target=lambda: codes.append(_check(upstream, tmp_path, work_dir)))
    worker.start()
    seen = ""
    for _ in range(1200):  # bounded: until the run says it waits (not a timing assertion)
        seen += capsys.readouterr().err
        if "waiting for another patchcarry run" in seen or not worker.is_alive():
            break
        time.sleep(0.05)
    assert "waiting for another patchcarry run" in seen
    assert worker.is_alive() and not (work_dir / "HEAD").exists()  # nothing done while waiting
    os.close(fd)
    worker.join()
    assert codes == [0]


def test_cache_config_bounds_lazy_fetches(upstream, tmp_path):
    work_dir = tmp_path / "wd"
    assert _check(upstream, tmp_path, work_dir, "checkpoint-grad") == 0
    _, out, _ = git.git("config", "http.lowSpeedLimit", cwd=work_dir)
    assert int(out) > 0
    assert "http.lowSpeedTime=60" in git.credential_args("github.com")


_SECOND_RUN = """
import sys
from pathlib import Path
from patchcarry import upstream
with upstream.claimed(sys.argv[1], Path(sys.argv[2])) as chosen:
    (chosen / "second-run-was-here").write_text("yes")
"""


def test_a_run_waiting_on_a_new_cache_its_maker_removes_claims_it_anew(tmp_path: Path) -> None:
    """Two runs on a new cache: the first one's network read fails, so it removes the cache it
    made; the second, waiting for its lock, works in the directory anew (it got exit 3,
    FileNotFoundError, when the lock was let go before the directory was removed)."""
    work, url = tmp_path / "cache", "file:///nowhere/upstream.git"
    with pytest.raises(NetworkError), upstream_mod.claimed(url, work):
        second = subprocess.Popen(
            [*proc.PYTHON, "-c", _SECOND_RUN, url, str(work)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert second.stderr is not None
        assert "waiting for another patchcarry run" in second.stderr.readline()
        raise NetworkError("upstream is unreachable")
    _, err = second.communicate(timeout=120)
    assert second.returncode == 0, err
    assert (work / "second-run-was-here").is_file() and (work / cachedir.MARKER).is_file()
