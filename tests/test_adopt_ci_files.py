"""adopt refuses a PR whose files run in or govern upstream's CI (composite actions, the
scripts workflows call, GitLab's CI) as it refuses workflow files, and names a file the PR
adds executable in its plan. Real fixture repos and the loopback GitHub."""

from __future__ import annotations

import pytest

from patchcarry import git
from testing import adopt_scenarios as ad
from testing import github_scenarios as sc
from testing.upstream_repos import PINNED_ENV
from tests import test_adopt

template_upstream = test_adopt.template_upstream  # the fixtures, shared
world = test_adopt.world


def _pull_adding(w: test_adopt.World, number: int, files: dict[str, tuple[str, int]]) -> None:
    """refs/pull/N/head: the base plus `files` ({path: (text, mode)}), signed off; and the PR
    on the fake GitHub, closed by detachment."""
    work = w.upstream.work
    git.git("checkout", "-q", "-B", f"pr-{number}", w.upstream.base_commit, cwd=work)
    for path, (text, mode) in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
        (work / path).chmod(mode)
    git.git("add", "-A", cwd=work)
    git.git("commit", "-q", "-s", "-m", "add files", cwd=work, env_extra=PINNED_ENV)
    git.git("push", "-q", "-f", "origin", f"HEAD:refs/pull/{number}/head", cwd=work)
    head = git.rev_parse("HEAD", cwd=work)
    ad.closed_by_detachment(w.gh.state, sc.UPSTREAM, number, title="Files",
                            branch=f"fix/files-{number}", head_sha=head)  # fmt: skip


@pytest.mark.parametrize(
    "path",
    [
        ".github/actions/setup/action.yml", ".github/scripts/dco_gate.py", ".gitlab-ci.yml",
        "CODEOWNERS", "docs/CODEOWNERS", ".GitHub/CODEOWNERS", ".gitattributes",
        "megatron/core/.gitattributes", ".gitmodules", ".circleci/config.yml",
    ],
)  # fmt: skip
def test_adopt_refuses_a_pr_whose_files_run_in_upstreams_ci(world, path, capsys):
    w = world
    _pull_adding(w, 6301, {path: ("runs: x\n", 0o644), "megatron/core/x.py": ("x = 1\n", 0o644)})
    before = w.manifest.read_text()
    assert w.adopt(f"{sc.UPSTREAM}#6301", "--dry-run") == 5
    assert "upstream's CI" in capsys.readouterr().err
    assert w.manifest.read_text() == before and w.patches() == []


def test_adopt_names_an_added_executable_file_in_the_plan(world, capsys):
    w = world
    _pull_adding(w, 6302, {"megatron/core/tool.sh": ("#!/bin/sh\necho hi\n", 0o755)})
    w.adopt(f"{sc.UPSTREAM}#6302", "--dry-run")
    out = capsys.readouterr().out
    assert "adds an executable file: megatron/core/tool.sh (mode 100755)" in out


def test_adopt_plan_names_no_executable_when_there_is_none(world, capsys):
    w = world
    _pull_adding(w, 6303, {"megatron/core/tool.py": ("x = 1\n", 0o644)})
    w.adopt(f"{sc.UPSTREAM}#6303", "--dry-run")
    assert "executable" not in capsys.readouterr().out


@pytest.mark.parametrize("dry_run", [True, False])
def test_adopt_refuses_a_title_no_file_can_hold_before_writing(world, dry_run, capsys):
    """A lone surrogate in the PR's title (JSON's `\\ud800`): refused in one line by the dry
    run as by the real one, before the first write (it crashed after copying the patches)."""
    w = world
    _pull_adding(w, 6304, {"megatron/core/x.py": ("x = 1\n", 0o644)})
    w.gh.state.pulls[(sc.UPSTREAM, 6304)].title = "Fix \ud800 retention"
    before = w.manifest.read_text()
    assert w.adopt(f"{sc.UPSTREAM}#6304", *(["--dry-run"] if dry_run else [])) == 5
    err = capsys.readouterr().err
    assert "its title from GitHub, `Fix \\ud800 retention`, holds a lone surrogate" in err
    assert w.manifest.read_text() == before and w.patches() == []


# Files upstream's forge, CI, editor or git tools run or obey beyond the closed list above:
# carried only when the user's own `paths` names the file itself, never from the PR's files.
OBEYED = [
    ".devcontainer/devcontainer.json", ".lfsconfig", ".vscode/tasks.json",
    ".pre-commit-config.yaml", "bitbucket-pipelines.yml",
]  # fmt: skip


@pytest.mark.parametrize("path", OBEYED)
def test_adopt_never_derives_permission_for_a_file_upstreams_tools_obey(world, path, capsys):
    """The PR's own files do not decide what the entry may carry: a file upstream's forge, CI
    or git obeys is refused (exit 5, nothing written), named in one line."""
    w = world
    _pull_adding(w, 6305, {path: ("runs: x\n", 0o644), "megatron/core/x.py": ("x = 1\n", 0o644)})
    before = w.manifest.read_text()
    assert w.adopt(f"{sc.UPSTREAM}#6305", "--dry-run") == 5
    err = capsys.readouterr().err.strip()
    assert path in err and ("obey" in err or "upstream's CI" in err), err
    assert w.manifest.read_text() == before and w.patches() == []


@pytest.mark.parametrize("path", [".pre-commit-config.yaml", ".devcontainer/devcontainer.json"])
def test_a_file_upstreams_tools_obey_is_carried_when_the_user_names_it(world, path, capsys):
    """Named by the user (`--paths` holding the file itself, not a glob), it is carried; a glob
    that merely covers it (`**`) is no such naming."""
    w = world
    _pull_adding(w, 6306, {path: ("runs: x\n", 0o644), "megatron/core/x.py": ("x = 1\n", 0o644)})
    assert w.adopt(f"{sc.UPSTREAM}#6306", "--dry-run", "--paths", "**") == 5
    assert "names it" in capsys.readouterr().err
    assert w.adopt(f"{sc.UPSTREAM}#6306", "--dry-run", "--paths", "megatron/**", path) == 0
