"""#6117's situation on a loopback GitHub, and `resubmit --dry-run` against it.

    python -m testing.demo_6117 [--upstream-git PATH]

Loads the fake GitHub with #6117 and #6017 closed by fork detachment (same second, by the
fork owner, `head.repo: null`) and an attached fork htesd/Megatron-LM-oss, then runs the real
`resubmit --dry-run` against it: the plan a maintainer reads. The upstream git repository is
a fixture built in a temp dir, or `--upstream-git` (e.g. a local mirror of NVIDIA/Megatron-LM,
which has the real refs/pull/N/head). Prints how many write calls the server saw (zero).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from patchcarry import cli, git, manifest
from testing import github_scenarios as sc
from testing.fake_github import FakeGitHub, GitHubState
from testing.upstream_repos import FIX_0001, FIX_0003, make_upstream, write_manifest

# Said first when no --upstream-git is given: the world below is a stand-in, and its base
# and checks are not the ones docs/resubmit-demo.md shows (that is a Megatron-LM mirror).
SYNTHETIC = (
    "SYNTHETIC WORLD: a loopback GitHub and a small fixture upstream built here (base {base}, "
    "not Megatron-LM's); --upstream-git PATH (a Megatron-LM mirror) runs it on the real history"
)


@contextlib.contextmanager
def _environ(values: dict[str, str]) -> Iterator[None]:
    """Set environment variables for the block, then restore what was there."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, old in saved.items():
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old


@contextlib.contextmanager
def loopback_pace() -> Iterator[None]:
    """No pause between the block's API writes: the loopback GitHub has no secondary rate
    limit to spare (github.GitHub.WRITE_SPACING is for the real one), and a demo that waits
    only costs its reader (and the tests that run it) seconds."""
    from patchcarry.github import GitHub

    saved = GitHub.WRITE_SPACING
    GitHub.WRITE_SPACING = 0.0
    try:
        yield
    finally:
        GitHub.WRITE_SPACING = saved


@contextlib.contextmanager
def as_patchcarry() -> Iterator[None]:
    """Run the block as the installed `patchcarry` command runs (sys.argv[0]): the hints it
    prints then name `patchcarry NAME`, as the `$ patchcarry ...` lines of the demo do."""
    saved = sys.argv[:]
    sys.argv[:] = ["patchcarry"]
    try:
        yield
    finally:
        sys.argv[:] = saved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=os.environ.pop("PATCHCARRY_PROG", None), description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--upstream-git", type=Path, help="upstream repository to fetch from")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="demo-6117-") as tmp_name:
        tmp = Path(tmp_name)
        if args.upstream_git:
            upstream_git = args.upstream_git.resolve()
            base = manifest.load().entries[0].base_commit
        else:
            fixture = make_upstream(tmp / "upstream")
            fixture.add_pull_head(6117, FIX_0001)
            fixture.add_pull_head(6017, FIX_0003)
            upstream_git, base = fixture.bare, fixture.base_commit
            print(SYNTHETIC.format(base=base[:7]), flush=True)
        fork_git = tmp / "fork.git"
        if args.upstream_git:  # a large upstream: its fork holds its history, as on GitHub
            sc.fork_as_github_makes_it(upstream_git, fork_git)
        else:
            git.git("init", "-q", "--bare", str(fork_git), cwd=tmp)
        pr_unrecorded = {"pr": None}
        series = write_manifest(
            tmp,
            base_commit=base,
            overrides={e.name: pr_unrecorded for e in manifest.load().entries},
        )
        (tmp / "forks").mkdir()
        with FakeGitHub(GitHubState(fork_storage=tmp / "forks")) as gh:
            sc.detached_fork_close(gh.state, upstream_git, fork_git, new_fork="attached")
            env = {"GH_HOST": gh.url, "GITHUB_TOKEN": sc.TOKEN, "XDG_CACHE_HOME": str(tmp / "c")}
            with _environ(env):
                code = cli.main(["resubmit", "--dry-run", "--manifest", str(series)])
            print(f"(write calls seen by the loopback server: {len(gh.writes())})", file=sys.stderr)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
