"""The base branches' history since the pinned bases, read once per base branch (commits and
trees), and what each entry's landing question still lacks: one `--shallow-since` fetch per
branch, deeper only while a question touches cut history; what stays cut is a `Gap`
("undetermined"). Each branch is walked once (`BranchHistory`): cost grows with history,
not entries x history.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from patchcarry import git
from patchcarry.errors import UpstreamError
from patchcarry.git.sha import short
from patchcarry.manifest import Entry

# How far before the oldest pinned base the history is read: a day (the usual case), a month,
# a year; past that an entry whose question needs older history is undetermined.
HISTORY_MARGINS = (86_400, 31 * 86_400, 366 * 86_400)
# How many times a boundary git drew inside the history read is deepened by one commit
# (`git fetch --deepen=1`) before the history is called cut.
MAX_DEEPENS = 8


@dataclasses.dataclass(frozen=True)
class Gap:
    """Why an entry's history is incomplete: `cut` (history not read: undetermined) or a fact."""

    reason: str
    cut: bool


@dataclasses.dataclass
class HistoryCost:
    """What reading the history took: fetches per base branch (walks: `BranchHistory.walks`)."""

    fetches: dict[str, int] = dataclasses.field(default_factory=dict)


def fix_paths(entry: Entry) -> list[str]:
    """The files the entry's fix commits touch (what its landing question reads)."""
    return sorted({f for p in entry.fixes for f in p.files})


@dataclasses.dataclass(frozen=True)
class Commit:
    """One commit of the history, as one walk of it read it (trees only)."""

    sha: str
    parents: tuple[str, ...]
    time: int
    subject: str
    files: frozenset[str]  # the paths it changes against its first parent

    @property
    def merge(self) -> bool:
        return len(self.parents) > 1


def _commits(rows: list[tuple[str, list[str], int, str, list[str]]]) -> list[Commit]:
    return [Commit(s, tuple(p), t, subj, frozenset(f)) for s, p, t, subj, f in rows]


class BranchHistory:
    """A base branch's history, walked once for every entry on it (merge sides only as needed)."""

    def __init__(self, repo: Path, branch: str, tip: str) -> None:
        self.repo, self.branch, self.tip = repo, branch, tip
        self.walks = 0  # walks of the history made (the cost report and a test count them)
        self.cutoff: int | None = None  # the epoch the history was read back to (`since`)
        self.deepened = 0  # `--deepen=1` fetches since then: boundaries drawn by count
        self.refresh()

    def refresh(self) -> None:
        """Forget what was read (after a fetch deepened the history)."""
        self._first_parent: list[Commit] | None = None
        self._since: dict[str, frozenset[str]] = {}
        self._after: dict[str, frozenset[str]] = {}
        self._sides: dict[str, list[Commit]] = {}
        self._ancestor: dict[tuple[str, str], bool] = {}
        self._shallow: set[str] | None = None
        self._boundary: tuple[Commit | None] | None = None

    @property
    def shallow(self) -> set[str]:
        if self._shallow is None:
            self._shallow = git.shallow_commits(cwd=self.repo)
        return self._shallow

    def first_parent(self) -> list[Commit]:
        """The tip's first-parent history that is here, oldest first (one walk)."""
        if self._first_parent is None:
            self.walks += 1
            rows = git.walk([self.tip], [], first_parent=True, cwd=self.repo)
            self._first_parent = _commits(rows)[::-1]
        return self._first_parent

    def has_base(self, base: str) -> bool:
        """Whether `base` is on the tip's history here."""
        return self.on_history_of(base, self.tip)

    def on_history_of(self, commit: str, base: str) -> bool:
        """Whether `commit` is on `base`'s own history here (git merge-base --is-ancestor)."""
        if (commit, base) not in self._ancestor:
            self._ancestor[commit, base] = git.is_ancestor(commit, base, cwd=self.repo)
        return self._ancestor[commit, base]

    def since(self, base: str) -> frozenset[str]:
        """The first-parent commits of `base..tip` that descend from `base`."""
        if base not in self._since:
            first = {c.sha for c in self.first_parent()}
            below = git.descendants(base, self.tip, cwd=self.repo)
            self._since[base] = frozenset(sha for sha in below if sha in first)
        return self._since[base]

    def after(self, base: str) -> frozenset[str]:
        """Every commit of `base..tip`, all parents: what a merge's side may hold of the fix."""
        if base not in self._after:
            self._after[base] = frozenset(git.rev_list(self.tip, base, cwd=self.repo))
        return self._after[base]

    def candidates(self, base: str, paths: list[str]) -> list[Commit]:
        """The first-parent commits of `base..tip` that change `paths`, oldest first."""
        wanted, since = set(paths), self.since(base)
        return [c for c in self.first_parent() if c.sha in since and c.files & wanted]

    def side(self, merge: Commit, paths: list[str], base: str) -> list[Commit]:
        """The commits `merge` brought (not from its first parent nor `base`) that change `paths` or
        whose parents were not fetched, oldest first."""
        if merge.sha not in self._sides:
            self.walks += 1
            rows = git.walk(list(merge.parents[1:]), list(merge.parents[:1]), first_parent=False,
                            cwd=self.repo)  # fmt: skip
            self._sides[merge.sha] = _commits(rows)[::-1]
        wanted, after = set(paths), self.after(base)
        return [c for c in self._sides[merge.sha]
                if c.sha in after and (c.files & wanted or c.sha in self.shallow)]  # fmt: skip

    def boundary(self) -> Commit | None:
        """The first-parent history's oldest commit here when git's shallow file cut it inside
        the history read (None: it ends where the read meant it to). `--shallow-since` makes a
        commit shallow when *any* parent is older than the cutoff: a merge whose other parent
        is old loses its first parent too, and every first-parent commit under it, however
        new, drops out of git's view of the branch (while the base may stay reachable through
        another merge). A boundary older than the cutoff is the read's own end; a one-parent
        commit at it is one only before any `--deepen`, which draws boundaries by count."""
        if self._boundary is None:
            history = self.first_parent()
            end = history[0] if history else None
            cut = (
                end is not None and end.sha in self.shallow and self.cutoff is not None
                and end.time >= self.cutoff
                and (self.deepened > 0 or len(git.stored_parents(end.sha, cwd=self.repo)) > 1)
            )  # fmt: skip
            self._boundary = (end if cut else None,)
        return self._boundary[0]

    def cut(self, base: str, paths: list[str]) -> str | None:
        """Why the history of `paths` since `base` is not all here (None: it is)."""
        if not self.has_base(base):
            return f"the pinned base {short(base)} is not an ancestor of {self.branch} here"
        end = self.boundary()
        # a boundary on the base's own history (older than it) cuts nothing it asks about
        if end is not None and end.sha != base and not self.on_history_of(end.sha, base):
            return (f"the history of {self.branch} is cut at {short(end.sha)} {end.subject!r}, a "
                    "shallow boundary inside the history read (git's shallow file)")  # fmt: skip
        cut = self.shallow & self.since(base)
        if cut:
            return (f"the history of {self.branch} since the pinned base is cut at "
                    f"{short(sorted(cut)[0])}")  # fmt: skip
        for merge in self.candidates(base, paths):
            if merge.merge:
                side = self.side(merge, paths, base)
                side_cut = [c.sha for c in side if c.sha in self.shallow]
                if side_cut:
                    return (f"the history merge {short(merge.sha)} brought to {self.branch} is cut "
                            f"at {short(side_cut[0])}")  # fmt: skip
        return None


def read(
    repo: Path, tips: dict[str, str], entries: Sequence[Entry], *, upstream: str,
    cost: HistoryCost | None = None,
) -> tuple[dict[str, BranchHistory], dict[str, Gap | None]]:  # fmt: skip
    """Fetch each base branch's history since its entries' bases; per entry, what is missing."""
    gaps: dict[str, Gap | None] = {}
    histories: dict[str, BranchHistory] = {}
    cost = cost if cost is not None else HistoryCost()
    for branch in sorted({e.base_branch for e in entries}):
        group = [e for e in entries if e.base_branch == branch]
        histories[branch] = BranchHistory(repo, branch, tips[branch])
        gaps.update(_read_branch(histories[branch], group, upstream, cost))
    return histories, gaps


def _deepen_boundaries(history: BranchHistory, upstream: str, cost: HistoryCost) -> None:
    """`git fetch --deepen=1` while the shallow file cuts the read history, `MAX_DEEPENS` times."""
    repo, branch, tip = history.repo, history.branch, history.tip
    while history.boundary() is not None and history.deepened < MAX_DEEPENS:
        refused = git.fetch_partial("origin", [f"+{tip}:{git.own_ref('heads', branch)}"],
                                    deepen=1, cwd=repo)  # fmt: skip
        cost.fetches[branch] = cost.fetches.get(branch, 0) + 1
        if refused is not None:
            raise UpstreamError(f"could not deepen the history of {branch} from {upstream}: "
                                f"{refused.text}")  # fmt: skip
        history.deepened += 1
        history.refresh()


def _read_branch(history: BranchHistory, group: list[Entry], upstream: str,
                 cost: HistoryCost) -> dict[str, Gap | None]:  # fmt: skip
    repo, branch, tip = history.repo, history.branch, history.tip

    def missing() -> dict[str, str | None]:
        return {e.name: history.cut(e.base_commit, fix_paths(e)) for e in group}

    oldest = min(git.commit_time(b, cwd=repo) for b in {e.base_commit for e in group})
    # what an earlier run left in the cache: boundaries of unknown making (by date or count)
    history.cutoff, history.deepened = oldest - HISTORY_MARGINS[0], 1
    found = missing()
    rewritten = False
    for margin in HISTORY_MARGINS:
        if all(why is None for why in found.values()):
            break
        refused = git.fetch_partial("origin", [f"+{tip}:{git.own_ref('heads', branch)}"],
                                    since=oldest - margin, cwd=repo)  # fmt: skip
        cost.fetches[branch] = cost.fetches.get(branch, 0) + 1
        if refused is not None and refused.nothing_new:
            rewritten = True  # every commit of the tip is older than the bases: not its history
            break
        if refused is not None:
            raise UpstreamError(
                f"could not fetch the history of {branch} since {oldest - margin} from "
                f"{upstream}: {refused.text}"
            )
        history.cutoff, history.deepened = oldest - margin, 0
        history.refresh()
        _deepen_boundaries(history, upstream, cost)
        found = missing()
    gaps: dict[str, Gap | None] = {}
    for entry in group:
        why = found[entry.name]
        if why is None:
            gaps[entry.name] = None
        elif rewritten and not history.has_base(entry.base_commit):
            base = short(entry.base_commit)
            reason = f"the pinned base {base} is not on {branch}'s history (rewritten upstream?)"
            gaps[entry.name] = Gap(reason, cut=False)
        else:
            days = HISTORY_MARGINS[-1] // 86_400
            gaps[entry.name] = Gap(
                f"{why} (read back to {days} days before the oldest pinned base)", cut=True
            )
    return gaps
