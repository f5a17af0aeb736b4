"""What a run found and did (or would do) per entry, and how it is shown: text or JSON."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from patchcarry.resubmit.classify import Classification

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
