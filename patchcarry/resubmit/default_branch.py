"""What upstream's default branch tells a new PR: its tip and its PR template."""

from __future__ import annotations

from pathlib import Path

from patchcarry import hosts
from patchcarry import pr_template as templates
from patchcarry.pulls.reads import Reads
from patchcarry.resubmit import ci_gate


def tip(reads: Reads, upstream: str, cache: Path) -> str | None:
    """Upstream's default branch tip in the cache (None: it has none)."""
    repo = reads.repo(upstream)
    return templates.fetch(cache, repo.default_branch) if repo and repo.default_branch else None


def places(cache: Path, ref: str | None) -> templates.Places | None:
    """What the default branch (`ref`) holds where the template and the CI gate's settings
    live, those two files read in one git (None: no default branch)."""
    if not ref:
        return None
    found = templates.Places(cache, ref)
    found.load([found.template_path(), ci_gate.config_path(found)])
    return found


def pr_template(reads: Reads, upstream: str, cache: Path,
                held: templates.Places | None) -> str | None:  # fmt: skip
    """Upstream's PR template as its default branch (`held`) holds it, else its owner's."""
    found = held.template() if held else None
    if found is not None or upstream.split("/")[1].lower() == templates.OWNER_REPO:
        return found
    name = f"{upstream.split('/')[0]}/{templates.OWNER_REPO}"  # the owner's .github repository
    repo = reads.repo(name)
    if repo is None or repo.private or not repo.default_branch:
        return None
    url = hosts.answered_git_url(reads.host, name, repo.clone_url)
    ref = templates.fetch_owner(cache, url, repo.default_branch)
    return templates.read(cache, ref) if ref else None
