"""A new user's first contact, as the README's first screen tells it: a pip-installed
`patchcarry`, an empty folder, their own token (GH_TOKEN) on the loopback GitHub holding their
PR on acme/widgets (not Megatron-LM) closed by fork detachment, and no manifest of their own.
Each `patchcarry` command is read from the README's first screen and run as written."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest

from testing import widgets as wd
from testing.fake_github import FakeGitHub, GitHubState
from testing.plain_install import checkout_wheel, plain_venv
from tests.test_readme import code_blocks, first_screen

USER, TOKEN = "alice", "fake-token-alice"


def _readme_steps() -> list[str]:
    """The `patchcarry ...` commands of the first screen's first block, in order."""
    (users, *_) = code_blocks(first_screen())
    commands = [line.split("  #")[0].strip() for line in users]
    assert commands[0].startswith("pip install"), commands  # what plain_venv does
    assert any(c.startswith("export GH_TOKEN=") for c in commands), commands
    return [c for c in commands if c.startswith("patchcarry ")]


def test_a_new_user_reaches_a_plan_for_their_own_pr_from_the_readme(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    wheel = checkout_wheel(tmp_path_factory)
    py, site = plain_venv(wheel, tmp_path / "venv")
    w = wd.make_widgets(tmp_path / "w")
    gh = FakeGitHub(GitHubState(fork_storage=tmp_path)).start()
    try:
        wd.load(gh.state, w, user=USER, token=TOKEN, fork=False)  # their first run: no fork
        folder = tmp_path / "my-prs"
        folder.mkdir()
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GITHUB_TOKEN")}
        env.update(GH_HOST=gh.url, GH_TOKEN=TOKEN, HOME=str(tmp_path / "home"),
                   XDG_CACHE_HOME=str(tmp_path / "cache"),
                   XDG_CONFIG_HOME=str(tmp_path / "config"))  # fmt: skip

        def patchcarry(command: str) -> subprocess.CompletedProcess[str]:
            argv = shlex.split(command)
            assert argv[0] == "patchcarry", command
            return subprocess.run(
                [py, site / "bin" / "patchcarry", *argv[1:]],
                cwd=folder, env=env, capture_output=True, text=True, timeout=300,
            )  # fmt: skip

        scan, adopt, dry_run, write = _readme_steps()
        # before they have a manifest, the example one is found: said so, never taken as theirs
        # (offline: this loopback GitHub holds no Megatron-LM)
        example = patchcarry(f"{dry_run} --offline")
        assert example.returncode == 0, example.stderr
        assert "is the example manifest inside the installed package" in example.stderr
        assert "checkpoint-grad: PLANNED" in example.stdout and gh.requests == []

        found = patchcarry(scan)
        assert found.returncode == 1, found.stderr  # one of theirs is not carried yet
        assert f"acme/widgets#{wd.NUMBER}" in found.stdout
        assert "no manifest of yours" in found.stderr  # the example is not taken for theirs
        (printed,) = [
            line.split("adopt: ", 1)[1] for line in found.stdout.splitlines() if "adopt: " in line
        ]
        ours = adopt.replace("OWNER/REPO#N", f"{wd.REPO}#{wd.NUMBER}")
        assert printed == ours  # what scan printed is what the README says to run

        adopted = patchcarry(printed)
        assert adopted.returncode == 0, adopted.stdout + adopted.stderr
        assert (folder / "patches" / "series.toml").is_file()
        assert "next: patchcarry resubmit --dry-run last-page" in adopted.stdout

        plan = patchcarry(dry_run)
        assert plan.returncode == 0, plan.stdout + plan.stderr
        out = plan.stdout
        assert "last-page: PLANNED" in out
        assert f"{wd.REPO} main <- {USER}/widgets:{wd.BRANCH}" in out
        assert f"POST /repos/{wd.REPO}/forks" in out and f"POST /repos/{wd.REPO}/pulls" in out
        assert "Megatron" not in out + plan.stderr  # nothing of the example's
        assert max(len(line) for line in out.splitlines()) <= 120
        assert gh.writes() == []
        assert write == "patchcarry resubmit"  # the last step writes: not run here
        log = (tmp_path / "cache" / "patchcarry" / "last-run.log").read_text()
        assert "http GET /user -> 200" in log and TOKEN not in log
    finally:
        gh.stop()
