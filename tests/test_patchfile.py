"""patchfile: our real patches, malformed input, and real format-patch files read as git reads
them (a round-trip corpus; smuggled diff sections refused)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from patchcarry import git
from patchcarry.check import judge
from patchcarry.errors import BadInputError
from patchcarry.patchfile import MAX_HEADER_BYTES, MAX_PATCH_BYTES, load, parse, read
from testing import patch_corpus
from testing.upstream_repos import FIX_0001, FIX_0003, LAYER_PY, PATCHES_DIR, RANDOM_PY

MINIMAL = """From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: A U Thor <a@example.invalid>
Subject: [PATCH] Do a thing
 across two lines

Signed-off-by: A U Thor <a@example.invalid>
---
diff --git a/x.py b/x.py
--- a/x.py
+++ b/x.py
@@ -10,3 +10,4 @@ def f():
 a
 b
+c
 d
SIGNATURE
2.39.5
""".replace("SIGNATURE", "-- ")  # format-patch's signature separator has a trailing space


def test_real_patches_parse():
    one = parse(FIX_0001.read_text(), name=FIX_0001.name)
    assert one.subject == "Fix cross-iteration gradient retention in CheckpointFunction.backward"
    assert one.author == "iiap <1471127927@qq.com>"  # #6339's own commit
    [hunk] = one.hunks
    assert (hunk.path, hunk.old_start, hunk.old_len, hunk.new_len) == (RANDOM_PY, 632, 6, 15)
    assert hunk.old_range == range(632, 638)
    three = parse(FIX_0003.read_text())
    assert three.files == (LAYER_PY,) and three.hunks[0].old_start == 2303


def test_the_author_identity_is_parsed_once_with_the_patch():
    patch = parse(MINIMAL)
    assert (patch.author_name, patch.author_email) == ("A U Thor", "a@example.invalid")


def test_minimal_patch_fields_and_changed_lines():
    patch = parse(MINIMAL)
    assert patch.subject == "Do a thing across two lines"
    [hunk] = patch.hunks
    assert hunk.lines == (" a", " b", "+c", " d")  # the signature trailer is not hunk text
    assert hunk.changed_old_lines() == {11, 12}  # inserted between old lines 11 and 12
    assert parse(MINIMAL).files == ("x.py",)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("just some text\n", "not `git format-patch` output"),
        (MINIMAL.replace("Subject: [PATCH] Do a thing\n", ""), "not `git format-patch` output"),
        (MINIMAL.split("---\n", 1)[0], "contains no `diff --git` section"),
        (
            MINIMAL.replace("@@ -10,3 +10,4 @@", "@@ -10,3 +10,5 @@"),
            "section at line 8: git cannot read it .*corrupt patch",
        ),
        (MINIMAL.replace("@@ -10,3 +10,4 @@", "@@ -ten +10 @@"), "git cannot read it"),
        (MINIMAL.replace("From: A U Thor <a@example.invalid>", "From: A U Thor"), "From:"),
        (
            MINIMAL.replace("A U Thor", "A" * 61),
            "not `Name <email>` as git reads it .*record the author as a@example.invalid",
        ),
    ],
)
def test_malformed_inputs(text, message):
    with pytest.raises(BadInputError, match=message):
        parse(text, name="bad.patch")


# -- issue 17: every fact comes from git; a round trip through real `git format-patch` files.
@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return patch_corpus.build_corpus(tmp_path_factory.mktemp("corpus"))


def _git_facts(repo, sha):
    """What `git show` says a commit touches: paths (both sides of a rename) and summary."""
    _, status, _ = git.git("show", "--format=", "--name-status", "-M", sha, cwd=repo)
    paths = {p for line in status.splitlines() for p in line.split("\t")[1:]}
    _, summary, _ = git.git("show", "--format=", "--summary", "-M", sha, cwd=repo)
    return sorted(paths), sorted(line for line in summary.splitlines() if line.strip())


def _summary(patch):
    """`patch.changes` written as `git show --summary` writes them."""
    out = []
    for c in patch.changes:
        if c.kind == "create":
            out.append(f" create mode {c.new_mode} {c.path}")
        elif c.kind == "delete":
            out.append(f" delete mode {c.old_mode} {c.path}")
        elif c.kind == "rename":
            out.append(f" rename {c.old_path} => {c.path}")
        if c.old_mode and c.new_mode:
            out.append(f" mode change {c.old_mode} => {c.new_mode} {c.path}")
    return sorted(out)


@pytest.mark.parametrize(
    "label",
    ["polish", "chinese", "latin", "folded", "rename", "mode", "crlf", "latin1", "empty", "delete"],
)
def test_format_patch_round_trip_reads_what_git_show_says(corpus, tmp_path, label):
    sha = corpus.commits[label]
    file = patch_corpus.format_patch(corpus.repo, sha, tmp_path)
    patch = read(file.read_bytes(), name=file.name, path=file)
    paths, summary = _git_facts(corpus.repo, sha)
    assert list(patch.files) == paths
    renames = [line for line in summary if line.startswith(" rename ")]
    assert _summary(patch) == sorted(
        [line for line in summary if not line.startswith(" rename ")]
        + [f" rename {c.old_path} => {c.path}" for c in patch.changes if c.kind == "rename"]
    )
    assert len(renames) == sum(c.kind == "rename" for c in patch.changes)
    _, ident, _ = git.git("log", "-1", "--format=%an <%ae>", sha, cwd=corpus.repo)
    assert patch.author == ident.strip()
    _, body, _ = git.git("log", "-1", "--format=%b", sha, cwd=corpus.repo)
    kept = [ln for ln in body.strip().splitlines() if not ln.startswith("Signed-off-by:")]
    assert patch.message == "\n".join(kept).strip()
    _, subject, _ = git.git("log", "-1", "--format=%s", sha, cwd=corpus.repo)
    assert patch.subject == subject.strip()
    assert patch.signoffs == (ident.strip(),)
    if label in ("rename", "mode"):
        with pytest.raises(BadInputError, match="renames refused|changes a file mode"):
            load(file)
    else:
        assert load(file).author == ident.strip()


def test_folded_from_header_is_joined_and_decoded(corpus, tmp_path):
    file = patch_corpus.format_patch(corpus.repo, corpus.commits["folded"], tmp_path)
    assert "\n =?UTF-8?q?" in file.read_text() or "\n <" in file.read_text()  # folded
    assert load(file).author_name == patch_corpus.FOLDED


@pytest.mark.parametrize("label", ["crlf", "latin1"])
def test_crlf_and_latin1_files_survive_git_am_and_check(corpus, tmp_path, label):
    """The patch's bytes reach `git am` and `check`'s apply as they are: the same tree."""
    sha = corpus.commits[label]
    file = patch_corpus.format_patch(corpus.repo, sha, tmp_path / "p")
    patch = load(file)
    clone = tmp_path / "clone"
    git.git("clone", "-q", str(corpus.repo), str(clone), cwd=tmp_path)
    git.git("checkout", "-q", "--detach", f"{sha}~1", cwd=clone)
    new = git.am([file], cwd=clone, committer_name="C", committer_email="c@example.invalid")
    assert git.commit_fields(new, cwd=clone)[0] == git.commit_fields(sha, cwd=corpus.repo)[0]
    [result] = judge.apply_at(
        [patch], lambda path: git.show_file(f"{sha}~1", path, cwd=corpus.repo)
    )
    assert result.status == "clean"


def test_check_sees_a_crlf_file_as_git_am_does(corpus, tmp_path):
    """A patch with LF context does not apply to the CRLF file upstream: `git am` fails, so
    `check` must not say "applies cleanly" (it read the file as text before)."""
    sha = corpus.commits["crlf"]
    text = patch_corpus.format_patch(corpus.repo, sha, tmp_path).read_bytes()
    lf = tmp_path / "lf.patch"
    lf.write_bytes(text.replace(b"\r\n", b"\n"))
    [result] = judge.apply_at([load(lf)], lambda p: git.show_file(f"{sha}~1", p, cwd=corpus.repo))
    assert result.status == "conflict"


def test_rebuilt_commits_keep_author_and_committer_byte_for_byte(corpus, tmp_path):
    """`git am` with the patch's author as committer (resubmit's push) and commit-tree with
    its (name, email, date) (the live branch's commit): no RFC 2047 text in a header."""
    for label in ("polish", "chinese", "latin", "folded"):
        sha = corpus.commits[label]
        file = patch_corpus.format_patch(corpus.repo, sha, tmp_path / label)
        patch = load(file)
        clone = tmp_path / f"clone-{label}"
        git.git("clone", "-q", str(corpus.repo), str(clone), cwd=tmp_path)
        git.git("checkout", "-q", "--detach", f"{sha}~1", cwd=clone)
        new = git.am(
            [file], cwd=clone, committer_name=patch.author_name, committer_email=patch.author_email
        )
        tree = git.commit_fields(new, cwd=clone)[0]
        rebuilt = git.commit_tree(
            tree, [new], "m\n", author=(patch.author_name, patch.author_email, patch.date),
            cwd=clone,
        )  # fmt: skip
        _, want, _ = git.git("log", "-1", "--format=%an <%ae>", sha, cwd=corpus.repo)
        for commit in (new, rebuilt):
            _, raw, _ = git.git("cat-file", "commit", commit, cwd=clone)
            assert "=?" not in raw
            _, got, _ = git.git("log", "-1", "--format=%an <%ae>%n%cn <%ce>", commit, cwd=clone)
            assert got.splitlines() == [want.strip(), want.strip()]


def test_a_plain_diff_section_after_the_real_diff_is_refused_with_its_line():
    text = FIX_0001.read_text().replace("\n-- \n", f"\n{patch_corpus.SMUGGLED}-- \n", 1)
    with pytest.raises(BadInputError, match=r"git reads 2 files in it") as info:
        parse(text, name="smuggled.patch")
    assert "section at line 18" in str(info.value)


def test_a_plain_diff_section_before_the_real_diff_is_refused_with_its_line():
    text = FIX_0001.read_text().replace("\ndiff --git", f"\n{patch_corpus.SMUGGLED}diff --git", 1)
    line = text.splitlines().index("Index: .github/workflows/pwn.yml") + 1
    with pytest.raises(
        BadInputError, match=rf"line {line} \(`Index: \.github/workflows/pwn\.yml`\)"
    ):
        parse(text, name="smuggled.patch")


@pytest.mark.parametrize("start", ["Index: x.py", "diff -u a b", "---"])
def test_a_message_line_git_reads_as_a_diff_start_is_refused(start):
    text = FIX_0001.read_text().replace("\n\nSigned-off-by:", f"\n\n{start}\n\nSigned-off-by:", 1)
    line = text.splitlines().index(start) + 1
    with pytest.raises(
        BadInputError, match=rf"line {line} .*start of a diff|line {line} .*outside"
    ):
        parse(text, name="message.patch")


def test_a_second_mail_in_one_file_is_refused():
    """`git am` would make two commits of it; the manifest names one patch per file."""
    text = FIX_0001.read_text()
    with pytest.raises(BadInputError, match="git am reads 2 mails"):
        parse(text + text, name="two.patch")


def test_a_transfer_encoded_diff_is_refused():
    """`git am` decodes it, `check`'s `git apply` of the file would not: one reading only."""
    head, _, rest = FIX_0001.read_text().partition("\n\n")
    message, sep, diff = rest.partition("\n---\n")
    encoded = "".join(f"={b:02X}" if chr(b) in "=d" else chr(b) for b in diff.encode())
    text = f"{head}\nContent-Transfer-Encoding: quoted-printable\n\n{message}{sep}{encoded}"
    with pytest.raises(BadInputError, match="transfer-encoded"):
        parse(text, name="qp.patch")


def _profile_events(data: bytes) -> int:
    """How many calls (Python and C) reading `data` makes: an operation count, not a time."""
    count = 0

    def tally(_frame: object, _event: str, _arg: object) -> None:
        nonlocal count
        count += 1

    sys.setprofile(tally)
    try:
        read(data, name="large.patch")
    finally:
        sys.setprofile(None)
    return count


def test_reading_a_hunk_costs_in_proportion_to_its_lines(tmp_path):
    """Four times the lines cost about four times the operations (quadratic: sixteen)."""
    small = patch_corpus.large_hunk_patch(tmp_path, 500).read_bytes()
    large = patch_corpus.large_hunk_patch(tmp_path, 2000).read_bytes()
    assert _profile_events(large) < 6 * _profile_events(small)


def test_a_generated_file_of_fifty_thousand_lines_is_read_whole(tmp_path):
    """What took minutes (quadratic in the hunk's lines) is one pass: every line is kept."""
    patch = load(patch_corpus.large_hunk_patch(tmp_path, 50_000))
    [hunk] = patch.hunks
    assert (hunk.old_start, hunk.old_len, hunk.new_len) == (0, 0, 50_000)
    assert len(hunk.lines) == 50_000 and hunk.lines[-1] == "+value_49999 = 49999  # generated"


def test_a_patch_over_the_size_cap_is_one_line_exit_5(tmp_path):
    """Refused by its size before git reads it: one line naming the file, exit 5."""
    series = tmp_path / "series"
    shutil.copytree(PATCHES_DIR, series)
    fix = next(series.glob("0001-*.patch"))
    head, sep, rest = fix.read_bytes().partition(b"\n---\n")
    padding = b"A long message line.\n" * (MAX_PATCH_BYTES // 21 + 1)
    fix.write_bytes(head + b"\n\n" + padding + sep + rest)
    with pytest.raises(BadInputError, match=f"{fix.name}: .* over the {MAX_PATCH_BYTES:,}"):
        load(fix)
    done = subprocess.run(
        [sys.executable, "-P", "-m", "patchcarry", "check", "--offline", "--manifest",
         str(series / "series.toml")],
        capture_output=True, text=True, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert done.returncode == 5, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "over the" in done.stderr


def test_a_diff_header_longer_than_any_path_is_refused_before_git_reads_it():
    """git's own reading of a `diff --git` line is quadratic in its spaces: bounded first."""
    name = "megatron/" + "a " * (MAX_HEADER_BYTES // 2)
    text = MINIMAL.replace("x.py", name)
    with pytest.raises(BadInputError, match=r"line \d+ \(a `diff --git` line of [\d,]+ bytes\)"):
        parse(text, name="long.patch")
