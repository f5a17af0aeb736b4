"""What the user asked for on the command line, and nothing observed: the run's facts (the
token's login, the upstream URL it resolved, today's date) are `observe.RunFacts`."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path


@dataclasses.dataclass(frozen=True)
class Options:
    dry_run: bool
    force: bool = False
    rebase: bool = False
    rewrite: bool = False
    upstream_url: str | None = None  # --upstream-url (None: the API's clone_url)
    evidence_markdown: str | None = None
    manifest_path: Path | None = None
    allow_default_branch: bool = False
    update_live: bool = False  # push tests/a revision onto a live PR whose head holds the fix
    fork_wait: float = 300.0  # a fork GitHub is still creating: API, then git (seconds)
    sleep: Callable[[float], None] | None = None
    progress: Callable[[str], None] | None = None  # long waits, said on stderr (not with --json)
