""" "Allow edits by maintainers" as the user states it: never on by default, and the plan says
what it grants in GitHub's words (on a fork with workflows, access to secrets)."""

from __future__ import annotations

from patchcarry.github_types import PullRef
from patchcarry.manifest import Entry

GRANTS = ('GitHub: "Allow edits and access to secrets by maintainers" lets upstream\'s maintainers '
          'push to the branch and "can potentially reveal values of secrets and grant access to '
          'other branches"')  # fmt: skip


def wanted(entry: Entry) -> bool:
    """What the PR is opened with: only a stated yes ticks it."""
    return entry.maintainer_can_modify is True


def change(existing: PullRef | None, entry: Entry) -> bool | None:
    """The value to PATCH where the PR's setting differs from the stated choice (None: none)."""
    stated = entry.maintainer_can_modify
    if existing is None or stated is None or existing.maintainer_can_modify is None:
        return None
    return stated if existing.maintainer_can_modify != stated else None


def line(entry: Entry) -> str:
    """The plan's sentence: the choice, where it comes from, and what it grants."""
    if entry.maintainer_can_modify is None:
        return ("maintainer edits: off (not stated; set maintainer_can_modify = true in the "
                f"manifest or pass --maintainer-edits to allow them). {GRANTS}")  # fmt: skip
    state = "on" if entry.maintainer_can_modify else "off"
    return f"maintainer edits: {state} (stated). {GRANTS}"
