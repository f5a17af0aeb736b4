"""Real commits written as real `git format-patch` files, for the tests of how patches are read.

corpus = build_corpus(tmp_path)        # {label: commit sha} in corpus.repo: non-ASCII
                                       #   authors, a rename, a mode change, CRLF, Latin-1,
                                       #   an empty file, a deletion
format_patch(repo, sha, out_dir)       # the commit as `git format-patch` writes it
reauthored(upstream, FIX_0001, name=..., email=..., message_extra=...)
                                       # FIX_0001 re-committed by another author (signed
                                       #   off by them), on a branch of the fixture upstream
SMUGGLED                               # a plain-diff section adding a workflow file
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from patchcarry import git
from testing.upstream_repos import PINNED_ENV, UpstreamRepo

POLISH = "Łukasz Żółtowski"
CHINESE = "张伟"
LATIN = "José García"
FOLDED = "Łukasz Żółtowski-Wiśniewski"  # format-patch folds its encoded From: over two lines

# What git applies from a patch even outside its `diff --git` sections (issue 17).
SMUGGLED = (
    "Index: .github/workflows/pwn.yml\n"
    "--- /dev/null\n"
    "+++ b/.github/workflows/pwn.yml\n"
    "@@ -0,0 +1,2 @@\n"
    "+on: push\n"
    "+jobs: {}\n"
)


@dataclasses.dataclass
class Corpus:
    repo: Path
    commits: dict[str, str]


def _env(name: str, email: str) -> dict[str, str]:
    return {
        **PINNED_ENV,
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
    }


def _commit(repo: Path, name: str, email: str, subject: str, body: str = "") -> str:
    message = f"{subject}\n\n{body}\n\nSigned-off-by: {name} <{email}>\n".replace("\n\n\n", "\n\n")
    git.git("add", "-A", cwd=repo)
    git.git("commit", "-q", "-F", "-", cwd=repo, env_extra=_env(name, email), stdin=message)
    return git.rev_parse("HEAD", cwd=repo)


def build_corpus(tmp: Path) -> Corpus:
    """One commit per case, each on the previous one."""
    repo = tmp / "corpus"
    git.init(repo)
    git.git("config", "core.autocrlf", "false", cwd=repo)
    files = {
        "megatron/a.py": b"def f():\n    return 1\n",
        "megatron/crlf.py": b"x = 1\r\ny = 2\r\n",
        "megatron/latin.py": b"# caf\xe9\nz = 3\n",
        "megatron/old_name.py": b"moved = True\n",
        "megatron/run.sh": b"echo hi\n",
        "megatron/gone.py": b"bye = 1\n",
    }
    for path, data in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_bytes(data)
    commits = {"base": _commit(repo, "Base Author", "base@example.invalid", "Base")}

    def edit(path: str, data: bytes) -> None:
        (repo / path).write_bytes(data)

    edit("megatron/a.py", b"def f():\n    return 2\n")
    commits["polish"] = _commit(
        repo, POLISH, "lukasz@example.invalid", "Return two", "Why: a reason.\n\nMore text."
    )
    edit("megatron/a.py", b"def f():\n    return 3\n")
    commits["chinese"] = _commit(repo, CHINESE, "wei@example.invalid", "Return three")
    edit("megatron/a.py", b"def f():\n    return 4\n")
    commits["latin"] = _commit(repo, LATIN, "jose@example.invalid", "Return four", "Cuatro.")
    edit("megatron/a.py", b"def f():\n    return 5\n")
    commits["folded"] = _commit(repo, FOLDED, "lw@example.invalid", "Return five")
    git.git("mv", "megatron/old_name.py", "megatron/new_name.py", cwd=repo)
    commits["rename"] = _commit(repo, LATIN, "jose@example.invalid", "Rename a file")
    os.chmod(repo / "megatron/run.sh", 0o755)
    commits["mode"] = _commit(repo, LATIN, "jose@example.invalid", "Make run.sh executable")
    edit("megatron/crlf.py", b"x = 1\r\ny = 20\r\n")
    commits["crlf"] = _commit(repo, POLISH, "lukasz@example.invalid", "Edit a CRLF file")
    edit("megatron/latin.py", b"# caf\xe9 cr\xe8me\nz = 3\n")
    commits["latin1"] = _commit(repo, CHINESE, "wei@example.invalid", "Edit a Latin-1 file")
    edit("megatron/empty.py", b"")
    commits["empty"] = _commit(repo, LATIN, "jose@example.invalid", "Add an empty file")
    (repo / "megatron/gone.py").unlink()
    commits["delete"] = _commit(repo, POLISH, "lukasz@example.invalid", "Delete a file")
    return Corpus(repo, commits)


def format_patch(repo: Path, sha: str, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    return git.format_patch(sha, number=1, out_dir=out_dir, cwd=repo)


def reauthored(
    upstream: UpstreamRepo,
    patch: Path,
    *,
    name: str,
    email: str,
    message_extra: str = "",
    branch: str = "reauthored",
) -> str:
    """`patch` applied on the base, then re-committed by `name <email>` (its sign-off theirs),
    `message_extra` appended to the message body; the new commit's sha (on `branch`)."""
    work = upstream.work
    git.git("checkout", "-q", "-B", branch, upstream.base_commit, cwd=work, env_extra=PINNED_ENV)
    git.git("am", "-q", str(patch), cwd=work, env_extra=PINNED_ENV)
    _, message, _ = git.git("log", "-1", "--format=%B", cwd=work)
    kept = [ln for ln in message.strip().splitlines() if not ln.startswith("Signed-off-by:")]
    body = "\n".join(kept).strip()
    new = f"{body}\n\n{message_extra}\nSigned-off-by: {name} <{email}>\n"
    env = _env(name, email)
    git.git("commit", "-q", "--amend", "--reset-author", "-F", "-", cwd=work, env_extra=env,
            stdin=new)  # fmt: skip
    return git.rev_parse("HEAD", cwd=work)


def large_hunk_patch(tmp: Path, lines: int) -> Path:
    """A real format-patch of one commit adding `megatron/generated.py` with `lines` lines:
    one hunk of `lines` added lines (what adopting a PR that adds a generated file makes)."""
    repo = tmp / f"large-{lines}"
    git.init(repo)
    (repo / "megatron").mkdir(parents=True)
    (repo / "megatron/__init__.py").write_bytes(b"")
    _commit(repo, LATIN, "jose@example.invalid", "Base")
    body = "".join(f"value_{i} = {i}  # generated\n" for i in range(lines))
    (repo / "megatron/generated.py").write_text(body)
    sha = _commit(repo, LATIN, "jose@example.invalid", "Add a generated table")
    return format_patch(repo, sha, tmp / f"out-{lines}")
