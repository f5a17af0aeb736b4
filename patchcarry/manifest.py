"""Finds, reads and validates `patches/series.toml`: here or above, the user's, the embedded."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NewType

from patchcarry import git, inputs, patchrules
from patchcarry.check.report import Verdict
from patchcarry.errors import BadInputError
from patchcarry.manifest_edit import record_pr as record_pr  # the writer, beside the reader
from patchcarry.patchfile import Patch
from patchcarry.patchfile import load as load_patch

PullNumber = NewType("PullNumber", int)
Staged = Mapping[str, Path]  # patch name -> a file not yet beside the manifest


def _default_manifest() -> Path:
    """patches/series.toml of this package's checkout, else the copy embedded in the package."""
    package = Path(__file__).resolve().parent
    checkout = package.parent / "patches" / "series.toml"
    return checkout if checkout.is_file() else EMBEDDED_DIR / "series.toml"


EMBEDDED_DIR = Path(__file__).resolve().parent / "_series"  # inside site-packages: read-only
DEFAULT_MANIFEST = _default_manifest()
SEARCHED = Path("patches") / "series.toml"  # looked for in the cwd and its parents


def user_manifest() -> Path:
    """`$XDG_CONFIG_HOME/patchcarry/series.toml` (XDG's default `~/.config`)."""
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "patchcarry" / "series.toml"


def find(explicit: Path | None = None, *, cwd: Path | None = None) -> Path:
    """`explicit`, else `patches/series.toml` here or above, else the user's, else the package's."""
    return find_for_adding(explicit, cwd=cwd) or DEFAULT_MANIFEST


def _users(cwd: Path | None) -> Path | None:
    """The user's own manifest, as `find` looks for it (here, a parent, the user config)."""
    start = (cwd or Path.cwd()).absolute()
    for folder in (start, *start.parents):
        if (folder / SEARCHED).is_file():
            return folder / SEARCHED
    user = user_manifest()
    return user if user.is_file() else None


def find_for_adding(explicit: Path | None = None, *, cwd: Path | None = None) -> Path | None:
    """The manifest `adopt` adds to: `explicit`, else the user's own, else None."""
    return Path(explicit) if explicit is not None else _users(cwd)


def is_example(path: Path) -> bool:
    """True for the example manifest embedded in the package: never the user's to act on."""
    return Path(path).absolute().resolve().is_relative_to(EMBEDDED_DIR)


def make_your_own() -> str:
    """How to make a manifest of one's own, as the messages about the example say it."""
    return (
        f"keep your own as {SEARCHED} in your project (or {user_manifest()}): `adopt "
        f"OWNER/REPO#N` in your project's folder starts it there"
    )


def check_writable(path: Path) -> None:
    """Refuse to write the manifest embedded in the package (an upgrade would replace it)."""
    if is_example(path):
        raise BadInputError(
            f"{path} is the example manifest inside the installed package (read-only): "
            f"{make_your_own()}"
        )


_REQUIRED = tuple("name title upstream base_branch base_commit fork head_branch fix".split())
_KNOWN = {*_REQUIRED, *"tests include_tests maintainer_can_modify supersedes pr".split()}
_KNOWN |= {"offline", "measure", "paths", "landed"}
# `landed = {commit, date, verdict, pr?, subject?, retired}`: written by `retire`; the entry is
# kept as a record and no longer carried.
_LANDED_KEYS = {"commit", "date", "verdict", "retired", "pr", "subject"}
_LANDED_VERDICTS = tuple(v.value for v in Verdict if v.may_retire)
_MEASURE_ROLES = ("fix", "reset")
_SHA_RE = re.compile(r"^[0-9a-f]{40}$")
_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*\Z")
# GitHub's names: an owner is 1-39 letters, digits or inner hyphens; a repository 1-100 of
# letters, digits, `.`, `_`, `-`, but not `.` or `..` (they would name a path, not a repo).
_REPO_RE = re.compile(
    r"(?!.*/\.\.?\Z)[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?/[A-Za-z0-9._-]{1,100}"
)


def check_repo(value: str, what: str) -> str:
    """`value` when it is a GitHub `OWNER/REPO`; else BadInputError naming `what`."""
    if not isinstance(value, str) or not _REPO_RE.fullmatch(value):
        raise BadInputError(f"{what} must be OWNER/REPO as GitHub names them, got {value!r}")
    return value


@dataclasses.dataclass(frozen=True)
class Landed:
    """The record `retire` leaves: how and where the entry's fix landed upstream, and when."""

    verdict: str  # landed | landed, changed since | superseded
    commit: str
    date: str  # the commit's date (YYYY-MM-DD)
    retired: str = ""  # the day it was retired
    pr: int | None = None
    subject: str = ""


@dataclasses.dataclass(frozen=True)
class Entry:
    """One upstream change: its patches, where it goes, and its PR history."""

    name: str
    title: str
    upstream: str
    base_branch: str
    base_commit: str
    fork: str
    head_branch: str
    fixes: tuple[Patch, ...]  # the fix commits, in order (a PR's series); at least one
    tests: tuple[Patch, ...]
    include_tests: bool
    supersedes: tuple[PullNumber, ...]
    pr: PullNumber | None
    offline: str | None
    measure: str | None = None  # which `measure` variant this entry's fix is: fix | reset
    landed: Landed | None = None  # retired: where it landed (no longer carried)
    # "Allow edits by maintainers" on the PR, as the user stated it (None: not stated)
    maintainer_can_modify: bool | None = None

    @property
    def fix(self) -> Patch:
        """The first fix patch (its author and message speak for the series)."""
        return self.fixes[0]

    @property
    def fork_owner(self) -> str:
        return self.fork.split("/", 1)[0]

    def patches(self, *, with_tests: bool | None = None) -> list[Patch]:
        """The patch files in apply order; tests included per `include_tests` unless told."""
        include = self.include_tests if with_tests is None else with_tests
        return [*self.fixes, *(self.tests if include else ())]


@dataclasses.dataclass(frozen=True)
class Manifest:
    """The validated entries; an entry's patch files are read when a command asks for it."""

    path: Path
    pending: tuple[_Pending, ...]  # the entries carried
    pending_retired: tuple[_Pending, ...] = ()  # landed upstream (`retire`): a record only

    @property
    def entries(self) -> tuple[Entry, ...]:
        """Every entry carried, its patches read."""
        return tuple(p.entry for p in self.pending)

    @property
    def retired(self) -> tuple[Entry, ...]:
        return tuple(p.entry for p in self.pending_retired)

    @property
    def names(self) -> list[str]:
        """The entries carried, by name (no patch is read)."""
        return [p.name for p in self.pending]

    def select(self, names: list[str] | tuple[str, ...]) -> list[Entry]:
        """Entries named, in manifest order (all when none are); only their patches are read."""
        if not names:
            return list(self.entries)
        for pending in self.pending_retired:
            if pending.name in names:
                raise BadInputError(
                    f"{self.path}: entry {pending.name!r} is retired: "
                    f"{_landed_words(pending.landed)}; it is no longer carried"
                )
        known = set(self.names)
        unknown = [n for n in names if n not in known]
        if unknown:
            raise BadInputError(
                f"unknown entry {', '.join(unknown)} in {self.path}; "
                f"known: {', '.join(sorted(known))}"
            )
        return [p.entry for p in self.pending if p.name in names]


def _landed_words(rec: Landed | None) -> str:
    """Where a retired entry landed, from its record."""
    if rec is None:
        return "not retired"
    pr = f" (PR #{rec.pr})" if rec.pr else ""
    return f"{rec.verdict} upstream as {git.short(rec.commit)}{pr} on {rec.date}"


def _landed(where: str, label: str, value: Any) -> Landed | None:
    if value is None:
        return None
    if not isinstance(value, dict) or not {"commit", "date", "verdict"} <= set(value):
        raise _bad(where, f"{label}: landed must be a table with commit, date and verdict")
    if extra := sorted(set(value) - _LANDED_KEYS):
        raise _bad(where, f"{label}: landed: unknown key(s) {', '.join(extra)}")
    if not _SHA_RE.match(str(value["commit"])) or value["verdict"] not in _LANDED_VERDICTS:
        raise _bad(where,
                   f"{label}: landed needs a full 40-hex commit and a verdict of "
                   f"{', '.join(_LANDED_VERDICTS)}")  # fmt: skip
    pr = value.get("pr")
    if pr is not None and (type(pr) is not int or pr <= 0):
        raise _bad(where, f"{label}: landed.pr must be a PR number, not {pr!r}")
    return Landed(str(value["verdict"]), str(value["commit"]), str(value["date"]),
                  str(value.get("retired", "")), pr, str(value.get("subject", "")))  # fmt: skip


def _bad(path: Path | str, msg: str) -> BadInputError:
    return BadInputError(f"{path}: {msg}")


_ENTRY_HEADER_RE = re.compile(r"^[ \t]*\[\[[ \t]*entry[ \t]*\]\]", re.MULTILINE)


def entry_lines(text: str) -> list[int]:
    """The line number of each `[[entry]]` header, so a message names the line to edit."""
    return [text.count("\n", 0, m.start()) + 1 for m in _ENTRY_HEADER_RE.finditer(text)]


def key_line(path: Path, entry_name: str, key: str) -> str:
    """`path:LINE` of the entry's `key = ...` line (the path alone where it cannot be told)."""
    try:
        text = path.read_text()
        names = [e.get("name") for e in tomllib.loads(text).get("entry", [])]
    except (OSError, tomllib.TOMLDecodeError, AttributeError):
        return str(path)
    headers, lines = entry_lines(text), text.splitlines()
    if entry_name not in names or len(headers) != len(names):
        return str(path)
    at = names.index(entry_name)
    block = range(headers[at], headers[at + 1] - 1 if at + 1 < len(headers) else len(lines))
    found = [n + 1 for n in block if re.match(rf"[ \t]*{re.escape(key)}[ \t]*=", lines[n])]
    return f"{path}:{found[0]}" if found else str(path)


def _typed(path: Path | str, label: str, merged: dict[str, Any], key: str, kind: type) -> Any:
    """`merged[key]` when it has exactly type `kind` (a bool is not an int here)."""
    value = merged.get(key)
    if value is None:
        return None
    if type(value) is not kind:
        raise _bad(path, f"{label}: {key} must be a {kind.__name__}, got {value!r}")
    return value


def _strings(path: Path | str, label: str, key: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _bad(path, f"{label}: {key} must be a list of strings, got {value!r}")
    return list(value)


def _patch_file(path: Path, where: str, label: str, name: str, staged: Staged) -> Path:
    """A patch file inside the manifest's folder; a name in `staged` is about to be written."""
    folder = path.parent.resolve()
    file = (folder / name).resolve()
    if Path(name).is_absolute() or ".." in Path(name).parts or not file.is_relative_to(folder):
        raise _bad(where, f"{label}: patch {name!r} must be a file inside {folder.name}/")
    if name in staged:
        return staged[name]
    if not file.is_file():
        raise _bad(where, f"{label}: patch file {name} not found beside the manifest")
    return file


def check_branch(value: str, what: str) -> str:
    """`value` when git takes it as a branch name; else BadInputError naming `what`."""
    if "\0" in value:
        raise BadInputError(f"{what} holds a NUL character; no branch name can")
    if value.startswith("-") or not git.is_valid_branch_name(value):
        raise BadInputError(
            f"{what} {ascii(value)} is not a valid branch name (git check-ref-format)"
        )
    if _HEX40_RE.fullmatch(value):  # git takes it; GitHub's pre-receive hook does not
        raise BadInputError(
            f"{what} {value!r}: GitHub refuses a branch named with 40 hex characters (GH002: "
            '"Sorry, branch or tag names consisting of 40 hex characters are not allowed."): '
            "choose another name"
        )
    return value


_HEX40_RE = re.compile(r"[0-9a-fA-F]{40}")


def _fix_names(where: str, label: str, value: Any) -> list[str]:
    """`fix`: one patch file name, or a list of them (a PR's fix commits, in order)."""
    if isinstance(value, str) and value:
        return [value]
    if isinstance(value, list) and value and all(isinstance(v, str) and v for v in value):
        return list(value)
    raise _bad(where, f"{label}: fix must be a patch file name or a list of them, got {value!r}")


def _refuse_nul(where: str, label: str, merged: Mapping[str, Any]) -> None:
    """No value holds a NUL: none can carry one to git, the file system or GitHub."""

    def holds(value: Any) -> bool:
        if isinstance(value, str):
            return "\0" in value
        if isinstance(value, list):
            return any(holds(v) for v in value)
        if isinstance(value, dict):
            return any(holds(v) for v in value.values())
        return False

    for key, value in merged.items():
        if holds(value):
            raise _bad(where, f"{label}: {key} holds a NUL character; remove it")


def _too_deep(source: str) -> str:
    """`LINE: entry NAME: KEY is nested ...` for a manifest nested past what a reader recurses."""
    depth, deepest, start = 0, (0, 1, "?"), (1, "?")
    key_re = re.compile(r"\s*([A-Za-z0-9_.\"'-]+)\s*=")
    quote = ""
    for number, line in enumerate(source.splitlines(), 1):
        if depth == 0 and not quote and (found := key_re.match(line)):
            start = (number, found[1].strip("\"'"))
        i = 0
        while i < len(line):
            char = line[i]
            if quote:
                if char == "\\" and quote == '"':
                    i += 1
                elif char == quote:
                    quote = ""
            elif char in "\"'":
                quote = char
            elif char == "#":
                break
            elif char in "[{" and (depth or not line[:i].strip() == ""):
                depth += 1
                if depth > deepest[0]:
                    deepest = (depth, *start)
            elif char in "]}" and depth:
                depth -= 1
            i += 1
        quote = "" if quote == "'" else quote  # a literal string ends with its line
    levels, line_no, key = deepest
    headers = [n for n in entry_lines(source) if n <= line_no]
    name = "?"
    if headers:
        block = source.splitlines()[headers[-1] : line_no]
        named = [m[1] for text in block if (m := re.match(r"\s*name\s*=\s*[\"'](.*?)[\"']", text))]
        name = named[0] if named else "?"
    return (
        f"{line_no}: entry {ascii(name)}: {ascii(key)[1:-1]} is nested {levels} levels deep, "
        "past what a TOML reader recurses into; no manifest value nests more than two"
    )


def _check_paths(where: str, label: str, patch: Patch, allowed: list[str]) -> None:
    """Every file inside the entry's `paths`, and a `patchrules.named_only` file named there."""
    patchrules.refuse_obeyed(f"{where}: {label}: {patch.name}", patch.files, allowed)
    refused = patchrules.outside(patch.files, allowed)
    if refused:
        raise _bad(
            where, f"{label}: {patch.name} touches {', '.join(refused)}, outside the entry's "
            f"paths ({', '.join(allowed)}); add it to the entry's `paths` if it belongs upstream",
        )  # fmt: skip


def _entry(path: Path, raw: dict[str, Any], defaults: dict[str, Any], line: int | None,
           staged: Staged) -> _Pending:  # fmt: skip
    where = f"{path}:{line}" if line else str(path)
    if not isinstance(raw, dict):
        raise _bad(where, f"each [[entry]] must be a table, got {raw!r}")
    merged = {**defaults, **raw}
    label = f"entry {ascii(raw.get('name', '?'))}"
    unknown = set(merged) - _KNOWN
    if unknown:
        raise _bad(where, f"{label}: unknown key(s) {', '.join(sorted(unknown))}")
    _refuse_nul(where, label, merged)
    missing = [k for k in _REQUIRED if merged.get(k) in (None, "")]
    if missing:
        raise _bad(where, f"{label}: missing {', '.join(missing)}")
    strings = (*(k for k in _REQUIRED if k != "fix"), "offline", "measure")
    text = {k: _typed(where, label, merged, k, str) for k in strings}
    if not _NAME_RE.match(text["name"]):
        raise _bad(where, f"{label}: name must match [a-z0-9][a-z0-9._-]* (it names folders)")
    for key in ("upstream", "fork"):
        check_repo(text[key], f"{where}: {label}: {key}")
    if not _SHA_RE.match(text["base_commit"]):
        raise _bad(where, f"{label}: base_commit must be a full 40-hex sha")
    for key in ("base_branch", "head_branch"):
        check_branch(text[key], f"{where}: {label}: {key}")
    supersedes = merged.get("supersedes", [])
    if not isinstance(supersedes, list) or not all(type(n) is int and n > 0 for n in supersedes):
        raise _bad(
            where, f"{label}: supersedes must be a list of positive PR numbers, got {supersedes!r}"
        )
    pr = merged.get("pr")
    if pr is not None and not (type(pr) is int and pr > 0):
        raise _bad(where, f"{label}: pr must be a positive PR number, got {pr!r}")
    include_tests = _typed(where, label, merged, "include_tests", bool)
    maintainer_edits = _typed(where, label, merged, "maintainer_can_modify", bool)
    measure = text["measure"]
    if measure is not None and measure not in _MEASURE_ROLES:
        raise _bad(where, f"{label}: measure must be one of {', '.join(_MEASURE_ROLES)}")
    allowed = _strings(where, label, "paths", merged.get("paths", list(patchrules.DEFAULT_PATHS)))
    test_names = _strings(where, label, "tests", merged.get("tests", []))
    fix_names = _fix_names(where, label, merged["fix"])
    names = [*fix_names, *test_names]
    if len(set(names)) != len(names):
        raise _bad(where, f"{label}: a patch is named twice in fix/tests")
    files = [_patch_file(path, where, label, name, staged) for name in names]
    return _Pending(
        where,
        label,
        tuple(files),
        len(fix_names),
        tuple(allowed),
        {k: text[k] for k in _REQUIRED if k != "fix"}
        | dict(include_tests=True if include_tests is None else include_tests,
               supersedes=tuple(map(PullNumber, supersedes)),
               pr=PullNumber(pr) if pr is not None else None,
               offline=text["offline"] or None, measure=measure,
               landed=_landed(where, label, raw.get("landed")),
               maintainer_can_modify=maintainer_edits),
    )  # fmt: skip


_PARSED: dict[tuple[Path, bytes], Patch] = {}  # (file, its sha256) -> the patch read from it


def _load_patch(file: Path) -> Patch:
    """`patchfile.load`, once per file content in this process."""
    digest = hashlib.sha256(inputs.read_bytes(file, "patch file", shown=file.name)).digest()
    key = (file.resolve(), digest)
    if key not in _PARSED:
        _PARSED[key] = load_patch(file)
    return _PARSED[key]


@dataclasses.dataclass
class _Pending:
    """An entry validated, its patch files found but not yet read (`Manifest.select`)."""

    where: str
    label: str
    files: tuple[Path, ...]
    fix_count: int
    allowed: tuple[str, ...]
    fields: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.fields["name"])

    @property
    def landed(self) -> Landed | None:
        value = self.fields["landed"]
        return value if isinstance(value, Landed) else None

    @functools.cached_property
    def entry(self) -> Entry:
        """The entry with its patches read and checked, once."""
        where, label = self.where, self.label
        try:
            loaded = [_load_patch(file) for file in self.files]
        except BadInputError as exc:  # named where the user edits: the manifest line and entry
            raise _bad(where, f"{label}: {exc}") from None
        for patch in loaded:
            _check_paths(where, label, patch, list(self.allowed))
        try:  # across the entry's patches, in the order git am applies them
            patchrules.refuse_mode_flips(label, [c for p in loaded for c in p.changes])
        except BadInputError as exc:
            raise _bad(where, str(exc)) from None
        fixes, tests = loaded[: self.fix_count], loaded[self.fix_count :]
        return Entry(**self.fields, fixes=tuple(fixes), tests=tuple(tests))


def branch_owner(entries: Sequence[Entry], fork: str, head_branch: str) -> Entry | None:
    """The entry publishing from `fork`'s `head_branch` (names case-insensitive, branch not)."""
    for entry in entries:
        if entry.fork.lower() == fork.lower() and entry.head_branch == head_branch:
            return entry
    return None


def _unique_branches(path: Path, entries: Sequence[Entry]) -> None:
    """One entry per fork branch, and per recorded PR."""
    for n, entry in enumerate(entries):
        other = branch_owner(entries[:n], entry.fork, entry.head_branch)
        if other is not None:
            raise _bad(
                path, f"entries {other.name!r} and {entry.name!r} both publish from "
                f"{entry.fork}:{entry.head_branch}; give one of them its own head_branch",
            )  # fmt: skip
        same_pr = [e.name for e in entries[:n]
                   if entry.pr and (e.upstream, e.pr) == (entry.upstream, entry.pr)]  # fmt: skip
        if same_pr:
            raise _bad(
                path, f"entries {same_pr[0]!r} and {entry.name!r} both record pr = {entry.pr}; "
                "a PR belongs to one entry: fix the `pr` of the one it does not belong to",
            )  # fmt: skip


def load(path: Path = DEFAULT_MANIFEST, *, text: str | None = None,
         staged: Staged | None = None) -> Manifest:  # fmt: skip
    """Parse and validate; `text` and `staged` validate what a write would leave at `path`."""
    path = Path(path).absolute()  # patch paths must hold from any cwd (git am runs elsewhere)
    source = inputs.read_text(path, "manifest") if text is None else text
    try:
        data = tomllib.loads(source)
    except tomllib.TOMLDecodeError as exc:
        raise _bad(path, f"not valid TOML: {exc}") from None
    except RecursionError:
        raise BadInputError(f"{path}:{_too_deep(source)}") from None
    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        raise _bad(path, "[defaults] must be a table")
    raw_entries = data.get("entry", [])
    if not isinstance(raw_entries, list) or not raw_entries:
        raise _bad(path, "no [[entry]] tables")
    lines = entry_lines(source)
    at = [lines[i] if len(lines) == len(raw_entries) else None for i in range(len(raw_entries))]
    entries = tuple(_entry(path, raw, defaults, line, staged or {})
                    for raw, line in zip(raw_entries, at, strict=True))  # fmt: skip
    names = [e.name for e in entries]
    if len(set(names)) != len(names):
        raise _bad(path, "entry names must be unique")
    # what each entry publishes to is in its fields: its patches need not be read for it
    _unique_branches(path, [Entry(**e.fields, fixes=(), tests=()) for e in entries])
    carried = tuple(e for e in entries if e.landed is None)
    return Manifest(path, carried, tuple(e for e in entries if e.landed is not None))
