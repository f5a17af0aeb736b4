"""The pull request bodies a maintainer reads, both entries, as the real `resubmit` writes
them on a loopback GitHub over a local mirror of NVIDIA/Megatron-LM (its real history, its real
PR template on `main`):

    python -m testing.demo_bodies --mirror PATH

1. #6117's and #6017's situation (closed by fork detachment, an attached fork, no PR yet): the
   new PRs' bodies, one per entry. 2. #6339 and #6338 open at their real heads: #6339 with its
   real hand-written description (testing/pr_6339_description.txt), #6338 with the description
   GitHub fills in for a one-commit PR (its commit message); `resubmit --update-live`, then each
   body and its revision comment. Every run is given this repository's committed evidence
   (`--evidence evidence/hc-gpt-cpu.json`). Prints the bodies and the comments as written.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import tempfile
from pathlib import Path

from patchcarry import cli, manifest
from patchcarry.install import CHECKOUT
from patchcarry.measure import impact
from testing import github_scenarios as sc
from testing import pr_bodies
from testing.demo_6117 import _environ
from testing.demo_live_refresh import MIRROR, _fork_from_mirror
from testing.fake_github import FakeGitHub, GitHubState
from testing.upstream_repos import write_manifest

ENTRIES = ("checkpoint-grad", "hc-mlp-norm-manager")
EVIDENCE = CHECKOUT / "evidence" / impact.CPU_EVIDENCE


def _resubmit(series: Path, *args: str) -> int:
    """The real command; its plan is in docs/resubmit-demo.md, so only its exit code here."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return cli.main(["resubmit", "--evidence", str(EVIDENCE), "--manifest", str(series),
                         *args, *ENTRIES])  # fmt: skip


def new_pr(mirror: Path, tmp: Path) -> str:
    fork_git = tmp / "fork.git"
    sc.fork_as_github_makes_it(mirror, fork_git)  # its history, as GitHub's fork holds it
    base = manifest.load().entries[0].base_commit
    unrecorded = {e.name: {"pr": None} for e in manifest.load().entries}
    series = write_manifest(tmp, base_commit=base, overrides=unrecorded)
    (tmp / "forks").mkdir()
    with FakeGitHub(GitHubState(fork_storage=tmp / "forks")) as gh:
        sc.detached_fork_close(gh.state, mirror, fork_git, new_fork="attached")
        env = {"GH_HOST": gh.url, "GITHUB_TOKEN": sc.TOKEN, "XDG_CACHE_HOME": str(tmp / "c")}
        with _environ(env):
            code = _resubmit(series)
        opened = [p for p in gh.state.pulls.values() if p.state == "open"]
        shown = []
        for name, branch in zip(ENTRIES, (sc.CHECKPOINT_BRANCH, sc.HC_BRANCH), strict=True):
            (pull,) = [p for p in opened if p.head_label.endswith(branch)]
            shown.append(f"$ resubmit {name}  # exit {code}: PR #{pull.number} opened, its "
                         f"body:\n\n{pull.body.rstrip()}")  # fmt: skip
        return "\n\n".join(shown)


def update_live(mirror: Path, tmp: Path) -> str:
    fork_git = tmp / "fork.git"
    _fork_from_mirror(mirror, fork_git)
    series = write_manifest(tmp, base_commit=manifest.load().entries[0].base_commit)
    hc = next(e for e in manifest.load().entries if e.name == ENTRIES[1])
    (tmp / "forks").mkdir()
    with FakeGitHub(GitHubState(fork_storage=tmp / "forks")) as gh:
        sc.detached_fork_close(gh.state, mirror, fork_git)
        for number, title, branch, body in (
            (6339, sc.CHECKPOINT_TITLE, sc.CHECKPOINT_BRANCH, pr_bodies.REAL_6339),
            (6338, sc.HC_TITLE, sc.HC_BRANCH, hc.fix.message),
        ):
            gh.state.add_pull(sc.UPSTREAM, number=number, title=title, user=sc.OWNER,
                              head_ref=branch, head_repo=sc.NEW_FORK, base_ref="dev",
                              body=body)  # fmt: skip
        env = {"GH_HOST": gh.url, "GITHUB_TOKEN": sc.TOKEN, "XDG_CACHE_HOME": str(tmp / "c")}
        with _environ(env):
            code = _resubmit(series, "--update-live")
        shown = []
        for name, number in zip(ENTRIES, (6339, 6338), strict=True):
            body = gh.state.pulls[(sc.UPSTREAM, number)].body
            comments = [c.body for c in gh.state.comments if c.issue == number]
            shown.append(
                f"$ resubmit --update-live {name}  # exit {code}: #{number}'s body:\n\n"
                f"{body.rstrip()}\n\n#{number}'s new comment:\n\n" + "\n\n".join(comments)
            )
        return "\n\n".join(shown)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", type=Path, default=MIRROR)
    args = parser.parse_args(argv)
    mirror = args.mirror.resolve()
    for make in (new_pr, update_live):
        with tempfile.TemporaryDirectory(prefix="demo-bodies-") as tmp:
            print(make(mirror, Path(tmp)).rstrip() + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
