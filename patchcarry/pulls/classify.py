"""An upstream PR's state: GitHub closes a PR whose fork leaves the network in the fork
owner's name, so such a close by the PR's author is a detachment, not a withdrawal."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable
from typing import Protocol

from patchcarry.github_types import EventRef, PullRef, RepoRef


class PullState(enum.StrEnum):
    """How a PR stands: open, merged, or closed, and by whom."""

    OPEN = "open"
    MERGED = "merged"
    DETACHED = "closed-by-fork-detachment"
    MAINTAINER = "closed-by-maintainer"
    AUTHOR = "closed-by-author"  # withdrawn by its author while the fork was still attached
    UNKNOWN = "closed-by-unknown"  # no `closed` event with an identifiable actor: never assumed


@dataclasses.dataclass
class Classification:
    number: int
    state: PullState
    url: str
    author: str
    closed_at: str | None
    evidence: list[str]
    head_label: str = ""

    def to_json(self) -> dict[str, object]:
        return {"pr": self.number, "state": self.state, "url": self.url, "evidence": self.evidence}


# GitHub shows a deleted account as the placeholder user `ghost`; an actor may also be null.
_NO_ONE = {"", "ghost"}


def _closer(events: Iterable[EventRef]) -> str | None:
    """Login of whoever closed the PR last; None when there is none or it is null or `ghost`."""
    login = None
    for event in events:
        if event.event == "closed":
            login = None if event.actor.lower() in _NO_ONE else event.actor
    return login


def head_evidence(pull: PullRef, head_repo: RepoRef | None, upstream: str,
                  root: str | None = None) -> list[str]:  # fmt: skip
    """Why the head repository is no longer an attached fork of `upstream` (empty: it is)."""
    name = pull.head_repo
    if name is None:
        return ["head repository is gone (head.repo is null): deleted, private or detached"]
    if head_repo is None:
        return [f"head repository {name} no longer exists"]
    if not head_repo.fork:
        return [f"head repository {name} is no longer a fork (fork: false)"]
    source = head_repo.source
    if source and source.lower() != (root or upstream).lower():
        return [f"head repository {name} is a fork of {source}, not {root or upstream}"]
    return []


def classify(
    pull: PullRef, events: list[EventRef], head_repo: RepoRef | None, upstream: str,
    root: str | None = None,
) -> Classification:  # fmt: skip
    """Classify `pull` from the PR, its issue events and its head repository as it is now."""
    author = pull.author
    result = Classification(pull.number, PullState.OPEN, pull.html_url, author, pull.closed_at,
                            evidence=[], head_label=pull.head_label)  # fmt: skip
    if pull.merged or pull.merged_at:
        result.state = PullState.MERGED
        result.evidence.append(f"merged at {pull.merged_at}")
        return result
    if pull.state == "open":
        return result
    detached = head_evidence(pull, head_repo, upstream, root)
    closer = _closer(events)
    result.evidence.append(f"closed without merge at {pull.closed_at}")
    if closer is not None and closer != author:
        result.state = PullState.MAINTAINER
        result.evidence.append(f"closed by {closer}, not by the author {author}")
        result.evidence.extend(detached)
        return result
    if closer == author:
        result.evidence.append(
            f"close attributed to {author}, the PR's author (GitHub attributes a detachment "
            "auto-close to the fork owner)"
        )
    else:  # a detachment is never assumed: the close may have been anyone's decision
        result.evidence.append(
            "closer unknown (no `closed` event with an identifiable actor): not counted as a "
            "detachment; pass --force to re-submit anyway"
        )
        result.evidence.extend(detached)
        result.state = PullState.UNKNOWN
        return result
    result.evidence.extend(detached)
    result.state = PullState.DETACHED if detached else PullState.AUTHOR
    if not detached:
        result.evidence.append("head repository is still an attached fork: the author withdrew it")
    return result


def add_sibling_evidence(classes: Iterable[Classification]) -> None:
    """Note PRs of the same author closed in the same second (typical of a detachment close)."""
    items = [
        c for c in classes
        if c.closed_at and c.state in (PullState.DETACHED, PullState.AUTHOR, PullState.UNKNOWN)
    ]  # fmt: skip
    for item in items:
        same = sorted(
            {
                o.number
                for o in items
                if o.number != item.number
                and o.author == item.author
                and o.closed_at == item.closed_at
            }
        )
        if same:
            note = f"closed in the same second as {', '.join(f'#{n}' for n in same)} (same author)"
            if note not in item.evidence:
                item.evidence.append(note)


# A PR can come from any repository of upstream's network, so "attached" means a fork whose
# `source` (the network's root) is upstream's root.


class RepoReader(Protocol):
    def repo(self, full_name: str) -> RepoRef | None: ...


def root(reader: RepoReader, upstream: str) -> str:
    """The root of `upstream`'s network: its `source` when a fork, else itself."""
    repo = reader.repo(upstream)
    return (repo.source or upstream) if repo and repo.fork else upstream


def same_network(repo: RepoRef, network_root: str) -> bool:
    """Whether `repo` is a fork in the network rooted at `network_root`."""
    return bool(repo.fork and repo.source and repo.source.lower() == network_root.lower())
