"""Whether GitHub will want the `workflow` scope for a push, judged as GitHub judges it.

GitHub's receive-pack looks at each commit the push makes new to the fork and refuses one
that creates, updates or deletes a file under `.github/workflows/` unless the token has the
`workflow` scope; a file whose path and contents already exist on a branch of the fork needs
no scope (GitHub's documentation of the scope). So the judgement is per new commit, never a
comparison of whole trees: a branch at the pinned base pushed to a fork whose default branch
is at a newer dev makes no upstream commit new (that history is the fork's already), and a
commit that changes a workflow followed by one that changes it back still needs the scope.

The commits this tool writes never touch a workflow (`patchrules` refuses such a patch, the
commit on a live branch is its tree plus the patches), so only the base's history can bring
one. Read trees-only and commits-only into the check's cache."""

from __future__ import annotations

from pathlib import Path

from patchcarry import git
from patchcarry.resubmit import branch as branches
from patchcarry.resubmit import fork
from patchcarry.resubmit.flow import Work
from patchcarry.resubmit.reads import Reads

WORKFLOWS = ".github/workflows"
MAX_HEADS = 20  # fork branches whose history is read to tell which commits are new to it
MAX_NEW = 200  # new commits judged one by one (each reads its trees lazily)


def _fork_heads(work: Work, reads: Reads, upstream_url: str) -> tuple[str, dict[str, str], str]:
    """(URL, {ref: sha} of the fork's branches, the fork's name): for a fork still to be
    made, upstream's default branch (GitHub makes it with that branch only)."""
    entry, status = work.entry, work.fork
    if status.kind == fork.ATTACHED and status.clone_url:
        code, found, _ = git.ls_remote_refs(status.clone_url, ["refs/heads/*"], cwd=work.cache.repo)
        return status.clone_url, found if code == 0 else {}, entry.fork
    default = (reads.repo(entry.upstream) or {}).get("default_branch") or "main"
    ref = f"refs/heads/{default}"
    code, found, _ = git.ls_remote_refs(upstream_url, [ref], cwd=work.cache.repo)
    return upstream_url, found if code == 0 else {}, f"{entry.fork} (to be made)"


def _changes(commit: str, cwd: Path) -> list[tuple[str, str, str]]:
    """(status, path, new blob) of each workflow file `commit` changes against its first
    parent (all of them for a root commit)."""
    _, out, _ = git.git(
        "diff-tree", "--no-commit-id", "-r", "--root", commit, "--", WORKFLOWS, cwd=cwd
    )
    found = []
    for line in out.splitlines():
        meta, _, path = line.partition("\t")
        fields = meta.split()
        found.append((fields[4][:1], path, fields[3]))
    return found


def _held(heads: list[str], cwd: Path) -> set[tuple[str, str]]:
    """Every (path, blob) of a workflow file on the fork's branches (trees only)."""
    held = set()
    for sha in heads:
        _, out, _ = git.git("ls-tree", "-r", sha, "--", f"{WORKFLOWS}/", cwd=cwd, check=False)
        for line in out.splitlines():
            meta, _, path = line.partition("\t")
            held.add((path, meta.split()[2]))
    return held


def needs_scope(work: Work, reads: Reads, upstream_url: str) -> str | None:
    """Why the planned push needs the `workflow` scope, or None when it does not."""
    if work.target is None or work.push_from is None:
        return None
    if work.branch.kind == branches.FAST_FORWARD:
        return None  # one commit on the live head, which the fork has
    cache = work.cache
    base = git.rev_parse(f"{work.target}~{len(work.entry.patches())}", cwd=work.push_from)
    url, found, name = _fork_heads(work, reads, upstream_url)
    heads = list(dict.fromkeys(found.values()))
    if not heads:
        code, _, _ = git.git("rev-parse", "-q", "--verify", f"{base}:{WORKFLOWS}",
                             cwd=work.push_from, check=False)  # fmt: skip
        if code != 0:
            return None
        return (
            f"{name} has no branch yet: all of the pushed history is new to it, its "
            f"{WORKFLOWS}/ included"
        )
    remote = cache.add_fork(url)
    for sha in heads:
        cache.fetch_head(remote, sha)
    for sha in heads[:MAX_HEADS]:
        cache.fetch_history(remote, sha)
    cache.fetch_history("origin", base)
    _, out, _ = git.git("rev-list", base, *(f"^{h}" for h in heads[:MAX_HEADS]), "--",
                        cwd=cache.repo)  # fmt: skip
    new = out.split()[::-1]  # oldest first
    if not new:
        return None
    if len(new) > MAX_NEW:
        return (
            f"{len(new)} commits of the pushed history are new to {name} (more than the "
            f"{MAX_NEW} judged one by one); any of them may change {WORKFLOWS}/"
        )
    held = _held(heads, cache.repo)
    for commit in new:
        for status, path, blob in _changes(commit, cache.repo):
            if status != "D" and (path, blob) in held:
                continue
            verb = {"A": "adds", "D": "deletes"}.get(status, "changes")
            return (
                f"commit {commit[:12]} of the pushed history {verb} {path}, which no branch "
                f"of {name} holds with those contents"
            )
    return None
