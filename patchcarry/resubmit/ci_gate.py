"""Upstream's PR vetting gate: copy-pr-bot runs CI once a maintainer says `/ok to test <sha>`;
an upstream has it when its default branch holds the bot's configuration (read, never assumed)."""

from __future__ import annotations

import re

from patchcarry.pr_template import Places

CONFIGS = (".github/copy-pr-bot.yaml", ".github/copy-pr-bot.yml")
_OFF_RE = re.compile(r"^enabled:[ \t]*(false|no|off)\b", re.IGNORECASE | re.MULTILINE)
COMMAND = "/ok to test"


def ok_to_test(sha: str) -> str:
    """The comment that vets `sha`, as a maintainer writes it (Markdown code)."""
    return f"`{COMMAND} {sha}`"


def gate_branch(pr: int | None) -> str:
    """The bot's branch that points at PR `pr`'s vetted head."""
    return f"pull-request/{pr}"


def config_path(places: Places) -> str | None:
    """The first of the bot's configuration files upstream's default branch holds."""
    return next((path for path in CONFIGS if places.holds(path)), None)


def uses_copy_pr_bot(places: Places | None) -> bool:
    """Whether the upstream whose default branch `places` lists vets PR heads with copy-pr-bot."""
    if places is None:
        return False
    for path in CONFIGS:
        data = places.file(path)
        if data is not None:
            return not _OFF_RE.search(data.decode("utf-8", errors="replace"))
    return False
