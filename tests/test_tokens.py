"""The token variables as gh reads them: GH_TOKEN before GITHUB_TOKEN for github.com and
GHE.com, GH_ENTERPRISE_TOKEN before GITHUB_ENTERPRISE_TOKEN for an Enterprise Server host."""

from __future__ import annotations

import pytest

from patchcarry import cli, tokens
from testing import github_scenarios as sc
from testing.fake_github import FakeGitHub

ALL = ("GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN")


@pytest.fixture(autouse=True)
def _no_token(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ALL:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("host", ["github.com", "https://api.github.com", "acme.ghe.com"])
def test_github_com_reads_gh_token_first(monkeypatch: pytest.MonkeyPatch, host: str) -> None:
    monkeypatch.setenv("GH_HOST", host)
    monkeypatch.setenv("GITHUB_TOKEN", "from-github-token")
    monkeypatch.setenv("GH_ENTERPRISE_TOKEN", "enterprise")
    assert tokens.token() == "from-github-token" and tokens.variable() == "GITHUB_TOKEN"
    monkeypatch.setenv("GH_TOKEN", "from-gh-token")
    assert tokens.token() == "from-gh-token" and tokens.variable() == "GH_TOKEN"


@pytest.mark.parametrize("host", ["ghe.example.com", "https://ghe.example.com/api/v3"])
def test_an_enterprise_server_reads_the_enterprise_variables(
    monkeypatch: pytest.MonkeyPatch, host: str
) -> None:
    monkeypatch.setenv("GH_HOST", host)
    monkeypatch.setenv("GH_TOKEN", "a github.com token")
    monkeypatch.setenv("GITHUB_TOKEN", "another github.com token")
    assert tokens.token() is None  # a github.com token never goes to another host
    assert tokens.variable() == "GH_ENTERPRISE_TOKEN or GITHUB_ENTERPRISE_TOKEN"
    monkeypatch.setenv("GITHUB_ENTERPRISE_TOKEN", "late")
    assert tokens.token() == "late"
    monkeypatch.setenv("GH_ENTERPRISE_TOKEN", "first")
    assert tokens.token() == "first"


def test_gh_token_alone_is_the_users_token(
    fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch, tmp_path, capsys
) -> None:
    """`scan` learns whose PRs from GH_TOKEN alone (no --author, no GITHUB_TOKEN)."""
    sc.detached_fork_close(fake_github.state, tmp_path / "upstream.git", None)
    monkeypatch.setenv("GH_HOST", fake_github.url)
    monkeypatch.setenv("GH_TOKEN", sc.TOKEN)
    monkeypatch.chdir(tmp_path)
    code = cli.main(["scan", "--all", "--json"])
    out = capsys.readouterr().out
    assert "#6117" in out or '"number": 6117' in out, out
    assert code in (0, 1)
    assert any(r.path == "/user" for r in fake_github.requests)


@pytest.mark.parametrize(
    ("value", "flaw"),
    [
        (sc.TOKEN + "\n", "a trailing newline"),
        ("tök" + sc.TOKEN, "a non-ASCII character"),
        (f"token {sc.TOKEN}", "a space"),
        (sc.TOKEN + "\x7f", "a control character"),
    ],
)
@pytest.mark.parametrize("variable", ["GH_TOKEN", "GITHUB_TOKEN"])
@pytest.mark.parametrize(
    "argv", [["scan", "--all"], ["resubmit", "--dry-run"], ["adopt", "acme/widgets#7"]]
)
def test_a_value_no_token_has_is_one_line_naming_its_variable(
    fake_github: FakeGitHub, monkeypatch, tmp_path, capsys, value, flaw, variable, argv
) -> None:
    """Refused before any request (exit 5, bad input): the variable is named, the value never
    printed; no traceback, no "check GH_HOST and the network"."""
    monkeypatch.setenv("GH_HOST", fake_github.url)
    monkeypatch.setenv(variable, value)
    monkeypatch.chdir(tmp_path)
    assert cli.main(argv) == 5
    out, err = capsys.readouterr()
    (said,) = err.splitlines()
    assert said.startswith(f"error: {variable} holds {flaw}") and "network" not in said
    assert sc.TOKEN not in out + err and "Traceback" not in err
    assert fake_github.requests == []
