"""What upstream's default branch tells a new PR, read where GitHub reads it: its tip in the
check's cache, its PR template (else its owner's `.github` repository's)."""

from __future__ import annotations

from pathlib import Path

from patchcarry import hosts
from patchcarry import pr_template as templates
from patchcarry.pulls.reads import Reads


def tip(reads: Reads, upstream: str, cache: Path) -> str | None:
    """Upstream's default branch tip in the cache (where GitHub reads its PR template and
    copy-pr-bot its configuration); None when it has none."""
    repo = reads.repo(upstream)
    return templates.fetch(cache, repo.default_branch) if repo and repo.default_branch else None


def pr_template(reads: Reads, upstream: str, cache: Path, ref: str | None) -> str | None:
    """Upstream's PR template as its default branch (`ref`) holds it, where GitHub reads
    it; else its owner's `.github` repository's."""
    found = templates.read(cache, ref) if ref else None
    if found is not None or upstream.split("/")[1].lower() == templates.OWNER_REPO:
        return found
    return owner_template(reads, upstream.split("/")[0], cache)


def owner_template(reads: Reads, owner: str, cache: Path) -> str | None:
    """The PR template of the owner's `.github` repository, which GitHub uses for every
    repository of the owner that has none of its own (None: no such public repository)."""
    name = f"{owner}/{templates.OWNER_REPO}"
    repo = reads.repo(name)
    if repo is None or repo.private or not repo.default_branch:
        return None
    url = hosts.answered_git_url(reads.host, name, repo.clone_url)
    ref = templates.fetch_owner(cache, url, repo.default_branch)
    return templates.read(cache, ref) if ref else None
