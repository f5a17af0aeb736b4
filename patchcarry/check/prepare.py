"""What `check` reads of upstream for many entries at once, before each entry is judged: a few
git processes for a chunk of entries instead of a few dozen per entry (a 1,000-entry check
made some 25,000). Every answer is the one the entry's own question gets from git (the touched
files' modes and blobs at the base and the tip, whether each patch applies there, the drift
diff, the fix's net diff on its base, whether it reverse-applies at the tip, the diffs of the
commits that touch its files and their patch-ids); what could not be split back per entry is
left out, and the entry then asks git itself, as before. Nothing here decides a verdict.

    trees = tree_entries(fetched, entries)          # once: what the prefetch fetches
    for chunk in chunks(entries):
        known = Prepared.read(fetched, chunk, trees, histories)
        ... known.show(commit, path), known.applied[(name, commit)], known.landing ...
"""

from __future__ import annotations

import collections
import dataclasses
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from patchcarry import git
from patchcarry.check import judge, landing
from patchcarry.check.history import BranchHistory, Commit
from patchcarry.check.report import PatchApply
from patchcarry.manifest import Entry
from patchcarry.patchfile import Patch
from patchcarry.upstream import FetchedUpstream

CHUNK = 50  # entries whose blobs and diffs are held at once (memory stays flat)

Trees = dict[str, dict[str, tuple[str, str, str]]]  # commit -> path -> (mode, type, id)


def touched(entry: Entry) -> list[str]:
    return sorted({f for p in entry.patches(with_tests=True) for f in p.files})


def chunks(entries: Sequence[Entry]) -> Iterator[list[Entry]]:
    for start in range(0, len(entries), CHUNK):
        yield list(entries[start : start + CHUNK])


def tree_entries(fetched: FetchedUpstream, entries: Sequence[Entry]) -> Trees:
    """The touched paths' tree entries at every entry's base and branch tip: one `ls-tree` per
    commit (trees only)."""
    wanted: dict[str, set[str]] = collections.defaultdict(set)
    for entry in entries:
        for commit in (entry.base_commit, fetched.branch_tips[entry.base_branch]):
            wanted[commit].update(touched(entry))
    return {c: git.tree_entries(c, sorted(p), cwd=fetched.repo) for c, p in sorted(wanted.items())}


@dataclasses.dataclass
class Prepared:
    repo: Path
    trees: Trees
    blobs: dict[str, bytes]
    applied: dict[tuple[str, str], list[PatchApply]]  # (entry, commit) -> apply_at's answer
    drift: dict[tuple[str, str], dict[str, str]]  # (base, tip) -> path -> `diff -U0` text
    landing: landing.Known

    def modes(self, commit: str, paths: list[str]) -> dict[str, str]:
        """`git.modes_at`'s answer, from the tree read for all entries."""
        held = self.trees.get(commit, {})
        return {p: held[p][0] for p in paths if p in held}

    def show(self, commit: str, path: str) -> bytes | None:
        """`git.show_file`'s answer (None: no such path), from the blobs read for the chunk."""
        held = self.trees.get(commit, {})
        if path not in held:
            return None
        _, kind, blob = held[path]
        if kind == "blob" and blob in self.blobs:
            return self.blobs[blob]
        return git.show_file(commit, path, cwd=self.repo)  # git's own answer, errors included

    @classmethod
    def read(
        cls,
        fetched: FetchedUpstream,
        entries: list[Entry],
        trees: Trees,
        histories: dict[str, BranchHistory],
    ) -> Prepared:
        repo = fetched.repo
        ids = [
            held[path][2]
            for entry in entries
            for commit in (entry.base_commit, fetched.branch_tips[entry.base_branch])
            for path in touched(entry)
            if (held := trees.get(commit, {})).get(path, ("", "", ""))[1] == "blob"
        ]
        known = cls(repo, trees, git.read_blobs(ids, cwd=repo), {}, {}, landing.Known())
        with tempfile.TemporaryDirectory(prefix="patchcarry-prepare-") as tmp:
            known._apply(fetched, entries, Path(tmp))
            known._drift(fetched, entries)
            known._landing(fetched, entries, histories, Path(tmp))
        return known

    def _apply(self, fetched: FetchedUpstream, entries: list[Entry], tmp: Path) -> None:
        """apply_at's answer for each one-patch entry at its base and tip, that patch checked
        with the others' in one tree of every touched file at that commit (`git apply --check`
        changes nothing between them); one that does not apply cleanly or with an offset is
        left to apply_at (fuzz, the rejected hunk)."""
        by_commit: dict[str, list[Entry]] = collections.defaultdict(list)
        for entry in entries:
            if len(entry.patches(with_tests=True)) == 1:
                by_commit[entry.base_commit].append(entry)
                by_commit[fetched.branch_tips[entry.base_branch]].append(entry)
        for n, (commit, group) in enumerate(sorted(by_commit.items())):
            tree = (tmp / f"tree-{n}").resolve()
            tree.mkdir()
            patches = [e.patches(with_tests=True)[0] for e in group]
            for path in sorted({f for p in patches for f in p.files}):
                data = self.show(commit, path)
                if data is not None:
                    target = judge.inside(tree, path, patches)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(data)
            answers = git.check_many(
                [(p.path, p.files, len(p.changes)) for p in patches],
                cwd=tree,
                args=[],
                env=git.plain_tree_env(tree),
                scratch=tmp / "many.patch",
            )
            # those that do not apply as they are: with one line of context (apply_at's fuzz)
            missed = [k for k, a in enumerate(answers) if a is not None and not a[0]]
            fuzzed = git.check_many(
                [(patches[k].path, patches[k].files, len(patches[k].changes)) for k in missed],
                cwd=tree,
                args=["-C1"],
                env=git.plain_tree_env(tree),
                scratch=tmp / "many.patch",
            )
            fuzz = dict(zip(missed, fuzzed, strict=True))
            for k, (entry, patch) in enumerate(zip(group, patches, strict=True)):
                result = _applied(patch, answers[k], fuzz.get(k))
                if result is not None:
                    self.applied[(entry.name, commit)] = [result]

    def _drift(self, fetched: FetchedUpstream, entries: list[Entry]) -> None:
        """The `diff -U0` of every touched file from base to tip, one diff per (base, tip)."""
        pairs: dict[tuple[str, str], set[str]] = collections.defaultdict(set)
        for entry in entries:
            hunks = {h.path for p in entry.patches(with_tests=True) for h in p.hunks}
            pairs[(entry.base_commit, fetched.branch_tips[entry.base_branch])].update(hunks)
        for (base, tip), paths in sorted(pairs.items()):
            per: dict[str, str] = dict.fromkeys(paths, "")
            for path, section in git.diff_files(base, tip, sorted(paths), cwd=self.repo,
                                                unified=0):  # fmt: skip
                per[path] = per.get(path, "") + section
            self.drift[(base, tip)] = per

    def _landing(
        self,
        fetched: FetchedUpstream,
        entries: list[Entry],
        histories: dict[str, BranchHistory],
        tmp: Path,
    ) -> None:
        known = self.landing
        known.fix_files.update(series_many(self.repo, entries, tmp))
        # whether each fix reverse-applies at its tip: one scratch index per tip
        fixes: dict[str, tuple[Path, list[str], int]] = {}  # the fix diff, on disk
        by_tip: dict[str, list[Entry]] = collections.defaultdict(list)
        walks: list[tuple[Entry, list[tuple[str, str]], list[Commit]]] = []
        for n, entry in enumerate(entries):
            files, history = known.fix_files.get(entry.name), histories.get(entry.base_branch)
            if not files:
                continue
            diff = tmp / f"fix-{n}.diff"
            diff.write_bytes(git.encode(landing.joined(files)))
            fixes[entry.name] = (diff, sorted({p for p, _ in files}), len(files))
            by_tip[fetched.branch_tips[entry.base_branch]].append(entry)
            if history is not None and history.has_base(entry.base_commit):
                walks.append((entry, files, _walk(entry, files, history)))
        for reversed_here in self._reverse_at(by_tip, fixes, tmp).values():
            known.in_tip.update(reversed_here)
        # the commits the judge reads: their diffs (one diff-tree for all) and patch-ids (one
        # patch-id for all, the fixes' too)
        pairs = {one.sha: one.parents[0] for _, _, walk in walks for one in walk}
        paths = sorted({p for _, files, _ in walks for p, _ in files})
        if pairs:
            # their blobs in one request: git's diff would fetch them commit by commit
            blobs = git.blobs_of_commits(sorted(pairs.items()), paths, cwd=self.repo)
            git.prefetch_blobs("origin", blobs, cwd=self.repo)
            known.commit_diffs.update(dict.fromkeys(pairs, []))  # an empty diff, too
            known.commit_diffs.update(
                git.diffs_of_commits(sorted(pairs.items()), paths, cwd=self.repo)
            )
            known.paths.update(paths)
        texts = [landing.joined(f) for f in known.fix_files.values() if f]
        for _, files, walk in walks:
            net = sorted({p for p, _ in files})
            diffs = [known.commit_diff(one, net, self.repo) for one in walk]
            texts += [landing.joined(d) for d in diffs if d]
        unique = list(dict.fromkeys(texts))
        known.patch_ids.update(zip(unique, git.patch_ids(unique, cwd=self.repo), strict=True))
        # whether each fix reverse-applies at the commits whose change on its files has
        # another patch-id (what `_carried` asks next): one scratch index per commit
        at: dict[str, list[Entry]] = collections.defaultdict(list)
        for entry, files, walk in walks:
            for sha in _asked_at(entry, files, walk, known, self.repo):
                at[sha].append(entry)
        for sha, reversed_here in self._reverse_at(at, fixes, tmp).items():
            for name, answer in reversed_here.items():
                known.reverses_at[(sha, name)] = answer

    def _reverse_at(
        self,
        wanted: dict[str, list[Entry]],
        fixes: dict[str, tuple[Path, list[str], int]],
        tmp: Path,
    ) -> dict[str, dict[str, bool]]:
        """{commit: {entry: whether its fix reverse-applies there}}: `git apply -R --check
        --cached` of every fix asked at a commit, on one scratch index of it."""
        found: dict[str, dict[str, bool]] = {}
        index = tmp / "at.index"
        for commit, group in sorted(wanted.items()):
            index.unlink(missing_ok=True)
            git.read_tree(commit, index=index, cwd=self.repo)
            group = list({e.name: e for e in group}.values())
            answers = git.check_many(
                [fixes[e.name] for e in group],
                cwd=self.repo,
                args=["--cached", "-R"],
                env={"GIT_INDEX_FILE": str(index)},
                scratch=tmp / "many.patch",
            )
            found[commit] = {
                e.name: answer[0] for e, answer in zip(group, answers, strict=True) if answer
            }
        return found


def _walk(entry: Entry, files: list[tuple[str, str]], history: BranchHistory) -> list[Commit]:
    """The commits whose change the landing judge reads for `entry`, in its order: each
    first-parent commit touching the fix's files since the base, a merge's side before the
    merge; none whose parents were not fetched."""
    net = sorted({p for p, _ in files})
    found = []
    for commit in history.candidates(entry.base_commit, net)[: landing.MAX_CANDIDATES]:
        if commit.sha in history.shallow or not commit.parents:
            continue  # the judge reads nothing of it
        side = history.side(commit, net, entry.base_commit) if commit.merge else []
        found += [c for c in side if c.parents and c.sha not in history.shallow] + [commit]
    return found


def _asked_at(
    entry: Entry, files: list[tuple[str, str]], walk: list[Commit], known: landing.Known, repo: Path
) -> list[str]:
    """The commits of `walk` at which the landing judge asks whether `entry`'s fix
    reverse-applies: those whose change on the fix's files has another patch-id, up to the
    first commit that carries the fix whatever git answers there (the same patch-id, or its
    lines alone): the judge stops there. A question not asked here the judge asks git."""
    ours, net = known.patch_ids.get(landing.joined(files)), sorted({p for p, _ in files})
    fix = landing.parse_files(files)
    asked: list[str] = []
    for one in walk:
        theirs = known.commit_diff(one, net, repo)
        if not theirs:
            continue
        text = landing.joined(theirs)
        if text in known.patch_ids and known.patch_ids[text] == ours:
            return asked  # the same patch-id: a carrier, asked nothing
        asked.append(one.sha)
        found, total = landing.coverage(fix, landing.parse_files(theirs))
        if landing.line_evidence(entry, one.subject, found, total):
            return asked  # a carrier by its lines, whatever git answers here
    return asked


def _applied(
    patch: Patch, first: tuple[bool, str] | None, fuzz: tuple[bool, str] | None
) -> PatchApply | None:
    """apply_at's answer for a one-patch entry from the batched checks: as it is, then with
    one line of context (`fuzz`); None where git's words for it are not all here."""
    if first is None:
        return None
    if first[0]:
        offsets = git.Applied(0, first[1]).offsets
        return PatchApply(patch.name, "offset" if offsets else "clean", offsets)
    if fuzz is None:
        return None
    if fuzz[0]:
        return PatchApply(patch.name, "fuzz", git.Applied(0, fuzz[1]).offsets)
    applied = git.Applied(1, first[1])
    if applied.failed_at is None:
        return None
    rejected = judge.rejected_hunk(patch, applied)
    if not rejected.startswith("--- "):
        return None  # git's own message stands in for the hunk: ask it for its own words
    return PatchApply(patch.name, "conflict", [], rejected)


def series_many(
    repo: Path, entries: list[Entry], tmp: Path
) -> dict[str, list[tuple[str, str]] | None]:
    """`series.series_files` of each entry's fixes on its base, many entries in one scratch
    index: those of one base whose files no other in the group touches are applied together
    (`git apply --cached`, one call; all or nothing), the tree written once and diffed once,
    each entry's sections being its own files'. A group git refuses is halved until each entry
    that does not apply is alone, and is left out (the entry asks git itself)."""
    found: dict[str, list[tuple[str, str]] | None] = {}
    by_base: dict[str, list[Entry]] = collections.defaultdict(list)
    for entry in entries:
        by_base[entry.base_commit].append(entry)
    for base, group in sorted(by_base.items()):
        touched = [{f for p in entry.fixes for f in p.files} for entry in group]
        for members in git.disjoint_layers(touched):
            _series_layer(repo, base, [group[i] for i in members], tmp, found)
    return found


def _series_layer(
    repo: Path,
    base: str,
    members: list[Entry],
    tmp: Path,
    found: dict[str, list[tuple[str, str]] | None],
) -> None:
    index = tmp / "series.index"
    index.unlink(missing_ok=True)
    git.read_tree(base, index=index, cwd=repo)
    patches = [p.path for e in members for p in e.fixes]
    if not git.apply_many_to_index(patches, index=index, cwd=repo):
        if len(members) > 1:
            half = len(members) // 2
            _series_layer(repo, base, members[:half], tmp, found)
            _series_layer(repo, base, members[half:], tmp, found)
        return
    tree = git.write_tree(index=index, cwd=repo)
    files = sorted({f for e in members for p in e.fixes for f in p.files})
    sections = git.diff_files(base, tree, files, cwd=repo)
    for entry in members:
        mine = {f for p in entry.fixes for f in p.files}
        found[entry.name] = [(p, s) for p, s in sections if p in mine]
