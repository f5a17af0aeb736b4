"""The values resubmit's phases pass along (the journey itself: run.py): what the user asked
(`Options`), one entry's decision (`Plan` and its writes), what the write phase did
(`Record`), and the printed plan (`EntryPlan`, as text or JSON)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from patchcarry.github import Json
from patchcarry.manifest import Entry
from patchcarry.pulls.classify import Classification
from patchcarry.resubmit import fork


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


CREATED, REFRESHED, UNCHANGED = "created", "refreshed", "unchanged"
MERGED, REFUSED, PLANNED = "merged", "refused", "planned"


@dataclasses.dataclass
class Write:
    """One write call: made, or planned in a dry run."""

    call: str  # "POST /repos/NVIDIA/Megatron-LM/pulls" or "git push ..."
    what: str  # a few words for the reader

    def line(self) -> str:
        return f"{self.call}  ({self.what})" if self.what else self.call


@dataclasses.dataclass
class EntryPlan:
    entry: str
    target: str  # "NVIDIA/Megatron-LM dev <- htesd/Megatron-LM-oss:branch"
    action: str = PLANNED
    pr: int | None = None
    url: str | None = None
    superseded: list[Classification] = dataclasses.field(default_factory=list)
    facts: list[str] = dataclasses.field(default_factory=list)  # what the reads established
    unverified: list[str] = dataclasses.field(default_factory=list)  # what could not be read
    writes: list[Write] = dataclasses.field(default_factory=list)
    reason: str = ""  # why refused / merged
    branch: dict[str, Any] | None = None  # what happens to the fork branch, and why
    cost: dict[str, int] | None = None  # the run's API reads and bytes fetched
    token: dict[str, Any] | None = None  # the token's kind, scopes, what the writes need
    rules: dict[str, Any] | None = None  # upstream's rules for the base branch, judged

    def to_json(self) -> dict[str, Any]:
        return {
            "entry": self.entry,
            "action": self.action,
            "pr": self.pr,
            "url": self.url,
            "superseded": [c.to_json() for c in self.superseded],
            "writes": [w.call for w in self.writes],
            "facts": self.facts,
            "unverified": self.unverified,
            "reason": self.reason,
            "branch": self.branch,
            "cost": self.cost,
            "token": self.token,
            "rules": self.rules,
        }


def render_text(plans: list[EntryPlan], *, dry_run: bool, headline: str = "") -> str:
    """The plan a maintainer reads in ten seconds: one block per entry, writes last."""
    out: list[str] = [headline] if headline else []
    for plan in plans:
        pr = f"  PR #{plan.pr}" if plan.pr else ""
        out.append(f"{plan.entry}: {plan.action.upper()}{pr}  {plan.url or ''}".rstrip())
        out.append(f"  {plan.target}")
        if plan.reason:
            out.append(f"  reason: {plan.reason}")
        for item in plan.superseded:
            out.append(f"  #{item.number}: {item.state}")
            out.extend(f"      - {line}" for line in item.evidence)
        out.extend(f"  {fact}" for fact in plan.facts)
        for line in plan.unverified:
            out.append(f"  NOT VERIFIED: {line}")
        label = "would write" if dry_run or plan.action in (PLANNED, REFUSED) else "wrote"
        if plan.writes:
            out.append(f"  {label}:")
            out.extend(f"    {n}. {w.line()}" for n, w in enumerate(plan.writes, 1))
        else:
            out.append(f"  {label}: nothing")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def render_json(plans: list[EntryPlan]) -> str:
    """One JSON object per entry, one per line."""
    return "".join(json.dumps(p.to_json(), sort_keys=True) + "\n" for p in plans)


@dataclasses.dataclass(frozen=True)
class Refusal:
    """The one way an entry is refused: why, in one line (nothing of the run is written)."""

    reason: str


@dataclasses.dataclass(frozen=True)
class Push:
    """The atomic push of the branch and its publication record, leased on what was read."""

    target: str
    push_from: Path
    live: str | None  # lease of the branch (None: it must not exist)
    published: str | None  # lease of the publication record
    own_record: str | None  # lease of this entry's publisher ref
    kind: str  # the branch's change (branch.NEW, FAST_FORWARD, REWRITE)
    workflow: str | None  # why it needs the `workflow` scope


@dataclasses.dataclass(frozen=True)
class PullWrite:
    """The PR's create (`existing` None) or edit, and what goes in it."""

    existing: Json | None
    title: str | None  # None: the title is left as it is
    body: str
    section: str  # the tool's section alone (merged into a PR found after a create's 422)


@dataclasses.dataclass(frozen=True)
class Plan:
    """One entry's decision, printable before anything is written."""

    entry: Entry
    facts: tuple[str, ...]
    writes: tuple[Write, ...] = ()
    superseded: tuple[Classification, ...] = ()
    pr: int | None = None
    url: str | None = None
    refusal: Refusal | None = None
    merged: str = ""  # why there is nothing to do (a merged PR)
    branch: dict[str, Any] | None = None
    fork: fork.ForkStatus | None = None
    push: Push | None = None
    pull: PullWrite | None = None
    links: tuple[int, ...] = ()  # superseded PRs that get a cross-link
    token: dict[str, Any] | None = None  # set by the gate
    rules: dict[str, Any] | None = None  # set by the gate

    @property
    def action(self) -> str:
        if self.refusal is not None:
            return REFUSED
        if self.merged:
            return MERGED
        return PLANNED if self.writes else UNCHANGED

    @property
    def executable(self) -> bool:
        """Whether the write phase has anything to carry out."""
        return self.pull is not None and self.action == PLANNED

    def target(self) -> str:
        e = self.entry
        return f"{e.upstream} {e.base_branch} <- {e.fork}:{e.head_branch}"

    def shown(self, cost: dict[str, int] | None, unverified: list[str]) -> EntryPlan:
        """The printed plan (a dry run, a refusal, or an entry with nothing to write)."""
        return EntryPlan(
            self.entry.name, self.target(), action=self.action, pr=self.pr, url=self.url,
            superseded=list(self.superseded), facts=list(self.facts), unverified=unverified,
            writes=list(self.writes), reason=self.refusal.reason if self.refusal else self.merged,
            branch=self.branch, cost=cost, token=self.token, rules=self.rules,
        )  # fmt: skip


def push_call(fork_name: str, entry: Entry, commit: str) -> str:
    return f"git push {fork_name} {commit[:12]}:refs/heads/{entry.head_branch}"


@dataclasses.dataclass(frozen=True)
class Record:
    """What the write phase did for one entry, after its writes succeeded."""

    plan: Plan
    action: str  # CREATED, REFRESHED or UNCHANGED
    pr: int
    url: str | None
    made: tuple[str, ...]  # the write calls made, in order
    facts: tuple[str, ...]
    rules: dict[str, Any] | None

    def shown(self, cost: dict[str, int] | None) -> EntryPlan:
        plan = self.plan
        return EntryPlan(
            plan.entry.name, plan.target(), action=self.action, pr=self.pr, url=self.url,
            superseded=list(plan.superseded), facts=list(self.facts),
            writes=[Write(call, "") for call in self.made], branch=plan.branch, cost=cost,
            token=plan.token, rules=self.rules,
        )  # fmt: skip
