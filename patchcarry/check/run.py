"""`check`: does each patch apply upstream (base and tip), drift, match what it supersedes."""

from __future__ import annotations

import functools
import time
from pathlib import Path

from patchcarry import git, install, patchrules
from patchcarry import upstream as upstream_mod
from patchcarry.check import history, judge, landing, prepare, series
from patchcarry.check.report import CheckReport, EntryResult, Identity, RefApply
from patchcarry.manifest import Entry
from patchcarry.runtime import tree as megatron_tree

OFFLINE_SKIPS = ["tip", "drift", "identity", "landing"]
STATUS_APPLIES = ("clean", "offset", "fuzz")
MAX_PULL_DEPTH = 64  # a PR head's history fetched for its identity, at most


def _no_offline_source(entry: Entry) -> str:
    return (f"no offline source for {entry.upstream} (the offline check reads megatron-core's "
            f"source, {megatron_tree.OFFLINE_SOURCE_REPO}'s): `{install.command('check')} "
            f"{entry.name}` checks it against {entry.upstream}")  # fmt: skip


def _offline(entries: list[Entry], tree: Path | None, label: str) -> list[EntryResult]:
    results = []
    for entry in entries:
        here = tree if megatron_tree.has_offline_source(entry.upstream) else None
        reason = entry.offline or (_no_offline_source(entry) if here is None else None)
        if reason is not None or here is None:
            skipped = ["apply", *OFFLINE_SKIPS]
            results.append(EntryResult(entry.name, [], not_checked=skipped, reason=reason))
            continue

        def read(path: str, here: Path = here) -> bytes | None:
            file = here / path
            return file.read_bytes() if file.is_file() else None

        # The installed wheel ships megatron/ only: test patches cannot be judged against it.
        applied = judge.apply_at(entry.patches(with_tests=False), read)
        skipped = [*OFFLINE_SKIPS, *(["tests"] if entry.tests else [])]
        refs = [RefApply("installed", label, None, applied)]
        results.append(EntryResult(entry.name, refs, not_checked=skipped))
    return results


def run_offline(entries: list[Entry], tree: Path | None = None) -> CheckReport:
    """Apply check against a source tree (default: installed megatron-core) for its entries."""
    if any(megatron_tree.has_offline_source(e.upstream) and not e.offline for e in entries):
        tree = tree or megatron_tree.installed_tree()
        label = megatron_tree.tree_label(tree)
    else:
        tree, label = None, "no offline source for these entries' upstreams"
    return CheckReport(label, "offline", _offline(entries, tree, label))


def _left_base(repo: Path, entry: Entry, head: str, tip: str) -> tuple[list[str], list[str]]:
    """PR `head`'s merge base with the tip (GitHub's "Files changed") and the pinned base: (those
    that are ancestors here, the others: below what `pull_depth` fetched)."""
    found = [b for b in dict.fromkeys([git.merge_base(head, tip, cwd=repo), entry.base_commit])
             if b]  # fmt: skip
    ancestors = [b for b in found if git.is_ancestor(b, head, cwd=repo)]
    return ancestors, [b for b in found if b not in ancestors]


def pull_depth(entries: list[Entry]) -> int:
    """How much of each PR head's history is fetched: a commit per patch, and its base."""
    return min(max([2, *(len(e.patches(with_tests=True)) + 1 for e in entries)]), MAX_PULL_DEPTH)


def _identity(repo: Path, entry: Entry, number: int, head: str, tip: str) -> Identity:
    """Is PR `number` this entry's change (with or without tests)? First identical, else fixes'."""
    candidates = [list(entry.fixes)] + ([[*entry.fixes, *entry.tests]] if entry.tests else [])
    bases, untold = _left_base(repo, entry, head, tip)
    verdicts: list[Identity] = []
    for patches in candidates:
        files = (judge.patch_files(patches[0]) if len(patches) == 1
                 else series.series_files(repo, entry.base_commit, patches))  # fmt: skip
        if files is None and verdicts:  # fixes and tests do not apply together: judged already
            continue
        ours = files if files is not None else judge.patch_files(entry.fix)
        under = f"{head}~{len(patches)}"
        below = git.rev_parse(under, cwd=repo) if git.rev_exists(under, cwd=repo) else None
        verdicts.append(
            judge.identity(repo, ours, number, head, below, also=bases, same_tree_as=untold)
        )
        if verdicts[-1].result == "identical":
            return verdicts[-1]
    return verdicts[0]


def _upstream_entry(
    fetched: upstream_mod.FetchedUpstream, entry: Entry,
    gaps: dict[str, history.Gap | None] | None = None,
    histories: dict[str, history.BranchHistory] | None = None,
    known: prepare.Prepared | None = None,
) -> EntryResult:  # fmt: skip
    repo, base = fetched.repo, entry.base_commit
    tip = fetched.branch_tips[entry.base_branch]
    patches = entry.patches(with_tests=True)  # test patches are checked even if not sent
    refs = []
    touched = prepare.touched(entry)
    for ref, commit, label in (
        ("base", base, git.short(base)),
        ("tip", tip, f"{entry.base_branch} {git.short(tip)}"),
    ):
        # git's own modes of the touched paths first: a submodule is no blob to read, and a
        # file a patch creates again must keep the mode the tree gives it
        modes = known.modes(commit, touched) if known else git.modes_at(commit, touched, cwd=repo)
        patchrules.refuse_special(entry.name, git.special_at(modes))
        changes = [c for p in patches for c in p.changes]
        patchrules.refuse_mode_against_tree(entry.name, changes, modes)
        applied = known.applied.get((entry.name, commit)) if known else None
        if applied is None:
            applied = judge.apply_at(patches, functools.partial((known or fetched).show, commit))
        refs.append(RefApply(ref, label, commit, applied))
    drift = judge.drift(repo, base, tip, patches, known.drift.get((base, tip)) if known else None)
    identity = [_identity(repo, entry, n, fetched.pull_heads[n], tip) for n in entry.supersedes]
    fixes_at_tip = refs[1].patches[: len(entry.fixes)]
    applies = all(p.status in STATUS_APPLIES for p in fixes_at_tip)
    unfetched = history.Gap("the base branch's history since the pinned base was not read", True)
    gap = gaps[entry.name] if gaps is not None else unfetched
    shared = (histories or {}).get(entry.base_branch)
    judged = landing.judge(repo, entry, tip, applies, gap, shared, known.landing if known else None)
    return EntryResult(entry.name, refs, drift, identity, landing=judged)


def _prefetch(fetched: upstream_mod.FetchedUpstream, trees: prepare.Trees) -> None:
    """Every blob the checks read at the bases and tips, in one fetch, not a lazy fetch each."""
    blobs = [i for held in trees.values() for _, kind, i in held.values() if kind == "blob"]
    git.prefetch_blobs("origin", list(dict.fromkeys(blobs)), cwd=fetched.repo)


def run_checks(
    entries: list[Entry], *, upstream: str = upstream_mod.DEFAULT_UPSTREAM, offline: bool = False,
    work_dir: Path | None = None,
) -> CheckReport:  # fmt: skip
    """Check `entries` against `upstream` or offline; a patch that does not apply is a result."""
    started = time.monotonic()
    if offline:
        return run_offline(entries)
    # held while blobs are read lazily, too
    with upstream_mod.claimed(upstream_mod.remote_url(upstream), work_dir) as work_dir:
        fetched = upstream_mod.fetch(upstream,
                                     base_commits=sorted({e.base_commit for e in entries}),
                                     branches=sorted({e.base_branch for e in entries}),
                                     pulls=sorted({n for e in entries for n in e.supersedes}),
                                     work_dir=work_dir, pull_depth=pull_depth(entries))  # fmt: skip
        cost = history.HistoryCost()
        histories, gaps = history.read(fetched.repo, fetched.branch_tips, entries,
                                       upstream=upstream, cost=cost)  # fmt: skip
        trees = prepare.tree_entries(fetched, entries)
        _prefetch(fetched, trees)
        results = []
        for chunk in prepare.chunks(entries):
            known = prepare.Prepared.read(fetched, chunk, trees, histories)
            for entry in chunk:
                results.append(_upstream_entry(fetched, entry, gaps, histories, known))
                git.index_packs(fetched.repo)  # the packs its lazy blob fetches left
    report = CheckReport(upstream, "upstream", results, fetched.bytes_fetched, str(fetched.repo),
                         fetched.cache_bytes)  # fmt: skip
    report.cost = {"seconds": round(time.monotonic() - started, 3),
                   "bytes_fetched": fetched.bytes_fetched, "history_fetches": cost.fetches,
                   "history_walks": {branch: h.walks for branch, h in histories.items()},
                   "entries": len(entries)}  # fmt: skip
    return report
