"""What upstream's default branch tells a new PR: its tip and its PR template."""

from __future__ import annotations

from pathlib import Path

from patchcarry import hosts
from patchcarry import pr_template as templates
from patchcarry.pulls.reads import Reads


def tip(reads: Reads, upstream: str, cache: Path) -> str | None:
    """Upstream's default branch tip in the cache (None: it has none)."""
    repo = reads.repo(upstream)
    return templates.fetch(cache, repo.default_branch) if repo and repo.default_branch else None


def pr_template(reads: Reads, upstream: str, cache: Path, ref: str | None) -> str | None:
    """Upstream's PR template as its default branch (`ref`) holds it, else its owner's."""
    found = templates.read(cache, ref) if ref else None
    if found is not None or upstream.split("/")[1].lower() == templates.OWNER_REPO:
        return found
    name = f"{upstream.split('/')[0]}/{templates.OWNER_REPO}"  # the owner's .github repository
    repo = reads.repo(name)
    if repo is None or repo.private or not repo.default_branch:
        return None
    url = hosts.answered_git_url(reads.host, name, repo.clone_url)
    ref = templates.fetch_owner(cache, url, repo.default_branch)
    return templates.read(cache, ref) if ref else None
