"""Renamed repositories and users: GitHub's `full_name` is used, and the line to change said."""

from __future__ import annotations

import dataclasses

from patchcarry.manifest import Entry
from patchcarry.pulls.classify import RepoReader


def current_name(reader: RepoReader, name: str) -> str:
    """`name` as GitHub names it now (itself when unreadable or only its case differs)."""
    found = reader.repo(name)
    moved = found is not None and found.full_name and found.full_name.lower() != name.lower()
    return found.full_name if moved and found else name


def follow(reader: RepoReader, entries: list[Entry]) -> tuple[list[Entry], list[str]]:
    """(the entries under their repositories' current names, one line per name that moved)."""
    out, said = [], {}
    for entry in entries:
        upstream = current_name(reader, entry.upstream)
        fork = current_name(reader, entry.fork)
        for key, old, new in (("upstream", entry.upstream, upstream), ("fork", entry.fork, fork)):
            if old != new:
                said[(key, old)] = (
                    f"{old} is now {new} (GitHub redirected the old name: renamed, transferred "
                    f'or its owner renamed): this run uses {new}; set `{key} = "{new}"` in the '
                    "manifest"
                )
        out.append(dataclasses.replace(entry, upstream=upstream, fork=fork))
    return out, list(said.values())
