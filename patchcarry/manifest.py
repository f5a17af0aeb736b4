"""Reads and validates `patches/series.toml`; `record_pr` writes a PR number back into it."""

from __future__ import annotations

import dataclasses
import re
import tomllib
from pathlib import Path
from typing import Any, NewType

from patchcarry import git, manifest_edit, patchrules
from patchcarry.errors import BadInputError
from patchcarry.patchfile import Patch
from patchcarry.patchfile import load as load_patch

PullNumber = NewType("PullNumber", int)


def _default_manifest() -> Path:
    """patches/series.toml of the checkout this package runs from, else the copy embedded in
    the installed package (pyproject maps patches/ to `patchcarry._series`)."""
    package = Path(__file__).resolve().parent
    checkout = package.parent / "patches" / "series.toml"
    return checkout if checkout.is_file() else package / "_series" / "series.toml"


DEFAULT_MANIFEST = _default_manifest()

_REQUIRED = (
    "name",
    "title",
    "upstream",
    "base_branch",
    "base_commit",
    "fork",
    "head_branch",
    "fix",
)
_KNOWN = set(_REQUIRED) | {
    "tests",
    "include_tests",
    "supersedes",
    "pr",
    "offline",
    "measure",
    "paths",
}
_MEASURE_ROLES = ("fix", "reset")
_SHA_RE = re.compile(r"^[0-9a-f]{40}$")
_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*\Z")
# GitHub's names: an owner is 1-39 letters, digits or inner hyphens; a repository 1-100 of
# letters, digits, `.`, `_`, `-`, but not `.` or `..` (they would name a path, not a repo).
_REPO_RE = re.compile(
    r"(?!.*/\.\.?\Z)[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?/[A-Za-z0-9._-]{1,100}"
)


def check_repo(value: str, what: str) -> str:
    """`value` when it is a GitHub `OWNER/REPO` (whole string); else BadInputError naming
    `what` (the manifest key or command-line option). The one check every source uses."""
    if not isinstance(value, str) or not _REPO_RE.fullmatch(value):
        raise BadInputError(f"{what} must be OWNER/REPO as GitHub names them, got {value!r}")
    return value


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
    fix: Patch
    tests: tuple[Patch, ...]
    include_tests: bool
    supersedes: tuple[PullNumber, ...]
    pr: PullNumber | None
    offline: str | None
    measure: str | None = None  # which `measure` variant this entry's fix is: fix | reset

    @property
    def fork_owner(self) -> str:
        return self.fork.split("/", 1)[0]

    def patches(self, *, with_tests: bool | None = None) -> list[Patch]:
        """The patch files in apply order; tests included per `include_tests` unless told."""
        include = self.include_tests if with_tests is None else with_tests
        return [self.fix, *(self.tests if include else ())]


@dataclasses.dataclass(frozen=True)
class Manifest:
    path: Path
    entries: tuple[Entry, ...]

    def select(self, names: list[str] | tuple[str, ...]) -> list[Entry]:
        """Entries named on the command line, in manifest order; all when none are named."""
        if not names:
            return list(self.entries)
        known = {e.name for e in self.entries}
        unknown = [n for n in names if n not in known]
        if unknown:
            known_list = ", ".join(sorted(known))
            raise BadInputError(
                f"unknown entry {', '.join(unknown)} in {self.path}; known: {known_list}"
            )
        return [e for e in self.entries if e.name in names]


def _bad(path: Path, msg: str) -> BadInputError:
    return BadInputError(f"{path}: {msg}")


def _typed(path: Path, label: str, merged: dict[str, Any], key: str, kind: type) -> Any:
    """`merged[key]` when it has exactly type `kind` (a bool is not an int here)."""
    value = merged.get(key)
    if value is None:
        return None
    if type(value) is not kind:
        raise _bad(path, f"{label}: {key} must be a {kind.__name__}, got {value!r}")
    return value


def _pr_numbers(path: Path, label: str, key: str, value: Any) -> tuple[PullNumber, ...]:
    items = value if isinstance(value, list) else None
    if items is None or not all(type(n) is int and n > 0 for n in items):
        raise _bad(path, f"{label}: {key} must be a list of positive PR numbers, got {value!r}")
    return tuple(PullNumber(n) for n in items)


def _strings(path: Path, label: str, key: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _bad(path, f"{label}: {key} must be a list of strings, got {value!r}")
    return list(value)


def _patch_file(path: Path, label: str, name: str) -> Path:
    """A patch file named relative to the manifest, inside its folder (`patches/`)."""
    folder = path.parent.resolve()
    file = (folder / name).resolve()
    if Path(name).is_absolute() or ".." in Path(name).parts or not file.is_relative_to(folder):
        raise _bad(path, f"{label}: patch {name!r} must be a file inside {folder.name}/")
    if not file.is_file():
        raise _bad(path, f"{label}: patch file {name} not found beside the manifest")
    return file


def _branch(path: Path, label: str, key: str, value: str) -> str:
    if value.startswith("-") or not git.is_valid_branch_name(value, cwd=path.parent):
        raise _bad(
            path, f"{label}: {key} {value!r} is not a valid branch name (git check-ref-format)"
        )
    return value


def _entry(path: Path, raw: dict[str, Any], defaults: dict[str, Any]) -> Entry:
    if not isinstance(raw, dict):
        raise _bad(path, f"each [[entry]] must be a table, got {raw!r}")
    merged = {**defaults, **raw}
    label = f"entry {raw.get('name', '?')!r}"
    unknown = set(merged) - _KNOWN
    if unknown:
        raise _bad(path, f"{label}: unknown key(s) {', '.join(sorted(unknown))}")
    missing = [k for k in _REQUIRED if merged.get(k) in (None, "")]
    if missing:
        raise _bad(path, f"{label}: missing {', '.join(missing)}")
    text = {k: _typed(path, label, merged, k, str) for k in (*_REQUIRED, "offline", "measure")}
    if not _NAME_RE.match(text["name"]):
        raise _bad(path, f"{label}: name must match [a-z0-9][a-z0-9._-]* (it names folders)")
    for key in ("upstream", "fork"):
        check_repo(text[key], f"{path}: {label}: {key}")
    if not _SHA_RE.match(text["base_commit"]):
        raise _bad(path, f"{label}: base_commit must be a full 40-hex sha")
    for key in ("base_branch", "head_branch"):
        _branch(path, label, key, text[key])
    supersedes = _pr_numbers(path, label, "supersedes", merged.get("supersedes", []))
    pr = merged.get("pr")
    if pr is not None and not (type(pr) is int and pr > 0):
        raise _bad(path, f"{label}: pr must be a positive PR number, got {pr!r}")
    include_tests = _typed(path, label, merged, "include_tests", bool)
    measure = text["measure"]
    if measure is not None and measure not in _MEASURE_ROLES:
        raise _bad(path, f"{label}: measure must be one of {', '.join(_MEASURE_ROLES)}")
    allowed = _strings(path, label, "paths", merged.get("paths", list(patchrules.DEFAULT_PATHS)))
    test_names = _strings(path, label, "tests", merged.get("tests", []))
    files = [_patch_file(path, label, name) for name in (text["fix"], *test_names)]
    fix, *tests = (load_patch(file) for file in files)
    for patch in (fix, *tests):
        refused = patchrules.outside(patch.files, allowed)
        if refused:
            raise _bad(
                path,
                f"{label}: {patch.name} touches {', '.join(refused)}, outside the entry's "
                f"paths ({', '.join(allowed)}); add it to `paths` if it belongs upstream",
            )
    return Entry(
        name=text["name"],
        title=text["title"],
        upstream=text["upstream"],
        base_branch=text["base_branch"],
        base_commit=text["base_commit"],
        fork=text["fork"],
        head_branch=text["head_branch"],
        fix=fix,
        tests=tuple(tests),
        include_tests=True if include_tests is None else include_tests,
        supersedes=supersedes,
        pr=PullNumber(pr) if pr is not None else None,
        offline=text["offline"] or None,
        measure=measure,
    )


def load(path: Path = DEFAULT_MANIFEST) -> Manifest:
    """Parse and validate the manifest; BadInputError says what is wrong and where."""
    path = Path(path).absolute()  # patch paths must hold from any cwd (git am runs elsewhere)
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise _bad(path, "manifest not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise _bad(path, f"not valid TOML: {exc}") from None
    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        raise _bad(path, "[defaults] must be a table")
    raw_entries = data.get("entry", [])
    if not isinstance(raw_entries, list) or not raw_entries:
        raise _bad(path, "no [[entry]] tables")
    entries = tuple(_entry(path, raw, defaults) for raw in raw_entries)
    names = [e.name for e in entries]
    if len(set(names)) != len(names):
        raise _bad(path, "entry names must be unique")
    return Manifest(path=path, entries=entries)


def record_pr(path: Path, entry_name: str, pr: int) -> None:
    """Write the entry's current PR number back into the manifest file: a round-trip edit
    that keeps comments and layout, written atomically (see `manifest_edit`)."""
    manifest_edit.record_pr(Path(path), entry_name, pr)
