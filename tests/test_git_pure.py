"""git's pure answers (`git.pure`) are asked once per process and remembered by content: the
same patch bytes under any name are read by git once, two different byte strings never share an
answer, a branch name's verdict is asked once, and an answer about commits is remembered only
when full ids name them (a ref moves). Counted in the run's log (`trace`), which still shows
each answer a run used: the first use in a run of a remembered one is logged as such."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from patchcarry import git, patchfile, trace
from patchcarry.git import pure
from testing.upstream_repos import PINNED_ENV

PATCH = """From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: A U Thor <a@example.invalid>
Date: Mon, 1 Jan 2024 00:00:00 +0000
Subject: [PATCH] Fix TOKEN

Keep TOKEN.

Signed-off-by: A U Thor <a@example.invalid>
---
diff --git a/x.py b/x.py
--- a/x.py
+++ b/x.py
@@ -1,2 +1,3 @@
 a
+TOKEN
 b
"""
READS = ("mailsplit", "mailinfo", "interpret-trailers", "apply --numstat")


@pytest.fixture
def run_log() -> Iterator[Path]:
    """A run begun as `cli.main` begins one (its log started, run memos forgotten)."""
    trace.start(["patchcarry", "test"])
    git.forget_run_memos()
    yield trace.log_path()
    trace.stop()


def _new_run() -> None:
    trace.start(["patchcarry", "test"])
    git.forget_run_memos()


def _ran(log: Path, words: str, *, remembered: bool = False) -> int:
    """How many gits with `words` the log shows as run (or as remembered, not run again)."""
    lines = [ln for ln in log.read_text().splitlines() if f"run  git {words}" in ln]
    return sum(("(remembered" in ln) == remembered for ln in lines)


def _unique() -> str:
    return uuid.uuid4().hex  # bytes no earlier test in this process gave git


def test_the_same_patch_bytes_are_read_by_git_once_by_content_not_by_path(
    tmp_path: Path, run_log: Path
) -> None:
    token = _unique()
    data = PATCH.replace("TOKEN", token).encode()
    first, second = tmp_path / "0001-a.patch", tmp_path / "0002-b.patch"
    first.write_bytes(data)
    second.write_bytes(data)
    one = patchfile.load(first)
    assert [_ran(run_log, w) for w in READS] == [1, 1, 1, 1]
    two = patchfile.load(second)  # the same bytes at another path: git is not asked again
    assert [_ran(run_log, w) for w in READS] == [1, 1, 1, 1]
    assert (two.name, two.path) == ("0002-b.patch", second)
    assert (two.subject, two.message, two.signoffs, two.changes) == (
        one.subject, one.message, one.signoffs, one.changes,
    )  # fmt: skip
    # the file at the first path changes: its new bytes are read by git, never the old answer
    first.write_bytes(data.replace(token.encode(), b"other" + token.encode()))
    three = patchfile.load(first)
    assert [_ran(run_log, w) for w in READS] == [2, 2, 2, 2]
    assert three.subject == f"Fix other{token}" and one.subject == f"Fix {token}"
    assert three.hunks[0].lines[1] == f"+other{token}"


def test_two_byte_strings_never_share_an_answer(run_log: Path) -> None:
    token = _unique()
    a = f"Fix {token}\n\nSigned-off-by: A <a@example.invalid>\n".encode()
    b = f"Fix {token}\n\nSigned-off-by: B <b@example.invalid>\n".encode()
    assert pure.question(("interpret-trailers", "--parse"), a) != pure.question(
        ("interpret-trailers", "--parse"), b
    )
    assert git.trailers(a) == [("Signed-off-by", "A <a@example.invalid>")]
    assert git.trailers(b) == [("Signed-off-by", "B <b@example.invalid>")]
    assert git.trailers(a) == [("Signed-off-by", "A <a@example.invalid>")]  # remembered
    assert _ran(run_log, "interpret-trailers") == 2
    found = git.trailers(a)
    found.append(("Changed", "by the caller"))  # a caller's copy: the answer kept is not touched
    assert git.trailers(a) == [("Signed-off-by", "A <a@example.invalid>")]


def test_a_branch_names_verdict_is_asked_once_and_each_runs_log_shows_it(run_log: Path) -> None:
    good, bad = f"fix/{_unique()}", f"fix/{_unique()}..x"
    assert [git.is_valid_branch_name(n) for n in (good, bad, good, bad)] == [True, False] * 2
    log = run_log.read_text()
    assert log.count(f"run  git check-ref-format refs/heads/{good} -> exit 0\n") == 1
    assert log.count(f"run  git check-ref-format refs/heads/{bad} -> exit 1\n") == 1
    _new_run()  # a later run in this process: no git, and its log shows the answers it used
    assert [git.is_valid_branch_name(n) for n in (good, bad, good)] == [True, False, True]
    assert _ran(run_log, "check-ref-format") == 0
    log = run_log.read_text()
    assert log.count(f"run  git check-ref-format refs/heads/{good} -> exit 0 (remembered") == 1
    assert log.count(f"run  git check-ref-format refs/heads/{bad} -> exit 1 (remembered") == 1


def test_answers_about_commits_are_remembered_by_full_id_never_by_ref(
    tmp_path: Path, run_log: Path
) -> None:
    repo = tmp_path / "r"
    git.init(repo)
    for n in range(3):
        (repo / f"{_unique()}.py").write_text(f"x = {n}\n")
        git.git("add", "-A", cwd=repo)
        git.git("commit", "-qm", f"c{n}", cwd=repo, env_extra=PINNED_ENV)
    old, new = git.rev_parse("HEAD~1", cwd=repo), git.rev_parse("HEAD", cwd=repo)
    by_ref = git.changed_paths("HEAD~1", "HEAD", cwd=repo)
    assert git.changed_paths(old, new, cwd=repo) == by_ref
    assert git.changed_paths(old, new, cwd=repo) == by_ref
    assert _ran(run_log, "diff-tree") == 2  # the refs' answer, then the ids' once
    (repo / "later.py").write_text("y = 1\n")  # HEAD moves: the refs name other commits now
    git.git("add", "-A", cwd=repo)
    git.git("commit", "-qm", "later", cwd=repo, env_extra=PINNED_ENV)
    assert git.changed_paths("HEAD~1", "HEAD", cwd=repo) == ["later.py"]
    assert git.changed_paths(old, new, cwd=repo) == by_ref
    assert _ran(run_log, "diff-tree") == 3


def test_a_diffs_patch_id_is_asked_once_whether_alone_or_among_many(
    tmp_path: Path, run_log: Path
) -> None:
    token = _unique()
    one = f"diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+{token}\n"
    two = one.replace(f"+{token}", f"+{token}2")
    ids = git.patch_ids([one, two, one], cwd=tmp_path)
    assert ids[0] == ids[2] and ids[0] != ids[1] and None not in ids
    assert git.patch_id(two, cwd=tmp_path) == ids[1]  # alone: the same key, remembered
    assert git.patch_ids([one, two], cwd=tmp_path) == ids[:2]
    assert _ran(run_log, "patch-id") == 1
    three = one.replace(f"+{token}", f"+{token}3")
    assert git.patch_ids([one, three], cwd=tmp_path)[1] not in ids  # only the new one asked
    assert _ran(run_log, "patch-id") == 2
    assert _ran(run_log, "patch-id", remembered=True) == 0  # this run asked them itself


def test_a_mail_s_own_header_does_not_hide_its_patch_id(tmp_path: Path) -> None:
    """A patch file as format-patch writes it starts `From <sha>`, which git patch-id takes for
    the id to name: alone or among diffs, its id is git's for its diff, never None."""
    token = _unique()
    mail = (
        PATCH.replace("TOKEN", token).replace("From " + "0" * 40, "From " + "16eb82dd" * 5).encode()
    )
    diff = mail[mail.index(b"diff --git") :]
    other = diff.replace(token.encode(), f"{token}2".encode())
    alone = git.patch_id(diff, cwd=tmp_path)
    ids = git.patch_ids([other, mail, diff], cwd=tmp_path)
    assert alone is not None and ids[1] == ids[2] == alone and ids[0] not in (None, alone)
    assert git.patch_id(mail, cwd=tmp_path) == alone


def test_a_long_process_holds_a_bounded_memo(
    monkeypatch: pytest.MonkeyPatch, run_log: Path
) -> None:
    """An answer over `MAX_ONE_BYTES` is not kept, and past `MAX_HELD_BYTES` the oldest go:
    each is asked of git again, never answered from a wrong entry."""
    token = _unique()
    small, large = f"{token}\n\nA: 1\n".encode(), f"{token}\n\nB: {'x' * 300}\n".encode()
    monkeypatch.setattr(pure, "MAX_ONE_BYTES", 250)
    assert [git.trailers(large), git.trailers(large)] == [[("B", "x" * 300)]] * 2
    assert _ran(run_log, "interpret-trailers") == 2  # too large to keep: asked each time
    monkeypatch.setattr(pure, "MAX_HELD_BYTES", 200)
    others = [f"{token}\n\nC: {n}\n".encode() for n in range(3)]
    assert git.trailers(small) == [("A", "1")]
    for n, message in enumerate(others):
        assert git.trailers(message) == [("C", str(n))]
    assert git.trailers(small) == [("A", "1")]  # pushed out by the newer ones: asked again
    assert git.trailers(small) == [("A", "1")]  # the newest is kept
    assert _ran(run_log, "interpret-trailers") == 2 + 1 + 3 + 1
