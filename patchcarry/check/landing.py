"""Has an entry's fix landed on its base branch since the pinned base? Decided by git alone,
on the check's blob-less history of `base..tip` (first parent: a squash, a cherry-pick or a
merge each stand as one commit):

- a commit *carries* the fix when its diff of the fix's files has the fix's own
  `git patch-id --verbatim`, or the fix reverse-applies at it (`git apply -R --check`), or it
  adds all the fix's added lines and removes all its removed ones, or its subject names one of
  the entry's PRs and it has most of the fix's lines (a maintainer's edits);
- **landed**: a commit carried it and it is still whole at the tip (it reverse-applies there,
  or `git blame --reverse` keeps every line it added);
- **landed, changed since**: a commit carried it and later commits changed its lines (named by
  `git blame --reverse`);
- **superseded**: no commit carried it and every place it changes is gone at the tip (a file
  deleted, or every hunk's lines removed or rewritten): the commit that removed them is named;
- **not landed**: anything else. A fix is never called landed on less than one of the above;
  weaker evidence (a commit with some of its lines) is reported as partial, beside "not landed".

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
from patchcarry.check.report import Landing, UpstreamCommit, Verdict
from patchcarry.manifest import Entry

LANDED, CHANGED, SUPERSEDED, NOT_LANDED = (
    Verdict.LANDED,
    Verdict.CHANGED,
    Verdict.SUPERSEDED,
    Verdict.NOT_LANDED,
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


def parse_diff(text: str) -> dict[str, FileDiff]:
    """`git diff` text -> per path (the new side's name) its added/removed/context lines."""
    files: dict[str, FileDiff] = {}
    current: FileDiff | None = None
    old = new = 0
    old_name = ""
    for line in text.split("\n"):
        if line.startswith("diff --git "):
            current = None
        elif line.startswith("--- ") and current is None:
            old_name = line[6:] if line.startswith("--- a/") else line[4:]
        elif line.startswith("+++ ") and current is None:
            name = line[6:] if line.startswith("+++ b/") else old_name  # deleted: its old name
            current = files.setdefault(name, FileDiff())
        elif (match := _HUNK_RE.match(line)) and current is not None:
            old, new = int(match.group(1)), int(match.group(3))
            current.hunks.append(([], []))
        elif current is not None and current.hunks and line[:1] in ("+", "-", " "):
            removed, context = current.hunks[-1]
            if line.startswith("+"):
                current.added.append((new, line[1:]))
                new += 1
            elif line.startswith("-"):
                current.removed.append((old, line[1:]))
                removed.append((old, line[1:]))
                old += 1
            else:
                context.append((old, line[1:]))
                old, new = old + 1, new + 1
    return files


def key(line: str) -> str | None:
    """A line as compared across commits (inner whitespace folded), or None when it says too
    little to be evidence (blank, punctuation, a lone keyword)."""
    text = " ".join(line.split())
    return text if _WORD_RE.search(text) and len(text) >= 6 else None


def _keys(lines: list[tuple[int, str]]) -> collections.Counter[str]:
    return collections.Counter(k for _, line in lines if (k := key(line)) is not None)


def coverage(ours: dict[str, FileDiff], theirs: dict[str, FileDiff]) -> tuple[int, int]:
    """(how many of the fix's telling lines the commit has on the same side of the same file,
    how many there are)."""
    found = total = 0
    for path, mine in ours.items():
        other = theirs.get(path, FileDiff())
        for side in ("added", "removed"):
            want, have = _keys(getattr(mine, side)), _keys(getattr(other, side))
            total += sum(want.values())
            found += sum((want & have).values())
    return found, total


def upstream_commit(repo: Path, sha: str, subject: str | None = None) -> UpstreamCommit:
    if subject is None:
        subject = git.commit_summary(sha, cwd=repo)[1]
    numbers = _PR_RE.findall(subject)
    day = datetime.datetime.fromtimestamp(git.commit_time(sha, cwd=repo), datetime.UTC)
    return UpstreamCommit(
        sha, subject, int(numbers[-1]) if numbers else None, day.date().isoformat()
    )


@dataclasses.dataclass
class _Carrier:
    commit: UpstreamCommit
    evidence: list[str]
    diff: dict[str, FileDiff]


def _carried(
    repo: Path,
    entry: Entry,
    ours_text: str,
    ours: dict[str, FileDiff],
    fix_file: Path,
    c: tuple[str, str, str],
) -> tuple[_Carrier | None, str | None]:
    """Whether commit `c` (sha, first parent, subject) carries the fix; else a partial note."""
    sha, parent, subject = c
    files = sorted(ours)
    theirs_text = git.diff_paths(parent, sha, files, cwd=repo)
    if not theirs_text.strip():
        return None, None
    theirs = parse_diff(theirs_text)
    commit = upstream_commit(repo, sha, subject)
    found, total = coverage(ours, theirs)
    named = sorted(
        set(map(int, _PR_RE.findall(subject)))
        & {*entry.supersedes, *([entry.pr] if entry.pr else [])}
    )
    evidence = []
    if git.patch_id(theirs_text, cwd=repo) == git.patch_id(ours_text, cwd=repo):
        evidence.append("same git patch-id --verbatim over the fix's files")
    elif series.reverse_applies(repo, sha, fix_file) and not series.reverse_applies(
        repo, parent, fix_file
    ):  # the change arrived in this very commit
        evidence.append("the fix reverse-applies at it (git apply -R --check)")
    elif total >= 2 and found == total:  # one line alone could sit anywhere: not enough
        evidence.append(
            f"it adds all the fix's added lines and removes all its removed ones ({found}/{total})"
        )
    elif named and found * 2 >= total and found:
        evidence.append(
            f"its subject names #{named[0]} and it has {found}/{total} of the fix's lines"
        )
    if evidence:
        return _Carrier(commit, evidence, theirs), None
    if found * 2 >= total and found:
        return (
            None,
            f"{sha[:12]} {subject!r} has {found}/{total} of the fix's lines "
            "(not enough to call it landed)",
        )
    return None, None


def _changers(
    repo: Path, start: str, tip: str, path: str, lines: list[int]
) -> tuple[set[int], list[str]]:
    """Of `lines` (in `start`'s `path`), those gone at `tip`, and the commits that changed them
    (`git blame --reverse`), oldest first."""
    blamed = git.blame_reverse(start, tip, path, lines, cwd=repo)
    gone, by = set(), []
    for number, (last, changer) in sorted(blamed.items()):
        if last == tip:
            continue
        gone.add(number)
        if changer is None:  # the next commit that touched the file after the last one it lived in
            after = git.first_parent_log(last, tip, [path], cwd=repo)
            changer = after[0][0] if after else None
        if changer is not None and changer not in by:
            by.append(changer)
    return gone, by


def _since(
    repo: Path, carrier: _Carrier, ours: dict[str, FileDiff], tip: str
) -> tuple[list[str], int, int]:
    """Commits after the carrier that changed the fix's added lines; (changers, lines gone, lines
    followed)."""
    changers: list[str] = []
    gone = followed = 0
    for path, mine in ours.items():
        want = _keys(mine.added)
        lines = [n for n, text in carrier.diff.get(path, FileDiff()).added if key(text) in want]
        followed += len(lines)
        lost, by = _changers(repo, carrier.commit.sha, tip, path, lines)
        gone += len(lost)
        changers += [c for c in by if c not in changers]
    return changers, gone, followed


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


def judge(repo: Path, entry: Entry, tip: str, tip_applies: bool, partial: str | None) -> Landing:
    """The landing verdict for `entry` at `tip`, with what to do next."""
    landing = _judge(repo, entry, tip, tip_applies, partial)
    if landing.verdict != NOT_LANDED and landing.commit is None:  # retire needs the commit
        landing.next = (
            "the fix is in the tip, but no commit since the pinned base was found carrying it "
            "(partial history): keep carrying it until check names the commit"
        )
    elif landing.verdict != NOT_LANDED:
        landing.next = _next(entry, landing.verdict)
    return landing


def _judge(repo: Path, entry: Entry, tip: str, tip_applies: bool, partial: str | None) -> Landing:
    """The landing verdict for `entry` at `tip` (its base branch's tip), given whether the fix
    applies there and why the history since the base is incomplete (`partial`)."""
    base = entry.base_commit
    text = series.series_text(repo, base, list(entry.fixes))
    if text is None:
        return Landing(NOT_LANDED, partial=["the fix does not apply at its pinned base"])
    ours = parse_diff(text)
    notes = [partial] if partial else []
    with tempfile.TemporaryDirectory(prefix="patchcarry-landing-") as tmp:
        fix_file = Path(tmp) / "fix.diff"
        fix_file.write_bytes(git.encode(text))
        in_tip = series.reverse_applies(repo, tip, fix_file)
        carrier = None
        commits = (  # git says whether the base is on the tip's history, not a message's words
            git.first_parent_log(base, tip, sorted(ours), cwd=repo)
            if git.is_ancestor(base, tip, cwd=repo)
            else []
        )
        if len(commits) > MAX_CANDIDATES:
            notes.append(
                f"only the first {MAX_CANDIDATES} of {len(commits)} commits touching the "
                "fix's files were read"
            )
        for c in commits[:MAX_CANDIDATES]:
            carrier, note = _carried(repo, entry, text, ours, fix_file, c)
            if carrier is not None:
                break
            if note:
                notes.append(note)
        if carrier is not None:
            return _verdict_for(repo, carrier, ours, tip, in_tip, tip_applies, notes)
        if in_tip and not tip_applies:
            return Landing(
                LANDED,
                None,
                ["the fix reverse-applies at the tip (git apply -R --check)"],
                partial=[*notes, "no commit since the pinned base was found carrying it"],
            )
        if not tip_applies:
            removers = _superseded(repo, base, tip, ours)
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
    ours: dict[str, FileDiff],
    tip: str,
    in_tip: bool,
    tip_applies: bool,
    notes: list[str],
) -> Landing:
    evidence = list(carrier.evidence)
    if in_tip:
        evidence.append("the fix reverse-applies at the tip (git apply -R --check)")
        return Landing(LANDED, carrier.commit, evidence, partial=notes)
    if tip_applies:  # git applies the fix at the tip: whatever that commit did, it is not there
        notes.append(
            f"{carrier.commit.sha[:12]} has the fix's lines, but the fix still applies at the "
            "tip (undone since, or made elsewhere)"
        )
        return Landing(NOT_LANDED, partial=notes)
    changers, gone, followed = _since(repo, carrier, ours, tip)
    if changers:
        evidence.append(f"{gone}/{followed} of its added lines changed since (git blame --reverse)")
        return Landing(
            CHANGED, carrier.commit, evidence, [upstream_commit(repo, c) for c in changers], notes
        )
    evidence.append("every line it added is unchanged at the tip (git blame --reverse)")
    return Landing(LANDED, carrier.commit, evidence, partial=notes)


def _next(entry: Entry, verdict: str) -> str:
    if verdict == SUPERSEDED:
        return (
            f"review whether the fix is still needed in the rewritten code; if not, "
            f"`{install.command('retire')} --moot {entry.name}`, else rebuild the patch on the tip"
        )
    return (
        f"nothing to carry: `{install.command('retire')} {entry.name}` records the landing "
        "and stops carrying it"
    )
