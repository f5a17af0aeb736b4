"""Reads for many entries at once: one git process answers for hundreds of objects, commits
or patches (`ls-tree` of many paths, `cat-file --batch`, `diff-tree --stdin`, a stream of
diffs to `patch-id`, many patches to one `apply --check`), where one per entry made a
1,000-entry check cost thousands of processes. Each answer is split back per question, exactly
as the one-question call answers it."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from patchcarry.errors import GitReadError
from patchcarry.git.env import LITERAL
from patchcarry.git.pure import answer, answers, full_shas, question
from patchcarry.git.runner import git_bytes
from patchcarry.git.sha import short

PATHS_PER_CALL = 500  # pathspecs per `ls-tree` (argv stays small)


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def tree_entries(
    commit: str, paths: Sequence[str], *, cwd: Path
) -> dict[str, tuple[str, str, str]]:
    """{path: (mode, type, object id)} of each of `paths` in `commit`'s tree (`git ls-tree -z`,
    trees only: no blob is fetched); an absent path is left out."""
    found: dict[str, tuple[str, str, str]] = {}
    wanted = sorted(set(paths))
    for start in range(0, len(wanted), PATHS_PER_CALL):
        chunk = wanted[start : start + PATHS_PER_CALL]
        _, out, _ = git_bytes(
            "ls-tree", "-z", "--end-of-options", commit, "--", *chunk, cwd=cwd, env_extra=LITERAL
        )
        for record in out.split(b"\0"):
            meta, _, path = record.partition(b"\t")
            fields = meta.split(b" ")
            if len(fields) == 3:
                found[_text(path)] = (fields[0].decode(), fields[1].decode(), fields[2].decode())
    return found


def read_blobs(ids: Sequence[str], *, cwd: Path) -> dict[str, bytes]:
    """{id: content} of blobs (`git cat-file --batch`, one process for all; a blob missing in a
    partial clone is fetched lazily). A blob git cannot read is GitReadError: never "absent"."""
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return {}
    code, out, err = git_bytes(
        "cat-file", "--batch", cwd=cwd, stdin="".join(f"{i}\n" for i in wanted).encode(),
        check=False,
    )  # fmt: skip
    if code != 0:
        raise GitReadError(
            f"could not read {len(wanted)} blobs: {' '.join(err.split())[:300]}; upstream may "
            "be unreachable (a lazy blob fetch failed): re-run"
        )
    found: dict[str, bytes] = {}
    at = 0
    for blob in wanted:
        end = out.index(b"\n", at)
        header = out[at:end].split()
        if len(header) != 3 or header[1] != b"blob":
            raise GitReadError(f"could not read blob {short(blob)}: git says {_text(out[at:end])}")
        size = int(header[2])
        found[blob] = out[end + 1 : end + 1 + size]
        at = end + 1 + size + 1
    return found


def blobs_of_commits(
    pairs: Sequence[tuple[str, str]], paths: Sequence[str], *, cwd: Path
) -> list[str]:
    """The blobs on either side of each (commit, parent) in `pairs`, limited to `paths`
    (`git diff-tree --stdin --raw`, trees only: no blob is read): what `diffs_of_commits` of
    the same pairs reads, to fetch in one request where git would fetch them commit by
    commit (a lazy fetch each)."""
    if not pairs:
        return []
    stdin = "".join(f"{sha} {parent}\n" for sha, parent in dict(pairs).items()).encode()
    words = ("diff-tree", "--stdin", "--no-renames", "-r", "--raw", "-z", "--", *paths)
    if full_shas(*(sha for pair in pairs for sha in pair)):  # immutable: once a process
        out = answer(question(words, stdin), lambda: _raw_diff(words, stdin, cwd))
    else:
        out = _raw_diff(words, stdin, cwd)[1]
    found: dict[str, None] = {}
    for token in out.split(b"\0"):
        fields = token.split(b" ")
        if token.startswith(b":") and len(fields) == 5:
            for mode, oid in ((fields[0][1:], fields[2]), (fields[1], fields[3])):
                if mode != b"160000" and oid.strip(b"0"):  # a file or link, not a gitlink
                    found[oid.decode()] = None
    return list(found)


def _raw_diff(words: tuple[str, ...], stdin: bytes, cwd: Path) -> tuple[int, bytes]:
    code, out, _ = git_bytes(*words, cwd=cwd, stdin=stdin, env_extra=LITERAL)
    return code, out


def diffs_of_commits(
    pairs: Sequence[tuple[str, str]], paths: Sequence[str], *, cwd: Path
) -> dict[str, list[tuple[str, str]]]:
    """{commit: [(path, its section of the patch)]} of each (commit, parent) in `pairs`, limited
    to `paths` (`git diff-tree --stdin -p`, one process for all: the same sections as
    `git diff parent commit -- paths`, see `trees.diff_files`); a commit whose change has none
    of `paths` is left out. Each commit is asked once (it names its answer)."""
    asked = dict(pairs)
    if not asked:
        return {}
    stdin = "".join(f"{sha} {parent}\n" for sha, parent in asked.items()).encode()
    _, out, _ = git_bytes(
        "diff-tree", "--stdin", "--no-color", "--no-renames", "--no-ext-diff", "--raw", "-p",
        "-z", "-U3", "--", *paths, cwd=cwd, stdin=stdin, env_extra=LITERAL,
    )  # fmt: skip
    found: dict[str, list[tuple[str, str]]] = {}
    tokens = out.split(b"\0")
    sha = _text(tokens[0]) if tokens and tokens[0] else ""
    i = 1
    while sha and i < len(tokens):
        names: list[tuple[str, str]] = []
        while i + 1 < len(tokens) and tokens[i].startswith(b":"):
            names.append((_text(tokens[i]), _text(tokens[i + 1])))
            i += 2
        i += 1  # the empty token between the records and the patch
        patch, _, after = (tokens[i] if i < len(tokens) else b"").rpartition(b"\n")
        i += 1
        if sha not in asked:
            raise GitReadError(f"git diff-tree --stdin answered for {short(sha)}, not asked")
        sections = [s for s in re.split(rb"(?m)^(?=diff --git )", patch + b"\n")
                    if s.startswith(b"diff --git ")]  # fmt: skip
        files: list[tuple[str, str]] = []
        for meta, path in names:
            for _ in range(2 if meta.split()[-1][:1] == "T" else 1):  # a type change: two
                if sections:
                    files.append((path, _text(sections.pop(0))))
        found[sha] = files
        sha = _text(after)
    return found


def patch_ids(diffs: Sequence[str | bytes], *, cwd: Path) -> list[str | None]:
    """`git patch-id --verbatim` of each diff (None: it has no change), one process for all:
    each diff goes in after a `commit` line of its own that names its place. A text with a
    header of its own (a mail's `From <sha>`) is asked alone: git names its answer by that."""
    data = [d if isinstance(d, bytes) else d.encode("utf-8", "surrogateescape") for d in diffs]

    def ask(missing: list[int]) -> list[tuple[int, str | None]]:
        alone = [i for i in missing if _HEADER.search(data[i])]
        together = [i for i in missing if i not in alone]
        found: dict[int, tuple[int, str | None]] = {}
        if together:
            stream = b"".join(f"commit {i:040x}\n".encode() + data[i] for i in together)
            code, out, _ = git_bytes(*_PATCH_ID, cwd=cwd, stdin=stream)
            ids = {
                place: pid for pid, place in (line.split() for line in out.decode().splitlines())
            }
            found = {i: (code, ids.get(f"{i:040x}")) for i in together}
        for i in alone:  # its first patch's id, as git names none of ours
            code, out, _ = git_bytes(*_PATCH_ID, cwd=cwd, stdin=data[i])
            found[i] = (code, out.split()[0].decode() if out.strip() else None)
        return [found[i] for i in missing]

    # a pure function of each diff's bytes, the same key as `trees.patch_id`'s
    return answers([question(_PATCH_ID, d) for d in data], ask)


_HEADER = re.compile(rb"(?m)^(?:commit|From) [0-9a-f]{40}")
_PATCH_ID = ("patch-id", "--verbatim")


_CHECKING = "Checking patch "
_FAILED_AT = re.compile(r"^error: patch failed: (.+):(\d+)$")


def check_many(
    patches: Sequence[tuple[Path, Sequence[str], int]],
    *,
    cwd: Path,
    args: Sequence[str],
    env: Mapping[str, str] | None = None,
    scratch: Path,
) -> list[tuple[bool, str] | None]:
    """`git apply --check -v ARGS` of many patch files against one tree or index, each on its
    own: per patch (True, git's words about it) when it applies, (False, git's "error: patch
    failed: PATH:LINE" for its first failing hunk, or "") when it does not, None when git's
    answer could not be split (ask that one alone). `patches`: each file with the paths it
    touches and how many file sections git reads in it.

    Patches whose paths no other touches go in as one input (`scratch` holds it): git then
    checks every section and goes on past one that fails. Those its errors name are out (they
    fail); the others are asked again until git applies them all without a word of error, and
    only then is each one's share of git's "Checking patch" lines its words."""
    results: list[tuple[bool, str] | None] = [None] * len(patches)
    for members in disjoint_layers([paths for _, paths, _ in patches]):
        _check_layer(patches, members, cwd, args, env, scratch, results)
    return results


def disjoint_layers(paths: Sequence[Collection[str]]) -> list[list[int]]:
    """The indices of `paths` in groups, first fit, no two in a group touching one path: each
    group can go to git as one input without one item's sections meeting another's."""
    layers: list[tuple[set[str], list[int]]] = []
    for n, touched in enumerate(paths):
        layer = next((lay for lay in layers if not lay[0] & set(touched)), None)
        if layer is None:
            layer = (set(), [])
            layers.append(layer)
        layer[0].update(touched)
        layer[1].append(n)
    return [members for _, members in layers]


def _check_layer(
    patches: Sequence[tuple[Path, Sequence[str], int]],
    members: list[int],
    cwd: Path,
    args: Sequence[str],
    env: Mapping[str, str] | None,
    scratch: Path,
    results: list[tuple[bool, str] | None],
) -> None:
    while members:
        scratch.write_bytes(b"".join(patches[n][0].read_bytes() for n in members))
        code, out, err = git_bytes(
            "apply", "--check", "-v", "--whitespace=nowarn", *args, str(scratch.resolve()),
            cwd=cwd, check=False, env_extra=env,
        )  # fmt: skip
        lines = (_text(out) + err).splitlines(keepends=True)
        errors = [line.rstrip("\n") for line in lines if line.startswith("error: ")]
        if code == 0 and not errors:
            said: list[list[str]] = []
            for line in lines:
                if line.startswith(_CHECKING):
                    said.append([])
                if said:
                    said[-1].append(line)
            if (
                len(said) != sum(patches[n][2] for n in members)
                or not lines[:1]
                or not (lines[0].startswith(_CHECKING))
            ):
                return  # not git's usual words: each is asked alone
            for n in members:
                count = patches[n][2]
                results[n] = (True, "".join(line for part in said[:count] for line in part))
                said = said[count:]
            return
        if any(w in line for line in errors for w in ("corrupt patch", "No valid patches")):
            return
        failed = []
        for n in members:
            paths = patches[n][1]
            named = [
                line
                for line in errors
                if any(
                    line.startswith((f"error: {p}: ", f"error: patch failed: {p}:")) for p in paths
                )
            ]
            if named:
                first = next((line for line in named if _FAILED_AT.match(line)), "")
                results[n] = (False, first)
                failed.append(n)
        if not failed:
            return  # git refused, naming none of them: each is asked alone
        members = [n for n in members if n not in failed]
