"""`check`'s judgements: does a patch apply at a ref, did upstream drift, is it an old PR."""

from __future__ import annotations

import io
import re
import tempfile
import tokenize
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from patchcarry import git, patchrules
from patchcarry.check.report import FileDrift, Identity, PatchApply
from patchcarry.errors import BadInputError, UpstreamError
from patchcarry.git.sha import short
from patchcarry.patchfile import Hunk, Patch

_U0_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", re.MULTILINE)
# Past this many files a PR's change is not diffed blob by blob (each blob is a fetch).
MAX_IDENTITY_FILES = 50

Reader = Callable[[str], "bytes | None"]  # a file's bytes as stored (CRLF, any encoding)


def rejected_hunk(patch: Patch, applied: git.Applied) -> str:
    """The hunk git could not place, as patch text; git's own message when unknown."""
    if applied.failed_at:
        path, line = applied.failed_at
        for hunk in patch.hunks:
            if hunk.path == path and hunk.old_start == line:
                header = f"@@ -{hunk.old_start},{hunk.old_len} +{hunk.new_start},{hunk.new_len} @@"
                return "\n".join([f"--- {path}", header, *hunk.lines])
    said = applied.message.splitlines()
    return "\n".join(line for line in said if not line.startswith("Checking"))


def inside(tree: Path, path: str, patches: list[Patch]) -> Path:
    """`tree / path`, refused unless it stays inside `tree` (even for a Patch built elsewhere)."""
    names = ", ".join(p.name for p in patches if path in p.files)
    patchrules.check_path(path, names)
    target = (tree / path).resolve()
    if not target.is_relative_to(tree):
        raise BadInputError(f"{names}: path {path!r} leaves the check's temp tree; refused")
    return target


def apply_at(patches: list[Patch], read: Reader) -> list[PatchApply]:
    """Apply `patches` in order onto the files `read` gives: clean, offset, fuzz or conflict."""
    results: list[PatchApply] = []
    with tempfile.TemporaryDirectory(prefix="patchcarry-apply-") as tmp:
        tree = Path(tmp).resolve()
        for path in sorted({p for patch in patches for p in patch.files}):
            target = inside(tree, path, patches)
            data = read(path)
            if data is not None:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
        blocked = False
        for n, patch in enumerate(patches, 1):
            if blocked:
                results.append(PatchApply(patch.name, "not checked", []))
                continue
            # the next patch applies on what this one made: applied for real at once (git
            # apply writes nothing unless every hunk applies), the last one only checked
            only = n == len(patches)
            applied = git.apply_in_tree(patch.path, tree=tree, check_only=only)
            status = "offset" if applied.offsets else "clean"
            if applied.unreadable:
                raise BadInputError(
                    f"{patch.name}: git cannot read it as a patch:\n{applied.message}"
                )
            if applied.code != 0:
                fuzzed = git.apply_in_tree(patch.path, tree=tree, context=1, check_only=only)
                status = "fuzz" if fuzzed.code == 0 else "conflict"
                applied = fuzzed if fuzzed.code == 0 else applied
            if status == "conflict":
                results.append(PatchApply(patch.name, status, [], rejected_hunk(patch, applied)))
                blocked = True
                continue
            results.append(PatchApply(patch.name, status, applied.offsets))
    return results


def _touches(start: int, count: int, hunk: Hunk) -> bool:
    first, end = hunk.old_start, hunk.old_start + max(hunk.old_len, 1)
    if count == 0:  # pure insertion after line `start`: inside only between two hunk lines
        return first <= start < end - 1
    return start < end and first < start + count


def _gap(start: int, count: int, hunk: Hunk) -> int:
    """Unchanged lines between an upstream change and our hunk's span (0: touching/overlap)."""
    if _touches(start, count, hunk):
        return 0
    first, last = hunk.old_start, hunk.old_start + max(hunk.old_len, 1) - 1
    if start < first:
        end = start if count == 0 else start + count - 1
        return max(first - end - 1, 0)
    return max(start - last - (0 if count == 0 else 1), 0)


def drift(repo: Path, base: str, tip: str, patches: list[Patch],
          diffs: Mapping[str, str] | None = None) -> list[FileDrift]:  # fmt: skip
    """Per touched file: did it change from `base` to `tip`, and does that overlap our hunks?"""
    hunks = [h for p in patches for h in p.hunks]
    result = []
    for path in sorted({h.path for h in hunks}):
        if diffs is not None and path in diffs:
            diff = diffs[path]
        else:
            diff = git.diff_paths(base, tip, [path], cwd=repo, unified=0)
        changes = [(int(a), int(b) if b else 1) for a, b in _U0_RE.findall(diff)]
        mine = [h for h in hunks if h.path == path]
        hit = sorted({h.old_start for h in mine for s, c in changes if _touches(s, c, h)})
        ranges = [(s, s + max(c, 1) - 1) for s, c in changes]
        gaps = [_gap(s, c, h) for s, c in changes for h in mine]
        nearest = min(gaps) if gaps else None
        created = all(h.old_start == 0 and h.old_len == 0 for h in mine)
        result.append(FileDrift(path, bool(diff.strip()), bool(hit), ranges, hit, nearest, created))
    return result


def patch_files(patch: Patch) -> list[tuple[str, str]]:
    """A patch file's `diff --git` sections, each with the path git applies (not the header's)."""
    end = patch.text.find("\n-- \n")  # format-patch's signature trailer: not the diff
    body = patch.text if end < 0 else patch.text[: end + 1]
    chunks = [c for c in re.split(r"(?m)^(?=diff --git )", body) if c.startswith("diff --git ")]
    return [(change.path, chunk) for change, chunk in zip(patch.changes, chunks, strict=False)]


def _changed(chunk: str, sign: str) -> list[str]:
    """One side's changed lines of a file's diff (`-` or `+`), without the sign."""
    lines = chunk.splitlines()
    return [
        line[1:] for line in lines if line.startswith(sign) and line[:4] not in ("+++ ", "--- ")
    ]


def _python_tokens(lines: list[str]) -> list[tuple[int, str]] | None:
    """The token stream of `lines` without comments and blank lines (None: unreadable)."""
    source = "".join(line + "\n" for line in lines)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    skip = (tokenize.COMMENT, tokenize.NL, tokenize.ENDMARKER)
    return [(t.type, t.string) for t in tokens if t.type not in skip]


def _plain_lines(lines: list[str]) -> list[str]:
    """Lines without blank and `#`-comment-only ones; leading indentation kept as is."""
    kept = []
    for line in lines:
        text = line.rstrip()
        if text.strip() and not text.strip().startswith("#"):
            indent = text[: len(text) - len(text.lstrip())]
            kept.append(indent + " ".join(text.split()))
    return kept


def _positions(chunk: str) -> list[tuple[str, str]]:
    """Where each changed code line sits (sign, old code line before it); comments are no places."""
    found: list[tuple[str, str]] = []
    place = ""
    for line in chunk.splitlines():
        if line.startswith("@@"):
            place = "@@" + line.rsplit("@@", 1)[-1].strip()
            continue
        if line[:1] not in (" ", "-", "+") or line.startswith(("+++ ", "--- ")):
            continue
        text = " ".join(line[1:].split())
        if not text or text.startswith("#"):
            continue
        if line[0] != " ":
            found.append((line[0], place))
        if line[0] != "+":  # an old-side line: the place for what follows it
            place = text
    return found


def same_code(path: str, ours: str, theirs: str) -> bool:
    """Whether two diffs of `path` change the same code, differing only in comments and blanks."""
    if any("\udc80" <= ch <= "\udcff" for ch in ours + theirs):  # not UTF-8: bytes kept
        return _exact(ours) == _exact(theirs)
    if _positions(ours) != _positions(theirs):  # the same line added in another place
        return False
    for sign in "-+":
        a, b = _changed(ours, sign), _changed(theirs, sign)
        if path.endswith(".py"):
            ta, tb = _python_tokens(a), _python_tokens(b)
            if ta is not None and tb is not None:
                if ta != tb:
                    return False
                continue
            if [x.rstrip() for x in a] != [x.rstrip() for x in b]:
                return False
        elif _plain_lines(a) != _plain_lines(b):
            return False
    return True


def _exact(chunk: str) -> list[str]:
    return [line.rstrip() for sign in "-+" for line in _changed(chunk, sign)]


def _root_or_cut(repo: Path, number: int, head: str) -> list[str]:
    """A root commit is compared with the empty tree; a head at the shallow boundary cannot be."""
    if head in git.shallow_commits(cwd=repo):
        raise UpstreamError(
            f"#{number}'s head {short(head)} came without its parents, so its change cannot be "
            "told from it: re-run (the check fetches them)"
        )
    return [git.empty_tree(cwd=repo)]


def identity(
    repo: Path, fix: Patch | list[tuple[str, str]], number: int, head: str,
    under: str | None = None, also: Sequence[str] = (), same_tree_as: Sequence[str] = (),
) -> Identity:  # fmt: skip
    """Compare our fix with PR `number` (patch-id, then per file) against each parent, `under`,
    `also`, `same_tree_as` ("identical" only), else the fewest-files parent."""
    ours_files = patch_files(fix) if isinstance(fix, Patch) else fix
    parents = git.commit_parents(head, cwd=repo) or _root_or_cut(repo, number, head)
    merge = len(parents) > 1
    if under is not None and under not in parents:
        parents.append(under)
    parents += [a for a in dict.fromkeys(also) if a not in parents]
    changed = {p: git.changed_paths(p, head, cwd=repo) for p in parents}
    counts = {p: len(files) for p, files in changed.items()}
    ours_text = "".join(section for _, section in ours_files)
    ours = dict(ours_files)
    untold = [b for b in dict.fromkeys(same_tree_as) if b not in parents]
    for parent in sorted(parents, key=lambda p: counts[p]) + untold:
        files = changed[parent] if parent in changed else git.changed_paths(parent, head, cwd=repo)
        # the same files first (trees only): a parent with other files is never diffed
        if set(files) == set(ours) and git.patch_id(ours_text, cwd=repo) == git.patch_id(
            "".join(t for _, t in git.diff_files(parent, head, files, cwd=repo)), cwd=repo
        ):
            return Identity(number, head, merge, parent, "identical", None, [], files)
    parent = min(parents, key=lambda p: counts[p])
    files = changed[parent]
    if len(files) > MAX_IDENTITY_FILES:
        differ = sorted(set(files) ^ set(ours))
        return Identity(number, head, merge, parent, "different", False, differ, files)
    theirs = dict(git.diff_files(parent, head, files, cwd=repo))
    differ = sorted(
        path for path in set(ours) | set(theirs) if path not in ours or path not in theirs
        or git.patch_id(ours[path], cwd=repo) != git.patch_id(theirs[path], cwd=repo)
    )  # fmt: skip
    comments_only = all(
        path in ours and path in theirs and same_code(path, ours[path], theirs[path])
        for path in differ
    )
    return Identity(number, head, merge, parent, "different", comments_only, differ, files)
