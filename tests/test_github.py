"""patchcarry.github against the loopback fake: retries, rate limits, error messages."""

from __future__ import annotations

import pytest

from patchcarry.errors import ExitCode, GitHubError
from patchcarry.github import (
    ACTIONS,
    API_VERSION,
    GitHub,
    NotFoundError,
    PagingCapError,
    TransientError,
    api_host,
    token_kind,
)
from testing import github_scenarios as sc
from testing.fake_github import API_VERSIONS, FakeGitHub


@pytest.fixture
def fake(tmp_path):
    with FakeGitHub() as gh:
        sc.detached_fork_close(gh.state, tmp_path / "upstream.git", tmp_path / "fork.git")
        yield gh


def client(fake: FakeGitHub, sleeps: list[float], token: str | None = sc.TOKEN) -> GitHub:
    return GitHub(host=fake.url, token=token, sleep=sleeps.append, backoff=0.01)


def test_api_host_follows_ghapi_and_gh_conventions():
    assert api_host("") == "https://api.github.com"
    assert api_host("github.com") == "https://api.github.com"
    assert api_host("http://127.0.0.1:8123/") == "http://127.0.0.1:8123"
    assert api_host("ghe.example.com") == "https://ghe.example.com/api/v3"


def test_reads_return_plain_data(fake):
    gh = client(fake, [])
    assert gh.user().login == sc.OWNER
    fork = gh.repo(sc.NEW_FORK)
    assert fork is not None and fork.source == sc.UPSTREAM
    assert gh.repo("nobody/nothing") is None
    assert type(gh.issue_events(sc.UPSTREAM, 6117)) is list


def test_short_rate_limit_waits_then_retries(fake):
    sleeps: list[float] = []
    fake.rate_limit_next("GET", r"^/user$", reset_in=5)
    assert client(fake, sleeps).user().login == sc.OWNER
    assert len(sleeps) == 1 and 0 < sleeps[0] <= 7


def test_long_rate_limit_stops_with_the_reset_time(fake):
    fake.rate_limit_next("GET", r"^/user$", reset_in=7200)
    with pytest.raises(GitHubError, match=r"resets at .* UTC") as info:
        client(fake, []).user()
    assert info.value.exit_code == ExitCode.GITHUB


def test_reads_retry_5xx_and_dropped_connections(fake):
    sleeps: list[float] = []
    fake.fail_next("GET", r"^/user$", 502)
    fake.drop_next("GET", r"^/user$")
    assert client(fake, sleeps).user().login == sc.OWNER
    assert len(sleeps) == 2
    assert [r.status for r in fake.requests] == [502, 0, 200]


def test_reads_give_up_after_bounded_retries(fake):
    fake.fail_next("GET", r"^/user$", 503, times=10)
    with pytest.raises(TransientError, match="503"):
        client(fake, []).user()
    assert len(fake.requests) == 4  # 1 + 3 retries


def test_create_pull_is_never_retried(fake):
    fake.fail_next("POST", r"/pulls$", 502)
    with pytest.raises(TransientError):
        client(fake, []).create_pull(sc.UPSTREAM, title="t", head="htesd:x", base="dev", body="b")
    assert len(fake.writes()) == 1


def test_errors_name_likely_causes(fake):
    with pytest.raises(GitHubError, match="401 Bad credentials.*GITHUB_TOKEN"):
        client(fake, [], token="wrong").user()
    with pytest.raises(NotFoundError, match="renamed"):
        client(fake, []).pull(sc.UPSTREAM, 99999)


def test_secondary_rate_limit_without_retry_after_waits_60s_doubling(fake):
    sleeps: list[float] = []
    fake.secondary_rate_limit_next("GET", r"^/user$", times=3)
    gh = GitHub(host=fake.url, token=sc.TOKEN, sleep=sleeps.append, max_rate_wait=600)
    assert gh.user().login == sc.OWNER
    assert sleeps == [60.0, 120.0, 240.0]  # GitHub: at least a minute, exponential


def test_secondary_rate_limit_with_retry_after_waits_what_github_says(fake):
    sleeps: list[float] = []
    fake.secondary_rate_limit_next("POST", r"/comments$", retry_after=7)
    client(fake, sleeps).create_comment(sc.UPSTREAM, 6117, "hello")
    assert sleeps == [7.0] and len(fake.writes()) == 2  # refused, then made once


@pytest.mark.parametrize("retry_after", [None, 3600])
def test_secondary_rate_limit_over_the_wait_limit_says_so_not_token_scope(fake, retry_after):
    fake.secondary_rate_limit_next("GET", r"^/user$", retry_after=retry_after, times=5)
    gh = GitHub(host=fake.url, token=sc.TOKEN, sleep=lambda s: None, max_rate_wait=30)
    with pytest.raises(GitHubError) as info:
        gh.user()
    assert "secondary rate limit" in str(info.value) and "scope" not in str(info.value)
    assert info.value.exit_code == ExitCode.GITHUB


def test_write_calls_are_spaced_at_least_a_second_apart(fake):
    now = [100.0]
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        now[0] += seconds

    gh = GitHub(host=fake.url, token=sc.TOKEN, sleep=sleep, clock=lambda: now[0])
    gh.write_spacing = 1.0
    gh.create_comment(sc.UPSTREAM, 6117, "one")
    now[0] += 0.25  # a quarter second of work, then the next write
    gh.create_comment(sc.UPSTREAM, 6117, "two")
    gh.user()  # reads are not spaced
    gh.create_comment(sc.UPSTREAM, 6117, "three")
    assert sleeps == [0.75, 1.0]


def test_every_request_pins_the_api_version(fake):
    gh = client(fake, [])
    gh.user()
    gh.repo(sc.UPSTREAM)
    assert {r.api_version for r in fake.requests} == {API_VERSION}
    assert API_VERSION in API_VERSIONS  # the fake serves the version the client pins


def test_lists_follow_link_past_ten_pages_and_a_longer_list_is_an_error(fake):
    for _ in range(1150):  # 12 pages of 100
        fake.state.add_event(sc.UPSTREAM, 6117, actor=sc.MAINTAINER, event="labeled")
    fake.state.add_event(sc.UPSTREAM, 6117, actor=sc.MAINTAINER, event="closed")
    gh = client(fake, [])
    events = gh.issue_events(sc.UPSTREAM, 6117)
    assert events[-1].event == "closed" and len(events) == 1150 + 2
    with pytest.raises(PagingCapError, match="more than 5 pages"):
        gh._pages(f"/repos/{sc.UPSTREAM}/issues/6117/events", max_pages=5)


def test_token_kind_by_prefix_and_classic_scopes_from_every_answer(fake):
    assert token_kind("github_pat_11AB") == "fine-grained" and token_kind("ghs_x") == ACTIONS
    assert token_kind("ghp_x") == token_kind("0" * 40) == "classic" and token_kind("") is None
    fake.state.add_token("ghp_publiconly", sc.OWNER, scopes=("public_repo",))
    gh = client(fake, [], token="ghp_publiconly")
    assert gh.scopes is None
    gh.user()
    assert gh.scopes == {"public_repo"}
    fake.state.add_token("github_pat_11fine", sc.OWNER, scopes=())
    fine = client(fake, [], token="github_pat_11fine")
    fine.user()
    assert fine.scopes is None  # fine-grained tokens carry no X-OAuth-Scopes
    with pytest.raises(GitHubError, match="Resource not accessible by personal access token"):
        fine.create_comment(sc.UPSTREAM, 6117, "x")


def test_a_next_page_on_another_host_is_refused_before_the_token_is_sent(fake):
    """A `Link: rel="next"` (or any absolute URL) on another host than the API's is never
    requested: the token would ride along."""
    from testing.capture_server import CaptureServer

    gh = client(fake, [], token=sc.TOKEN)
    with CaptureServer("127.0.0.2") as cap:
        with pytest.raises(GitHubError, match="refusing to send the token there"):
            gh.request("GET", f"{cap.url}/repos/x/y/issues/1/events?page=2")
        assert cap.seen == []
    same = gh.request("GET", f"{fake.url}/user")  # the API host's own absolute URL is fine
    assert same["login"] == sc.OWNER


def test_saml_sso_403_says_to_authorize_the_token_for_the_org_with_githubs_url(fake):
    """An org enforcing SAML SSO refuses a token not authorized for it, reads of its public
    repositories too: the tool names the org's SSO URL, never a missing scope."""
    url = "https://github.com/orgs/NVIDIA/sso?authorization_request=AbC123"
    fake.state.saml_orgs["NVIDIA"] = url
    fake.state.org_members["NVIDIA"] = {sc.OWNER}  # SSO is enforced for members only
    with pytest.raises(GitHubError) as caught:
        client(fake, []).repo(sc.UPSTREAM)
    message = str(caught.value)
    assert "SAML" in message and url in message and "authorize" in message
    assert "lacks a scope" not in message
    fake.state.sso_authorized.add((sc.TOKEN, "NVIDIA"))
    assert client(fake, []).repo(sc.UPSTREAM).full_name == sc.UPSTREAM


def test_a_redirect_to_another_host_never_carries_the_token():
    """The client follows GitHub's 301 (a renamed repository) on the API host; an answer whose
    Location names another host must not take the token there (the request may fail, the
    token stays home)."""
    from testing import hostile_github as hostile
    from testing.capture_server import CaptureServer

    with CaptureServer("127.0.0.2") as other:

        def away(h, n):
            h.send_response(301)
            h.send_header("Location", f"{other.url}/repositories/1")
            h.send_header("Content-Length", "0")
            h.end_headers()

        with hostile.Misbehaving(away) as server:
            gh = GitHub(host=server.url, token=sc.TOKEN, sleep=lambda s: None, backoff=0.01)
            with pytest.raises(GitHubError):
                gh.repo("acme/widgets")
        assert other.seen, "the redirect was followed to the other host"
        assert other.authorizations() == [] and sc.TOKEN not in repr(other.seen)
