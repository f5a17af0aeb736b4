"""The last run's log: each git command and GitHub request (method, path, status), never the
token, and an error message that names it."""

from __future__ import annotations

import pytest

from patchcarry import cli, trace
from testing import github_scenarios as sc
from testing.fake_github import FakeGitHub


def test_the_log_holds_each_request_and_git_command_and_never_the_token(
    fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch, tmp_path, capsys
) -> None:
    sc.detached_fork_close(fake_github.state, tmp_path / "upstream.git", None)
    monkeypatch.setenv("GH_HOST", fake_github.url)
    monkeypatch.setenv("GH_TOKEN", sc.TOKEN)
    monkeypatch.chdir(tmp_path)
    cli.main(["scan", "--all"])
    log = trace.log_path().read_text()
    assert log.startswith("patchcarry ") and "scan --all" in log.splitlines()[0]
    assert "http GET /user -> 200" in log
    assert "http GET /search/issues?" in log
    assert " run  git " in log and "-> exit 0" in log
    assert sc.TOKEN not in log and "Authorization" not in log
    assert trace.active() is None  # the run is over: nothing else is written there


def test_an_error_names_the_log_and_help_log_keeps_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    code = cli.main(["scan", "--all", "--author", "someone"])  # GH_HOST: the discard port
    err = capsys.readouterr().err
    assert code == 4 and f"(log of this run: {trace.log_path()})" in err
    assert "http GET /search/issues -> no answer" in trace.log_path().read_text()
    before = trace.log_path().read_text()
    assert cli.main(["help", "log"]) == 0
    assert str(trace.log_path()) in capsys.readouterr().out
    assert trace.log_path().read_text() == before
