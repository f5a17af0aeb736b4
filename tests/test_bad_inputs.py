"""Inputs that once ended in a traceback, the wrong code or a silent change, each as a user
meets it: a Retry-After GitHub or a proxy sends as a date or a negative number, a submodule
edit without an `index` line, a symlinked manifest. Real git, the loopback GitHub, the CLI."""

from __future__ import annotations

import email.utils
import time

import pytest

from patchcarry import cli, git, github
from patchcarry.errors import ExitCode, GitHubError
from patchcarry.github import GitHub
from testing import github_scenarios as sc
from testing.fake_github import FakeGitHub
from testing.upstream_repos import FIX_0001, PINNED_ENV, write_manifest
from tests import test_resubmit
from tests.test_resubmit import ENTRY

template_upstream = test_resubmit.template_upstream  # the fixtures, shared
world = test_resubmit.world


@pytest.fixture
def fake(tmp_path):
    with FakeGitHub() as gh:
        sc.detached_fork_close(gh.state, tmp_path / "upstream.git", tmp_path / "fork.git")
        yield gh


def _http_date(offset: float) -> str:
    return email.utils.formatdate(time.time() + offset, usegmt=True)


@pytest.mark.parametrize(
    ("retry_after", "waited"),
    [
        ("-5", 0.0),
        (_http_date(-3600), 0.0),
        ("soon", 60.0),
        ("7", 7.0),
        ("inf", 60.0),
        ("1e400", 60.0),
    ],
    ids=[
        "negative",
        "past-date",
        "garbage",
        "seconds",
        "inf",
        "float-overflow",
    ],  # a date in an id differs per xdist worker
)
def test_retry_after_as_http_says_a_number_or_a_date_never_a_crash(fake, retry_after, waited):
    sleeps: list[float] = []
    fake.secondary_rate_limit_next("GET", r"^/user$", retry_after=retry_after)
    gh = GitHub(host=fake.url, token=sc.TOKEN, sleep=sleeps.append, max_rate_wait=600)
    assert gh.user().login == sc.OWNER
    assert sleeps == [waited]


def test_a_wait_far_off_is_capped_never_an_overflow():
    """Digits only (RFC 9110 delay-seconds), capped at a day: a reset epoch or a delay far
    beyond any clock is a wait the rate-limit message can name, not a traceback."""
    assert github.retry_after_seconds("99999999999999", 0.0) == github.MAX_WAIT_S
    assert github.until_reset("99999999999999", 0.0) == github.MAX_WAIT_S
    assert github.until_reset("1e20", 0.0) == 0.0 and github.until_reset(None, 5) == 0
    assert github.until_reset("1700000100", 1700000000.0) == 100.0


def test_a_retry_after_date_beyond_the_wait_limit_says_so(fake):
    fake.secondary_rate_limit_next("GET", r"^/user$", retry_after=_http_date(7200), times=5)
    gh = GitHub(host=fake.url, token=sc.TOKEN, sleep=lambda s: None, max_rate_wait=30)
    with pytest.raises(GitHubError, match="secondary rate limit") as info:
        gh.user()
    assert info.value.exit_code == ExitCode.GITHUB


def test_a_submodule_edit_without_an_index_line_is_refused_with_exit_5(
    tmp_path, template_upstream, capsys
):
    """The patch text hides the gitlink (no `index ... 160000`): the tree's own mode is read
    before any blob, so it is bad input (5), not a failed read to re-run (4)."""
    up = template_upstream.copy(tmp_path / "up")
    work = up.work
    git.git("checkout", "-q", "dev", cwd=work)
    sub = "megatron/core/vendored"
    git.git("update-index", "--add", "--cacheinfo", f"160000,{up.base_commit},{sub}", cwd=work)
    git.git("commit", "-q", "-m", "vendor a submodule", cwd=work, env_extra=PINNED_ENV)
    base = git.rev_parse("HEAD", cwd=work)
    git.git("push", "-q", "-f", "origin", "HEAD:refs/heads/dev", cwd=work)
    manifest = write_manifest(tmp_path / "m", base_commit=base,
                              overrides={"checkpoint-grad": {"supersedes": None}})  # fmt: skip
    edit = (
        f"diff --git a/{sub} b/{sub}\n--- a/{sub}\n+++ b/{sub}\n@@ -1 +1 @@\n"
        f"-Subproject commit {up.base_commit}\n+Subproject commit {'1' * 40}\n"
    )
    fix = manifest.parent / FIX_0001.name
    fix.write_text(FIX_0001.read_text().replace("\n-- \n", f"\n{edit}-- \n", 1))
    argv = ["check", "--manifest", str(manifest), "--upstream", str(up.bare), "checkpoint-grad"]
    assert cli.main(argv) == 5
    err = capsys.readouterr().err
    assert f"{sub}, a submodule" in err and len(err.strip().splitlines()) == 1


def test_recording_the_pr_writes_through_a_symlinked_manifest(world):
    w = world()
    link = w.manifest.parent / "link.toml"
    link.symlink_to(w.manifest.name)
    assert cli.main(["resubmit", "--manifest", str(link), ENTRY]) == 0
    assert link.is_symlink() and link.resolve() == w.manifest.resolve()
    assert "pr = " in w.manifest.read_text()


@pytest.mark.parametrize(
    "argv",
    [
        ["adopt", "acme/widgets#7", "--dry-run", "--upstream-url"],
        ["resubmit", "--dry-run", "--upstream-url"],
        ["check", "--upstream"],
        ["tree", "{tmp}/tree", "--upstream"],
    ],
)
def test_every_url_option_is_read_before_any_request(argv, tmp_path, monkeypatch, capsys):
    """A URL urllib cannot read is bad input (5) before GitHub or upstream is asked
    (GH_HOST is the discard port: a request would end in 4)."""
    monkeypatch.setenv("GITHUB_TOKEN", sc.TOKEN)
    manifest = write_manifest(tmp_path, base_commit="0" * 40)
    args = [a.format(tmp=tmp_path) for a in argv]
    assert cli.main([*args, "http://[::1/x.git", "--manifest", str(manifest)]) == 5
    assert "not a valid URL" in capsys.readouterr().err


def _owner_name_options() -> list[tuple[str, str]]:
    """(command, option) for every option whose value is an OWNER/NAME, as the parser has them
    (a type of `argtypes.repo`, or the old `--upstream` that also reads one)."""
    from patchcarry.commands import argtypes

    _, commands = cli.build_parser()
    return [
        (name, action.option_strings[0])
        for name, parser in commands.items()
        for action in parser._actions
        if action.type is argtypes.repo or isinstance(action, argtypes._OldUpstream)
    ]


OWNER_NAME_OPTIONS = _owner_name_options()
REQUIRED_ARGS = {"adopt": ["acme/widgets#7"]}


def test_the_owner_name_options_are_the_ones_documented() -> None:
    """The table the next test walks is the parser's own: a new such option joins it."""
    assert sorted(OWNER_NAME_OPTIONS) == [
        ("adopt", "--fork"),
        ("resubmit", "--fork"),
        ("resubmit", "--upstream"),
        ("resubmit", "--upstream-repo"),
        ("scan", "--upstream"),
        ("scan", "--upstream-repo"),
    ]


@pytest.mark.parametrize(("command", "option"), OWNER_NAME_OPTIONS)
@pytest.mark.parametrize("value", ["htesd/..", "htesd", "a/b/c", "x-/y", "htesd/x y"])
def test_every_owner_name_option_refuses_a_malformed_value_as_a_usage_mistake(
    command, option, value, tmp_path, monkeypatch, capsys
):
    """Exit 2, argparse's usage and one error line naming the option, before anything is
    read or asked (GH_HOST is the discard port: a request would end in 4)."""
    monkeypatch.setenv("GITHUB_TOKEN", sc.TOKEN)
    monkeypatch.setenv("GH_HOST", "http://127.0.0.1:9")
    manifest = write_manifest(tmp_path, base_commit="0" * 40)
    before = manifest.read_bytes()
    argv = [command, *REQUIRED_ARGS.get(command, []), "--manifest", str(manifest)]
    with pytest.raises(SystemExit) as usage:
        cli.main([*argv, f"{option}={value}"])
    assert usage.value.code == ExitCode.USAGE
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"usage: patchcarry {command}")
    errors = [line for line in err if "error:" in line]
    assert len(errors) == 1 and f"{option}: must be OWNER/REPO" in errors[0], err
    assert manifest.read_bytes() == before


@pytest.mark.parametrize("key", ["fork", "upstream"])
@pytest.mark.parametrize("command", ["check", "resubmit", "scan", "tree", "retire"])
def test_a_manifest_owner_name_that_is_malformed_is_bad_input_in_one_line(
    command, key, tmp_path, monkeypatch, capsys
):
    """The same rule where the value comes from the manifest: exit 5 in one line naming the
    key, before any request (GH_HOST is the discard port) and with nothing written."""
    monkeypatch.setenv("GITHUB_TOKEN", sc.TOKEN)
    monkeypatch.setenv("GH_HOST", "http://127.0.0.1:9")
    manifest = write_manifest(
        tmp_path, base_commit="0" * 40, overrides={"checkpoint-grad": {key: "htesd/.."}}
    )
    before = sorted(p.name for p in tmp_path.rglob("*"))
    args = {"tree": [str(tmp_path / "tree")], "retire": ["checkpoint-grad"]}.get(command, [])
    assert cli.main([command, *args, "--manifest", str(manifest)]) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{key} must be OWNER/REPO" in err[0], err
    assert sorted(p.name for p in tmp_path.rglob("*")) == before
