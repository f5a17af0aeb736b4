"""Locked conversations (403): the comment is skipped with a line, the PR recorded first."""

from __future__ import annotations

WHY = "GitHub lets only upstream's collaborators comment on a locked conversation"


def skipped(what: str, number: int) -> str:
    """The plan's line for a comment not planned: the conversation was read locked."""
    return f"{what}: not posted, #{number} is locked ({WHY})"


def refused(what: str, number: int) -> str:
    """The record's line for a comment refused: the conversation was locked after the read."""
    return (
        f'{what}: not posted, #{number} was locked before the write (403 "Unable to create '
        'comment because issue is locked."); a re-run posts it once unlocked'
    )
