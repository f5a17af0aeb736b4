"""The plan without any API read (`--offline`): the offline check, and the writes the manifest
implies, each marked unverified."""

from __future__ import annotations

from patchcarry import install
from patchcarry.check import render
from patchcarry.check.report import CheckReport
from patchcarry.manifest import Entry
from patchcarry.resubmit.plan import REFUSED, EntryPlan, Write

HEADLINE = (
    "OFFLINE: no GitHub API reads were made; the plan below follows from the manifest "
    "alone and nothing was written."
)


def offline_plan(entries: list[Entry], report: CheckReport) -> list[EntryPlan]:
    """Per entry: the check's sentences, what could not be verified, the implied writes."""
    return [_entry(entry, report) for entry in entries]


def _entry(entry: Entry, report: CheckReport) -> EntryPlan:
    plan = EntryPlan(
        entry.name, f"{entry.upstream} {entry.base_branch} <- {entry.fork}:{entry.head_branch}"
    )
    plan.facts.extend(f"check: {x}" for x in render.sentences(report.entry(entry.name), entry))
    plan.pr = entry.pr
    if report.entry(entry.name).status == "does not apply":
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
    plan.writes.append(
        Write(
            f"git push {entry.fork} <update>:refs/heads/{entry.head_branch}",
            "a new branch (pinned base + patches), or commits added on top of what is there; "
            "no commit dropped without --rewrite; nothing when it already holds the patches, "
            "nor on an open PR whose head holds the fix without --update-live",
        )
    )
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
    plan.writes.extend(
        Write(
            f"POST /repos/{entry.upstream}/issues/{n}/comments",
            "cross-link, only if not there yet",
        )
        for n in entry.supersedes
    )
    return plan
