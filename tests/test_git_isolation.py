"""Every git this tool runs ignores the user's and the system's git configuration and hooks,
and the token reaches only the git runs that carry the tool's credential helper; measuring,
audit and upstream-test children (upstream's code) get no token at all. Real git, the
loopback GitHub, the CLI; the user's configuration is a real ~/.gitconfig under a temp HOME."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from patchcarry import git, proc
from patchcarry.errors import MissingInstallError
from patchcarry.runtime.child import probe_env
from testing import github_scenarios as sc
from tests import test_resubmit
from tests.test_resubmit import ENTRY, World

template_upstream = test_resubmit.template_upstream  # the fixtures, shared
world = test_resubmit.world

HOOKS = ("pre-push", "reference-transaction", "post-checkout", "pre-applypatch",
         "applypatch-msg", "post-applypatch", "pre-commit", "post-commit", "post-rewrite",
         "pre-auto-gc", "post-index-change", "push-to-checkout", "fsmonitor-watchman")  # fmt: skip
IDENT = ("-c", "user.name=A U", "-c", "user.email=a@example.invalid")


def _user_config(tmp: Path, monkeypatch: pytest.MonkeyPatch, config: str) -> Path:
    """A HOME whose ~/.gitconfig (and XDG git config) holds `config`; hooks it may name log
    to the returned file, with the token variables they saw."""
    home = tmp / "home"
    hooks = home / "hooks"
    (home / "templates" / "hooks").mkdir(parents=True)
    hooks.mkdir()
    log = tmp / "hook.log"
    for name in HOOKS:
        for where in (hooks, home / "templates" / "hooks"):
            script = where / name
            script.write_text(
                f'#!/bin/sh\necho "{name} ${{GITHUB_TOKEN}}${{GH_TOKEN}}" >> "{log}"\n'
            )
            script.chmod(0o755)
    text = f"[core]\n\thooksPath = {hooks}\n[init]\n\ttemplateDir = {home / 'templates'}\n{config}"
    (home / ".gitconfig").write_text(text)
    (home / "xdg" / "git").mkdir(parents=True)
    (home / "xdg" / "git" / "config").write_text(text)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg"))
    return log


def test_hooks_and_templates_from_user_config_never_run(world, tmp_path, monkeypatch):
    log = _user_config(tmp_path, monkeypatch, "")
    monkeypatch.setenv("GH_TOKEN", sc.TOKEN)  # the token in use (gh reads GH_TOKEN first)
    w: World = world()
    assert w.run(ENTRY) == 0  # a push, a clone, an am, fetches: no hook runs
    assert w.fork_branch() is not None
    assert not log.exists(), log.read_text()


def test_only_gits_with_the_credential_helper_get_the_token(world, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    seen = tmp_path / "git-env.log"
    real_git = shutil.which("git")
    (bin_dir / "git").write_text(
        f'#!/bin/sh\nprintf "%s :: %s\\n" "$*" "${{GITHUB_TOKEN:+TOKEN}}${{GH_TOKEN:+GH}}"'
        f' >> "{seen}"\nexec "{real_git}" "$@"\n'
    )
    (bin_dir / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("GH_TOKEN", sc.TOKEN)  # the token in use (gh reads GH_TOKEN first)
    w: World = world()
    assert w.run(ENTRY) == 0
    lines = seen.read_text().splitlines()
    with_token = [line for line in lines if line.endswith(("TOKEN", "GH"))]
    assert any(" push " in line for line in with_token)  # the push still gets it
    assert all("credential." in line and line.endswith(":: TOKEN") for line in with_token)
    assert len(with_token) < len(lines)


def test_the_callers_repository_config_does_not_redirect_a_remote_read(
    world, tmp_path, monkeypatch, capsys
):
    """The CI-gate read once ran in the caller's working directory: that repository's
    `url.*.insteadOf` (or `core.sshCommand`) then applied to it."""
    w: World = world()
    assert w.run(ENTRY) == 0
    caller = tmp_path / "caller"
    git.init(caller)
    up = str(w.upstream.bare)
    (caller / ".git" / "config").open("a").write(
        f'[url "{tmp_path / "nowhere"}/"]\n\tinsteadOf = {up.rsplit("/", 1)[0]}/\n'
    )
    monkeypatch.chdir(caller)
    capsys.readouterr()
    assert w.run("--dry-run", ENTRY) == 0
    out = capsys.readouterr().out
    assert "CI gate: head" in out and "could not read upstream" not in out


def test_apply_whitespace_fix_in_user_config_does_not_change_what_am_writes(tmp_path, monkeypatch):
    repo = tmp_path / "r"
    git.init(repo)
    (repo / "f.py").write_text("a\n")
    git.git("add", "f.py", cwd=repo)
    git.git(*IDENT, "commit", "-qm", "base", cwd=repo)
    (repo / "f.py").write_text("a\nb   \n\n\n")  # trailing spaces, blank lines at the end
    git.git(*IDENT, "commit", "-qam", "ws", cwd=repo)
    patch = git.format_patch("HEAD", number=1, out_dir=tmp_path / "out", cwd=repo)
    git.git("checkout", "-q", "--detach", "HEAD~1", cwd=repo)
    log = _user_config(tmp_path, monkeypatch, "[apply]\n\twhitespace = fix\n")
    git.am([patch], cwd=repo, committer_name="C", committer_email="c@example.invalid")
    _, out, _ = git.git_bytes("cat-file", "blob", "HEAD:f.py", cwd=repo)
    assert out == b"a\nb   \n\n\n"
    assert not log.exists(), log.read_text()


def test_children_that_run_upstreams_code_get_no_token(tmp_path, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "t1")
    monkeypatch.setenv("GH_TOKEN", "t2")
    show = "import os; print([k for k in os.environ if k.endswith('TOKEN')])"
    for env in (None, probe_env(tmp_path), dict(os.environ)):  # however the env was built
        _, out, _ = proc.cmd_output(sys.executable, "-c", show, env=env)
        assert out.strip() == "[]"
        _, raw, _ = proc.cmd_output_bounded(
            sys.executable,
            "-c",
            show,
            cwd=None,
            env=os.environ if env is None else env,
            deadline_s=60,
            max_output=1000,
        )
        assert raw.strip() == b"[]"


def test_git_init_copies_no_template(tmp_path, monkeypatch):
    _user_config(tmp_path, monkeypatch, "")
    git.init(tmp_path / "r")
    assert not (tmp_path / "r" / ".git" / "hooks").exists()


def test_a_git_too_old_to_honour_the_isolation_is_refused(tmp_path, monkeypatch):
    """An older git ignores GIT_CONFIG_GLOBAL silently (user hooks would run again): the real
    git's version is read once and compared; here the minimum is raised above it."""
    monkeypatch.setattr(git.env, "MIN_GIT", (999, 0))
    git.require_isolating_git.cache_clear()
    try:
        with pytest.raises(MissingInstallError, match="older than 999.0"):
            git.git("init", "-q", str(tmp_path / "r"), cwd=tmp_path)
    finally:
        git.require_isolating_git.cache_clear()


def test_a_read_from_an_ssh_upstream_gives_its_ssh_command_no_token(tmp_path, monkeypatch):
    """`--upstream` may be ssh or a path: git starts the user's ssh command (or upload-pack)
    for it, and only a run through the tool's https credential helper may carry the token."""
    seen = tmp_path / "ssh-env.txt"
    ssh = tmp_path / "ssh"
    ssh.write_text(f"#!/bin/sh\nenv > {seen}\nexit 1\n")
    ssh.chmod(0o755)
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_" + "s" * 36)
    monkeypatch.setenv("GIT_SSH_COMMAND", str(ssh))
    repo = tmp_path / "r"
    git.init(repo)
    with pytest.raises(proc.CalledProcessError):  # the stand-in ssh answers nothing
        git.fetch_commit("ssh://git@127.0.0.1/x/y.git", "main", cwd=repo)
    assert seen.is_file() and "ghp_" not in seen.read_text()
