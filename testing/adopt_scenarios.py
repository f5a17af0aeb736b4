"""Fixtures for `adopt` and `scan --all`: closed PRs whose refs/pull/N/head are real commits in
a fixture upstream (testing/upstream_repos.py), loaded into the fake GitHub.

    pull = closed_by_detachment(state, "NVIDIA/Megatron-LM", 6117, head_sha=sha, ...)

A PR closed by detachment looks as GitHub shows #6117: closed unmerged, the close attributed
to its author, `head.repo: null` (the fork left the network). `three_commit_series()` is an
mbox of three real patches (fix, its test, and a second fix) for a PR with three commits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from testing import github_scenarios as sc
from testing.upstream_repos import FIX_0001, FIX_0003, PATCHES_DIR

if TYPE_CHECKING:
    from testing.fake_github_state import GitHubState, Pull

TEST_0002 = PATCHES_DIR / "0002-Test-that-CheckpointFunction.backward-clears-detache.patch"


def closed_by_detachment(
    state: GitHubState,
    repo: str,
    number: int,
    *,
    title: str,
    branch: str,
    head_sha: str,
    user: str = sc.OWNER,
    base: str = sc.BASE_BRANCH,
    closed_at: str = sc.CLOSED_AT,
) -> Pull:
    """A PR on `repo` from `user`'s fork, auto-closed when that fork left the network."""
    if repo not in state.repos:
        state.add_repo(repo, None, default_branch="main")
    state.add_pull(
        repo,
        number=number,
        title=title,
        user=user,
        head_ref=branch,
        head_repo=None,
        head_sha=head_sha,
        head_label=f"{user}:{branch}",
        base_ref=base,
        created_at="2026-07-20T10:00:00Z",
    )
    return state.close_pull(repo, number, actor=user, at=closed_at)


def three_commit_series() -> str:
    """An mbox of three real format-patch files: fix 0001, its test 0002, then fix 0003."""
    return "".join(p.read_text() for p in (FIX_0001, TEST_0002, FIX_0003))
