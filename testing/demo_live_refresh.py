"""A plain `resubmit` against a copy of the real state of #6339 and #6338, twice, then opted in.

    python -m testing.demo_live_refresh [--mirror PATH]

The fork's branches sit at upstream's refs/pull/6339/head and refs/pull/6338/head (read from a
local mirror of NVIDIA/Megatron-LM through git alternates: nothing is copied or fetched from
the network), the PRs are open on the loopback GitHub with hand-written bodies (#6339's real
description when /work/shared/upstream-pr-6339.txt is there), and the manifest is the one
committed here. Two plain runs leave the PRs' heads and descriptions as their author left them
(the carried commits are the PRs' own); a third with `--update-live` adds the test patches and
says whose vetting that costs. Prints each run's output and what changed on the fork and PRs.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from patchcarry import cli, git
from testing import github_scenarios as sc
from testing.demo_6117 import _environ
from testing.fake_github import FakeGitHub, GitHubState
from testing.upstream_repos import write_manifest

MIRROR = Path("/work/.mirror/NVIDIA+Megatron-LM/repo")
BODY_6339 = Path("/work/shared/upstream-pr-6339.txt")
BASE = "c76ff610bfa064d4af3035daa594d8c41ca7fce6"


def _fork_from_mirror(mirror: Path, dest: Path) -> None:
    git.git("init", "-q", "--bare", str(dest), cwd=dest.parent)
    (dest / "objects" / "info" / "alternates").write_text(str(mirror / "objects") + "\n")
    for number, branch in ((6339, sc.CHECKPOINT_BRANCH), (6338, sc.HC_BRANCH)):
        sha = git.rev_parse(f"refs/pull/{number}/head", cwd=mirror)
        git.git("update-ref", f"refs/heads/{branch}", sha, cwd=dest)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", type=Path, default=MIRROR)
    args = parser.parse_args(argv)
    mirror = args.mirror.resolve()
    body_6339 = BODY_6339.read_text() if BODY_6339.is_file() else "Hand-written description.\n"
    with tempfile.TemporaryDirectory(prefix="demo-live-") as tmp_name:
        tmp = Path(tmp_name)
        fork_git = tmp / "fork.git"
        _fork_from_mirror(mirror, fork_git)
        series = write_manifest(tmp, base_commit=BASE)
        (tmp / "forks").mkdir()
        with FakeGitHub(GitHubState(fork_storage=tmp / "forks")) as gh:
            sc.detached_fork_close(gh.state, mirror, fork_git)
            # the token docs/operations.md asks for, at its least: a plain refresh needs no more
            gh.state.add_token(sc.TOKEN, sc.OWNER, scopes=("public_repo",))
            for number, title, branch, body in (
                (6339, sc.CHECKPOINT_TITLE, sc.CHECKPOINT_BRANCH, body_6339),
                (6338, sc.HC_TITLE, sc.HC_BRANCH, "Hand-written description of #6338.\n"),
            ):
                gh.state.add_pull(sc.UPSTREAM, number=number, title=title, user=sc.OWNER,
                                  head_ref=branch, head_repo=sc.NEW_FORK, base_ref="dev",
                                  body=body)  # fmt: skip
            before = {n: gh.state.pulls[(sc.UPSTREAM, n)].body for n in (6339, 6338)}
            heads = {b: git.rev_parse(f"refs/heads/{b}", cwd=fork_git)
                     for b in (sc.CHECKPOINT_BRANCH, sc.HC_BRANCH)}  # fmt: skip
            env = {"GH_HOST": gh.url, "GITHUB_TOKEN": sc.TOKEN, "XDG_CACHE_HOME": str(tmp / "c")}
            codes = []
            with _environ(env):
                for label, extra in (
                    ("first run", []),
                    ("second run", []),
                    ("opted in", ["--update-live"]),
                ):
                    print(f"$ resubmit {' '.join(extra)}  # {label}".replace("  ", " ", 1),
                          flush=True)  # fmt: skip
                    codes.append(cli.main(["resubmit", *extra, "--manifest", str(series)]))
                    sys.stdout.flush()
            kept = all(
                git.git("merge-base", "--is-ancestor", sha, f"refs/heads/{b}", cwd=fork_git,
                        check=False)[0] == 0
                for b, sha in heads.items()
            )  # fmt: skip
            bodies_kept = all(
                (gh.state.pulls[(sc.UPSTREAM, n)].body or "").startswith(before[n]) for n in before
            )
            for branch, old in heads.items():
                new = git.rev_parse(f"refs/heads/{branch}", cwd=fork_git)
                _, stat, _ = git.git("diff", "--stat=100", old, new, cwd=fork_git)
                print(f"{branch}: {old[:12]} -> {new[:12]}")
                print("\n".join(f"  {line.strip()}" for line in stat.splitlines()))
            print(f"(every earlier commit still on its branch: {kept}; hand-written bodies "
                  f"kept: {bodies_kept}; write calls: {len(gh.writes())})")  # fmt: skip
    return max(codes)


if __name__ == "__main__":
    raise SystemExit(main())
