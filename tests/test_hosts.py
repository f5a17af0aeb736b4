"""The token goes only where it belongs: API host, its git host, transport, URL credentials."""

from __future__ import annotations

import base64

import pytest

from patchcarry import cli, git
from patchcarry.errors import BadInputError, ExitCode
from patchcarry.hosts import api_host, git_host, redact_url
from patchcarry.proc import CalledProcessError
from testing.capture_server import CaptureServer

SENTINEL = "sentinel-token-value-0123456789-never-sent"
# `.invalid` never resolves (RFC 6761): a refusal that came after a lookup would read
# "connection failed", not "refusing plain http".
NON_LOOPBACK = "http://patchcarry-test.invalid"


def test_api_host_maps_data_residency_and_enterprise_hosts():
    assert api_host("tenant.ghe.com") == "https://api.tenant.ghe.com"
    assert api_host("api.tenant.ghe.com") == "https://api.tenant.ghe.com"
    assert api_host("ghe.example.com") == "https://ghe.example.com/api/v3"
    assert git_host("https://api.github.com") == "https://github.com"
    assert git_host("https://api.tenant.ghe.com") == "https://tenant.ghe.com"
    assert git_host("https://ghe.example.com/api/v3") == "https://ghe.example.com"
    assert git_host("http://127.0.0.1:8123") == "http://127.0.0.1:8123"


@pytest.mark.parametrize(
    "value", [NON_LOOPBACK, "http://10.0.0.1:80", "http://[2001:db8::1]", "ftp://127.0.0.1"]
)
def test_plain_http_to_a_non_loopback_host_is_refused(value):
    with pytest.raises(BadInputError, match="GH_HOST"):
        api_host(value)


@pytest.mark.parametrize("value", ["http://127.0.0.2:9", "http://[::1]:9", "http://localhost"])
def test_plain_http_to_loopback_is_allowed(value):
    assert api_host(value) == value


@pytest.mark.parametrize("command", ["resubmit", "scan"])
def test_cli_refuses_plain_http_before_any_connection(command, monkeypatch, capsys):
    monkeypatch.setenv("GH_HOST", NON_LOOPBACK)
    monkeypatch.setenv("GITHUB_TOKEN", SENTINEL)
    assert cli.main([command, "--dry-run"] if command == "resubmit" else [command]) == 5
    err = capsys.readouterr().err
    assert "refusing plain http" in err and "connection" not in err
    assert SENTINEL not in err


def test_redact_url_drops_user_and_password():
    assert redact_url("https://user:secret@example.com/x.git") == "https://example.com/x.git"
    assert redact_url("https://example.com/x.git") == "https://example.com/x.git"


def test_check_refuses_credentials_in_upstream_url(tmp_path, capsys):
    url = "https://user:secret-in-url@127.0.0.2:9/up.git"
    assert cli.main(["check", "--upstream", url, "--work-dir", str(tmp_path / "wd")]) == 5
    captured = capsys.readouterr()
    assert "secret-in-url" not in captured.out + captured.err
    assert "credentials in the URL" in captured.err
    for path in tmp_path.rglob("*"):
        assert not path.is_file() or b"secret-in-url" not in path.read_bytes()


def _ls_remote(url: str, tmp_path) -> None:
    git.init(tmp_path / "r")
    with pytest.raises(CalledProcessError):
        git.ls_remote_branch(f"{url}/fork.git", "main", cwd=tmp_path / "r")


def test_credential_helper_answers_only_for_the_api_hosts_git_host(tmp_path, monkeypatch):
    """A clone_url on another host (127.0.0.2) gets no token; the same server named as the
    API host does (the control that shows the capture would see it)."""
    monkeypatch.setenv("GITHUB_TOKEN", SENTINEL)
    monkeypatch.setenv("GH_HOST", "http://127.0.0.1:9")
    with CaptureServer("127.0.0.2") as other:
        _ls_remote(other.url, tmp_path)
        assert other.seen and other.authorizations() == []
    with CaptureServer("127.0.0.2") as own:
        monkeypatch.setenv("GH_HOST", own.url)
        _ls_remote(own.url, tmp_path / "control")
        expected = base64.b64encode(f"x-access-token:{SENTINEL}".encode()).decode()
        assert f"Basic {expected}" in own.authorizations()


def test_credential_helper_is_https_only_for_github(tmp_path, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", SENTINEL)
    monkeypatch.setenv("GH_HOST", "github.com")
    git.init(tmp_path / "r")

    def fill(request: str) -> str:
        _, out, _ = git.git(
            *git.credential_args(), "credential", "fill", cwd=tmp_path / "r", stdin=request,
            check=False,
        )  # fmt: skip
        return out

    assert f"password={SENTINEL}" in fill("protocol=https\nhost=github.com\n\n")
    assert SENTINEL not in fill("protocol=http\nhost=github.com\n\n")
    assert SENTINEL not in fill("protocol=https\nhost=evil.example\n\n")
    assert ExitCode.BAD_INPUT == 5
