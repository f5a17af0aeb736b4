"""Phase 4: the run-wide checks before any write, pure over the plans and the run's facts.

The token must be the forks' owner's; no entry may push its fork's default branch (unless
asked); the token's kind and scopes must cover every planned write (else that entry is
refused, so the run writes nothing); the base branch's rules are judged for each new head.
"""

from __future__ import annotations

import dataclasses

from patchcarry import tokens
from patchcarry.errors import FatalError
from patchcarry.resubmit import capability, rules
from patchcarry.resubmit.decide import Plan, Refusal
from patchcarry.resubmit.observe import Observed, RunFacts
from patchcarry.resubmit.options import Options
from patchcarry.resubmit.plan import PLANNED, UNCHANGED


def gate(journeys: list[tuple[Observed, Plan]], facts: RunFacts, opts: Options) -> list[Plan]:
    """The plans with the token's and the rules' verdicts added; raises when the run as a
    whole must stop (a foreign token, a default branch)."""
    entries = [seen.entry for seen, _ in journeys]
    if facts.token:
        wrong = [e for e in entries if e.fork_owner.lower() != facts.login.lower()]
        if wrong:  # a check of ours, not an API refusal (exit 1): the PR is its owner's
            raise FatalError(
                f"{tokens.variable()} belongs to {facts.login}, but {wrong[0].name}'s fork is "
                f"{wrong[0].fork}: only {wrong[0].fork_owner}'s token can push there. If the "
                "entry is yours, run with that account's token; if it is someone else's, it is "
                "theirs to re-submit (`patchcarry scan --all` lists your own closed PRs)"
            )
    if not opts.allow_default_branch:
        for entry in entries:
            default = facts.defaults.get(entry.name)
            if default is not None and entry.head_branch == default:
                raise FatalError(
                    f"{entry.name}: head_branch {entry.head_branch!r} is {entry.fork}'s "
                    "default branch; a force-push would rewrite it. Set another head_branch "
                    "in the manifest, or pass --allow-default-branch if you mean it"
                )
    return [_judge(seen, plan, facts) for seen, plan in journeys]


def _judge(seen: Observed, plan: Plan, facts: RunFacts) -> Plan:
    """The token and the base branch's rules against one entry's planned writes."""
    if plan.pull is None or plan.action not in (PLANNED, UNCHANGED):
        return plan  # refused or merged before its writes were planned
    api_writes = any(not w.call.startswith("git ") for w in plan.writes)
    workflow = plan.push.workflow if plan.push is not None else None
    shown, refusal = capability.judge(
        facts.token_kind, facts.scopes, login=facts.login, upstream=plan.entry.upstream,
        api_writes=api_writes, workflow=workflow,
    )  # fmt: skip
    scopes = ", ".join(shown["scopes"]) if shown["scopes"] is not None else "not shown"
    needs = "; ".join(shown["needs"]) or "nothing"
    line = f"token: {shown['kind'] or 'none'} (scopes: {scopes}); the writes need: {needs}"
    plan = dataclasses.replace(plan, token=shown, facts=(*plan.facts, line))
    if refusal:
        plan = dataclasses.replace(plan, refusal=Refusal(refusal))
    if plan.push is None:
        return plan
    judged = rules.judge(None if seen.rules is None else list(seen.rules), plan.entry.base_branch)
    return dataclasses.replace(plan, rules=judged, facts=(*plan.facts, *rules.lines(judged)))
