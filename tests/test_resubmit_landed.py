"""resubmit never pushes a fix that has landed upstream, and says so (loopback GitHub, real git)."""

from __future__ import annotations

from patchcarry import git
from testing.upstream_repos import FIX_0001, PATCHES_DIR, PINNED_ENV
from tests.test_resubmit import ENTRY, template_upstream, world  # noqa: F401 (fixtures)

TEST_0002 = PATCHES_DIR / "0002-Test-that-CheckpointFunction.backward-clears-detache.patch"


def _land(work, dev_tip: str) -> None:
    git.git("checkout", "-q", "-B", "dev", dev_tip, cwd=work)
    for patch in (FIX_0001, TEST_0002):
        git.git("apply", str(patch), cwd=work)
    git.git("add", "-A", cwd=work)
    message = "Fix checkpoint grad retention (#6339)"
    git.git("commit", "-q", "-m", message, cwd=work, env_extra=PINNED_ENV)
    git.git("push", "-q", "origin", "HEAD:refs/heads/dev", cwd=work)


def test_landed_fix_is_not_pushed_and_the_plan_says_so(world, capsys):  # noqa: F811
    w = world()
    _land(w.upstream.work, w.upstream.dev_tip)
    assert w.run(ENTRY) == 0
    out = capsys.readouterr().out
    assert w.writes() == []
    assert w.fork_branch() is None
    assert "landed upstream as" in out and "(PR #6339)" in out and "nothing is pushed" in out
    assert "scripts/retire checkpoint-grad" in out
