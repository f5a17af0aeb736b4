"""GitHub reads for one run, each once; reads checking a write did not happen go direct."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

from patchcarry.github_types import (
    BranchRef,
    CommentRef,
    EventRef,
    Forge,
    PullRef,
    RepoRef,
    RuleRef,
)
from patchcarry.pulls import classify

T = TypeVar("T")


class Reads:
    """Memoized GET verbs over one forge's client."""

    def __init__(self, gh: Forge) -> None:
        self.gh = gh
        self.host = gh.host
        self._memo: dict[tuple[str, ...], Any] = {}

    def _once(self, read: Callable[..., T], repo: str, *more: str | int, **kw: str) -> T:
        """`read(repo, ...)`, asked once per run (a repository's name in any case is one)."""
        key = (read.__name__, repo.lower(), *map(str, more), *kw.values())
        if key not in self._memo:
            self._memo[key] = read(repo, *more, **kw)
        return cast(T, self._memo[key])

    def repo(self, full_name: str) -> RepoRef | None:
        return self._once(self.gh.repo, full_name)

    def pull(self, upstream: str, number: int) -> PullRef:
        return self._once(self.gh.pull, upstream, number)

    def events(self, upstream: str, number: int) -> list[EventRef]:
        return self._once(self.gh.issue_events, upstream, number)

    def comments(self, upstream: str, number: int) -> list[CommentRef]:
        return self._once(self.gh.issue_comments, upstream, number)

    def branch(self, upstream: str, branch: str) -> BranchRef | None:
        return self._once(self.gh.branch, upstream, branch)

    def branch_rules(self, upstream: str, branch: str) -> list[RuleRef]:
        return self._once(self.gh.branch_rules, upstream, branch)

    def open_pulls(self, upstream: str, head: str, base: str) -> list[PullRef]:
        return self._once(self.gh.pulls, upstream, state="open", head=head, base=base)


def pull_state(reads: Reads, upstream: str, number: int) -> classify.Classification:
    """Classify PR `number`; its events and head repository are read only when closed unmerged."""
    pull = reads.pull(upstream, number)
    if pull.state == "open" or pull.merged or pull.merged_at:
        return classify.classify(pull, [], None, upstream)
    head_repo = reads.repo(pull.head_repo) if pull.head_repo else None
    top = classify.root(reads, upstream) if head_repo and head_repo.fork else None
    return classify.classify(pull, reads.events(upstream, number), head_repo, upstream, top)


def read_pull_state(gh: Forge, upstream: str,
                    number: int) -> tuple[PullRef, classify.Classification]:  # fmt: skip
    """The PR and its classification, read once each."""
    reads = Reads(gh)
    return reads.pull(upstream, number), pull_state(reads, upstream, number)
