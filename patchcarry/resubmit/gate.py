"""Phase 4 (run.py): run-wide checks before any write, pure: the token, the fork, the rules."""

from __future__ import annotations

import dataclasses

from patchcarry import tokens
from patchcarry.errors import FatalError
from patchcarry.github import ACTIONS, APP_USER, CLASSIC, FINE_GRAINED, OAUTH
from patchcarry.github_types import RuleRef
from patchcarry.resubmit import model, repo_rules
from patchcarry.resubmit.model import Action, CreatePull, Options, Plan, Refusal, RulesJudged
from patchcarry.resubmit.observe import Observed, RunFacts


def gate(journeys: list[tuple[Observed, Plan]], facts: RunFacts, opts: Options) -> list[Plan]:
    """The plans with the token's and the rules' verdicts added; raises when the run must stop."""
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
    if plan.pull is None or plan.action not in (Action.PLANNED, Action.UNCHANGED):
        return plan  # refused or merged before its writes were planned
    api_writes = any(w.api for w in plan.writes)
    workflow = plan.push.workflow if plan.push is not None else None
    shown, refusal = judge_token(
        facts.token_kind, facts.scopes, login=facts.login, upstream=plan.entry.upstream,
        api_writes=api_writes, workflow=workflow,
    )  # fmt: skip
    scopes = ", ".join(shown["scopes"]) if shown["scopes"] is not None else "not shown"
    needs = "; ".join(shown["needs"]) or "nothing"
    line = f"token: {shown['kind'] or 'none'} (scopes: {scopes}); the writes need: {needs}"
    plan = dataclasses.replace(plan, token=shown, facts=(*plan.facts, line))
    if refusal:
        plan = dataclasses.replace(plan, refusal=Refusal(refusal))
    plan = _judge_repos(seen, plan)
    if plan.push is None:
        return plan
    protected = bool(seen.classic and seen.classic.protected)
    rules = None if seen.rules is None else list(seen.rules)
    judged = judge_rules(rules, plan.entry.base_branch, classic=classic_checks(seen),
                         protected=protected)  # fmt: skip
    return dataclasses.replace(plan, rules=judged, facts=(*plan.facts, *rule_lines(judged)))


def _judge_repos(seen: Observed, plan: Plan) -> Plan:
    """An archived repo, or an upstream taking no PR from this user: refused before any write."""
    if not plan.writes or plan.refusal is not None:
        return plan
    creates = any(isinstance(w, CreatePull) for w in plan.writes)
    entry = plan.entry
    verdict = repo_rules.judge(entry.upstream, seen.upstream_repo, entry.fork, seen.fork_repo,
                               creates=creates)  # fmt: skip
    plan = dataclasses.replace(plan, facts=(*plan.facts, *verdict.lines))
    if verdict.refusal:
        plan = dataclasses.replace(plan, refusal=Refusal(verdict.refusal))
    return plan


# A fine-grained, App or Actions token reaches only repositories its owner granted: upstream
# answers its writes 403, after the push has landed.
_NO_SCOPES = {FINE_GRAINED: "Resource not accessible by personal access token",
              APP_USER: "Resource not accessible by integration",
              ACTIONS: "Resource not accessible by integration"}  # fmt: skip


def judge_token(
    kind: str | None, scopes: frozenset[str] | None, *, login: str, upstream: str,
    api_writes: bool, workflow: str | None,
) -> tuple[model.TokenShown, str]:  # fmt: skip
    """(what the plan shows about the token, the one-line refusal or "")."""
    needed: dict[str, str] = {}  # scope -> what the run needs it for, in words
    if api_writes:
        needed["public_repo"] = f"public_repo (open/refresh the PR on {upstream})"
    if workflow:
        needed["workflow"] = f"workflow ({workflow})"
    listed = sorted(scopes) if scopes is not None else None
    shown: model.TokenShown = {"kind": kind, "scopes": listed, "needs": list(needed.values())}
    if kind is None:
        return shown, ""
    owner = upstream.split("/")[0]
    if kind in _NO_SCOPES and api_writes and owner.lower() != login.lower():
        return shown, (
            f"{tokens.variable()} is a {kind} token: GitHub answers its writes on {upstream} (not "
            f'{login}\'s) with 403 "{_NO_SCOPES[kind]}", so the PR could not be opened or '
            "refreshed after the push; use a classic token with the public_repo and workflow "
            "scopes (docs/operations.md)"
        )
    if kind not in (CLASSIC, OAUTH) or scopes is None:
        return shown, ""
    missing = []
    if api_writes and not scopes & {"repo", "public_repo"}:
        missing.append("public_repo")
    if workflow and "workflow" not in scopes:
        missing.append("workflow")
    if not missing:
        return shown, ""
    why = "; ".join(needed[scope] for scope in missing)
    have = ", ".join(sorted(scopes)) or "none"
    return shown, (
        f"{tokens.variable()} ({kind}, scopes: {have}) lacks the {' and '.join(missing)} scope: "
        f"{why}; GitHub would refuse it part-way. Add the scope (classic token settings, or "
        f"`gh auth refresh -s {','.join(missing)}`), then re-run"
    )


_SIGNED_OFF = "satisfied: every commit the tool writes is signed off by its author"


def classic_checks(seen: Observed) -> list[str] | None:
    """The base branch's classic protection's required checks, as anyone reads them (None: not)."""
    if seen.classic is None:
        return None
    return list(seen.classic.contexts) if seen.classic.protected else []


def _classic_line(branch: str, classic: list[str] | None, protected: bool) -> str:
    """What the plan says of classic protection (its other settings are shown to admins only)."""
    if classic is None:
        return f"classic branch protection: not read (GET branches/{branch} answered 404)"
    if not protected:
        return f"classic branch protection: none on {branch}"
    return (
        f"classic branch protection on {branch}: required checks: "
        f"{', '.join(classic) or 'none'} (its other settings are shown to admins only)"
    )


def judge_rules(
    rules: list[RuleRef] | None, branch: str, *, classic: list[str] | None = None,
    protected: bool = False,
) -> RulesJudged:  # fmt: skip
    """What the new head needs on `branch`, and the tool's own commits' verdict (None: not read)."""
    readable = rules is not None
    rules = rules or []
    checks: list[str] = list(classic or [])
    kinds: set[str] = set()
    for rule in rules:
        kinds.add(rule.type)
        checks.extend(c.context for c in rule.checks if c.context)
    verdicts: dict[str, str] = {}
    for name in dict.fromkeys(checks):
        dco = "dco" in name.lower()
        verdicts[f"check {name}"] = _SIGNED_OFF if dco else "decided by upstream's CI"
    if "required_signatures" in kinds:
        verdicts["signed commits"] = (
            "NOT satisfied: the tool's commits are unsigned (no key is given to it); GitHub "
            "lets only the PR's author squash-merge into such a branch (and GitHub Enterprise "
            "Server no merge on GitHub at all): a maintainer would merge it locally, signed"
        )
    if "required_linear_history" in kinds:
        verdicts["linear history"] = "satisfied by the tool's commits (it writes no merges)"
    judged = {"required_status_checks", "required_signatures", "required_linear_history"}
    return {"branch": branch, "required_status_checks": list(dict.fromkeys(checks)),
            "required_signatures": "required_signatures" in kinds,
            "required_linear_history": "required_linear_history" in kinds,
            "other": sorted(kinds - judged), "verdicts": verdicts, "readable": readable,
            "classic": classic, "protected": protected}  # fmt: skip


def rule_lines(judged: RulesJudged) -> list[str]:
    """The plan's sentences for the judged rules."""
    head = f"rules for {judged['branch']}:"
    classic = _classic_line(judged["branch"], judged.get("classic"), judged.get("protected", False))
    if not judged.get("readable", True):
        return [f"{head} not readable (GET rules/branches answered 404: this GitHub serves no "
                f"rulesets, e.g. an older GitHub Enterprise Server); {classic}; what else the new "
                "head needs there is not known"]  # fmt: skip
    if not judged["verdicts"] and not judged["other"]:
        return [f"{head} no ruleset rule active; {classic}"]
    out = [f"{head} {name}: {verdict}" for name, verdict in judged["verdicts"].items()]
    if judged["other"]:
        out.append(f"{head} also {', '.join(judged['other'])} (not judged here)")
    out.append(f"{head} {classic}")
    return out
