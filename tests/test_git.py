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
