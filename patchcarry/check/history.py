"""The base branches' history since the pinned bases, read once per base branch for every
entry (commits and trees, no blobs), and what of it each entry's landing question still lacks.

One shallow fetch per base branch, `--shallow-since` the oldest pinned base of the entries on
it (less a margin); deeper (a longer margin) only while some entry's question touches history
that is cut: the base branch's own first-parent history since its base, or the side of a merge
that changed its fix's files (what "nightly sync main into dev" brought). What is still cut
after the last margin is a `Gap` the landing judge turns into "undetermined", never a verdict.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from patchcarry import git
from patchcarry.errors import UpstreamError
from patchcarry.manifest import Entry

# How far before the oldest pinned base the history is read: a day (the usual case), a month,
# a year; past that an entry whose question needs older history is undetermined.
HISTORY_MARGINS = (86_400, 31 * 86_400, 366 * 86_400)


@dataclasses.dataclass(frozen=True)
class Gap:
    """Why an entry's history is incomplete. `cut`: history that may hold the answer was not
    read (the verdict is "undetermined" unless the fix is found all the same); otherwise a fact
    about upstream (its branch no longer holds the pinned base)."""

    reason: str
    cut: bool


@dataclasses.dataclass
class HistoryCost:
    """What reading the history took: fetches made (one per base branch when nothing older is
    needed) and the walks of it, per base branch."""

    fetches: dict[str, int] = dataclasses.field(default_factory=dict)


def fix_paths(entry: Entry) -> list[str]:
    """The files the entry's fix commits touch (what its landing question reads)."""
    return sorted({f for p in entry.fixes for f in p.files})


def _cut(repo: Path, entry: Entry, tip: str, shallow: set[str]) -> str | None:
    """Why the history `entry`'s landing question reads is not all here (None: it is)."""
    base, branch = entry.base_commit, entry.base_branch
    if not git.is_ancestor(base, tip, cwd=repo):
        return f"the pinned base {base[:12]} is not an ancestor of {branch} here"
    cut = shallow & set(git.first_parent_range(base, tip, cwd=repo))
    if cut:
        return f"the history of {branch} since the pinned base is cut at {sorted(cut)[0][:12]}"
    paths = fix_paths(entry)
    for sha, parents, _ in git.log_touching([tip], [base], paths, first_parent=True, cwd=repo):
        if len(parents) < 2:
            continue
        side = git.log_touching(parents[1:], parents[:1], paths, first_parent=False, cwd=repo)
        side_cut = [c for c, _, _ in side if c in shallow]
        if side_cut:
            return (
                f"the history merge {sha[:12]} brought to {branch} is cut at {side_cut[0][:12]}"
            )
    return None


def read(
    repo: Path,
    tips: dict[str, str],
    entries: Sequence[Entry],
    *,
    upstream: str,
    cost: HistoryCost | None = None,
) -> dict[str, Gap | None]:
    """Bring each base branch's history since its entries' pinned bases into the cache `repo`
    (one fetch per branch, deeper only as needed); per entry name, what is still missing."""
    gaps: dict[str, Gap | None] = {}
    cost = cost if cost is not None else HistoryCost()
    for branch in sorted({e.base_branch for e in entries}):
        group = [e for e in entries if e.base_branch == branch]
        gaps.update(_read_branch(repo, branch, tips[branch], group, upstream, cost))
    return gaps


def _read_branch(
    repo: Path, branch: str, tip: str, group: list[Entry], upstream: str, cost: HistoryCost
) -> dict[str, Gap | None]:
    def missing() -> dict[str, str | None]:
        shallow = git.shallow_commits(cwd=repo)
        return {e.name: _cut(repo, e, tip, shallow) for e in group}

    found = missing()
    oldest = min(git.commit_time(b, cwd=repo) for b in {e.base_commit for e in group})
    rewritten = False
    for margin in HISTORY_MARGINS:
        if all(why is None for why in found.values()):
            break
        code, err = git.fetch_partial(
            "origin", [f"+{tip}:refs/patchcarry/heads/{branch}"], since=oldest - margin, cwd=repo
        )
        cost.fetches[branch] = cost.fetches.get(branch, 0) + 1
        if code != 0 and "no commits selected for shallow requests" in err:
            rewritten = True  # every commit of the tip is older than the bases: not its history
            break
        if code != 0:
            raise UpstreamError(
                f"could not fetch the history of {branch} since {oldest - margin} from "
                f"{upstream}: {err.strip() or 'see git output above'}"
            )
        found = missing()
    gaps: dict[str, Gap | None] = {}
    for entry in group:
        why = found[entry.name]
        if why is None:
            gaps[entry.name] = None
        elif rewritten and not git.is_ancestor(entry.base_commit, tip, cwd=repo):
            base = entry.base_commit[:12]
            reason = f"the pinned base {base} is not on {branch}'s history (rewritten upstream?)"
            gaps[entry.name] = Gap(reason, cut=False)
        else:
            days = HISTORY_MARGINS[-1] // 86_400
            gaps[entry.name] = Gap(
                f"{why} (read back to {days} days before the oldest pinned base)", cut=True
            )
    return gaps
