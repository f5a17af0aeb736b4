"""Reads and validates `patches/series.toml`; `record_pr` writes a PR number back into it."""

from __future__ import annotations

import dataclasses
import re
import tomllib
from pathlib import Path
from typing import Any, NewType

from patchcarry import manifest_edit
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
_KNOWN = set(_REQUIRED) | {"tests", "include_tests", "supersedes", "pr", "offline", "measure"}
_MEASURE_ROLES = ("fix", "reset")
_SHA_RE = re.compile(r"^[0-9a-f]{40}$")
_REPO_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+$")


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


def _entry(path: Path, raw: dict[str, Any], defaults: dict[str, Any]) -> Entry:
    merged = {**defaults, **raw}
    label = f"entry {raw.get('name', '?')!r}"
    unknown = set(merged) - _KNOWN
    if unknown:
        raise _bad(path, f"{label}: unknown key(s) {', '.join(sorted(unknown))}")
    missing = [k for k in _REQUIRED if not merged.get(k)]
    if missing:
        raise _bad(path, f"{label}: missing {', '.join(missing)}")
    for key in ("upstream", "fork"):
        if not _REPO_RE.match(str(merged[key])):
            raise _bad(path, f"{label}: {key} must be OWNER/NAME, got {merged[key]!r}")
    if not _SHA_RE.match(str(merged["base_commit"])):
        raise _bad(path, f"{label}: base_commit must be a full 40-hex sha")
    supersedes = merged.get("supersedes", [])
    pr = merged.get("pr")
    if not all(isinstance(n, int) and n > 0 for n in supersedes) or (
        pr is not None and not (isinstance(pr, int) and pr > 0)
    ):
        raise _bad(path, f"{label}: supersedes and pr must be positive PR numbers")
    measure = merged.get("measure")
    if measure is not None and measure not in _MEASURE_ROLES:
        raise _bad(path, f"{label}: measure must be one of {', '.join(_MEASURE_ROLES)}")
    base = path.parent
    files = [base / str(merged["fix"]), *(base / str(t) for t in merged.get("tests", []))]
    for file in files:
        if not file.is_file():
            raise _bad(path, f"{label}: patch file {file.name} not found beside the manifest")
    fix, *tests = (load_patch(file) for file in files)
    return Entry(
        name=str(merged["name"]),
        title=str(merged["title"]),
        upstream=str(merged["upstream"]),
        base_branch=str(merged["base_branch"]),
        base_commit=str(merged["base_commit"]),
        fork=str(merged["fork"]),
        head_branch=str(merged["head_branch"]),
        fix=fix,
        tests=tuple(tests),
        include_tests=bool(merged.get("include_tests", True)),
        supersedes=tuple(PullNumber(n) for n in supersedes),
        pr=PullNumber(pr) if pr is not None else None,
        offline=str(merged["offline"]) if merged.get("offline") else None,
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
