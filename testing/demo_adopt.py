"""From nothing carried to two re-submitted PRs: `adopt` twice, then `resubmit`, on a loopback
GitHub that holds #6117's and #6017's situation.

    python -m testing.demo_adopt [--upstream-git PATH]

The fake GitHub has #6117 and #6017 closed by fork detachment (same second, by the fork owner,
`head.repo: null`) and an attached fork htesd/Megatron-LM-oss; the manifest starts with no
entry. The upstream git repository is a fixture built in a temp dir (#6117's head = one fix
commit; #6017's head = the fix with `dev` merged into it, like the real 6a1b608), or
`--upstream-git` (e.g. the local mirror of NVIDIA/Megatron-LM, with the real refs/pull/N/head).
Runs the real commands and prints their output, then checks each adopted patch's
`git patch-id --verbatim` against its PR head's change and shows the server's pull requests.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from patchcarry import cli, git, manifest
from testing import github_scenarios as sc
from testing.demo_6117 import SYNTHETIC, _environ, as_patchcarry, loopback_pace
from testing.fake_github import FakeGitHub, GitHubState
from testing.upstream_repos import FIX_0001, FIX_0003, make_upstream

EMPTY_MANIFEST = f"""# What this checkout carries upstream: nothing yet.
[defaults]
upstream = "{sc.UPSTREAM}"
fork = "{sc.NEW_FORK}"
include_tests = true
"""


def _run(*args: str) -> int:
    print(f"\n$ patchcarry {' '.join(args)}", flush=True)
    code = cli.main(list(args))
    sys.stdout.flush()
    print(f"[exit {code}]", flush=True)
    return code


def _head_change(repo: Path, head: str) -> str:
    """The PR head's own change: against the parent with the fewest changed files (for a
    merge of the base branch into the PR, that is the merged base; `check` does the same)."""
    parents = git.commit_parents(head, cwd=repo)
    parent = min(parents, key=lambda p: len(git.changed_paths(p, head, cwd=repo)))
    return git.diff_paths(parent, head, git.changed_paths(parent, head, cwd=repo), cwd=repo)


def _patch_ids(series: Path, upstream_git: Path) -> list[str]:
    lines = []
    for entry in manifest.load(series).entries:
        (number,) = entry.supersedes
        head = git.rev_parse(f"refs/pull/{number}/head", cwd=upstream_git)
        theirs = git.patch_id(_head_change(upstream_git, head), cwd=upstream_git)
        ours = git.patch_id(entry.fix.text, cwd=upstream_git)
        verdict = "equal" if ours == theirs and ours else "DIFFERENT"
        lines.append(
            f"{entry.name}: {entry.fix.name} patch-id {str(ours)[:12]}; "
            f"#{number} head {head[:12]} patch-id {str(theirs)[:12]}: {verdict}"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=os.environ.pop("PATCHCARRY_PROG", None), description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--upstream-git", type=Path, help="upstream repository to fetch from")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="demo-adopt-") as tmp_name:
        tmp = Path(tmp_name)
        heads: dict[int, str] = {}
        if args.upstream_git:
            upstream_git = args.upstream_git.resolve()
        else:
            fixture = make_upstream(tmp / "upstream")
            heads[6117] = fixture.add_pull_head(6117, FIX_0001)
            heads[6017] = fixture.add_pull_head(6017, FIX_0003, merge_dev=True)
            upstream_git = fixture.bare
            print(SYNTHETIC.format(base=fixture.base_commit[:7]), flush=True)
        fork_git = tmp / "fork.git"
        if args.upstream_git:  # a large upstream: its fork holds its history, as on GitHub
            sc.fork_as_github_makes_it(upstream_git, fork_git)
        else:
            git.git("init", "-q", "--bare", str(fork_git), cwd=tmp)
        (tmp / "patches").mkdir()
        series = Path("patches/series.toml")
        (tmp / series).write_text(EMPTY_MANIFEST)
        (tmp / "forks").mkdir()
        with FakeGitHub(GitHubState(fork_storage=tmp / "forks")) as gh:
            sc.detached_fork_close(gh.state, upstream_git, fork_git, new_fork="attached")
            for number, head in heads.items():  # the fixture's heads stand in for the real ones
                gh.state.pulls[(sc.UPSTREAM, number)].head_sha = head
            env = {"GH_HOST": gh.url, "GITHUB_TOKEN": sc.TOKEN, "XDG_CACHE_HOME": str(tmp / "c")}
            cwd = Path.cwd()
            os.chdir(tmp)
            try:
                with _environ(env), as_patchcarry(), loopback_pace():
                    codes = [
                        _run("adopt", f"{sc.UPSTREAM}#6117", "--manifest", str(series)),
                        _run("adopt", f"{sc.UPSTREAM}#6017", "--manifest", str(series)),
                        _run("resubmit", "--manifest", str(series)),
                    ]
                print(f"\n$ cat {series}")
                print(series.read_text(), end="")
                print("\npatch-id check (adopted patch vs the PR head's change):")
                print("\n".join(_patch_ids(series, upstream_git)))
            finally:
                os.chdir(cwd)
            print("\npull requests on the loopback GitHub now:")
            print(gh.state.dump())
    return max(codes)


if __name__ == "__main__":
    raise SystemExit(main())
