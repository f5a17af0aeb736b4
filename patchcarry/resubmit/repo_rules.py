"""What the repositories' answers say about the writes first; admin-only facts are "unknown"."""

from __future__ import annotations

import dataclasses

from patchcarry.github_types import RepoRef

ARCHIVED = "Repository was archived so is read-only."  # GitHub's 403 to a write


@dataclasses.dataclass(frozen=True)
class RepoVerdict:
    """`refusal`: why no write may start ("" when none); `lines`: what the plan states."""

    refusal: str = ""
    lines: tuple[str, ...] = ()


def judge(
    upstream_name: str, upstream: RepoRef | None, fork_name: str, fork: RepoRef | None,
    *, creates: bool,
) -> RepoVerdict:  # fmt: skip
    """The verdict for writes to `upstream` (a PR created when `creates`) from `fork`."""
    up = upstream or RepoRef()
    if up.archived:
        return RepoVerdict(
            f'{upstream_name} is archived: GitHub answers every write to it 403 "{ARCHIVED}" '
            "(no PR can be opened, edited or commented on) until its owner unarchives it; "
            "nothing was written"
        )
    if fork is not None and fork.archived:
        return RepoVerdict(
            f'{fork_name} is archived: GitHub refuses pushes to it ("This repository was '
            'archived so it is read-only."); unarchive it (its Settings > Danger Zone) or name '
            "another fork in the manifest; nothing was written"
        )
    if not creates:
        return RepoVerdict()
    return _who_may_open(upstream_name, up)


def _who_may_open(name: str, up: RepoRef) -> RepoVerdict:
    writer = up.can_push
    if up.has_pull_requests is False:
        return RepoVerdict(
            f"{name} has pull requests turned off (has_pull_requests: false): GitHub would "
            "refuse the PR after the push; nothing was written"
        )
    policy = up.pull_request_creation_policy
    if policy == "collaborators_only" and not writer:
        return RepoVerdict(
            f"{name} lets only collaborators open pull requests (pull_request_creation_policy: "
            "collaborators_only) and the token's user has no write access there: GitHub would "
            'answer the PR 422 "must be a collaborator" after the push; ask a maintainer to '
            "open it, or for access; nothing was written"
        )
    said = (
        f"who may open PRs on {name}: {policy}" if policy else
        f"who may open PRs on {name}: not stated (its answer has no pull_request_creation_policy)"
    )  # fmt: skip
    if writer:
        return RepoVerdict(lines=(f"{said}; the token's user is a collaborator there",))
    return RepoVerdict(lines=(
        said,
        f"not known: {name}'s interaction limits and its cap on open PRs per contributor "
        "(GitHub's interaction-limits endpoints need admin rights on the repository); either "
        "could make GitHub refuse the PR after the push",
    ))  # fmt: skip
