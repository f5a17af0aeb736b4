"""The loopback GitHub's git side answers a smart-HTTP read (testing/fake_github_git.py runs
`git upload-pack` itself, one process fewer than `git http-backend`) with the bytes and headers
`git http-backend` gives, in every protocol version; a clone, a fetch of many refs (a gzip'd
request) and a blob-less fetch all go through."""

from __future__ import annotations

import os
import subprocess
import urllib.request
from pathlib import Path

import pytest

from patchcarry import git
from testing.fake_github import FakeGitHub, GitHubState
from testing.fake_github_git import _GIT, _SERVER_CONFIG

BRANCHES = 60  # enough `want` lines that git gzips the request (over 1 KiB)


@pytest.fixture
def served(tmp_path: Path):  # noqa: ANN201
    """A bare repository of `BRANCHES` commits in a line, a branch at each, served as o/r."""
    bare = tmp_path / "r.git"
    git.git("init", "-q", "--bare", str(bare), cwd=tmp_path)
    stream = "".join(
        f"commit refs/heads/b{n}\ncommitter t <t@e> 1767225600 +0000\ndata 3\nc{n:02d}\n"
        + (f"from refs/heads/b{n - 1}\n" if n else "")
        + f"M 644 inline f\ndata 3\n{n:02d}\n\n"
        for n in range(BRANCHES)
    )
    git.git("fast-import", "--quiet", cwd=bare, stdin=stream)
    git.git("update-ref", "refs/heads/main", f"refs/heads/b{BRANCHES - 1}", cwd=bare)
    with FakeGitHub(GitHubState()) as gh:
        gh.state.add_user("o")
        gh.state.add_repo("o/r", bare, default_branch="main")
        yield gh, bare


def _backend(bare: Path, protocol: str) -> tuple[dict[str, str], bytes]:
    """What `git http-backend` answers the ref advertisement with: (headers, body)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_HTTP_EXPORT_ALL="1", GIT_PROJECT_ROOT=str(bare.parent),
               PATH_INFO=f"/{bare.name}/info/refs", REQUEST_METHOD="GET",
               QUERY_STRING="service=git-upload-pack", GIT_PROTOCOL=protocol,
               GIT_CONFIG_COUNT=str(len(_SERVER_CONFIG)))  # fmt: skip
    for n, (key, value) in enumerate(_SERVER_CONFIG.items()):  # what GitHub's allows
        env[f"GIT_CONFIG_KEY_{n}"], env[f"GIT_CONFIG_VALUE_{n}"] = key, value
    out = subprocess.run([_GIT, "http-backend"], env=env, capture_output=True, check=True).stdout
    head, _, body = out.partition(b"\r\n\r\n")
    headers = dict(line.split(": ", 1) for line in head.decode().splitlines())
    return headers, body


@pytest.mark.parametrize("protocol", ["", "version=1", "version=2"])
def test_the_ref_advertisement_is_http_backends_byte_for_byte(served, protocol) -> None:
    gh, bare = served
    request = urllib.request.Request(f"{gh.url}/o/r.git/info/refs?service=git-upload-pack")
    if protocol:
        request.add_header("Git-Protocol", protocol)
    with urllib.request.urlopen(request, timeout=60) as answer:
        body, headers = answer.read(), answer.headers
    expected_headers, expected = _backend(bare, protocol)
    assert body == expected
    for key in ("Content-Type", "Cache-Control", "Pragma", "Expires"):
        assert headers[key] == expected_headers[key], key


@pytest.mark.parametrize("version", ["0", "2"])
def test_clone_deepen_many_refs_and_a_blobless_fetch_go_through(served, tmp_path, version):
    gh, bare = served
    url, clone = f"{gh.url}/o/r.git", tmp_path / "clone"
    proto = ("-c", f"protocol.version={version}")
    git.git(*proto, "clone", "-q", "--depth=1", "--single-branch", "--branch=b0", url,
            str(clone), cwd=tmp_path)  # fmt: skip
    assert git.rev_list("HEAD", cwd=clone) == [git.rev_parse("b0", cwd=bare)]
    # every other branch's tip is a `want` of its own: a request git sends gzip'd
    git.git(*proto, "fetch", "-q", "origin", "+refs/heads/*:refs/remotes/o/*", cwd=clone)
    assert git.rev_list("refs/remotes/o/main", cwd=clone) == git.rev_list("main", cwd=bare)
    assert len(git.refs_under("refs/remotes/o/", cwd=clone)) == BRANCHES + 1
    empty = tmp_path / "empty"
    git.init(empty)
    git.git(*proto, "fetch", "-q", "--filter=blob:none", url, "main", cwd=empty)
    assert git.rev_parse("FETCH_HEAD", cwd=empty) == git.rev_parse("main", cwd=bare)


def test_the_v2_advertisement_comes_from_one_upload_pack_per_configuration(
    served, tmp_path, monkeypatch
) -> None:
    """Protocol v2's `info/refs` answer names no ref, so the loopback GitHub asks git's
    upload-pack once and answers later requests with the same bytes; a repository whose own
    config changes the advertisement (a sha256 object format) gets its own, each still
    `git http-backend`'s byte for byte."""
    gh, bare = served
    log = tmp_path / "spawned"
    wrapper = tmp_path / "git"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {_GIT} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setattr("testing.fake_github_git._GIT", str(wrapper))
    other = tmp_path / "s.git"
    git.git("init", "-q", "--bare", "--object-format=sha256", str(other), cwd=tmp_path)
    gh.state.add_repo("o/s", other, default_branch="main")

    def advertised(name: str) -> bytes:
        request = urllib.request.Request(f"{gh.url}/o/{name}.git/info/refs?service=git-upload-pack")
        request.add_header("Git-Protocol", "version=2")
        with urllib.request.urlopen(request, timeout=60) as answer:
            return bytes(answer.read())

    for _ in range(3):
        assert advertised("r") == _backend(bare, "version=2")[1]
        assert advertised("s") == _backend(other, "version=2")[1]
    assert b"object-format=sha256" in advertised("s")
    assert log.read_text().count("upload-pack") <= 2  # one per configuration, not per request
