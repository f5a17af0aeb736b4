"""git.py keeps file contents as bytes: CRLF and non-UTF-8 blobs read, merged and written back
exactly (the live-branch revision reads, 3-way merges and stores them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchcarry import git
from testing.upstream_repos import PINNED_ENV

CRLF = b"a = 1\r\nb = 2\r\nc = 3\r\n"
LATIN1 = b"# caf\xe9\na = 1\nb = 2\nc = 3\n"


@pytest.mark.parametrize("data", [CRLF, LATIN1])
def test_blob_bytes_read_merged_and_written_back_exactly(tmp_path: Path, data: bytes) -> None:
    repo = tmp_path / "r"
    git.init(repo)
    (repo / "f.py").write_bytes(data)
    git.git("add", "f.py", cwd=repo)
    git.git("commit", "-qm", "base", cwd=repo, env_extra=PINNED_ENV)
    base = git.rev_parse("HEAD", cwd=repo)
    git.git("config", "core.autocrlf", "true", cwd=repo)  # filters must not touch our bytes
    assert git.show_file(base, "f.py", cwd=repo) == data
    ours = data.replace(b"a = 1", b"a = 10")
    theirs = data.replace(b"c = 3", b"c = 30")
    clean, merged = git.merge_file(ours, data, theirs, cwd=repo)
    assert clean and merged == ours.replace(b"c = 3", b"c = 30")
    index = tmp_path / "index"
    git.read_tree(base, index=index, cwd=repo)
    git.write_blob_to_index(merged, "f.py", index=index, cwd=repo)
    tree = git.write_tree(index=index, cwd=repo)
    assert git.show_file(tree, "f.py", cwd=repo) == merged


def test_a_tree_built_in_a_blobless_cache_fetches_only_the_blobs_it_changes(tmp_path: Path) -> None:
    """check and resubmit build trees in a `--filter=blob:none` cache: writing the tree must
    not fetch the blobs it never read (git write-tree checks every blob exists unless told)."""
    src = tmp_path / "src"
    git.init(src)
    (src / "a.py").write_text("a = 1\n")
    (src / "big.bin").write_bytes(bytes(range(256)) * 4096)  # 1 MiB nobody touches
    git.git("add", "-A", cwd=src)
    git.git("commit", "-qm", "base", cwd=src, env_extra=PINNED_ENV)
    base = git.rev_parse("HEAD", cwd=src)
    big = git.git("rev-parse", "HEAD:big.bin", cwd=src)[1].strip()
    cache = tmp_path / "cache"
    git.init(cache)
    git.git("config", "uploadpack.allowFilter", "true", cwd=src)
    git.git("remote", "add", "origin", src.as_uri(), cwd=cache)
    for key, value in (("promisor", "true"), ("partialclonefilter", "blob:none"),
                       ("uploadpack", git.LOCAL_UPLOAD_PACK)):  # fmt: skip
        git.git("config", f"remote.origin.{key}", value, cwd=cache)
    git.fetch_blobless("origin", [f"+{base}:refs/base"], cwd=cache)
    patch = tmp_path / "a.patch"
    patch.write_text("--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n")
    index = tmp_path / "index"
    git.read_tree(base, index=index, cwd=cache)
    assert git.apply_to_index(patch, index=index, cwd=cache, reverse=False, check=False)
    tree = git.write_tree(index=index, cwd=cache)
    assert git.show_file(tree, "a.py", cwd=cache) == b"a = 2\n"
    missing = git.git("rev-list", "--objects", "--missing=print", tree, cwd=cache)[1]
    assert f"?{big}" in missing.split()  # still only on the promisor: never fetched


def test_a_patch_hiding_a_symlinks_mode_cannot_retarget_it(tmp_path: Path) -> None:
    """A retargeted symlink whose `index` line lost its mode reads as a plain edit (git apply
    --summary says nothing), but git's tree says what the path is: the build refuses it."""
    import os
    import re

    from patchcarry import patchfile
    from patchcarry.errors import BadInputError
    from patchcarry.resubmit.live import Cache

    repo = tmp_path / "r"
    git.init(repo)
    os.symlink("target", repo / "link")
    git.git("add", "-A", cwd=repo)
    git.git("commit", "-qm", "base", cwd=repo, env_extra=PINNED_ENV)
    base = git.rev_parse("HEAD", cwd=repo)
    os.remove(repo / "link")
    os.symlink("/etc/passwd", repo / "link")
    message = "retarget\n\nSigned-off-by: Fixture Upstream <upstream@example.invalid>"
    git.git("commit", "-qam", message, cwd=repo, env_extra=PINNED_ENV)
    written = git.format_patch("HEAD", number=1, out_dir=tmp_path / "out", cwd=repo)
    text = written.read_bytes()
    hidden = re.sub(rb"(?m)^(index [0-9a-f]+\.\.[0-9a-f]+) 120000$", rb"\1", text)
    assert hidden != text
    written.write_bytes(hidden)
    patch = patchfile.load(written)  # the text alone looks like a plain edit of `link`
    with pytest.raises(BadInputError, match="link, a symlink"):
        Cache(repo).apply(base, [patch])
    assert git.special_at(git.modes_at(base, ["link", "absent"], cwd=repo)) == [
        ("link", "a symlink")
    ]  # check's


def test_a_carriage_return_inside_a_line_is_content_not_a_line_break(tmp_path: Path) -> None:
    """git splits a patch on LF alone: a CR before text that looks like a diff header is
    part of the line, so the patch reads as the one file git applies."""
    from patchcarry import patchfile

    repo = tmp_path / "r"
    git.init(repo)
    (repo / "a.py").write_bytes(b"x = 1\n")
    git.git("add", "-A", cwd=repo)
    git.git("commit", "-qm", "base", cwd=repo, env_extra=PINNED_ENV)
    (repo / "a.py").write_bytes(b"x = 1\rdiff --git a/y b/y\n")
    message = "cr\n\nSigned-off-by: Fixture Upstream <upstream@example.invalid>"
    git.git("commit", "-qam", message, cwd=repo, env_extra=PINNED_ENV)
    written = git.format_patch("HEAD", number=1, out_dir=tmp_path / "out", cwd=repo)
    assert patchfile.load(written).files == ("a.py",)


def test_a_repositorys_shallow_file_is_remembered_for_one_run_only(tmp_path: Path) -> None:
    """`shallow_file` asks git once per repository in a run; a new run (cli.main forgets)
    asks again, so a folder made into another kind of repository is read afresh."""
    repo = tmp_path / "r"
    git.git("init", "-q", str(repo), cwd=tmp_path)
    git.forget_run_memos()
    assert git.shallow_file(cwd=repo) == repo / ".git" / "shallow"
    (repo / ".git").rename(tmp_path / "moved.git")
    git.git("init", "-q", "--bare", str(repo), cwd=tmp_path)
    assert git.shallow_file(cwd=repo) == repo / ".git" / "shallow"  # this run's answer
    git.forget_run_memos()
    assert git.shallow_file(cwd=repo) == repo / "shallow"
    assert git.shallow_commits(cwd=repo) == set()
