"""GitHub reads for one run, each object read at most once, and the one pull-state reader
that `resubmit` and `scan` share (pull -> its head repository -> classification).

Reads made right before a write to check it has not happened yet (a comment's marker, a PR
after a lost answer) go to `GitHub` directly: they must see the state as it is then.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from patchcarry.github import GitHub
from patchcarry.github_types import Branch, Comment, IssueEvent, Pull, Repo, Rule
from patchcarry.pulls import classify

T = TypeVar("T")


class Reads:
    """Memoized GET verbs over one `GitHub` client."""

    def __init__(self, gh: GitHub) -> None:
        self.gh = gh
        self.host = gh.host
        self._memo: dict[tuple[str, ...], Any] = {}

    def _once(self, key: tuple[str, ...], read: Callable[[], T]) -> T:
        if key not in self._memo:
            self._memo[key] = read()
        result: T = self._memo[key]
        return result

    def repo(self, full_name: str) -> Repo | None:
        found: Repo | None = self._once(
            ("repo", full_name.lower()), lambda: self.gh.repo(full_name)
        )
        return found

    def pull(self, upstream: str, number: int) -> Pull:
        found: Pull = self._once(
            ("pull", upstream, str(number)), lambda: self.gh.pull(upstream, number)
        )
        return found

    def events(self, upstream: str, number: int) -> list[IssueEvent]:
        found: list[IssueEvent] = self._once(
            ("events", upstream, str(number)), lambda: self.gh.issue_events(upstream, number)
        )
        return found

    def comments(self, upstream: str, number: int) -> list[Comment]:
        found: list[Comment] = self._once(
            ("comments", upstream, str(number)), lambda: self.gh.issue_comments(upstream, number)
        )
        return found

    def branch(self, upstream: str, branch: str) -> Branch | None:
        found: Branch | None = self._once(
            ("branch", upstream, branch), lambda: self.gh.branch(upstream, branch)
        )
        return found

    def branch_rules(self, upstream: str, branch: str) -> list[Rule]:
        found: list[Rule] = self._once(
            ("rules", upstream, branch), lambda: self.gh.branch_rules(upstream, branch)
        )
        return found

    def open_pulls(self, upstream: str, head: str, base: str) -> list[Pull]:
        found: list[Pull] = self._once(
            ("pulls", upstream, head, base),
            lambda: self.gh.pulls(upstream, state="open", head=head, base=base),
        )
        return found


def pull_state(reads: Reads, upstream: str, number: int) -> classify.Classification:
    """Classify PR `number`: its issue events and head repository are read only when it is
    closed without merge (an open or merged PR's state needs neither)."""
    pull = reads.pull(upstream, number)
    closed = pull.get("state") != "open" and not (pull.get("merged") or pull.get("merged_at"))
    if not closed:
        return classify.classify(pull, [], None, upstream)
    head = (pull.get("head") or {}).get("repo")
    head_repo = reads.repo(head["full_name"]) if head else None
    top = classify.root(reads, upstream) if head_repo and head_repo.get("fork") else None
    return classify.classify(pull, reads.events(upstream, number), head_repo, upstream, top)


def read_pull_state(gh: GitHub, upstream: str, number: int) -> tuple[Pull, classify.Classification]:
    """The PR and its classification, read once each."""
    reads = Reads(gh)
    return reads.pull(upstream, number), pull_state(reads, upstream, number)
