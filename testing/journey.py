"""Worlds for the ordinary journey (tests/test_journey.py): one contributor's PR on acme/widgets
(testing/widgets.py, not Megatron-LM) carried from `scan` to `retire`, for every PR shape and
starting state of the contributor's fork, with upstream landing the carried PR each way.

    root = build_template(tmp)                 # once per module: widgets + every shape's PR
    w = copy(root, tmp / "case")               # a cheap copy for one case
    load(gh.state, w, SHAPES["one-commit"], "absent")
    land(w, gh.state, shape, number, "squash") # upstream lands the carried PR

Real git, pinned identities and dates: hashes are stable.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from patchcarry import git
from testing import adopt_scenarios as ad
from testing import github_scenarios as sc
from testing import widgets as wd
from testing.once import copy_tree

if TYPE_CHECKING:
    from testing.fake_github_state import GitHubState

MAINTAINER_LOGIN = "acme-maintainer"
SIGNOFF = f"\n\nSigned-off-by: {wd.AUTHOR[0]} <{wd.AUTHOR[1]}>\n"


@dataclasses.dataclass(frozen=True)
class Shape:
    """A closed PR: its number, branch and title (its head is `refs/pull/N/head` upstream)."""

    name: str
    number: int
    branch: str
    title: str


SHAPES = {
    s.name: s
    for s in (
        Shape("one-commit", 11, "fix/grid", "Add the grid constant"),
        Shape("several-commits", 12, "fix/pages", "Count a partial last page"),
        Shape("base-merged-inside", 13, "fix/pages-merged", "Count a partial page, merged"),
        Shape("head-is-a-merge", wd.NUMBER, wd.BRANCH, wd.TITLE),
        Shape("author-not-committer", 14, "fix/applied", "Add the grid constant, applied"),
    )
}
# What the contributor's fork holds at the start: its PR's branch absent, holding the PR's own
# commits, or holding other commits; or no fork at all (the first run creates one).
FORK_STATES = ("absent", "same", "other", "new-fork")
LANDINGS = ("squash", "merge", "rebase")


def _g(
    work: Path,
    *args: str,
    author: tuple[str, str] | None = wd.AUTHOR,
    committer: tuple[str, str] | None = None,
    when: str = "2026-07-10T00:00:00+0000",
) -> str:
    """git in `work` as `committer` (default `author`); `author=None`: the commits keep
    their own authors (a rebase)."""
    who = committer or author or wd.MAINTAINER
    env = {"GIT_COMMITTER_NAME": who[0], "GIT_COMMITTER_EMAIL": who[1], "GIT_COMMITTER_DATE": when}
    if author is not None:
        env |= {
            "GIT_AUTHOR_NAME": author[0],
            "GIT_AUTHOR_EMAIL": author[1],
            "GIT_AUTHOR_DATE": when,
        }
    return git.git(*args, cwd=work, env_extra=env)[1].strip()


def _commit(work: Path, files: dict[str, str], subject: str, **who: object) -> str:
    for name, text in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)
    _g(work, "add", "-A")
    _g(work, "commit", "-q", "-m", subject + SIGNOFF, **who)  # type: ignore[arg-type]
    return _g(work, "rev-parse", "HEAD")


def _edit(work: Path, name: str, old: str, new: str) -> dict[str, str]:
    return {name: (work / name).read_text().replace(old, new)}


def build_template(root: Path) -> Path:
    """acme/widgets (testing/widgets.py, whose #7 is the head-is-a-merge shape) and the other
    shapes' heads as `refs/pull/N/head`, each made on `main`'s first commit."""
    w = wd.make_widgets(root)
    work = w.work
    first = _g(work, "rev-list", "--max-parents=0", "main")
    grid = {"src/widgets/grid.py": "GRID = 1\n"}

    def start() -> None:
        _g(work, "checkout", "-q", "--detach", first)

    start()  # one commit, author and committer the contributor
    heads = {11: _commit(work, grid, "Add the grid constant")}
    heads[12] = w.commits[-1]  # the widgets PR's three commits, without the merge of main
    start()  # a commit, a merge of `main` into the branch, then a commit on top
    _commit(work, _edit(work, *wd._PR[0][1:]), wd._PR[0][0])
    _g(work, "merge", "-q", "--no-ff", "-m", "Merge branch 'main' into fix/pages-merged", "main")
    heads[13] = _commit(work, _edit(work, *wd._PR[1][1:]), wd._PR[1][0],
                        when="2026-07-11T00:00:00+0000")  # fmt: skip
    start()  # the contributor's commit, committed by a maintainer who applied it
    heads[14] = _commit(work, grid, "Add the grid constant", committer=wd.MAINTAINER)
    _g(work, "push", "-q", "origin", *(f"{sha}:refs/pull/{n}/head" for n, sha in heads.items()))
    start()  # an unrelated commit of the contributor's: what a branch of "other" holds
    other = _commit(work, {"NOTES.md": "notes\n"}, "Keep some notes")
    _g(work, "update-ref", "refs/other", other)
    _g(work, "checkout", "-q", "main")
    return root


def copy(template: Path, dest: Path) -> wd.Widgets:
    """A copy of the template's repositories (small: a plain copy), wired to itself."""
    copy_tree(template, dest)
    git.git("remote", "set-url", "origin", str(dest / "widgets.git"), cwd=dest / "widgets-work")
    head = git.rev_parse(f"refs/pull/{wd.NUMBER}/head", cwd=dest / "widgets.git")
    commits = git.git("rev-list", "--reverse", "--no-merges", f"main..{head}",
                      cwd=dest / "widgets.git")[1].split()  # fmt: skip
    return wd.Widgets(dest / "widgets.git", dest / "widgets-fork.git", dest / "widgets-work",
                      head, commits)  # fmt: skip


def pr_head(w: wd.Widgets, shape: Shape) -> str:
    return git.rev_parse(f"refs/pull/{shape.number}/head", cwd=w.bare)


def load(state: GitHubState, w: wd.Widgets, shape: Shape, fork_state: str) -> None:
    """acme/widgets with `shape`'s PR closed by detachment (the user's only one), and the
    user's fork in `fork_state`."""
    state.add_user("acme", type="Organization", name="Acme")
    state.add_user(MAINTAINER_LOGIN)
    state.add_token(sc.TOKEN, sc.OWNER)
    state.add_repo(wd.REPO, w.bare, default_branch="main", created_at="2024-01-01T00:00:00Z")
    if fork_state != "new-fork":
        state.add_repo(wd.FORK, w.fork, default_branch="main", fork_of=wd.REPO,
                       created_at="2026-08-07T07:30:00Z")  # fmt: skip
    if fork_state in ("same", "other"):
        sha = pr_head(w, shape) if fork_state == "same" else git.rev_parse("refs/other", cwd=w.work)
        git.git("push", "-q", str(w.fork), f"{sha}:refs/heads/{shape.branch}", cwd=w.work)
    head = pr_head(w, shape)
    ad.closed_by_detachment(state, wd.REPO, shape.number, title=shape.title,
                            branch=shape.branch, head_sha=head, base="main")  # fmt: skip


def land(w: wd.Widgets, state: GitHubState, fork_url: Path, branch: str, number: int,
         title: str, how: str) -> str:  # fmt: skip
    """Upstream lands PR `number` (the fork's `branch`) on `main` as GitHub's button `how`
    does (squash, merge, rebase); marks it merged; the new `main`."""
    work = w.work
    maintainer = {"author": wd.MAINTAINER, "when": "2026-08-20T00:00:00+0000"}
    _g(work, "fetch", "-q", "origin", "+main:refs/remotes/origin/main")
    _g(work, "fetch", "-q", str(fork_url), f"+refs/heads/{branch}:refs/remotes/pr/{number}")
    _g(work, "checkout", "-q", "-B", "main", "refs/remotes/origin/main")
    pr = f"refs/remotes/pr/{number}"
    if how == "squash":
        _g(work, "merge", "-q", "--squash", pr)
        _g(work, "commit", "-q", "-m", f"{title} (#{number}){SIGNOFF}",
           committer=wd.MAINTAINER, when="2026-08-20T00:00:00+0000")  # fmt: skip
    elif how == "merge":
        _g(work, "merge", "-q", "--no-ff", "-m",
           f"Merge pull request #{number} from {wd.FORK.split('/')[0]}/{branch}\n\n{title}",
           pr, **maintainer)  # type: ignore[arg-type]  # fmt: skip
    else:  # rebase: each commit of the PR replayed on main, committed by GitHub's button
        _g(work, "checkout", "-q", "-B", "landing", pr)
        _g(work, "rebase", "-q", "main", author=None, committer=wd.MAINTAINER,
           when="2026-08-20T00:00:00+0000")  # fmt: skip
        _g(work, "checkout", "-q", "-B", "main", "landing")
    _g(work, "push", "-q", "origin", "main")
    state.merge_pull(wd.REPO, number, actor=MAINTAINER_LOGIN, at="2026-08-20T00:00:00Z")
    return _g(work, "rev-parse", "main")
