"""Patches as git reads and writes them: am, format-patch, apply, mailsplit, mailinfo, trailers."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import NamedTuple

from patchcarry.errors import GitReadError
from patchcarry.git.env import plain_tree_env
from patchcarry.git.history import rev_parse
from patchcarry.git.pure import answer, question
from patchcarry.git.runner import GitError, git, git_bytes
from patchcarry.git.sha import Sha


def am(patches: list[Path], *, cwd: Path, committer_name: str, committer_email: str) -> Sha:
    """`git am --keep-cr` on HEAD; committer and date pinned, so the same input gives one hash."""
    env = {"GIT_COMMITTER_NAME": committer_name, "GIT_COMMITTER_EMAIL": committer_email}
    flags = ["-q", "--keep-cr", "--committer-date-is-author-date", "--no-3way"]
    code, out, err = git("am", *flags, *map(str, patches), cwd=cwd, env_extra=env, check=False)
    if code != 0:
        git("am", "--abort", cwd=cwd, check=False)
        raise GitError(["git", "am", *(p.name for p in patches)], code, out, err)
    return rev_parse("HEAD", cwd=cwd)


def format_patch(commit: str, *, number: int, out_dir: Path, cwd: Path) -> Path:
    """`git format-patch` of `commit` into `out_dir` as `NNNN-subject.patch`, nothing added."""
    flags = "-1 --no-signoff --no-numbered --no-thread --no-to --no-cc --no-add-header".split()
    flags += ["--suffix=.patch", f"--start-number={number}", "-o", str(out_dir)]
    _, out, _ = git("format-patch", *flags, "--end-of-options", commit, cwd=cwd)
    return Path(out.strip())


class Applied(NamedTuple):
    """What `git apply` said of one patch: its exit code, its words, and what they tell."""

    code: int
    message: str

    @property
    def offsets(self) -> list[int]:
        """The line offsets of the hunks git placed away from where the patch said."""
        return sorted({int(o) for o in _OFFSET_RE.findall(self.message)})

    @property
    def unreadable(self) -> bool:
        """git cannot read the file as a patch at all (not a conflict)."""
        return self.code != 0 and any(w in self.message for w in _UNREADABLE)

    @property
    def failed_at(self) -> tuple[str, int] | None:
        """(path, line) of the hunk git could not place, when it says."""
        match = _FAILED_RE.search(self.message)
        return (match.group(1), int(match.group(2))) if match else None


_OFFSET_RE = re.compile(r"^Hunk #\d+ succeeded at \d+ \(offset (-?\d+) lines?\)", re.MULTILINE)
_FAILED_RE = re.compile(r"^error: patch failed: (.+):(\d+)$", re.MULTILINE)
_UNREADABLE = ("corrupt patch", "No valid patches")


def apply_in_tree(
    patch: Path, *, tree: Path, context: int | None = None, check_only: bool = True,
    verbose: bool = True,
) -> Applied:  # fmt: skip
    """`git apply` (`-v`, `--check` unless told) of `patch` in plain `tree`; (code, git's words)."""
    args = ["apply", *(["-v"] if verbose else []), "--whitespace=nowarn"]
    if check_only:
        args.append("--check")
    if context is not None:
        args.append(f"-C{context}")
    code, out, err = git(*args, str(patch.resolve()), cwd=tree, check=False,
                         env_extra=plain_tree_env(tree))  # fmt: skip
    return Applied(code, out + err)


# Each runs in an empty temp dir that git may not leave (no repository is involved), so each
# answer is a pure function of the bytes: asked once per process (`pure`).
def mailsplit(data: bytes) -> list[bytes]:
    """The mails `git mailsplit --keep-cr` splits `data` into, as am does; none for no mailbox."""
    asked = question(("mailsplit", "--keep-cr"), data)
    return list(answer(asked, lambda: _mailsplit(data)))


def _mailsplit(data: bytes) -> tuple[int, tuple[bytes, ...]]:
    with tempfile.TemporaryDirectory(prefix="patchcarry-mail-") as tmp:
        env = plain_tree_env(Path(tmp) / "x")
        code, _, _ = git_bytes("mailsplit", "--keep-cr", f"-o{tmp}", cwd=tmp, stdin=data,
                               env_extra=env, check=False)  # fmt: skip
        mails = [path.read_bytes() for path in sorted(Path(tmp).iterdir())] if code == 0 else []
        return code, tuple(mails)


def mailinfo(mail: bytes) -> tuple[dict[str, str], bytes, bytes]:
    """`git mailinfo -u` of one mail: (header fields as git decodes them, message, patch part)."""
    asked = question(("mailinfo", "-u", "msg", "patch"), mail)
    info, msg, patch = answer(asked, lambda: _mailinfo(mail))
    return dict(info), msg, patch


def _mailinfo(mail: bytes) -> tuple[int, tuple[dict[str, str], bytes, bytes]]:
    with tempfile.TemporaryDirectory(prefix="patchcarry-mailinfo-") as tmp:
        env = plain_tree_env(Path(tmp) / "x")
        code, out, err = git_bytes("mailinfo", "-u", "msg", "patch", cwd=tmp, stdin=mail,
                                   env_extra=env, check=False)  # fmt: skip
        if code != 0:
            raise GitReadError(f"git mailinfo failed: {' '.join(err.split())[:300]}")
        info: dict[str, str] = {}
        for line in out.decode("utf-8", "surrogateescape").splitlines():
            key, sep, value = line.partition(": ")
            if sep:
                info[key] = value
        return code, (info, (Path(tmp) / "msg").read_bytes(), (Path(tmp) / "patch").read_bytes())


_SUMMARY = re.compile(r"^ (?:(?P<kind>create|delete) mode (?P<mode>\d+) (?P<path>.+)"
                      r"|mode change (?P<old>\d+) => (?P<new>\d+) (?P<mpath>.+)"
                      r"|(?P<move>rename|copy) (?P<names>.+) \(\d+%\)"
                      r"|rewrite .+ \(\d+%\))$")  # fmt: skip


class Numstat(NamedTuple):
    """What `git apply --numstat --summary -z` reads: file records, summaries, git's refusal."""

    records: list[bytes]
    summary: list[tuple[re.Match[str] | None, str]]
    refused: str = ""


def apply_numstat(patch: bytes) -> Numstat:
    """Every file git would apply from `patch`, with its line counts and summary. Reads no tree."""
    code, out, err = answer(question(_NUMSTAT, patch), lambda: _apply_numstat(patch))
    if code != 0:
        first = next((ln for ln in err.splitlines() if ln.startswith(("error", "fatal"))), err)
        return Numstat([], [], " ".join(first.split())[:200])
    *records, summary = out.split(b"\0")
    lines = summary.decode("utf-8", "surrogateescape").splitlines()
    return Numstat(records, [(_SUMMARY.match(line), line) for line in lines])


_NUMSTAT = ("apply", "--numstat", "--summary", "-z")


def _apply_numstat(patch: bytes) -> tuple[int, tuple[int, bytes, str]]:
    with tempfile.TemporaryDirectory(prefix="patchcarry-numstat-") as tmp:
        env = plain_tree_env(Path(tmp) / "x")
        code, out, err = git_bytes(*_NUMSTAT, cwd=tmp, stdin=patch, check=False, env_extra=env)
    return code, (code, out, err)


def renamed_from(names: str, new: str) -> str:
    """The source of `git apply --summary`'s `rename OLD => NEW` (or `a/{b => c}/d`)."""
    match = re.match(r"^(.*)\{(.*) => (.*)\}(.*)$", names)
    if match:
        head, old, _, tail = match.groups()
        return re.sub("//+", "/", f"{head}{old}{tail}")
    old, sep, _ = names.partition(" => ")
    return old if sep else new


def trailers(message: bytes) -> list[tuple[str, str]]:
    """The (key, value) trailers `git interpret-trailers --parse` reads in `message`, in order."""
    asked = question(("interpret-trailers", "--parse"), message)
    return list(answer(asked, lambda: _trailers(message)))


def _trailers(message: bytes) -> tuple[int, tuple[tuple[str, str], ...]]:
    with tempfile.TemporaryDirectory(prefix="patchcarry-trailers-") as tmp:
        env = plain_tree_env(Path(tmp) / "x")
        code, out, _ = git_bytes("interpret-trailers", "--parse", cwd=tmp, stdin=message,
                                 env_extra=env)  # fmt: skip
    found = []
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        key, sep, value = line.partition(": ")
        if sep:
            found.append((key, value))
    return code, tuple(found)
