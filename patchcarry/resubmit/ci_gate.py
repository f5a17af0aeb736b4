"""Upstream's PR vetting gate: copy-pr-bot runs CI once a maintainer says `/ok to test <sha>`;
an upstream has it when its default branch holds the bot's configuration (read, never assumed)."""

from __future__ import annotations

import re
from pathlib import Path

from patchcarry import git

CONFIGS = (".github/copy-pr-bot.yaml", ".github/copy-pr-bot.yml")
_OFF_RE = re.compile(r"^enabled:[ \t]*(false|no|off)\b", re.IGNORECASE | re.MULTILINE)
COMMAND = "/ok to test"


def ok_to_test(sha: str) -> str:
    """The comment that vets `sha`, as a maintainer writes it (Markdown code)."""
    return f"`{COMMAND} {sha}`"


def gate_branch(pr: int | None) -> str:
    """The bot's branch that points at PR `pr`'s vetted head."""
    return f"pull-request/{pr}"


def uses_copy_pr_bot(cache: Path, rev: str | None) -> bool:
    """Whether the upstream whose default branch tip is `rev` vets PR heads with copy-pr-bot."""
    if rev is None:
        return False
    for path in CONFIGS:
        data = git.show_file(rev, path, cwd=cache)
        if data is not None:
            return not _OFF_RE.search(data.decode("utf-8", errors="replace"))
    return False
