"""The values resubmit's phases pass along: options, plan, typed writes, record, output."""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar, Literal, NotRequired, TypedDict

from patchcarry import limits
from patchcarry.git.sha import short
from patchcarry.github_types import PullRef
from patchcarry.manifest import Entry
from patchcarry.pulls.classify import Classification
from patchcarry.resubmit import fork
from patchcarry.resubmit.branch import BranchKind, record_ref


@dataclasses.dataclass(frozen=True)
class Options:
    dry_run: bool
    force: bool = False
    rebase: bool = False
    rewrite: bool = False
    upstream_url: str | None = None  # --upstream-url (None: the API's clone_url)
    evidence: Path | None = None  # --evidence (rendered per entry after the check)
    manifest_path: Path | None = None
    example: bool = False  # the example manifest: planned without the user's token
    allow_default_branch: bool = False
    update_live: bool = False  # push tests/a revision onto a live PR whose head holds the fix
    fork_wait: float = limits.FORK_WAIT_S  # a fork GitHub is still creating (seconds)
    sleep: Callable[[float], None] | None = None
    progress: Callable[[str], None] | None = None  # long waits, said on stderr (not with --json)


class TokenShown(TypedDict):
    """What the plan shows about the token: its kind, scopes, and what the writes need."""

    kind: str | None
    scopes: list[str] | None
    needs: list[str]


class DcoShown(TypedDict):
    """The new head's DCO check runs, read once after the push (None: none reported)."""

    sha: str
    dco: dict[str, str | None] | None


class RulesJudged(TypedDict):
    """Upstream's rules for the base branch, and the verdict on the tool's own commits."""

    branch: str
    required_status_checks: list[str]
    required_signatures: bool
    required_linear_history: bool
    other: list[str]
    verdicts: dict[str, str]
    readable: bool
    # classic branch protection, as anyone may read it: its required checks (None: the
    # branch answered 404; the rest of a classic protection is shown to admins only)
    classic: NotRequired[list[str] | None]
    protected: NotRequired[bool]  # the branch's `protected` flag (classic protection)
    after_push: NotRequired[DcoShown]


class Action(enum.StrEnum):
    """What a run did, or would do, for one entry."""

    CREATED = "created"
    REFRESHED = "refreshed"
    UNCHANGED = "unchanged"
    MERGED = "merged"
    REFUSED = "refused"
    PLANNED = "planned"


@dataclasses.dataclass(frozen=True)
class Write:
    """One write a plan holds or the run made (`implied`: the manifest implies it, none read)."""

    api: ClassVar[bool] = True  # GitHub's REST API takes it (a git push is no API write)
    implied: bool = dataclasses.field(default=False, kw_only=True)

    @property
    def call(self) -> str:
        raise NotImplementedError

    @property
    def what(self) -> str:
        return ""

    def line(self) -> str:
        return f"{self.call}  ({self.what})" if self.what else self.call


@dataclasses.dataclass(frozen=True)
class CreateFork(Write):
    upstream: str
    fork: str

    @property
    def call(self) -> str:
        return f"POST /repos/{self.upstream}/forks"

    @property
    def what(self) -> str:
        return f"create {self.fork}, default branch only"


@dataclasses.dataclass(frozen=True)
class PushBranch(Write):
    """The branch's push (with its publication record, see `Push`); `commit` None: implied."""

    api: ClassVar[bool] = False
    fork: str
    branch: str
    commit: str | None
    lease: str | None = None  # the branch's head it is leased on (None: absent)

    @property
    def call(self) -> str:
        commit = short(self.commit) if self.commit else "<update>"
        return f"git push {self.fork} {commit}:refs/heads/{self.branch}"

    @property
    def what(self) -> str:
        if self.implied:
            return (
                "a new branch (pinned base + patches), or commits added on top of what is "
                "there; no commit dropped without --rewrite; nothing when it already holds the "
                "patches, nor on an open PR whose head holds the fix without --update-live"
            )
        lease = short(self.lease) if self.lease else "absent"
        return f"--atomic with {record_ref(self.branch)}; lease: branch {lease}"


@dataclasses.dataclass(frozen=True)
class CreatePull(Write):
    upstream: str
    head: str = ""  # owner:branch
    base: str = ""

    @property
    def call(self) -> str:
        return f"POST /repos/{self.upstream}/pulls"

    @property
    def what(self) -> str:
        return "draft" if self.implied else f"draft PR {self.head} -> {self.base}"


@dataclasses.dataclass(frozen=True)
class EditPull(Write):
    upstream: str
    number: int
    changed: tuple[str, ...] = ()  # "title", "body (the tool's section only)"

    @property
    def call(self) -> str:
        return f"PATCH /repos/{self.upstream}/pulls/{self.number}"

    @property
    def what(self) -> str:
        if self.implied:
            return ("only the tool's section of the body, the title only if the manifest's "
                    "changed; nothing when they are current, nor on a description without the "
                    "tool's section while nothing is pushed")  # fmt: skip
        return " and ".join(self.changed)


@dataclasses.dataclass(frozen=True)
class PostComment(Write):
    upstream: str
    number: int
    kind: Literal["revision", "cross-link"]

    @property
    def call(self) -> str:
        return f"POST /repos/{self.upstream}/issues/{self.number}/comments"

    @property
    def what(self) -> str:
        if self.kind == "revision":
            return "revision comment"
        return "cross-link, only if not there yet" if self.implied else "cross-link to the new PR"


@dataclasses.dataclass(frozen=True)
class Outlook:
    """A fact about what follows a planned write: shown in the plan, left out of the record."""

    text: str

    def __str__(self) -> str:
        return self.text


@dataclasses.dataclass
class EntryPlan:
    entry: str
    target: str  # "NVIDIA/Megatron-LM dev <- htesd/Megatron-LM-oss:branch"
    action: Action = Action.PLANNED
    pr: int | None = None
    url: str | None = None
    superseded: list[Classification] = dataclasses.field(default_factory=list)
    facts: list[str] = dataclasses.field(default_factory=list)  # what the reads established
    unverified: list[str] = dataclasses.field(default_factory=list)  # what could not be read
    writes: list[Write] = dataclasses.field(default_factory=list)
    reason: str = ""  # why refused / merged
    branch: dict[str, object] | None = None  # what happens to the fork branch, and why
    cost: dict[str, int] | None = None  # the run's API reads and bytes fetched
    token: TokenShown | None = None  # the token's kind, scopes, what the writes need
    rules: RulesJudged | None = None  # upstream's rules for the base branch, judged

    def to_json(self) -> dict[str, object]:
        """Every field but `target` (the text form's line); the writes as their calls."""
        shown = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return {k: v for k, v in shown.items() if k != "target"} | {
            "superseded": [c.to_json() for c in self.superseded],
            "writes": [w.call for w in self.writes],
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
        label = (
            "would write" if dry_run or plan.action in (Action.PLANNED, Action.REFUSED) else "wrote"
        )
        if plan.writes:
            out.append(f"  {label}:")
            shown = [w.call if label == "wrote" else w.line() for w in plan.writes]  # calls made
            out.extend(f"    {n}. {line}" for n, line in enumerate(shown, 1))
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
    kind: BranchKind  # NEW, FAST_FORWARD or REWRITE
    workflow: str | None  # why it needs the `workflow` scope
    ci_gate: bool = True  # upstream vets a new head with copy-pr-bot (ci_gate)


@dataclasses.dataclass(frozen=True)
class PullWrite:
    """The PR's create (`existing` None) or edit, and what goes in it."""

    existing: PullRef | None
    title: str | None  # None: the title is left as it is
    body: str
    section: str  # the tool's section alone (merged into a PR found after a create's 422)
    edits: bool = False  # "Allow edits by maintainers" on a created PR (the stated choice)
    edits_change: bool | None = None  # the value to PATCH on the existing PR (None: none)
    locked: bool = False  # the existing PR's conversation is locked: no revision comment


@dataclasses.dataclass(frozen=True)
class Plan:
    """One entry's decision, printable before anything is written."""

    entry: Entry
    facts: tuple[str | Outlook, ...]
    writes: tuple[Write, ...] = ()
    superseded: tuple[Classification, ...] = ()
    pr: int | None = None
    url: str | None = None
    refusal: Refusal | None = None
    merged: str = ""  # why there is nothing to do (a merged PR)
    branch: dict[str, object] | None = None
    fork: fork.ForkStatus | None = None
    push: Push | None = None
    pull: PullWrite | None = None
    links: tuple[int, ...] = ()  # superseded PRs that get a cross-link
    token: TokenShown | None = None  # set by the gate
    rules: RulesJudged | None = None  # set by the gate

    @property
    def action(self) -> Action:
        if self.refusal is not None:
            return Action.REFUSED
        if self.merged:
            return Action.MERGED
        return Action.PLANNED if self.writes else Action.UNCHANGED

    @property
    def executable(self) -> bool:
        """Whether the write phase has anything to carry out."""
        return self.pull is not None and self.action == Action.PLANNED

    def target(self) -> str:
        e = self.entry
        return f"{e.upstream} {e.base_branch} <- {e.fork}:{e.head_branch}"

    def shown(self, cost: dict[str, int] | None, unverified: list[str]) -> EntryPlan:
        """The printed plan (a dry run, a refusal, or an entry with nothing to write)."""
        return EntryPlan(
            self.entry.name, self.target(), action=self.action, pr=self.pr, url=self.url,
            superseded=list(self.superseded), facts=[str(f) for f in self.facts],
            unverified=unverified,
            writes=list(self.writes), reason=self.refusal.reason if self.refusal else self.merged,
            branch=self.branch, cost=cost, token=self.token, rules=self.rules,
        )  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Record:
    """What the write phase did for one entry, after its writes succeeded."""

    plan: Plan
    action: Action  # CREATED, REFRESHED or UNCHANGED
    pr: int
    url: str | None
    made: tuple[Write, ...]  # the writes made, in order
    facts: tuple[str, ...]
    rules: RulesJudged | None

    def shown(self, cost: dict[str, int] | None) -> EntryPlan:
        return dataclasses.replace(
            self.plan.shown(cost, []), action=self.action, pr=self.pr, url=self.url,
            facts=list(self.facts), writes=list(self.made), reason="", rules=self.rules,
        )  # fmt: skip
