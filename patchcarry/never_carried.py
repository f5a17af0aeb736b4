"""Files no entry carries, whatever its `paths` says: an entry's `paths` only narrows what may
be sent, it can never widen these in. (Symlinks, submodules, mode changes, renames and binary
data are refused when a patch is parsed, in `patchrules`.) Pure Python.

A workflow under `.github/workflows/` runs with the upstream repository's secrets on its
runners: a carried patch must not change what upstream's CI does, and GitHub refuses a push
of one from a token without the `workflow` scope anyway.
"""

from __future__ import annotations

from collections.abc import Iterable

from patchcarry import patchrules

NEVER = {
    ".github/workflows/**": (
        "a GitHub Actions workflow, never carried (it runs with upstream's secrets on its "
        "runners; `paths` cannot allow it): drop that commit from the PR, or send it by hand"
    ),
}


def refused(files: Iterable[str]) -> list[tuple[str, str]]:
    """(file, why) for each of `files` that is never carried."""
    return [
        (file, why)
        for file in files
        for glob, why in NEVER.items()
        if not patchrules.outside([file], [glob])
    ]
