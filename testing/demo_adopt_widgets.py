"""A detached PR on an upstream that is not Megatron-LM, carried with no hand edit of the
manifest: `scan --all`, the `adopt` command it prints, `check`, `resubmit` (twice), then a
maintainer's merge of `main` into the new branch and one more `resubmit`.

    python -m testing.demo_adopt_widgets

The loopback GitHub holds acme/widgets (testing/widgets.py: default branch `main`, code under
`src/`, docs under `docs/`, tests under `tests/`) and its PR #7 of three commits with `main`
merged into it, closed when htesd's fork left the network; htesd/widgets is the attached fork.
The project directory starts with an empty `patches/series.toml`, found from the current
directory (no --manifest anywhere). Ends with the manifest, each patch's `git patch-id
--verbatim` against the PR's own commit, and the server's pull requests.
"""

from __future__ import annotations

import os
import shlex
import sys
import tempfile
from pathlib import Path

from patchcarry import cli, git, manifest
from testing import github_scenarios as sc
from testing import widgets as wd
from testing.demo_6117 import _environ, as_patchcarry, loopback_pace
from testing.fake_github import FakeGitHub, GitHubState


def _run(*args: str) -> int:
    print(f"\n$ patchcarry {' '.join(args)}", flush=True)
    code = cli.main(list(args))
    sys.stdout.flush()
    sys.stderr.flush()
    print(f"[exit {code}]", flush=True)
    return code


def _adopt_command(scan_output: str) -> list[str]:
    (line,) = [x for x in scan_output.splitlines() if "adopt: " in x]
    return shlex.split(line.split("adopt: ", 1)[1])[1:]  # `patchcarry adopt ...`: its argv


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="demo-widgets-") as tmp_name:
        tmp = Path(tmp_name)
        w = wd.make_widgets(tmp / "repos")
        project = tmp / "project"
        (project / "patches").mkdir(parents=True)
        series = project / "patches" / "series.toml"
        series.write_text("# what this project carries upstream\n")
        codes = []
        with FakeGitHub(GitHubState(fork_storage=tmp)) as gh:
            wd.load(gh.state, w)
            env = {
                "GH_HOST": gh.url,
                "GITHUB_TOKEN": sc.TOKEN,
                "XDG_CACHE_HOME": str(tmp / "c"),
                "XDG_CONFIG_HOME": str(tmp / "cfg"),
            }
            cwd = Path.cwd()
            os.chdir(project)
            try:
                with _environ(env), as_patchcarry(), loopback_pace():
                    print("\n$ patchcarry scan --all", flush=True)
                    out_before = sys.stdout
                    with tempfile.TemporaryFile("w+") as capture:
                        sys.stdout = capture
                        try:
                            codes.append(cli.main(["scan", "--all"]))
                        finally:
                            sys.stdout = out_before
                        capture.seek(0)
                        scanned = capture.read()
                    print(scanned, end="")
                    print(f"[exit {codes[-1]}]", flush=True)
                    codes.append(_run(*_adopt_command(scanned)))
                    codes.append(_run("check", "--upstream", str(w.bare)))
                    codes.append(_run("resubmit"))
                    codes.append(_run("resubmit"))
                    merge = w.maintainer_merges_main(wd.BRANCH)
                    print(f"\n(a maintainer merges main into {wd.FORK}:{wd.BRANCH}: "
                          f"{merge[:12]})")  # fmt: skip
                    codes.append(_run("resubmit"))
                tip = git.rev_parse(f"refs/heads/{wd.BRANCH}", cwd=w.fork)
                kept = git.git("merge-base", "--is-ancestor", merge, tip, cwd=w.fork,
                               check=False)[0] == 0  # fmt: skip
                print(f"{wd.BRANCH} at {tip[:12]}; the maintainer's merge kept: {kept}")
                print("\n$ cat patches/series.toml")
                print(series.read_text(), end="")
                print("\npatch-id check (adopted patch vs the PR's own commit):")
                (entry,) = manifest.load(series).entries
                for patch, commit in zip(entry.patches(), w.commits, strict=True):
                    ours = git.patch_id(patch.text, cwd=w.bare)
                    theirs = git.patch_id(git.git("show", commit, cwd=w.bare)[1], cwd=w.bare)
                    verdict = "equal" if ours == theirs and ours else "DIFFERENT"
                    print(f"{patch.name}: {str(ours)[:12]}; {commit[:12]}: {str(theirs)[:12]}: "
                          f"{verdict}")  # fmt: skip
            finally:
                os.chdir(cwd)
            print("\npull requests on the loopback GitHub now:")
            print(gh.state.dump())
    return 0 if codes[0] == 1 and max(codes[1:]) == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
