"""Has an entry's fix landed on its base branch since the pinned base? Decided by git alone,
on the check's blob-less history of `base..tip` (first parent: a squash, a cherry-pick or a
merge each stand as one commit):

- a commit *carries* the fix when its diff of the fix's files has the fix's own
  `git patch-id --verbatim`, or the fix reverse-applies at it (`git apply -R --check`), or it
  adds all the fix's added lines and removes all its removed ones, or its subject names one of
  the entry's PRs and it has most of the fix's lines (a maintainer's edits); a line counts only
  where the fix has it: in a hunk of the commit whose neighbouring lines agree with the fix's
  hunk (the same lines added in another function are not the fix);
- **landed**: a commit carried it and it is still whole at the tip (it reverse-applies there,
  or `git blame --reverse` keeps every line it added);
- **landed, changed since**: a commit carried it and later commits changed some of its lines
  (named by `git blame --reverse`);
- **landed, then undone**: a commit carried it and none of the lines it added is left at the
  tip (a revert, a merge that removed them; a fix of one telling line only when it applies at
  the tip again, as a line rewritten in place reads the same), or, for a fix that adds no
  line, it applies at the tip again: both the landing and what undid it are named;
- **superseded**: no commit carried it and every place it changes is gone at the tip (a file
  deleted, or every hunk's lines removed or rewritten): the commit that removed them is named;
- **not landed**: anything else. A fix is never called landed on less than one of the above;
  weaker evidence (a commit with some of its lines) is reported as partial, beside "not landed".

The lines followed are the whole fix's (every commit of a multi-commit fix, however upstream
landed them: a squash, a rebase-merge, a true merge), as they stand where the fix became whole.
That the fix applies at the tip again never overrides a landing that was found.

Only the fix's files are read: their blobs at each commit that touches them."""

from __future__ import annotations

import collections
import dataclasses
import datetime
import re
import tempfile
from pathlib import Path

from patchcarry import git, install
from patchcarry.check import series
from patchcarry.check.history import BranchHistory, Commit, Gap
from patchcarry.check.report import Landing, UpstreamCommit, Verdict
from patchcarry.git.sha import short
from patchcarry.manifest import Entry

LANDED, CHANGED, UNDONE, SUPERSEDED, NOT_LANDED, UNDETERMINED = (
    Verdict.LANDED,
    Verdict.CHANGED,
    Verdict.UNDONE,
    Verdict.SUPERSEDED,
    Verdict.NOT_LANDED,
    Verdict.UNDETERMINED,
)
MAX_CANDIDATES = 300  # commits touching the fix's files that are read; past it, evidence is partial
_PR_RE = re.compile(r"\(#(\d+)\)")
_HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_WORD_RE = re.compile(r"[A-Za-z0-9_]{3,}")


@dataclasses.dataclass
class FileDiff:
    """One file's side of a diff: added lines with their new-side number, removed and context
    lines with their old-side number."""

    added: list[tuple[int, str]] = dataclasses.field(default_factory=list)
    removed: list[tuple[int, str]] = dataclasses.field(default_factory=list)
    hunks: list[tuple[list[tuple[int, str]], list[tuple[int, str]]]] = dataclasses.field(
        default_factory=list
    )  # per hunk: (removed, context) old-side lines
    hunk_added: list[list[tuple[int, str]]] = dataclasses.field(default_factory=list)
    # per hunk (as `hunks`): its added lines


def parse_section(text: str) -> FileDiff:
    """One file's `git diff` section -> its added/removed/context lines (its name is not read
    here: `git.diff_files` gives it from git's -z records)."""
    current = FileDiff()
    old = new = 0
    for line in text.split("\n"):
        if match := _HUNK_RE.match(line):
            old, new = int(match.group(1)), int(match.group(3))
            current.hunks.append(([], []))
            current.hunk_added.append([])
        elif current.hunks and line[:1] in ("+", "-", " "):
            removed, context = current.hunks[-1]
            if line.startswith("+"):
                current.added.append((new, line[1:]))
                current.hunk_added[-1].append((new, line[1:]))
                new += 1
            elif line.startswith("-"):
                current.removed.append((old, line[1:]))
                removed.append((old, line[1:]))
                old += 1
            else:
                context.append((old, line[1:]))
                old, new = old + 1, new + 1
    return current


def parse_files(files: list[tuple[str, str]]) -> dict[str, FileDiff]:
    """`git.diff_files` answer -> per path its added/removed/context lines."""
    return {path: parse_section(section) for path, section in files}


def joined(files: list[tuple[str, str]]) -> str:
    """The sections as one diff text (what `git patch-id` and `git apply` read)."""
    return "".join(section for _, section in files)


def key(line: str) -> str | None:
    """A line as compared across commits (inner whitespace folded), or None when it says too
    little to be evidence (blank, punctuation, a lone keyword)."""
    text = " ".join(line.split())
    return text if _WORD_RE.search(text) and len(text) >= 6 else None


def _keys(lines: list[tuple[int, str]]) -> collections.Counter[str]:
    return collections.Counter(k for _, line in lines if (k := key(line)) is not None)


def _placed(mine: FileDiff, other: FileDiff) -> int:
    """How many of the fix's telling lines in one file the commit has where the fix has them:
    each of the fix's hunks is matched only in the commit's hunks whose old side (context and
    removed lines) shares a telling line with that hunk's context (any hunk where the fix's
    hunk has no telling context: a new file, a hunk of blank lines)."""
    theirs = [
        (_keys(removed + context), _keys(added), _keys(removed))
        for (removed, context), added in zip(other.hunks, other.hunk_added, strict=True)
    ]
    found = 0
    for (removed, context), added in zip(mine.hunks, mine.hunk_added, strict=True):
        near = _keys(context)
        has_added: collections.Counter[str] = collections.Counter()
        has_removed: collections.Counter[str] = collections.Counter()
        for old_side, their_added, their_removed in theirs:
            if not near or near & old_side:
                has_added.update(their_added)
                has_removed.update(their_removed)
        found += sum((_keys(added) & has_added).values())
        found += sum((_keys(removed) & has_removed).values())
    return found


def coverage(ours: dict[str, FileDiff], theirs: dict[str, FileDiff]) -> tuple[int, int]:
    """(how many of the fix's telling lines the commit has on the same side of the same file
    at the same place (`_placed`: by content alone the fix's lines could have been added in
    another function), how many there are)."""
    found = total = 0
    for path, mine in ours.items():
        other = theirs.get(path, FileDiff())
        anywhere = 0
        for side in ("added", "removed"):
            want, have = _keys(getattr(mine, side)), _keys(getattr(other, side))
            total += sum(want.values())
            anywhere += sum((want & have).values())
        found += min(anywhere, _placed(mine, other))
    return found, total


def upstream_commit(
    repo: Path, sha: str, subject: str | None = None, known: Commit | None = None
) -> UpstreamCommit:
    """The commit as a verdict names it (`known`: as a walk of the history read it)."""
    if subject is None:
        subject = known.subject if known else git.commit_summary(sha, cwd=repo)[1]
    numbers = _PR_RE.findall(subject)
    when = known.time if known else git.commit_time(sha, cwd=repo)
    day = datetime.datetime.fromtimestamp(when, datetime.UTC)
    return UpstreamCommit(
        sha, subject, int(numbers[-1]) if numbers else None, day.date().isoformat()
    )


@dataclasses.dataclass
class Known:
    """What was read for many entries at once (check/prepare.py): each the answer git gives
    the entry's own question; a question not answered here is asked of git."""

    fix_files: dict[str, list[tuple[str, str]] | None] = dataclasses.field(default_factory=dict)
    in_tip: dict[str, bool] = dataclasses.field(default_factory=dict)  # by entry name
    # by commit: its diff's sections (every commit diffed, an empty diff too)
    commit_diffs: dict[str, list[tuple[str, str]]] = dataclasses.field(default_factory=dict)
    paths: set[str] = dataclasses.field(default_factory=set)  # the paths those diffs cover
    patch_ids: dict[str, str | None] = dataclasses.field(default_factory=dict)  # by diff text
    # (commit, entry name) -> whether the fix reverse-applies at that commit
    reverses_at: dict[tuple[str, str], bool] = dataclasses.field(default_factory=dict)

    def reverse_applies(self, commit: str, entry: Entry, fix: _Fix, repo: Path) -> bool:
        if (commit, entry.name) in self.reverses_at:
            return self.reverses_at[(commit, entry.name)]
        return series.reverse_applies(repo, commit, fix.file)

    def patch_id(self, text: str, repo: Path) -> str | None:
        return self.patch_ids[text] if text in self.patch_ids else git.patch_id(text, cwd=repo)

    def commit_diff(self, c: Commit, paths: list[str], repo: Path) -> list[tuple[str, str]]:
        """`git diff parent c -- paths`, the sections of those paths."""
        if c.sha in self.commit_diffs and self.paths.issuperset(paths):
            return [(p, s) for p, s in self.commit_diffs[c.sha] if p in paths]
        return git.diff_files(c.parents[0], c.sha, paths, cwd=repo)


@dataclasses.dataclass
class _Carrier:
    commit: UpstreamCommit
    evidence: list[str]
    diff: dict[str, FileDiff]
    merged_by: UpstreamCommit | None = None  # the base branch's merge that brought it


@dataclasses.dataclass
class _Fix:
    """The entry's fix as the judge compares it: its net diff on the pinned base, per file."""

    files: list[tuple[str, str]]
    ours: dict[str, FileDiff]
    file: Path  # the same diff on disk, for `git apply`

    @property
    def text(self) -> str:
        return joined(self.files)

    @property
    def paths(self) -> list[str]:
        return sorted(self.ours)


def line_evidence(entry: Entry, subject: str, found: int, total: int) -> str | None:
    """Why a commit with `found` of the fix's `total` telling lines carries it by its lines
    alone (None: its lines are not enough): a commit this says carries the fix is a carrier
    whatever else is asked of it, so nothing after it is asked (check/prepare.py)."""
    named = sorted(
        set(map(int, _PR_RE.findall(subject)))
        & {*entry.supersedes, *([entry.pr] if entry.pr else [])}
    )
    if total >= 2 and found == total:  # one line alone could sit anywhere: not enough
        return (
            f"it adds all the fix's added lines and removes all its removed ones ({found}/{total})"
        )
    if named and found * 2 >= total and found:
        return f"its subject names #{named[0]} and it has {found}/{total} of the fix's lines"
    return None


def _carried(
    repo: Path, entry: Entry, fix: _Fix, c: Commit, known: Known
) -> tuple[_Carrier | None, str | None]:
    """Whether commit `c` (its change against its first parent) carries the fix; else a
    partial note."""
    sha, parent, subject = c.sha, c.parents[0], c.subject
    theirs_files = known.commit_diff(c, fix.paths, repo)
    if not theirs_files:
        return None, None
    theirs_text = joined(theirs_files)
    theirs = parse_files(theirs_files)
    ours = fix.ours
    commit = upstream_commit(repo, sha, subject, c)
    found, total = coverage(ours, theirs)
    by_lines = line_evidence(entry, subject, found, total)
    evidence = []
    if known.patch_id(theirs_text, repo) == known.patch_id(fix.text, repo):
        evidence.append("same git patch-id --verbatim over the fix's files")
    elif known.reverse_applies(sha, entry, fix, repo) and not known.reverse_applies(
        parent, entry, fix, repo
    ):  # the change arrived in this very commit
        evidence.append("the fix reverse-applies at it (git apply -R --check)")
    elif by_lines:
        evidence.append(by_lines)
    if evidence:
        return _Carrier(commit, evidence, theirs), None
    if found * 2 >= total and found:
        return (
            None,
            f"{short(sha)} {subject!r} has {found}/{total} of the fix's lines "
            "(not enough to call it landed)",
        )
    return None, None


def _changers(
    repo: Path, start: str, tip: str, path: str, lines: list[int]
) -> tuple[dict[int, str | None], list[str]]:
    """Of `lines` (in `start`'s `path`), those gone at `tip` with the commit that changed each
    (`git blame --reverse`, which follows merges: None when git names none), and those
    commits, oldest first."""
    blamed = git.blame_reverse(start, tip, path, lines, cwd=repo)
    gone: dict[int, str | None] = {}
    by: list[str] = []
    for number, (last, changer) in sorted(blamed.items()):
        if last == tip:
            continue
        if changer is None:  # the next commit that touched the file after the last one it lived in
            after = git.first_parent_log(last, tip, [path], cwd=repo)
            changer = after[0][0] if after else None
        gone[number] = changer
        if changer is not None and changer not in by:
            by.append(changer)
    return gone, by


def _fix_lines_at(
    repo: Path, base: str, commit: str, ours: dict[str, FileDiff]
) -> dict[str, list[int]]:
    """Where the whole fix's added lines stand in `commit`'s version of its files: the lines
    `git diff base commit` adds that are the fix's added lines (each as often as the fix adds
    it). Every commit of a multi-commit fix counts, not only the one it became whole in."""
    theirs = parse_files(git.diff_files(base, commit, sorted(ours), cwd=repo))
    found: dict[str, list[int]] = {}
    for path, mine in ours.items():
        want = _keys(mine.added)
        lines = []
        for number, text in theirs.get(path, FileDiff()).added:
            k = key(text)
            if k is not None and want[k] > 0:
                want[k] -= 1
                lines.append(number)
        found[path] = lines
    return found


def _since(
    repo: Path, carrier: _Carrier, at: dict[str, list[int]], tip: str
) -> tuple[list[str], int, int, int]:
    """Commits after the carrier that changed the fix's added lines (`at`: all of them, as
    they stand at the carrier); (changers, lines gone, lines followed, lines the merge that
    brought the carrier did not bring)."""
    changers: list[str] = []
    gone = followed = dropped = 0
    merge = carrier.merged_by.sha if carrier.merged_by else None
    for path, lines in at.items():
        followed += len(lines)
        lost, by = _changers(repo, carrier.commit.sha, tip, path, lines)
        gone += len(lost)
        dropped += sum(1 for changer in lost.values() if merge is not None and changer == merge)
        changers += [c for c in by if c not in changers]
    return changers, gone, followed, dropped


def _earlier(repo: Path, base: str, carrier: _Carrier, ours: dict[str, FileDiff]) -> list[str]:
    """The commits since `base` that wrote some of the fix's added lines before the carrier
    (a rebase-merge's or a true merge's earlier commits: `git blame base..carrier`); none
    read when the carrier's own change adds them all (a squash)."""
    own = sum((_keys(ours[p].added) & _keys(d.added)).total() for p, d in carrier.diff.items()
              if p in ours)  # fmt: skip
    if own >= sum(_keys(mine.added).total() for mine in ours.values()):
        return []
    at = _fix_lines_at(repo, base, carrier.commit.sha, ours)
    found = {
        sha
        for path, lines in at.items()
        for sha in git.blame_origins(base, carrier.commit.sha, path, lines, cwd=repo)
    }
    return sorted(found - {carrier.commit.sha})


def _reapplied_by(repo: Path, since: str, tip: str, fix: _Fix) -> list[str]:
    """The first first-parent commit of `since..tip` touching the fix's files at which the
    fix applies again (what undid a fix that adds no line to follow)."""
    for sha, _, _ in git.first_parent_log(since, tip, fix.paths, cwd=repo):
        if series.applies(repo, sha, fix.file):
            return [sha]
    return []


def _superseded(repo: Path, base: str, tip: str, ours: dict[str, FileDiff]) -> list[str] | None:
    """The commits that removed every place the fix changes (None: some place is still there)."""
    removers: collections.Counter[str] = collections.Counter()
    for path, mine in ours.items():
        if not mine.hunks:
            return None
        if not git.path_exists(tip, path, cwd=repo):
            deleted = git.deleted_by(base, tip, path, cwd=repo)
            if deleted is None:
                return None
            removers[deleted] += 1
            continue
        for removed, context in mine.hunks:
            telling = [n for n, text in context if key(text) is not None]
            if not removed and not telling:
                return None  # nothing to follow: the place cannot be told gone
            gone, by = _changers(repo, base, tip, path, [n for n, _ in removed] + telling)
            if any(n not in gone for n, _ in removed):
                return None
            if sum(n in gone for n in telling) * 2 <= len(telling) and telling:
                return None
            removers.update(by)
    return [sha for sha, _ in removers.most_common()] or None


def judge(
    repo: Path,
    entry: Entry,
    tip: str,
    tip_applies: bool,
    gap: Gap | None,
    history: BranchHistory | None = None,
    known: Known | None = None,
) -> Landing:
    """The landing verdict for `entry` at `tip`, with what to do next; `history` is the base
    branch's history as every entry shares it (walked here when not given); `known`, what was
    read for many entries at once."""
    if history is None or history.tip != tip:
        history = BranchHistory(repo, entry.base_branch, tip)
    landing = _judge(repo, entry, history, tip_applies, gap, known or Known())
    if landing.landed and landing.commit is None:  # retire needs the commit
        landing.next = (
            "the fix is in the tip, but no commit since the pinned base was found carrying it "
            "(partial history): keep carrying it until check names the commit"
        )
    elif landing.verdict == SUPERSEDED:
        landing.next = (
            f"review whether the fix is still needed in the rewritten code; if not, "
            f"`{install.command('retire')} --moot {entry.name}`, else rebuild the patch on the tip"
        )
    elif landing.landed:
        landing.next = (
            f"nothing to carry: `{install.command('retire')} {entry.name}` records the landing "
            "and stops carrying it"
        )
    elif landing.verdict == UNDONE:
        assert landing.commit is not None  # an undone landing names the commit that carried it
        undone = ", ".join(short(c.sha) for c in landing.changed_since) or "a later commit"
        landing.next = (
            f"keep carrying it: it landed in {short(landing.commit.sha)} and was undone in "
            f"{undone}; say why in the PR (what undid it, and why the fix is still needed)"
        )
    elif landing.verdict == UNDETERMINED:
        landing.next = (
            "keep carrying it; check again when the history it needs can be read "
            "(the reason is above)"
        )
    return landing


def _through_merge(
    repo: Path, entry: Entry, fix: _Fix, merge: Commit, history: BranchHistory, known: Known
) -> tuple[_Carrier | None, list[str], list[str]]:
    """A first-parent merge of the base branch that changes the fix's files: the commit on its
    other parents' side (not on the base branch's own history) that carried the fix, if one
    did; (that carrier, partial notes, why the side could not all be read)."""
    sha, parents, subject = merge.sha, merge.parents, merge.subject
    side = history.side(merge, fix.paths, entry.base_commit)
    notes: list[str] = []
    for commit in side:
        if commit.sha in history.shallow or not commit.parents:
            continue  # its parents were not fetched: its change cannot be read
        carrier, note = _carried(repo, entry, fix, commit, known)
        if carrier is not None:
            carrier.merged_by = upstream_commit(repo, sha, subject, merge)
            sides = " ".join(short(p) for p in parents[1:])
            carrier.evidence.append(
                f"merge {short(sha)} {subject!r} brought it to {entry.base_branch} (it is on the "
                f"merge's side: git log ^{short(parents[0])} {sides})"
            )
            return carrier, notes, []
        if note:
            notes.append(note)
    cut = [c.sha for c in side if c.sha in history.shallow]
    why = (
        [
            f"the history merge {short(sha)} {subject!r} brought to {entry.base_branch} is cut "
            f"at {short(cut[0])} (not fetched): what it carried cannot all be read"
        ]
        if cut
        else []
    )
    return None, notes, why


def _judge(
    repo: Path,
    entry: Entry,
    history: BranchHistory,
    tip_applies: bool,
    gap: Gap | None,
    known: Known,
) -> Landing:
    """The landing verdict for `entry` at `tip` (its base branch's tip), given whether the fix
    applies there and why the history since the base is incomplete (`gap`). A "not landed"
    that rests on history that was not read is "undetermined" instead."""
    base, tip = entry.base_commit, history.tip
    files = (
        known.fix_files[entry.name]
        if entry.name in known.fix_files
        else series.series_files(repo, base, list(entry.fixes))
    )
    if files is None:
        return Landing(NOT_LANDED, partial=["the fix does not apply at its pinned base"])
    notes = [gap.reason] if gap else []
    cuts = [gap.reason] if gap and gap.cut else []
    with tempfile.TemporaryDirectory(prefix="patchcarry-landing-") as tmp:
        fix = _Fix(files, parse_files(files), Path(tmp) / "fix.diff")
        fix.file.write_bytes(git.encode(fix.text))
        if entry.name in known.in_tip:
            in_tip = known.in_tip[entry.name]
        else:
            in_tip = series.reverse_applies(repo, tip, fix.file)
        carrier = None
        commits = (  # git says whether the base is on the tip's history, not a message's words
            history.candidates(base, fix.paths) if history.has_base(base) else []
        )
        if len(commits) > MAX_CANDIDATES:
            notes.append(
                f"only the first {MAX_CANDIDATES} of {len(commits)} commits touching the "
                "fix's files were read"
            )
            cuts.append(notes[-1])
        for commit in commits[:MAX_CANDIDATES]:
            if commit.sha in history.shallow or not commit.parents:
                continue  # its parents were not fetched (the gap says so)
            if commit.merge:
                carrier, side_notes, side_cuts = _through_merge(
                    repo, entry, fix, commit, history, known
                )
                notes += side_notes
                cuts += side_cuts
                notes += side_cuts
                if carrier is not None:
                    break
            carrier, note = _carried(repo, entry, fix, commit, known)
            if carrier is not None:
                break
            if note:
                notes.append(note)
        if carrier is not None:
            return _verdict_for(repo, carrier, fix, base, tip, in_tip, tip_applies, notes)
        if in_tip and not tip_applies:  # its commit is in history not read, or was not found
            return Landing(
                UNDETERMINED if cuts else LANDED,
                evidence=["the fix reverse-applies at the tip (git apply -R --check)"],
                partial=[
                    *notes,
                    "the commit that brought it is in history that was not read"
                    if cuts
                    else "no commit since the pinned base was found carrying it",
                ],
            )
        if not tip_applies and cuts:
            return Landing(UNDETERMINED, partial=notes)
        if not tip_applies:
            removers = _superseded(repo, base, tip, fix.ours)
            if removers:
                first = upstream_commit(repo, removers[0])
                rest = [upstream_commit(repo, s) for s in removers[1:]]
                return Landing(
                    SUPERSEDED,
                    first,
                    [
                        "no commit carried it; every line it changes is gone at the tip "
                        "(git blame --reverse, git log --diff-filter=D)"
                    ],
                    rest,
                    notes,
                )
    return Landing(NOT_LANDED, partial=notes)


def _verdict_for(
    repo: Path,
    carrier: _Carrier,
    fix: _Fix,
    base: str,
    tip: str,
    in_tip: bool,
    tip_applies: bool,
    notes: list[str],
) -> Landing:
    """A commit carried the fix: is it whole at the tip, changed since, or undone? Decided by
    its lines; that the fix applies at the tip again (with fuzz, or elsewhere) never hides a
    landing that was found."""
    evidence = list(carrier.evidence)
    merged_by = carrier.merged_by
    earlier = _earlier(repo, base, carrier, fix.ours)
    if earlier:  # the fix's other commits: part of the landing, not partial evidence
        notes[:] = [n for n in notes if not any(n.startswith(short(sha)) for sha in earlier)]
        evidence.append(
            f"its lines came in {len(earlier) + 1} commits (git blame): the one named, in "
            "which it became whole, and those with it"
        )
    if in_tip:
        evidence.append("the fix reverse-applies at the tip (git apply -R --check)")
        return _with(Landing(LANDED, carrier.commit, evidence, partial=notes,
                             merged_by=merged_by), repo, earlier)  # fmt: skip
    at = _fix_lines_at(repo, base, carrier.commit.sha, fix.ours)
    changers, gone, followed, dropped = _since(repo, carrier, at, tip)
    if merged_by is not None and dropped:  # the merge's resolution left part of it behind
        notes.append(
            f"{short(carrier.commit.sha)} {carrier.commit.subject!r} carried the fix, but merge "
            f"{short(merged_by.sha)} {merged_by.subject!r} brought {followed - dropped}/{followed} "
            "of its added lines (git blame --reverse)"
        )
        return Landing(NOT_LANDED, partial=notes)
    # every line gone: undone (one line alone may have been rewritten in place: only when
    # the fix applies again, too); no line to follow: undone when it applies again
    if (followed and gone == followed and (followed >= 2 or tip_applies)) or (
        not followed and tip_applies
    ):
        if followed:
            evidence.append(
                f"none of its {followed} added lines is left at the tip (git blame --reverse)"
            )
        if tip_applies:
            evidence.append("the fix applies at the tip again (git apply --check)")
        since = merged_by.sha if merged_by else carrier.commit.sha
        verdict, later = UNDONE, changers or _reapplied_by(repo, since, tip, fix)
    elif changers:
        evidence.append(f"{gone}/{followed} of its added lines changed since (git blame --reverse)")
        verdict, later = CHANGED, changers
    else:
        evidence.append("every line it added is unchanged at the tip (git blame --reverse)")
        verdict, later = LANDED, []
    found = Landing(verdict, carrier.commit, evidence, [upstream_commit(repo, c) for c in later],
                    notes, merged_by=merged_by)  # fmt: skip
    return _with(found, repo, earlier)


def _with(landing: Landing, repo: Path, earlier: list[str]) -> Landing:
    """`landing` naming the fix's other commits upstream, oldest first."""
    named = [upstream_commit(repo, sha) for sha in earlier]
    landing.carried_by = sorted(named, key=lambda c: (c.date, c.sha))
    return landing
