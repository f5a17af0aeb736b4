"""The `paths` an adopted entry gets: the folders its PR's commits touch, nothing wider."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from typing import TYPE_CHECKING

from patchcarry import patchrules

if TYPE_CHECKING:
    from patchcarry.patchfile import Patch

_TEST_DIRS = {"test", "tests", "testing", "__tests__", "spec", "specs"}


def derive(files: Iterable[str]) -> list[str]:
    """Per top-level folder, the deepest folder holding its touched files (`DIR/**`); top-level
    files by name; none for a file `patchrules.named_only` covers."""
    groups: dict[str, list[str]] = {}
    globs: set[str] = set()
    for file in files:
        if patchrules.named_only([file], []):
            continue
        top, sep, _ = file.partition("/")
        if sep:
            groups.setdefault(top, []).append(posixpath.dirname(file))
        else:
            globs.add(file)
    for dirs in groups.values():
        common = posixpath.commonpath(dirs)
        globs.add(f"{common}/**")
    return sorted(globs)


def is_test_file(path: str) -> bool:
    """A test by test runners' conventions: under a test directory, or `test_*`, `*_test.*`, ..."""
    *dirs, name = path.split("/")
    stem = name.split(".", 1)[0]
    return (any(d.lower() in _TEST_DIRS for d in dirs) or stem.startswith("test_")
            or stem.endswith("_test") or ".test." in name or ".spec." in name)  # fmt: skip


def tests_only(files: Iterable[str]) -> bool:
    """True when every file is a test file (and there is at least one)."""
    listed = list(files)
    return bool(listed) and all(is_test_file(f) for f in listed)


def executables(patches: Iterable[Patch]) -> list[str]:
    """The files the patches create executable (100755): named in the plan, as they can run."""
    return sorted({c.path for p in patches for c in p.changes if c.new_mode == "100755"})
