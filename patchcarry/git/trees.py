"""Reads of trees and diffs: paths, modes, content (blobs only when needed: lazy fetches)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from patchcarry.errors import GitReadError
from patchcarry.git.batch import patch_ids
from patchcarry.git.env import LITERAL, credential_args
from patchcarry.git.history import is_ancestor, merge_base
from patchcarry.git.pure import answer, full_shas
from patchcarry.git.runner import git, git_bytes
from patchcarry.git.sha import short


def path_exists(rev: str, path: str, *, cwd: Path) -> bool:
    """Whether `path` is in `rev`'s tree; reads trees only, so no blob is fetched."""
    code, out, err = git("ls-tree", "--full-tree", rev, "--", path, cwd=cwd, check=False,
                         env_extra=LITERAL)  # fmt: skip
    if code != 0:
        raise GitReadError(f"git ls-tree {short(rev)} -- {path} failed: {err.strip()}")
    return bool(out.strip())


def show_file(rev: str, path: str, *, cwd: Path) -> bytes | None:
    """Content of `path` at `rev` as stored (bytes; lazily fetched); None only when absent. A failed
    read is GitReadError, never "absent": a guess would report a conflict that is not there."""
    if not path_exists(rev, path, cwd=cwd):
        return None
    code, out, err = git_bytes("cat-file", "blob", f"{rev}:{path}", cwd=cwd, check=False)
    if code != 0:
        raise GitReadError(
            f"could not read {path} at {short(rev)}: {' '.join(err.split())[:300]}; "
            "upstream may be unreachable (a lazy blob fetch failed): re-run"
        )
    return out


def text(data: bytes) -> str:
    """git's output about upstream's files: any bytes kept (surrogateescape; `encode` restores)."""
    return data.decode("utf-8", "surrogateescape")


def changed_paths(old: str, new: str, *, cwd: Path) -> list[str]:
    """Paths that differ between two commits, as stored (`diff-tree -z`); trees only."""
    out = _tree_diff(("diff-tree", "-r", "-z", "--name-only", "--no-renames", old, new), cwd)
    return [text(p) for p in out.split(b"\0") if p]


def _tree_diff(words: tuple[str, ...], cwd: Path) -> bytes:
    """git's answer comparing two trees; of two full ids, asked once per process (`pure`)."""
    if not full_shas(*words[-2:]):
        return git_bytes(*words, cwd=cwd)[1]
    return answer(words, lambda: git_bytes(*words, cwd=cwd)[:2])


def empty_tree(*, cwd: Path) -> str:
    """The empty tree's id in this repository's hash (what a root commit is diffed against)."""
    _, out, _ = git("hash-object", "-t", "tree", "--stdin", cwd=cwd, stdin="")
    return out.strip()


def changes_under(commit: str, path: str, *, cwd: Path,
                  first_parent: str | None = None) -> list[tuple[str, str, str]]:  # fmt: skip
    """(status, path, new blob) of each file under `path` `commit` changes against its first parent
    (all for a root commit), trees only; a merge needs `first_parent` (`diff-tree` without `-m`)."""
    if first_parent is not None:
        _, out, _ = git("diff-tree", "-r", first_parent, commit, "--", path, cwd=cwd)
    else:
        _, out, _ = git("diff-tree", "--no-commit-id", "-r", "--root", commit, "--", path, cwd=cwd)
    found = []
    for line in out.splitlines():
        meta, _, name = line.partition("\t")
        fields = meta.split()
        found.append((fields[4][:1], name, fields[3]))
    return found


def blobs_under(commit: str, folder: str, *, cwd: Path) -> set[tuple[str, str]]:
    """Every (path, blob) under `folder` in `commit`'s tree (trees only); none if unreadable."""
    _, out, _ = git("ls-tree", "-r", commit, "--", f"{folder}/", cwd=cwd, check=False)
    held = set()
    for line in out.splitlines():
        meta, _, path = line.partition("\t")
        held.add((path, meta.split()[2]))
    return held


SPECIAL_MODES = {"120000": "a symlink", "160000": "a submodule"}


def special_paths(old: str, new: str, *, cwd: Path) -> list[tuple[str, str]]:
    """(path, what it is) for each path differing between two trees that is a symlink, submodule
    or changed mode, by git's tree modes: a patch's text cannot hide a link or an exec bit."""
    out = _tree_diff(("diff-tree", "-r", "-z", "--raw", "--no-renames", old, new), cwd)
    fields = out.split(b"\0")
    found = []
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        modes = meta.decode().lstrip(":").split()[:2]
        kinds = [SPECIAL_MODES[m] for m in modes if m in SPECIAL_MODES]
        if not kinds and "000000" not in modes and len(set(modes)) == 2:
            kinds = [f"a mode change ({modes[0]} -> {modes[1]})"]
        if kinds:
            found.append((path.decode("utf-8", "surrogateescape"), kinds[0]))
    return found


def modes_at(commit: str, paths: list[str], *, cwd: Path) -> dict[str, str]:
    """{path: mode} for each of `paths` in `commit`'s tree (trees only); absent ones left out."""
    _, out, _ = git_bytes("ls-tree", "-z", "--end-of-options", commit, "--", *paths, cwd=cwd,
                          env_extra=LITERAL)  # fmt: skip
    found = {}
    for record in out.split(b"\0"):
        meta, _, path = record.partition(b"\t")
        if meta:
            found[path.decode("utf-8", "surrogateescape")] = meta.split(b" ")[0].decode()
    return found


def special_at(modes: Mapping[str, str]) -> list[tuple[str, str]]:
    """(path, what it is) for each path of a `modes_at` answer that is a symlink or a submodule."""
    return [(path, SPECIAL_MODES[m]) for path, m in modes.items() if m in SPECIAL_MODES]


def diff_paths(old: str, new: str, paths: list[str], *, cwd: Path, unified: int = 3) -> str:
    """`git diff` of `paths` between two commits; non-UTF-8 bytes come back as surrogates."""
    return "".join(section for _, section in diff_files(old, new, paths, cwd=cwd, unified=unified))


def diff_files(old: str, new: str, paths: list[str], *, cwd: Path,
               unified: int = 3) -> list[tuple[str, str]]:  # fmt: skip
    """`git diff old new -- paths`, one (path, its patch section) per changed file, the path from
    git's `--raw -z` record, never the quoted header; only the blobs of `paths` are read."""
    args = ["--no-color", "--no-renames", "--no-ext-diff", "--raw", "-p", "-z", f"-U{unified}"]
    _, out, _ = git_bytes("diff", *args, old, new, "--", *paths, cwd=cwd, env_extra=LITERAL)
    raw, sep, patch = out.partition(b"\0\0")  # raw records end with NUL; then the patch
    if not sep:
        return []
    fields = raw.split(b"\0")
    sections = [
        s for s in re.split(rb"(?m)^(?=diff --git )", patch) if s.startswith(b"diff --git ")
    ]
    found: list[tuple[str, str]] = []
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        status = text(meta).split()[-1][:1]
        for _ in range(2 if status == "T" else 1):  # a type change: a delete and a create
            if sections:
                found.append((text(path), text(sections.pop(0))))
    return found


_HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", re.MULTILINE)


def hunk_ranges(old: str, new: str, path: str, *, cwd: Path) -> list[tuple[int, int]]:
    """Old-side (start, count) of each hunk of `git diff -U0 old new -- path` (0: insertion)."""
    text = diff_paths(old, new, [path], cwd=cwd, unified=0)
    return [(int(m.group(1)), int(m.group(2) or 1)) for m in _HUNK_RE.finditer(text)]


def range_or_tree_diff(old: str, new: str, paths: list[str], *, cwd: Path) -> str:
    """What changed from head `old` to `new`, changed lines included: a fast-forward's diff of
    `paths` (range-diff shows an added commit as one line); else `git range-diff old...new`
    (plus the diff when it shows headers only); unrelated histories: the diff with a stat line."""

    def tree_diff() -> str:
        _, out, _ = git(
            *credential_args(), "diff", "--no-color", "--stat", "-p", old, new, "--", *paths,
            cwd=cwd,
        )  # fmt: skip
        return out

    if is_ancestor(old, new, cwd=cwd):
        return tree_diff()
    if merge_base(old, new, cwd=cwd) is not None:
        _, out, _ = git(*credential_args(), "range-diff", "--no-color", f"{old}...{new}", cwd=cwd)
        if any(line.startswith("    ") for line in out.splitlines()):
            return out  # it carries an interdiff
        return f"{out.rstrip()}\n\n{tree_diff()}" if out.strip() else tree_diff()
    return tree_diff()


_ADDED_RE = re.compile(r"^\s*-:\s+-+\s+>\s+\d+:\s+(?P<sha>[0-9a-f]{4,})\s", re.MULTILINE)


def pr_range_diff(old: str, new: str, upstream: str, *, cwd: Path) -> tuple[str, str, str] | None:
    """(old base, new base, what changed) between two heads of one PR rebuilt on another base:
    `git range-diff` of each head's own commits (not in `upstream`), each added commit shown
    whole. None when either head shares no history with `upstream`."""
    old_base, new_base = merge_base(old, upstream, cwd=cwd), merge_base(new, upstream, cwd=cwd)
    if old_base is None or new_base is None:
        return None
    _, out, _ = git(*credential_args(), "range-diff", "--no-color", f"{old_base}..{old}",
                    f"{new_base}..{new}", cwd=cwd)  # fmt: skip
    shown = [out.rstrip()]
    for sha in _ADDED_RE.findall(out):
        _, commit, _ = git(
            *credential_args(), "show", "--no-color", "--stat", "-p", "--format=commit %H%n%n%B",
            "--end-of-options", sha, cwd=cwd,
        )  # fmt: skip
        shown.append(commit.rstrip())
    return old_base, new_base, "\n\n".join(part for part in shown if part)


def names_in(rev: str, folder: str, *, cwd: Path) -> list[str] | None:
    """The entry names of `folder` ("" for the root) in `rev`'s tree (trees only); None if none."""
    code, out, _ = git("ls-tree", "--name-only", f"{rev}:{folder}", cwd=cwd, check=False)
    return out.splitlines() if code == 0 else None


def patch_id(diff_text: str | bytes, *, cwd: Path) -> str | None:
    """`git patch-id --verbatim` (whitespace is code) of a diff; None when it has no changes."""
    return patch_ids([diff_text], cwd=cwd)[0]


def encode(text: str) -> bytes:
    """Text that came from bytes (decoded with surrogateescape) back to those exact bytes."""
    return text.encode("utf-8", "surrogateescape")
