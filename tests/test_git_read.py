"""A failed git read is an error with its own exit code (7), never "file absent": a guess
would report a conflict, and the drift workflow would open a false issue."""

from __future__ import annotations

import pytest

from patchcarry import git, manifest, upstream
from patchcarry.check.run import _upstream_entry
from patchcarry.errors import ExitCode, GitReadError
from testing.shared_worlds import resubmit_upstream
from testing.upstream_repos import RANDOM_PY, write_manifest


@pytest.fixture
def fetched_then_cut_off(tmp_path, tmp_path_factory):
    """Trees fetched (blob-less), then upstream becomes unreachable for lazy blob fetches.
    The upstream (#6117's head on the fixture) is the run's shared one, only read here."""
    repo = resubmit_upstream(tmp_path_factory)
    fetched = upstream.fetch(
        str(repo.bare),
        base_commits=[repo.base_commit],
        branches=["dev"],
        pulls=[6117],
        work_dir=tmp_path / "wd",
    )
    git.git("config", "remote.origin.url", (tmp_path / "gone.git").as_uri(), cwd=fetched.repo)
    return repo, fetched


def test_absent_path_is_none_but_a_failed_blob_fetch_is_an_error(fetched_then_cut_off):
    repo, fetched = fetched_then_cut_off
    assert fetched.show(repo.base_commit, "megatron/no/such/file.py") is None
    with pytest.raises(GitReadError, match=f"could not read {RANDOM_PY}") as info:
        fetched.show(repo.base_commit, RANDOM_PY)
    assert info.value.exit_code == ExitCode.NETWORK == 4  # a failed network read


def test_check_stops_instead_of_reporting_a_conflict(fetched_then_cut_off, tmp_path):
    repo, fetched = fetched_then_cut_off
    path = write_manifest(tmp_path / "m", base_commit=repo.base_commit)
    entry = manifest.load(path).select(["checkpoint-grad"])[0]
    with pytest.raises(GitReadError):
        _upstream_entry(fetched, entry)
