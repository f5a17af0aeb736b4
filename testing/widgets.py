"""A second upstream that is not Megatron-LM: `acme/widgets`, a small Python project (default
branch `main`, code under `src/`, docs under `docs/`, tests under `tests/`), and a PR #7 from
htesd of three commits (a fix, its docs, its test) with `main` merged into it, closed when its
fork left the network. Real git, pinned identities and dates; loaded into the fake GitHub.

    w = make_widgets(tmp_path)                 # bare upstream, fork clone, PR head, commits
    load(state, w)                             # acme/widgets, htesd/widgets (attached), #7
    w.maintainer_merges_main(branch)           # a maintainer merges a new `main` into a branch
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from patchcarry import git
from testing import adopt_scenarios as ad
from testing import github_scenarios as sc

if TYPE_CHECKING:
    from testing.fake_github_state import GitHubState

REPO = "acme/widgets"
FORK = f"{sc.OWNER}/widgets"
NUMBER = 7
TITLE = "Fix the last page of paginate()"
BRANCH = "fix/last-page"
AUTHOR = ("Dana Doe", "dana@example.invalid")
MAINTAINER = ("Acme Maintainer", "maintainer@example.invalid")

_FILES = {
    "README.md": "# widgets\n",
    "src/widgets/__init__.py": "",
    "src/widgets/pagination.py": (
        '"""Pages of a list."""\n\n\ndef pages(n, size):\n    return n // size\n'
    ),
    "docs/pagination.md": "# Pagination\n\n`pages(n, size)` counts the pages.\n",
    "tests/test_pagination.py": (
        "from widgets.pagination import pages\n\n\ndef test_even():\n    assert pages(10, 5) == 2\n"
    ),
}
_PR = (  # (subject, file, old, new): the PR's three commits, in order
    ("Count a partial last page in pages()", "src/widgets/pagination.py",
     "return n // size", "return -(-n // size)"),
    ("Document that a partial last page counts", "docs/pagination.md",
     "counts the pages.", "counts the pages; a partial last page counts as one."),
    ("Test a partial last page", "tests/test_pagination.py",
     "== 2\n", "== 2\n\n\ndef test_partial():\n    assert pages(11, 5) == 3\n"),
)  # fmt: skip


def _env(who: tuple[str, str], when: str) -> dict[str, str]:
    name, email = who
    return {
        "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": when,
        "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email, "GIT_COMMITTER_DATE": when,
    }  # fmt: skip


def _g(work: Path, *args: str, who: tuple[str, str] = MAINTAINER, when: str = "") -> str:
    env = _env(who, when or "2026-06-01T00:00:00+0000")
    _, out, _ = git.git(*args, cwd=work, env_extra=env)
    return out.strip()


@dataclasses.dataclass
class Widgets:
    bare: Path  # the upstream (clone_url)
    fork: Path  # htesd/widgets, attached
    work: Path
    head: str  # refs/pull/7/head: the merge of main into the PR
    commits: list[str]  # the PR's own three commits, oldest first

    def add_pull(self, number: int, subject: str, files: dict[str, str]) -> str:
        """refs/pull/NUMBER/head: one commit by the PR's author on `main`'s first commit
        writing `files`; its sha."""
        root = _g(self.work, "rev-list", "--max-parents=0", "main")
        _g(self.work, "checkout", "-q", "--detach", root)
        for name, text in files.items():
            (self.work / name).parent.mkdir(parents=True, exist_ok=True)
            (self.work / name).write_text(text)
        _g(self.work, "add", "-A")
        message = f"{subject}\n\nSigned-off-by: {AUTHOR[0]} <{AUTHOR[1]}>\n"
        _g(self.work, "commit", "-q", "-m", message, who=AUTHOR, when="2026-07-05T00:00:00Z")
        _g(self.work, "push", "-q", "origin", f"HEAD:refs/pull/{number}/head")
        return _g(self.work, "rev-parse", "HEAD")

    def advance_main(self, text: str) -> str:
        _g(self.work, "checkout", "-q", "main")
        (self.work / "README.md").write_text(text)
        _g(self.work, "commit", "-q", "-am", "Update the README", when="2026-08-10T00:00:00+0000")
        _g(self.work, "push", "-q", "origin", "main")
        return _g(self.work, "rev-parse", "HEAD")

    def maintainer_merges_main(self, branch: str) -> str:
        """A maintainer merges a newer `main` into the fork's `branch` (as GitHub's "Update
        branch" does); the merge commit."""
        main = self.advance_main("# widgets\n\nNow with badges.\n")
        _g(self.work, "fetch", "-q", str(self.fork), f"{branch}:refs/remotes/fork/{branch}")
        _g(self.work, "checkout", "-q", "-B", "update", f"refs/remotes/fork/{branch}")
        _g(self.work, "merge", "-q", "--no-ff", "-m", f"Merge branch 'main' into {branch}", main,
           when="2026-08-11T00:00:00+0000")  # fmt: skip
        _g(self.work, "push", "-q", str(self.fork), f"HEAD:refs/heads/{branch}")
        return _g(self.work, "rev-parse", "HEAD")


def make_widgets(tmp: Path) -> Widgets:
    work, bare, fork = tmp / "widgets-work", tmp / "widgets.git", tmp / "widgets-fork.git"
    work.mkdir(parents=True)
    _g(work, "init", "-q", "-b", "main")
    for name, text in _FILES.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)
    _g(work, "add", "-A")
    _g(work, "commit", "-q", "-m", "Initial widgets")
    base = _g(work, "rev-parse", "HEAD")
    _g(work, "checkout", "-q", "-b", BRANCH)
    commits = []
    for i, (subject, name, old, new) in enumerate(_PR):
        file = work / name
        file.write_text(file.read_text().replace(old, new))
        message = f"{subject}\n\nSigned-off-by: {AUTHOR[0]} <{AUTHOR[1]}>\n"
        _g(work, "commit", "-q", "-am", message, who=AUTHOR, when=f"2026-07-0{i + 1}T00:00:00Z")
        commits.append(_g(work, "rev-parse", "HEAD"))
    _g(work, "checkout", "-q", "main")
    (work / "CHANGES.md").write_text("# Changes\n")
    _g(work, "add", "CHANGES.md")
    _g(work, "commit", "-q", "-m", "Start a changelog", when="2026-07-02T12:00:00+0000")
    _g(work, "checkout", "-q", BRANCH)
    _g(work, "merge", "-q", "--no-ff", "-m", f"Merge branch 'main' into {BRANCH}", "main",
       who=AUTHOR, when="2026-07-04T00:00:00+0000")  # fmt: skip
    head = _g(work, "rev-parse", "HEAD")
    _g(work, "init", "-q", "--bare", "-b", "main", str(bare))
    _g(work, "remote", "add", "origin", str(bare))
    _g(work, "push", "-q", "origin", "main", f"{head}:refs/pull/{NUMBER}/head")
    _g(work, "clone", "-q", "--bare", str(bare), str(fork))
    assert _g(work, "merge-base", commits[0], "main") == base
    return Widgets(bare, fork, work, head, commits)


def load(
    state: GitHubState,
    w: Widgets,
    *,
    user: str = sc.OWNER,
    token: str = sc.TOKEN,
    fork: bool = True,
) -> None:
    """acme/widgets (an organization's, default branch main), `user`'s attached fork (none
    without `fork`: a new user's first run), and #7, `user`'s, closed by detachment."""
    state.add_user("acme", type="Organization", name="Acme")
    state.add_token(token, user)
    state.add_repo(REPO, w.bare, default_branch="main", created_at="2024-01-01T00:00:00Z")
    if fork:
        state.add_repo(f"{user}/widgets", w.fork, default_branch="main", fork_of=REPO,
                       created_at="2026-08-07T07:30:00Z")  # fmt: skip
    ad.closed_by_detachment(
        state, REPO, NUMBER, title=TITLE, branch=BRANCH, head_sha=w.head, base="main", user=user
    )
