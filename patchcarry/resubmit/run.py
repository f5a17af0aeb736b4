"""Runs resubmit for the selected entries: every preflight (reads only) for all of them first,
then the writes, entry by entry. Returns the plans; the command prints them."""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from patchcarry import cachedir, install, manifest
from patchcarry import upstream as upstream_mod
from patchcarry.check import render
from patchcarry.check.report import CheckReport
from patchcarry.check.run import run_checks
from patchcarry.errors import BadInputError, ExitCode, GitHubError, UpstreamError, UsageError
from patchcarry.manifest import Entry
from patchcarry.resubmit import capability, execute, flow, preflight, rules, workflow_scope
from patchcarry.resubmit.fork import ForkStatus
from patchcarry.resubmit.live import Cache
from patchcarry.resubmit.plan import PLANNED, REFUSED, EntryPlan, Write
from patchcarry.resubmit.reads import Reads

if TYPE_CHECKING:
    from patchcarry.github import GitHub


@dataclasses.dataclass
class Outcome:
    plans: list[EntryPlan]
    dry_run: bool
    headline: str
    exit_code: int


def token_from_env() -> str | None:
    """GITHUB_TOKEN (the only place a token is read); never echoed, logged or stored."""
    return os.environ.get("GITHUB_TOKEN") or None


def _applies(report: CheckReport, entry: Entry) -> bool:
    return report.entry(entry.name).status != "does not apply"


def offline_plan(entries: list[Entry], opts: flow.Options, report: CheckReport) -> Outcome:
    """No API reads: the offline check, and the writes the manifest implies, unverified."""
    plans = []
    for entry in entries:
        plan = EntryPlan(
            entry.name, f"{entry.upstream} {entry.base_branch} <- {entry.fork}:{entry.head_branch}"
        )
        plan.facts.extend(f"check: {x}" for x in render.sentences(report.entry(entry.name), entry))
        plan.pr = entry.pr
        if not _applies(report, entry):
            plan.action, plan.reason = (
                REFUSED,
                f"check failed: run {install.command('check')} --offline {entry.name}",
            )
        plan.unverified = [
            "state of "
            + ", ".join(f"#{n}" for n in (*entry.supersedes, *([entry.pr] if entry.pr else [])))
            + " (open/merged/closed, and by whom)",
            f"that {entry.fork} exists and is an attached fork of {entry.upstream}",
            f"what the fork's {entry.head_branch} holds; the pinned base on {entry.upstream}",
        ]
        if entry.pr:
            plan.writes.append(
                Write(
                    f"PATCH /repos/{entry.upstream}/pulls/{entry.pr}",
                    "only the tool's section of the body, the title only if the manifest's "
                    "changed; nothing when they are current, nor on a description without the "
                    "tool's section while nothing is pushed",
                )
            )
        else:
            plan.writes.append(Write(f"POST /repos/{entry.upstream}/pulls", "draft"))
        plan.writes.insert(
            0,
            Write(
                f"git push {entry.fork} <update>:refs/heads/{entry.head_branch}",
                "a new branch (pinned base + patches), or commits added on top of what is there; "
                "no commit dropped without --rewrite; nothing when it already holds the patches, "
                "nor on an open PR whose head holds the fix without --update-live",
            ),
        )
        plan.writes.extend(
            Write(
                f"POST /repos/{entry.upstream}/issues/{n}/comments",
                "cross-link, only if not there yet",
            )
            for n in entry.supersedes
        )
        plans.append(plan)
    headline = (
        "OFFLINE: no GitHub API reads were made; the plan below follows from the manifest "
        "alone and nothing was written."
    )
    return Outcome(plans, True, headline, ExitCode.OK if report.ok else report.exit_code)


def resubmit(
    entries: list[Entry],
    opts: flow.Options,
    *,
    offline: bool,
    make_github: Callable[[str | None], GitHub],
    say: Callable[[str], None],
) -> Outcome:
    token = token_from_env()
    dry_run = opts.dry_run or token is None
    why = "--dry-run" if opts.dry_run else "no GITHUB_TOKEN set"
    if not dry_run and opts.manifest_path is not None:
        manifest.check_writable(opts.manifest_path)  # before any read: it records the PR
    if offline:
        return offline_plan(entries, opts, run_checks(entries, offline=True))
    gh = make_github(token)
    reads = Reads(gh)
    login = ""
    if token is not None:
        login = gh.user().get("login", "")
        wrong = [e for e in entries if e.fork_owner.lower() != login.lower()]
        if wrong:
            raise GitHubError(
                f"GITHUB_TOKEN belongs to {login}, but {wrong[0].name}'s fork is {wrong[0].fork}: "
                "use that owner's token, or --fork OWNER/NAME"
            )
    upstreams = {e.upstream for e in entries}
    if len(upstreams) > 1 and opts.upstream_url:
        raise UsageError("--upstream-url names one repository, but the entries use several")
    url = opts.upstream_url
    if url is None:
        repo = reads.repo(sorted(upstreams)[0])
        if repo is None:
            raise UpstreamError(f"{sorted(upstreams)[0]} not found on {gh.host}")
        url = repo.get("clone_url")
        if not url:
            raise UpstreamError(f"{sorted(upstreams)[0]} has no clone_url; pass --upstream-url")
    report = run_checks(entries, upstream=url)
    assert report.cache is not None  # an upstream check always has its cache
    # The check's blob-less cache already holds the bases and tips: live branches are read there.
    cache = Cache(Path(report.cache))
    opts = dataclasses.replace(opts, upstream_url=url, login=login)
    plans: list[EntryPlan] = []
    works: list[flow.Work] = []
    preflight.refuse_default_branches(reads, entries, allow=opts.allow_default_branch)
    classes = flow.classify_all(reads, entries, opts.manifest_path)
    with contextlib.ExitStack() as stack:
        # Live branches are fetched into the check's cache and patched there: hold its lock
        # until the last write, so a second run waits instead of racing on the same repo.
        stack.enter_context(cachedir.locked(cache.repo))
        for entry in entries:
            lines = render.sentences(report.entry(entry.name), entry)
            if not _applies(report, entry):
                plan = EntryPlan(
                    entry.name,
                    f"{entry.upstream} {entry.base_branch} <- {entry.fork}:{entry.head_branch}",
                    action=REFUSED,
                )
                plan.facts.extend(f"check: {x}" for x in lines)
                plan.reason = f"check failed: run {install.command('check')} {entry.name}"
                plans.append(plan)
                continue
            plan, work = flow.prepare(reads, entry, opts, lines, classes, cache, stack)
            plans.append(plan)
            if work is not None:
                works.append(work)
        cost = {
            "api_reads": gh.reads,
            # what the check fetched, plus what reading the live branches added since
            "bytes_fetched": (report.bytes_fetched or 0)
            + upstream_mod.object_bytes(cache.repo)
            - (report.cache_bytes or 0),
        }
        for plan in plans:
            plan.cost = cost
        for work in works:  # before the first write: can this token finish the run?
            _judge_token(gh, reads, work, login, str(url))
            if work.target is not None:  # what the new head will need on the base branch
                judged = rules.read(reads, work.entry.upstream, work.entry.base_branch)
                work.plan.rules = judged
                work.plan.facts.extend(rules.lines(judged))
        refused = [p for p in plans if p.action == REFUSED]
        if dry_run or refused:
            for plan, entry in zip(plans, entries, strict=True):
                plan.action = flow.planned_action(plan)
                if token is None:
                    plan.unverified.append(
                        f"that a token for {entry.fork_owner} can write (no GITHUB_TOKEN set)"
                    )
            head = f"DRY RUN ({why}): every read was made; nothing was written."
            if refused and not dry_run:
                head = "REFUSED: a preflight failed, so nothing was written (see reasons)."
            code = ExitCode.FAILED if refused else ExitCode.OK
            return Outcome(plans, True, head, code)
        forks: dict[str, ForkStatus] = {}
        for work in works:
            if not work.plan.writes:
                work.plan.action = flow.planned_action(work.plan)  # a no-op: nothing to redo
                continue
            execute.execute(gh, work, opts, login=login, forks=forks, say=say)
    total = sum(len(p.writes) for p in plans)
    return Outcome(plans, False, f"DONE: {total} write(s) made.", ExitCode.OK)


def _judge_token(gh: GitHub, reads: Reads, work: flow.Work, login: str, url: str) -> None:
    """Show the token's kind and scopes against what the entry's writes need; refuse the
    entry (so the run writes nothing) when GitHub would refuse one of them part-way."""
    plan = work.plan
    api_writes = any(not w.call.startswith("git ") for w in plan.writes)
    workflow = workflow_scope.needs_scope(work, reads, url)
    shown, refusal = capability.judge(
        gh.token_kind, gh.scopes, login=login, upstream=work.entry.upstream,
        api_writes=api_writes, workflow=workflow,
    )  # fmt: skip
    plan.token = shown
    scopes = ", ".join(shown["scopes"]) if shown["scopes"] is not None else "not shown"
    needs = "; ".join(shown["needs"]) or "nothing"
    plan.facts.append(
        f"token: {shown['kind'] or 'none'} (scopes: {scopes}); the writes need: {needs}"
    )
    if refusal:
        plan.action, plan.reason = REFUSED, refusal


def load_evidence(path: Path | None) -> str | None:
    """Markdown for the body's "Measured impact" section from an evidence file, if given."""
    if path is None:
        return None
    if not path.is_file():
        measure = install.command("measure")
        raise BadInputError(f"--evidence {path}: no such file; run {measure} first")
    from patchcarry.measure import evidence  # only when asked: the measure stack is heavy

    return str(evidence.render_markdown_table(evidence.load(path)))


__all__ = ["Outcome", "PLANNED", "resubmit", "load_evidence"]
