"""Reads of commits and their history: rev-parse, log, rev-list, merge-base, blame."""

from __future__ import annotations

import re
from pathlib import Path

from patchcarry.git.env import LITERAL, plain_tree_env
from patchcarry.git.runner import git, git_bytes
from patchcarry.git.sha import Sha
from patchcarry.git.shallow import shallow_file


def rev_parse(rev: str, *, cwd: Path) -> Sha:
    """The full hash `rev` names in the repository at `cwd`."""
    _, out, _ = git("rev-parse", "--verify", "--end-of-options", f"{rev}^{{commit}}", cwd=cwd)
    return Sha(out.strip())


def rev_exists(rev: str, *, cwd: Path) -> bool:
    """Whether `rev` (a ref, `sha^1`, `commit:path`) names an object present at `cwd`."""
    code, _, _ = git("rev-parse", "-q", "--verify", rev, cwd=cwd, check=False)
    return code == 0


def head_commit(cwd: Path, *, plain_tree: bool = False) -> str | None:
    """HEAD's commit at `cwd`, or None; `plain_tree`: look for no repository above `cwd`."""
    env = plain_tree_env(cwd) if plain_tree else None
    code, out, _ = git("rev-parse", "HEAD", cwd=cwd, check=False, env_extra=env)
    return out.strip() if code == 0 else None


def first_parent(rev: str, *, cwd: Path) -> str | None:
    """The first parent of commit `rev`, or None for a root or a shallow boundary."""
    code, out, _ = git("rev-parse", "-q", "--verify", f"{rev}^1", cwd=cwd, check=False)
    return out.strip() if code == 0 else None


def refs_under(prefix: str, *, cwd: Path) -> dict[str, str]:
    """{refname: sha} under `prefix`, never asking for a missing object (no lazy fetch)."""
    _, out, _ = git("for-each-ref", "--format=%(refname) %(objectname)", prefix, cwd=cwd)
    return dict(line.split(" ", 1) for line in out.splitlines() if " " in line)


def commit_parents(rev: str, *, cwd: Path) -> list[str]:
    """Parents of commit `rev` (its trees/parents must be present)."""
    _, out, _ = git("rev-list", "--parents", "-n1", "--end-of-options", rev, cwd=cwd)
    return out.split()[1:]


def commit_fields(rev: str, *, cwd: Path) -> tuple[str, str, str, list[str]]:
    """(tree, author "Name <email>", subject, parents) of a commit that is present locally."""
    _, out, _ = git("log", "-1", "--format=%T%x00%an <%ae>%x00%s%x00%P", rev, "--", cwd=cwd)
    tree, author, subject, parents = out.rstrip("\n").split("\x00")
    return tree, author, subject, parents.split()


def commit_summary(rev: str, *, cwd: Path) -> tuple[str, str]:
    """(`Author Name <email>`, subject) of commit `rev`."""
    _, out, _ = git("log", "-1", "--format=%an <%ae>%n%s", "--end-of-options", rev, cwd=cwd)
    author, _, subject = out.rstrip("\n").partition("\n")
    return author, subject


def commit_message(rev: str, *, cwd: Path) -> str:
    """The whole message of commit `rev` (`%B`)."""
    _, out, _ = git("log", "-1", "--format=%B", rev, "--", cwd=cwd)
    return out


def commit_time(rev: str, *, cwd: Path) -> int:
    """Committer time of `rev` (epoch seconds)."""
    _, out, _ = git("log", "-1", "--format=%ct", "--end-of-options", rev, cwd=cwd)
    return int(out.strip())


# format-patch files. Read-only on the repo except format-patch's output directory.
def shallow_commits(*, cwd: Path) -> set[str]:
    """Commits at the shallow boundary of the repository at `cwd` (parents not fetched)."""
    path = shallow_file(cwd=cwd)
    return set(path.read_text().split()) if path.is_file() else set()


def stored_parents(sha: str, *, cwd: Path) -> list[str]:
    """The parents `sha`'s commit object names, fetched or not (shallow hides them from log)."""
    _, out, _ = git("cat-file", "commit", sha, cwd=cwd)
    head = out.split("\n\n", 1)[0]
    return [line.split()[1] for line in head.splitlines() if line.startswith("parent ")]


def rev_list(include: str, *exclude: str, cwd: Path) -> list[str]:
    """`git rev-list include ^exclude...` (all parents), newest first."""
    _, out, _ = git("rev-list", include, *(f"^{e}" for e in exclude), "--", cwd=cwd)
    return out.split()


def newest(rev: str, count: int, *, cwd: Path) -> list[str]:
    """The newest `count` commits reachable from `rev` (all parents), as git walks them."""
    _, out, _ = git("rev-list", f"--max-count={count}", "--end-of-options", rev, "--", cwd=cwd)
    return out.split()


def rev_list_with_parents(include: str, *exclude: str, cwd: Path) -> list[tuple[str, list[str]]]:
    """`rev_list`, each commit with its parents (newest first)."""
    _, out, _ = git("rev-list", "--parents", include, *(f"^{e}" for e in exclude), "--", cwd=cwd)
    return [(line.split()[0], line.split()[1:]) for line in out.splitlines() if line.strip()]


def rev_list_parents(include: str, exclude: str, *, cwd: Path) -> list[tuple[str, list[str]]]:
    """Commits reachable from `include` but not `exclude`, oldest first, with their parents."""
    _, out, _ = git("rev-list", "--topo-order", "--reverse", "--parents", include, f"^{exclude}",
                    "--", cwd=cwd)  # fmt: skip
    return [(line.split()[0], line.split()[1:]) for line in out.splitlines() if line.strip()]


def merge_base(a: str, b: str, *, cwd: Path) -> str | None:
    """The best common ancestor of `a` and `b`, or None when the local history has none."""
    code, out, _ = git("merge-base", "--end-of-options", a, b, cwd=cwd, check=False)
    return out.strip() if code == 0 and out.strip() else None


def is_ancestor(a: str, b: str, *, cwd: Path) -> bool:
    code, _, _ = git("merge-base", "--is-ancestor", "--end-of-options", a, b, cwd=cwd, check=False)
    return code == 0


def first_parent_log(base: str, tip: str, paths: list[str], *,
                     cwd: Path) -> list[tuple[str, str, str]]:  # fmt: skip
    """(sha, first parent, subject) of first-parent commits of `base..tip` on `paths`, oldest 1st"""
    args = ["--first-parent", "--reverse", "--no-renames", "--format=%H %P%x00%s", f"{base}..{tip}"]
    _, out, _ = git("log", *args, "--", *paths, cwd=cwd, env_extra=LITERAL)
    found = []
    for line in out.splitlines():
        head, _, subject = line.partition("\0")
        shas = head.split()
        if len(shas) >= 2:  # a root commit has no change to compare
            found.append((shas[0], shas[1], subject))
    return found


def descendants(base: str, tip: str, *, cwd: Path) -> list[str]:
    """The commits of `base..tip` that descend from `base` (`--ancestry-path`): a base made on main
    reaches dev by a merge, and dev's commits before it are not "since the base"; no trees."""
    _, out, _ = git("rev-list", "--ancestry-path", f"{base}..{tip}", "--", cwd=cwd)
    return out.split()


def deleted_by(base: str, tip: str, path: str, *, cwd: Path) -> str | None:
    """The first-parent commit of `base..tip` that deleted `path` (trees only)."""
    args = ["--first-parent", "--no-renames", "--diff-filter=D", "--format=%H", f"{base}..{tip}"]
    _, out, _ = git("log", *args, "--", path, cwd=cwd, env_extra=LITERAL)
    shas = out.split()
    return shas[-1] if shas else None


def blame_reverse(start: str, end: str, path: str, lines: list[int], *,
                  cwd: Path) -> dict[int, tuple[str, str | None]]:  # fmt: skip
    """`git blame --reverse start..end`: per line of `start`'s `path`, (the last commit it existed
    in, the commit that changed it or None when it lives on to `end`)."""
    if not lines:
        return {}
    if rev_parse(start, cwd=cwd) == rev_parse(end, cwd=cwd):  # nothing since: all live on
        return {n: (end, None) for n in lines}
    ranges = [arg for n in sorted(set(lines)) for arg in ("-L", f"{n},{n}")]
    args = ["--reverse", "--line-porcelain", *ranges, f"{start}..{end}", "--", path]
    _, out, _ = git("blame", *args, cwd=cwd, env_extra=LITERAL)
    result: dict[int, tuple[str, str | None]] = {}
    sha, number, previous = "", 0, None
    for row in out.splitlines():
        parts = row.split()
        if row.startswith("\t"):
            result[number] = (sha, previous)
        elif len(parts) >= 3 and len(parts[0]) >= 40 and parts[2].isdigit():
            sha, number, previous = parts[0], int(parts[2]), None  # the line in `start`
        elif row.startswith("previous "):
            previous = parts[1]
    return result


def blame_origins(base: str, rev: str, path: str, lines: list[int], *, cwd: Path) -> set[str]:
    """`git blame base..rev`: the commits after `base` that wrote `lines` of `rev`'s `path`."""
    if not lines:
        return set()
    ranges = [arg for n in sorted(set(lines)) for arg in ("-L", f"{n},{n}")]
    _, out, _ = git("blame", "--porcelain", *ranges, f"{base}..{rev}", "--", path, cwd=cwd,
                    env_extra=LITERAL)  # fmt: skip
    found, boundary = set(), set()
    sha = ""
    for row in out.splitlines():
        parts = row.split()
        if len(parts) >= 3 and len(parts[0]) >= 40 and parts[2].isdigit():
            sha = parts[0]
            found.add(sha)
        elif row == "boundary":
            boundary.add(sha)
    return found - boundary


def commit_dates(shas: list[str], *, cwd: Path) -> dict[str, str]:
    """{sha: committer date YYYY-MM-DD} of commits present here (absent ones are left out)."""
    if not shas:
        return {}
    code, out, _ = git("log", "--no-walk", "--format=%H %cs", *shas, "--", cwd=cwd, check=False)
    return dict(line.split(" ", 1) for line in out.splitlines() if " " in line) if code == 0 else {}


def last_commit_of(path: str, *, cwd: Path) -> str | None:
    """The newest commit of HEAD's history that changed `path` (relative to the top)."""
    code, out, _ = git("log", "-1", "--format=%H", "--", path, cwd=cwd, check=False)
    return out.strip() or None if code == 0 else None


_WALK_HEAD = re.compile(rb"^\x01([0-9a-f]{40,64}(?: [0-9a-f]{40,64})*) ?$")  # a root: no parents


def walk(include: list[str], exclude: list[str], *, first_parent: bool,
         cwd: Path) -> list[tuple[str, list[str], int, str, list[str]]]:  # fmt: skip
    """One walk of `include ^exclude`, newest first: (sha, parents, committer time, subject, paths
    changed against the first parent), trees only: the landing judge's read of a branch."""
    args = ["--first-parent"] if first_parent else []
    args += "-z --no-renames --name-only --diff-merges=first-parent".split()
    args += ["--format=%x01%H %P%x00%ct%x00%s", *include, *(f"^{sha}" for sha in exclude)]
    _, out, _ = git_bytes("log", *args, "--", cwd=cwd)
    found: list[tuple[str, list[str], int, str, list[str]]] = []
    tokens = iter(out.split(b"\0"))
    for token in tokens:
        head = _WALK_HEAD.match(token.lstrip(b"\n"))
        if head is None:
            if token.strip(b"\n") and found:
                found[-1][4].append(token.lstrip(b"\n").decode("utf-8", "surrogateescape"))
            continue
        shas = head.group(1).decode().split()
        time, subject = next(tokens, b"0"), next(tokens, b"")
        found.append(
            (shas[0], shas[1:], int(time or 0), subject.decode("utf-8", "surrogateescape"), [])
        )
    return found
