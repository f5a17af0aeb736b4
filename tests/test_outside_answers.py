"""What outside answers may do: hostile or broken API and git servers on loopback, against
real ghapi over real HTTP and real git. Each server stops by itself (testing/hostile_github);
the limits are lowered here so that a protected client stops long before it does."""

from __future__ import annotations

import base64
import random

import pytest

from patchcarry import cli, git, limits
from patchcarry.errors import BadInputError, GitHubError, NetworkError
from patchcarry.github import ConnectionFailed, GitHub
from patchcarry.hosts import api_host
from testing import github_scenarios as sc
from testing import hostile_github as hostile
from testing.fake_github import FakeGitHub
from testing.upstream_repos import PINNED_ENV
from tests import test_resubmit

pytest_plugins = ["testing.fake_github"]

# the resubmit world (an upstream, an attached fork, the loopback GitHub) and its entry
ENTRY = test_resubmit.ENTRY
template_upstream = test_resubmit.template_upstream
world = test_resubmit.world

SECRET = "sentinel-secret-in-gh-host-0123456789"


def _never_sleep(seconds: float) -> None:
    return None


# -- retries: each one counted --------------------------------------------------------------
@pytest.mark.parametrize("wait", ["0", "1"])
def test_a_server_that_always_says_retry_after_is_obeyed_a_counted_number_of_times(wait):
    """429 + Retry-After: 0 (or 1) to 50 requests: the client gives up after its own count of
    waits, long before the server would give in."""
    with hostile.Misbehaving(hostile.retry_after(wait, times=50)) as server:
        gh = GitHub(host=server.url, token="t", sleep=_never_sleep)
        with pytest.raises(GitHubError, match="rate limited.* after 3 waits"):
            gh.user()
        assert server.requests == GitHub.RATE_WAITS + 1


# -- a deadline and a size cap on every answer ----------------------------------------------
def test_a_dripping_api_server_is_left_at_the_deadline_with_exit_4(monkeypatch, capsys):
    """An answer dripped a byte at a time (each read well within the per-read timeout) is
    given up at the exchange's total deadline: exit 4, one line naming the host."""
    monkeypatch.setattr(limits, "HTTP_DEADLINE_S", 0.5)
    with hostile.Misbehaving(hostile.drip(0.05, count=200)) as server:
        monkeypatch.setenv("GH_HOST", server.url)
        monkeypatch.setenv("GITHUB_TOKEN", "t")
        assert cli.main(["scan"]) == 4
        err = capsys.readouterr().err.strip()
        assert server.url.removeprefix("http://") in err and "within 0.5 s" in err
        assert len(err.splitlines()) == 1
        assert server.requests == 1 and server.finished == 0  # it hung up mid-drip


def test_a_write_whose_answer_outlasts_the_deadline_says_so_not_a_dropped_connection(monkeypatch):
    """A write is never retried, so the socket read cut at the exchange's deadline is the
    last word: it says the deadline passed, not that the connection failed."""
    monkeypatch.setattr(limits, "HTTP_DEADLINE_S", 0.3)
    monkeypatch.setattr(limits, "HTTP_READ_TIMEOUT_S", 30.0)  # the deadline comes first
    with hostile.Misbehaving(hostile.silent(hold_s=2)) as server:
        gh = GitHub(host=server.url, token="t", sleep=_never_sleep)
        with pytest.raises(NetworkError, match=r"no complete answer within 0\.3 s") as caught:
            gh.request("POST", "/user/repos")
        assert server.url.removeprefix("http://") in str(caught.value)
        assert server.requests == 1


def test_an_endless_api_answer_is_cut_at_the_size_cap(monkeypatch):
    monkeypatch.setattr(limits, "HTTP_MAX_BYTES", 1 << 20)
    with hostile.Misbehaving(hostile.endless_body(total=32 << 20)) as server:
        gh = GitHub(host=server.url, token="t", sleep=_never_sleep)
        with pytest.raises(NetworkError, match=r"passed 1048576 bytes"):
            gh.user()
        assert server.finished == 0


# every coding asked for, deflate in HTTP's zlib form and bare, and two codings one on another
CODINGS = ["gzip", "deflate", "raw-deflate", "deflate, gzip", "gzip, gzip"]


@pytest.mark.parametrize("encoding", CODINGS)
def test_a_compressed_answer_is_capped_as_decoded_not_only_as_sent(monkeypatch, encoding):
    """About 32 KiB on the wire that decodes to 32 MiB: the cap counts decoded bytes too, and
    the client stops before it holds more than the cap (the decoded answer is never built)."""
    import tracemalloc

    monkeypatch.setattr(limits, "HTTP_MAX_DECODED", 1 << 20)
    with hostile.Misbehaving(
        hostile.compressed_body(decoded=32 << 20, encoding=encoding)
    ) as server:
        gh = GitHub(host=server.url, token="t", sleep=_never_sleep)
        tracemalloc.start()
        try:
            with pytest.raises(NetworkError) as caught:
                gh.user()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    said = str(caught.value)
    assert server.url.removeprefix("http://") in said and "decoded past 1048576 bytes" in said
    assert "\n" not in said
    assert peak < 8 << 20  # a few times the cap at most, never the 32 MiB it decodes to


@pytest.mark.parametrize("encoding", CODINGS)
def test_a_compressed_answer_under_the_cap_reads_as_github_sends_it(monkeypatch, encoding):
    """github.com compresses its answers: one under the cap decodes whole, byte for byte."""
    monkeypatch.setattr(limits, "HTTP_MAX_DECODED", 1 << 20)
    behaviour = hostile.compressed_body(decoded=3 << 18, encoding=encoding, chunk=1 << 18)
    with hostile.Misbehaving(behaviour) as server:
        user = GitHub(host=server.url, token="t", sleep=_never_sleep).request("GET", "/user")
    assert user["login"] == "x" and user["pad"] == "." * (3 << 18)


@pytest.mark.parametrize("encoding", CODINGS)
def test_a_compressed_answer_whose_first_chunk_is_one_byte_reads_whole(encoding):
    """`deflate` comes zlib-wrapped or bare, told by its first two bytes: an answer whose
    first chunk holds one of them is read once the second comes, not refused."""
    behaviour = hostile.compressed_body(decoded=1 << 10, encoding=encoding, chunk=1 << 10, first=1)
    with hostile.Misbehaving(behaviour) as server:
        user = GitHub(host=server.url, token="t", sleep=_never_sleep).request("GET", "/user")
    assert user["login"] == "x" and user["pad"] == "." * (1 << 10)


@pytest.mark.parametrize("encoding", CODINGS)
def test_a_compressed_answer_that_ends_early_is_refused_as_incomplete(encoding):
    """A whole HTTP body whose compressed data stops short (its last bytes left off) is an
    incomplete answer, refused in one line, never read as the text it had so far."""
    behaviour = hostile.compressed_body(decoded=1 << 10, encoding=encoding, chunk=1 << 10, cut=4)
    with hostile.Misbehaving(behaviour) as server:
        gh = GitHub(host=server.url, token="t", sleep=_never_sleep)
        with pytest.raises(NetworkError, match="ended before its compressed data did") as caught:
            gh.request("GET", "/user")
    assert server.url.removeprefix("http://") in str(caught.value)


@pytest.mark.parametrize("encoding", CODINGS)
def test_a_compressed_answer_is_capped_as_sent_too(monkeypatch, encoding):
    """An answer that compresses badly is counted on the wire as well: past the wire cap it
    stops, however far it still is from the decoded cap."""
    monkeypatch.setattr(limits, "HTTP_MAX_BYTES", 1 << 20)
    monkeypatch.setattr(limits, "HTTP_MAX_DECODED", 64 << 20)
    noise = base64.b64encode(random.Random(6339).randbytes(3 << 18))  # 1 MiB, incompressible
    with hostile.Misbehaving(
        hostile.compressed_body(decoded=3 << 20, encoding=encoding, pad=noise)
    ) as server:
        gh = GitHub(host=server.url, token="t", sleep=_never_sleep)
        with pytest.raises(NetworkError, match=r"the answer passed 1048576 bytes"):
            gh.user()


def test_a_gzip_bomb_ends_scan_with_exit_4_in_one_line(monkeypatch, capsys):
    monkeypatch.setattr(limits, "HTTP_MAX_DECODED", 1 << 20)
    with hostile.Misbehaving(hostile.compressed_body(decoded=8 << 20)) as server:
        monkeypatch.setenv("GH_HOST", server.url)
        monkeypatch.setenv("GITHUB_TOKEN", "t")
        assert cli.main(["scan"]) == 4
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and server.url.removeprefix("http://") in err, err


@pytest.mark.parametrize("coding", ["br", "zstd", "gzip, br, gzip", "compress"])
def test_an_answer_in_a_coding_never_asked_for_is_refused_in_one_line(coding, monkeypatch):
    """The client asks for gzip and deflate alone (whatever httpx could decode): an answer
    in another coding, or more codings than one plus one, is refused, not read as JSON."""
    with hostile.Misbehaving(hostile.raw_answer(b"\x00" * 64, Content_Encoding=coding)) as server:
        gh = GitHub(host=server.url, token="t", sleep=_never_sleep)
        with pytest.raises(NetworkError, match="an encoding this tool does not ask for"):
            gh.user()


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "nested deeper"),
        (b'{"login": "x", "id": 1', "not JSON"),
        (b'{"login": "\xff"}', "not JSON"),
    ],
    ids=["deep", "cut", "not-utf8"],
)
def test_an_answer_json_cannot_read_is_one_line_naming_the_request(data, why, monkeypatch, capsys):
    """JSON nested 100,000 deep (RecursionError in any JSON reader), cut short, or not UTF-8:
    exit 4 in one line naming the request and the host, no traceback."""
    with hostile.Misbehaving(hostile.raw_answer(data)) as server:
        monkeypatch.setenv("GH_HOST", server.url)
        monkeypatch.setenv("GITHUB_TOKEN", "t")
        assert cli.main(["scan"]) == 4
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "GET /user" in err and why in err, err
    assert server.url.removeprefix("http://") in err


def test_a_git_server_with_an_endless_ref_list_stops_check_at_the_deadline(
    monkeypatch, tmp_path, capsys
):
    monkeypatch.setattr(limits, "GIT_DEADLINE_S", 1.0)
    with hostile.Misbehaving(hostile.endless_refs(count=5000, every_s=0.005)) as server:
        url = f"{server.url}/NVIDIA/Megatron-LM.git"
        code = cli.main(["check", "--upstream", url, "--work-dir", str(tmp_path / "wd")])
        err = capsys.readouterr().err.strip()
        assert code == 4, err
        assert server.url in err and "still running after 1 s" in err
        assert server.finished == 0


def test_git_output_past_its_cap_is_refused(monkeypatch):
    monkeypatch.setattr(limits, "GIT_MAX_OUTPUT", 10_000)
    with hostile.Misbehaving(hostile.endless_refs(count=2000)) as server:
        with pytest.raises(NetworkError, match=r"ls-remote from .*printed more than 10000"):
            git.ls_remote_refs(f"{server.url}/x.git", ["refs/heads/*"])


def test_a_git_server_whose_pack_goes_on_is_stopped_at_the_disk_cap(monkeypatch, tmp_path, capsys):
    """A fetch writes what the server sends into the cache: a pack without end is stopped
    once what it wrote passes the cap (long before the deadline), and nothing half-written
    stays behind."""
    monkeypatch.setattr(limits, "GIT_MAX_WRITTEN", 1 << 20)
    refs = ("refs/heads/dev", "refs/pull/6017/head", "refs/pull/6117/head")
    with hostile.Misbehaving(hostile.endless_pack(total=64 << 20, refs=refs)) as server:
        url = f"{server.url}/NVIDIA/Megatron-LM.git"
        wd = tmp_path / "wd"
        code = cli.main(["check", "--upstream", url, "--work-dir", str(wd)])
        err = capsys.readouterr().err.strip()
        assert code == 4, err
        assert f"git fetch from {server.url}: wrote more than 1048576 bytes to disk" in err
    assert not wd.exists()  # the cache this run made is gone again, half-written pack and all


@pytest.mark.parametrize("ours", [True, False])
def test_a_half_written_pack_is_removed_from_a_cache_that_stays(monkeypatch, tmp_path, ours):
    """In a cache this tool made, what the killed fetch left half-written is removed; in any
    other repository a `tmp_*` file may be another git's, so it is left alone."""
    from patchcarry import cachedir

    monkeypatch.setattr(limits, "GIT_MAX_WRITTEN", 1 << 20)
    repo = tmp_path / "cache"
    if ours:
        cachedir.claim(repo)
    repo.mkdir(exist_ok=True)
    git.init_bare(repo)
    with hostile.Misbehaving(hostile.endless_pack(total=64 << 20)) as server:
        with pytest.raises(NetworkError, match="wrote more than 1048576 bytes"):
            git.fetch_partial(f"{server.url}/x.git", ["2" * 40 + ":refs/x"], cwd=repo, depth=1)
    left = [p.name for p in (repo / "objects").rglob("tmp_*")]
    assert (left == []) is ours


def _partial_cache(tmp_path):
    """A blob-less cache of a one-file upstream (its blob not fetched), the upstream's commit."""
    from patchcarry import upstream

    source = tmp_path / "source"
    git.init(source)
    (source / "f.txt").write_text("the blob a read must fetch\n")
    git.git("add", "f.txt", cwd=source)
    git.git("commit", "-qm", "one", cwd=source, env_extra=PINNED_ENV)
    sha = git.rev_parse("HEAD", cwd=source)
    fetched = upstream.fetch(
        str(source), base_commits=[sha], branches=[], pulls=[], work_dir=tmp_path / "wd"
    )
    return fetched, sha


def test_a_lazy_blob_fetch_inside_a_local_read_stops_at_the_deadline(monkeypatch, tmp_path):
    """Reading a file of a partial-clone cache makes git fetch its blob by itself, from the
    cache's promisor remote: that fetch has the same deadline as any other, and the line
    names the host it waited on."""
    fetched, sha = _partial_cache(tmp_path)
    monkeypatch.setattr(limits, "GIT_DEADLINE_S", 1.0)
    with hostile.Misbehaving(hostile.endless_refs(count=200, every_s=0.05)) as server:
        git.set_config("remote.origin.url", f"{server.url}/x.git", cwd=fetched.repo)
        with pytest.raises(NetworkError) as caught:
            fetched.show(sha, "f.txt")
        assert server.finished == 0
    said = str(caught.value)
    assert "still running after 1 s" in said and server.url in said
    assert "\n" not in said


def test_a_lazy_blob_fetch_that_goes_on_is_stopped_at_the_disk_cap(monkeypatch, tmp_path):
    fetched, sha = _partial_cache(tmp_path)
    monkeypatch.setattr(limits, "GIT_MAX_WRITTEN", 1 << 20)
    with hostile.Misbehaving(hostile.endless_pack(total=64 << 20)) as server:
        git.set_config("remote.origin.url", f"{server.url}/x.git", cwd=fetched.repo)
        with pytest.raises(NetworkError, match="wrote more than 1048576 bytes to disk"):
            fetched.show(sha, "f.txt")
    assert not [p.name for p in (fetched.repo / "objects").rglob("tmp_*")]


def _group_left(repo) -> list[int]:
    """Processes still running in `repo` (their working folder): what a stopped git left."""
    import os

    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/cwd").startswith(str(repo)):
                left.append(int(pid))
        except OSError:
            continue
    return left


def test_a_host_turned_dumb_cannot_start_a_chain_of_lazy_fetches(monkeypatch, tmp_path):
    """After the shallow fetches the host answers in dumb-HTTP form: each object the lazy
    fetch's transport looks for starts another lazy fetch, without end. The git call stops
    once its process tree passes the cap (long before the deadline), in one line naming the
    host, and nothing of the tree is left running."""
    fetched, sha = _partial_cache(tmp_path)
    monkeypatch.setattr(limits, "GIT_MAX_PROCESSES", 12)
    monkeypatch.setattr(limits, "GIT_DEADLINE_S", 20.0)
    with hostile.Misbehaving(hostile.dumb_http(sha)) as server:
        git.set_config("remote.origin.url", f"{server.url}/x.git", cwd=fetched.repo)
        with pytest.raises(NetworkError) as caught:
            fetched.show(sha, "f.txt")
    said = str(caught.value)
    assert "started more than 12 processes" in said and server.url in said, said
    assert "\n" not in said
    assert _group_left(fetched.repo) == []


def test_git_s_transport_holding_an_endless_ref_list_is_stopped_at_the_memory_cap(monkeypatch):
    """git-remote-http keeps the whole ref advertisement in memory before git prints a line:
    the output cap never sees it. What each git child may hold is capped, and the call stops
    in one line naming the host."""
    monkeypatch.setattr(limits, "GIT_MAX_MEMORY", 96 << 20)
    monkeypatch.setattr(limits, "GIT_MAX_OUTPUT", 8 << 20)
    endless = hostile.endless_refs(count=3_000_000, batch=20_000)  # about 200 MB of refs
    with hostile.Misbehaving(endless) as server:
        with pytest.raises(NetworkError) as caught:
            git.ls_remote_refs(f"{server.url}/x.git", ["refs/heads/*"])
        assert server.finished == 0
    said = str(caught.value)
    assert f"ls-remote from {server.url}" in said and "memory" in said, said
    assert "\n" not in said


# -- loopback never through a proxy; no credentials in GH_HOST -------------------------------
def test_loopback_traffic_never_reaches_a_proxy(monkeypatch, fake_github: FakeGitHub, tmp_path):
    """With every proxy variable naming a proxy on 127.0.0.2, the API call and git's call to
    the loopback GitHub go straight there: the token reaches no proxy."""
    sc.detached_fork_close(fake_github.state, tmp_path / "none.git", new_fork="none")
    with hostile.ProxyTrap("127.0.0.2") as trap:
        for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "ALL_PROXY",
                     "all_proxy"):  # fmt: skip
            monkeypatch.setenv(name, trap.url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.setenv("GH_HOST", fake_github.url)
        monkeypatch.setenv("GITHUB_TOKEN", sc.TOKEN)
        assert GitHub(host=fake_github.url, token=sc.TOKEN).user().login == sc.OWNER
        code, _, _ = git.ls_remote_refs(f"{fake_github.url}/nobody/none.git", ["HEAD"])
        assert code != 0  # the fake's 404, not the proxy's 502
        assert trap.seen == []


@pytest.mark.parametrize(
    "value",
    [
        f"http://x-access-token:{SECRET}@127.0.0.1:9",
        f"{SECRET}@ghe.example.com",
        f"https://user:{SECRET}@ghe.example.com/api/v3",
    ],  # fmt: skip
)
def test_credentials_in_gh_host_are_refused_never_echoed(value, monkeypatch, capsys):
    with pytest.raises(BadInputError, match="credentials in the URL") as caught:
        api_host(value)
    assert SECRET not in str(caught.value)
    monkeypatch.setenv("GH_HOST", value)
    monkeypatch.setenv("GITHUB_TOKEN", "t")
    assert cli.main(["scan", "--json"]) == 5
    captured = capsys.readouterr()
    assert SECRET not in captured.out + captured.err


# -- where the tool writes is never an API answer's choice ----------------------------------
def _rewriting(name: str, field: str, value: str) -> hostile.Rewrite:
    """Every repository object named `name` in any answer gets `field` = `value`."""

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if str(node.get("full_name", "")).lower() == name.lower():
                node[field] = value
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    def rewrite(method: str, path: str, body: object) -> object:
        walk(body)
        return body

    return rewrite


@pytest.mark.parametrize(
    ("target", "kinds"),
    [
        ("fork", ("path", "file", "ssh", "other-repo", "other-host", "credentials")),
        ("upstream", ("path", "other-repo")),
    ],
    ids=["fork", "upstream"],
)
def test_a_clone_url_naming_anywhere_else_is_refused_before_any_write(
    world,
    target,
    kinds,
    monkeypatch,
    capsys,
    tmp_path,
):
    """The API's clone_url for the fork (where the push goes) or the upstream (what is
    fetched) names a local repository, ssh, another repository or host: exit 5 in one line,
    nothing written on GitHub, nothing pushed anywhere. Each kind in turn on one world (a
    refused run leaves it as it was, and each run is checked to have)."""
    w = world()
    victim = tmp_path / "victim.git"
    git.git("init", "-q", "--bare", str(victim), cwd=tmp_path)
    name = sc.NEW_FORK if target == "fork" else sc.UPSTREAM
    holder: dict[str, str] = {}
    with hostile.RewritingFront(w.gh.url, lambda m, p, b: holder["rewrite"](m, p, b)) as front:
        answers = {
            "path": str(victim),
            "file": victim.as_uri(),
            "ssh": f"git@127.0.0.2:{name}.git",
            "other-repo": f"{front.url}/someone/other.git",
            "other-host": f"http://127.0.0.2:9/{name}.git",
            "credentials": f"http://x:{SECRET}@{front.url.removeprefix('http://')}/{name}.git",
        }
        monkeypatch.setenv("GH_HOST", front.url)
        for kind in kinds:
            holder["rewrite"] = _rewriting(name, "clone_url", answers[kind])
            assert w.run(ENTRY) == 5, kind
            err = capsys.readouterr().err.strip()
            assert len(err.splitlines()) == 1 and "clone_url" in err, (kind, err)
            if kind != "credentials":  # this run's own answer refused, not one left before
                assert f" is {answers[kind]}, not " in err, (kind, err)
            else:  # not "is URL, not URL" with the two the same once credentials are hidden
                assert " carries credentials (" in err and " not http" not in err, err
            assert SECRET not in err, kind
            assert w.writes() == [], kind
            assert git.git("for-each-ref", cwd=victim)[1] == "", kind  # nothing pushed there
            assert w.fork_branch() is None, kind


def test_a_fork_answered_under_another_owner_is_never_pushed_to(
    world,
    monkeypatch,
    capsys,
):
    """POST .../forks answering a repository of another owner: refused, nothing pushed."""
    w = world(new_fork="none")
    w.state.add_repo("someone/Megatron-LM", fork_of=sc.UPSTREAM)
    rewrite = _rewriting(sc.NEW_FORK, "full_name", "someone/Megatron-LM")
    with hostile.RewritingFront(
        w.gh.url, lambda m, p, b: rewrite(m, p, b) if m == "POST" else b
    ) as front:
        monkeypatch.setenv("GH_HOST", front.url)
        assert w.run(ENTRY) == 5
    err = capsys.readouterr().err.strip()
    assert "someone/Megatron-LM" in err and "not a fork owned by htesd" in err
    assert [m for m, _ in w.writes()] == ["POST"]  # the fork request alone


# -- a push retried only when its reason changed, a counted number of times -----------------
def _dev_moved_by_a_merge_the_fork_lacks(w) -> str:
    """Upstream's dev gains a merge of a side branch the fork never saw; upstream's server
    deepens only from what a fetch wants (its own history is shallow at its root, as a
    mirror's may be): a fetch of main cannot deepen dev's merge. The side commit's sha."""
    work = w.upstream.work
    dev = git.rev_parse("dev", cwd=w.upstream.bare)
    git.git("checkout", "-q", "-B", "side", dev, cwd=work)
    (work / "SIDE.md").write_text("a side branch the fork never saw\n")
    git.git("add", "-A", cwd=work)
    git.git("commit", "-q", "-m", "side: a commit", cwd=work, env_extra=PINNED_ENV)
    side = git.rev_parse("HEAD", cwd=work)
    git.git("checkout", "-q", "-B", "dev", dev, cwd=work)
    merge = ("merge", "-q", "--no-ff", "-m", "Merge side into dev", "side")
    git.git(*merge, cwd=work, env_extra=PINNED_ENV)
    git.git("push", "-q", "origin", "HEAD:refs/heads/dev", cwd=work)
    (w.upstream.bare / "shallow").write_text(w.upstream.base_commit + "\n")
    return side


def test_a_push_refused_for_shallow_history_deepens_what_it_needs_once(world, monkeypatch):
    """Upstream's default branch is main, PRs go to dev, and dev moved by a merge of a branch
    the fork lacks: `resubmit --rebase` builds on dev's tip from a shallow fetch, the fork
    refuses the shallow push; one fetch that deepens dev (not main) lets the next push in."""
    w = world()
    _dev_moved_by_a_merge_the_fork_lacks(w)
    with hostile.RewritingFront(w.gh.url, lambda m, p, b: b, max_requests=300) as front:
        monkeypatch.setenv("GH_HOST", front.url)
        assert w.run("--rebase", ENTRY) == 0
    pushes = [p for m, p in front.seen if m == "POST" and p.endswith("/git-receive-pack")]
    assert len(pushes) <= 2
    assert w.fork_branch() is not None


def test_a_push_deepening_cannot_help_is_refused_in_one_line_not_retried(
    world, monkeypatch, capsys
):
    """Upstream's own history ends at the side commit the fork lacks: no fetch can give the
    push what it needs. After the one deepening, the run stops with one line saying what
    would help, without a third push."""
    w = world()
    side = _dev_moved_by_a_merge_the_fork_lacks(w)
    (w.upstream.bare / "shallow").write_text(f"{w.upstream.base_commit}\n{side}\n")
    with hostile.RewritingFront(w.gh.url, lambda m, p, b: b, max_requests=300) as front:
        monkeypatch.setenv("GH_HOST", front.url)
        assert w.run("--rebase", ENTRY) == 1
    err = capsys.readouterr().err.strip()
    assert "refuses the push to" in err and "for its shallow history" in err
    assert "push the base branch to the fork" in err
    pushes = [p for m, p in front.seen if m == "POST" and p.endswith("/git-receive-pack")]
    assert 1 <= len(pushes) <= 2
    assert w.fork_branch() is None


def test_deepen_says_whether_the_shallow_boundary_moved(tmp_path):
    """The reason a refused push may be retried: the first deepening moves the boundary, a
    second one (nothing left to fetch) does not."""
    source = tmp_path / "source"
    git.init(source)
    for n in range(3):
        (source / "f.txt").write_text(f"{n}\n")
        git.git("add", "f.txt", cwd=source)
        git.git("commit", "-qm", f"c{n}", cwd=source, env_extra=PINNED_ENV)
    git.git("branch", "-M", "dev", cwd=source)
    clone = tmp_path / "clone"
    git.git("clone", "-q", "--depth=1", "--branch=dev", source.as_uri(), str(clone), cwd=tmp_path)
    assert len(git.shallow_commits(cwd=clone)) == 1
    assert git.deepen(source.as_uri(), "dev", cwd=clone) is True
    assert git.shallow_commits(cwd=clone) == set()
    assert git.deepen(source.as_uri(), "dev", cwd=clone) is False


@pytest.mark.parametrize(
    ("api", "name", "answer"),
    [
        (
            "https://api.github.com",
            "NVIDIA/Megatron-LM",
            "https://github.com/NVIDIA/Megatron-LM.git",
        ),
        (
            "https://api.github.com",
            "nvidia/megatron-lm",
            "https://github.com/NVIDIA/Megatron-LM.git",
        ),
        ("https://ghe.example.com/api/v3", "o/r", "https://ghe.example.com/o/r.git"),
        ("https://api.tenant.ghe.com", "o/r", "https://tenant.ghe.com/o/r.git"),
        ("https://api.github.com", "o/r", None),
    ],  # fmt: skip
)
def test_githubs_own_clone_urls_are_the_derived_ones(api, name, answer):
    """What github.com, GHE and data-residency hosts answer is accepted as is (names are
    case-insensitive); the URL used is always the one derived from the host and the name."""
    from patchcarry import hosts

    assert hosts.answered_git_url(api, name, answer).lower() == (answer or
        "https://github.com/o/r.git").lower()  # fmt: skip


# -- the tool's cache stays quick to read however many lazy fetches left a pack -------------
def test_a_cache_of_many_packs_gets_a_multi_pack_index(tmp_path, monkeypatch):
    """Every lazy blob fetch leaves a pack, and git opens each pack's own index to find an
    object: past a few, the packs get one multi-pack index (no pack is rewritten), and every
    object is still found through it. The threshold is lowered here (the rule is the point,
    not its number): eight fetches, not twenty."""
    from patchcarry.git import repo as git_repo

    monkeypatch.setattr(git_repo, "PACKS_OUTSIDE_INDEX", 4)
    source = tmp_path / "source"
    git.init(source)
    cache = tmp_path / "cache"
    cache.mkdir()
    git.init_bare(cache)
    shas = []
    for n in range(git_repo.PACKS_OUTSIDE_INDEX + 4):  # a pack per fetch, as lazy fetches leave
        (source / "f.txt").write_text(f"{n}\n")
        git.git("add", "f.txt", cwd=source)
        git.git("commit", "-qm", f"c{n}", cwd=source, env_extra=PINNED_ENV)
        shas.append(git.rev_parse("HEAD", cwd=source))
        git.git(*git.NETWORK_ARGS, "fetch", "-q", str(source), f"+HEAD:refs/c/{n}", cwd=cache)
        assert git.index_packs(cache) is (n == git_repo.PACKS_OUTSIDE_INDEX)
    packs = cache / "objects" / "pack"
    assert len(list(packs.glob("*.pack"))) == git_repo.PACKS_OUTSIDE_INDEX + 4
    assert (packs / "multi-pack-index").is_file()
    git.git("multi-pack-index", "verify", cwd=cache)
    for sha in shas:
        git.git("cat-file", "-e", f"{sha}:f.txt", cwd=cache)


# -- proxy values curl and git accept ---------------------------------------------------------
REMOTE_API = "https://ghe.example.com/api/v3"  # not loopback: its traffic takes the proxy


@pytest.fixture
def fresh_clients():
    """The API client is made once per host (the proxy read then): made again for each test."""
    from patchcarry import github

    github._ghapi.cache_clear()
    yield
    github._ghapi.cache_clear()


def _only_proxy(monkeypatch, value: str) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "ALL_PROXY",
                 "all_proxy", "no_proxy", "NO_PROXY"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("https_proxy", value)


@pytest.mark.usefixtures("fresh_clients")
def test_a_scheme_less_proxy_is_an_http_proxy_as_curl_reads_it(monkeypatch):
    """curl (and so git) takes `host:port` and `user:password@host:port` as http:// proxies:
    the API client goes there too, and a failed proxy is a failed connection (exit 4) whose
    line never holds the password."""
    from patchcarry import http_transport

    _only_proxy(monkeypatch, "127.0.0.2:3128")
    assert http_transport.proxy_for(REMOTE_API) == "http://127.0.0.2:3128"
    with hostile.ProxyTrap("127.0.0.2") as trap:
        host, port = trap.server_address[:2]
        _only_proxy(monkeypatch, f"x:{SECRET}@{host}:{port}")
        gh = GitHub(host=REMOTE_API, token="t", sleep=_never_sleep)
        with pytest.raises(ConnectionFailed) as caught:
            gh.user()
        assert caught.value.exit_code == 4
        assert trap.seen and trap.seen[0].startswith(b"CONNECT ghe.example.com:443")
    said = str(caught.value)
    assert SECRET not in said and "\n" not in said


@pytest.mark.parametrize(
    "value",
    [
        "socks5://127.0.0.2:9",
        f"socks5h://x:{SECRET}@127.0.0.2:9",
        "socks4://127.0.0.2:9",
        f"ftp://x:{SECRET}@127.0.0.2:21",
        f"x:{SECRET}@127.0.0.2:notaport",
    ],
)
def test_a_proxy_the_api_client_cannot_use_is_refused_by_name(value, monkeypatch):
    """A proxy git may use but the API client cannot (SOCKS, ftp, a port that is no number):
    BadInputError naming the setting, never the password."""
    from patchcarry import http_transport

    _only_proxy(monkeypatch, value)
    with pytest.raises(BadInputError, match="https_proxy is ") as caught:
        http_transport.proxy_for(REMOTE_API)
    assert SECRET not in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.usefixtures("fresh_clients")
def test_an_unusable_proxy_stops_a_command_in_one_line_exit_5(monkeypatch, capsys):
    _only_proxy(monkeypatch, f"socks5h://x:{SECRET}@127.0.0.2:9")
    monkeypatch.setenv("GH_HOST", REMOTE_API)
    monkeypatch.setenv("GITHUB_TOKEN", "t")
    assert cli.main(["scan"]) == 5
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "https_proxy" in err and SECRET not in err


def test_an_api_that_never_answers_is_left_at_one_total_deadline_saying_it_waits(
    monkeypatch, capsys
):
    """It accepts the connection and answers nothing: the per-read timeout ends a try, and
    the tries together stop at the one total deadline (not a deadline each: four reads of
    the per-read timeout), while stderr says what the run waits for."""
    monkeypatch.setattr(limits, "HTTP_DEADLINE_S", 0.6)
    monkeypatch.setattr(limits, "HTTP_READ_TIMEOUT_S", 0.2)
    monkeypatch.setattr(limits, "HTTP_WAIT_NOTICE_S", 0.05)
    with hostile.Misbehaving(hostile.silent(hold_s=10)) as server:
        monkeypatch.setenv("GH_HOST", server.url)
        monkeypatch.setenv("GITHUB_TOKEN", "t")
        assert cli.main(["scan", "--all"]) == 4
        err = capsys.readouterr().err.strip().splitlines()
        host = server.url.removeprefix("http://")
        assert err[-1].startswith(f"error: {host}: no complete answer within 0.6 s")
        assert f"GET /user: waiting for {host} to answer" in err[0]
        assert any("no answer from" in line and "trying again" in line for line in err)
        assert server.requests < 4  # three retries would make four tries
