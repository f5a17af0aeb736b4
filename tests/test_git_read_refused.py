"""A network read git could not do reaches its caller as the tool's own record (`ReadRefused`):
what git's words mean is decided inside `git/` (a shallow-since fetch with nothing that new),
the words themselves are only quoted."""

from __future__ import annotations

from pathlib import Path

from patchcarry import git

OLD = {
    "GIT_COMMITTER_DATE": "2001-01-01T00:00:00+0000",
    "GIT_AUTHOR_DATE": "2001-01-01T00:00:00+0000",
}


def _upstream(tmp_path: Path) -> tuple[Path, str]:
    src = tmp_path / "src"
    git.init(src)
    args = (
        "-c",
        "user.name=a",
        "-c",
        "user.email=a@e",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "one",
    )
    git.git(*args, cwd=src, env_extra=OLD)
    cache = tmp_path / "cache"
    cache.mkdir()
    git.init_bare(cache)
    return cache, git.rev_parse("HEAD", cwd=src)


def test_a_fetch_since_a_date_newer_than_every_commit_is_nothing_new(tmp_path: Path) -> None:
    cache, sha = _upstream(tmp_path)
    url = (tmp_path / "src").as_uri()
    refused = git.fetch_partial(url, [f"+{sha}:refs/x"], since=1767139200, cwd=cache)
    assert refused is not None and refused.nothing_new and refused.code != 0
    assert "no commits selected" in refused.text  # git's words, kept to quote
    assert git.fetch_partial(url, [f"+{sha}:refs/x"], depth=1, cwd=cache) is None


def test_a_failed_read_is_refused_with_a_fallback_where_git_said_nothing(tmp_path: Path) -> None:
    cache, _ = _upstream(tmp_path)
    url = (tmp_path / "src").as_uri()
    refused = git.fetch_partial(url, ["2" * 40 + ":refs/x"], depth=1, cwd=cache)
    assert refused is not None and not refused.nothing_new and refused.last
    code, refs, why = git.ls_remote_refs((tmp_path / "absent").as_uri(), ["refs/heads/*"])
    assert code != 0 and refs == {} and why is not None and why.last == why.said.splitlines()[-1]
    assert git.ReadRefused(128, "", "git ls-remote exited 128").text == "git ls-remote exited 128"
    assert git.ls_remote_refs(url, ["HEAD"]).refused is None
