"""The resubmit flow: read everything and plan (no writes), then, only if every selected entry
passed its preflight and this is not a dry run, make the planned writes in order."""

from __future__ import annotations

import contextlib
import dataclasses
import tempfile
from collections.abc import Callable
from pathlib import Path

from patchcarry import git
from patchcarry.errors import GitHubError, UpstreamError
from patchcarry.github import GitHub, Json, TransientError, UnprocessableError
from patchcarry.manifest import Entry, record_pr
from patchcarry.resubmit import body as bodies
from patchcarry.resubmit import classify, fork, preflight, push
from patchcarry.resubmit.plan import (
    CREATED,
    MERGED,
    PLANNED,
    REFRESHED,
    REFUSED,
    UNCHANGED,
    EntryPlan,
    Write,
)


@dataclasses.dataclass
class Options:
    dry_run: bool
    force: bool = False
    rebase: bool = False
    upstream_url: str | None = None
    evidence_markdown: str | None = None
    manifest_path: Path | None = None
    login: str = ""  # the token's user: only its comments count as this tool's cross-links
    allow_default_branch: bool = False
    fork_attempts: int = 10
    fork_interval: float = 1.0


@dataclasses.dataclass
class _Work:
    """Everything the write phase needs for one entry, gathered by the read phase."""

    entry: Entry
    plan: EntryPlan
    fork: fork.ForkStatus
    scratch: Path
    branch: push.Branch
    fork_sha: str | None
    existing: Json | None  # the open PR found by head label
    title: str
    body: str
    links_needed: list[int]


def _pr_state(gh: GitHub, upstream: str, number: int) -> classify.Classification:
    pull = gh.pull(upstream, number)
    head = (pull.get("head") or {}).get("repo")
    head_repo = gh.repo(head["full_name"]) if head else None
    return classify.classify(pull, gh.issue_events(upstream, number), head_repo, upstream)


def _find_open(gh: GitHub, entry: Entry, owner: str) -> Json | None:
    label = f"{owner}:{entry.head_branch}"
    for pull in gh.pulls(entry.upstream, state="open", head=label, base=entry.base_branch):
        if (pull.get("head") or {}).get("label") == label:
            return pull
    return None


def _push_call(fork_name: str, entry: Entry, commit: str) -> str:
    return f"git push {fork_name} {commit[:12]}:refs/heads/{entry.head_branch}"


def _lease(expected: str | None) -> str:
    return (
        f"--force-with-lease: only if the branch is still {expected[:12]}"
        if expected
        else ("--force-with-lease: only if the branch does not exist yet")
    )


def classify_all(gh: GitHub, entries: list[Entry]) -> dict[int, classify.Classification]:
    """Every superseded and recorded PR of the selected entries, with same-second siblings."""
    found: dict[int, classify.Classification] = {}
    for entry in entries:
        for number in (*entry.supersedes, *([entry.pr] if entry.pr else [])):
            if number not in found:
                found[number] = _pr_state(gh, entry.upstream, number)
    classify.add_sibling_evidence(found.values())
    return found


def prepare(
    gh: GitHub,
    entry: Entry,
    opts: Options,
    check_lines: list[str],
    classes: dict[int, classify.Classification],
    stack: contextlib.ExitStack,
) -> tuple[EntryPlan, _Work | None]:
    """Read-only: classify, inspect the fork, build the branch, find the PR, plan the writes."""
    plan = EntryPlan(
        entry.name, f"{entry.upstream} {entry.base_branch} <- {entry.fork}:{entry.head_branch}"
    )
    plan.facts.extend(f"check: {line}" for line in check_lines)
    upstream_repo = gh.repo(entry.upstream)
    if upstream_repo is None:
        raise UpstreamError(f"{entry.upstream} not found on {gh.host}; check --upstream/GH_HOST")
    current = classes[entry.pr] if entry.pr else None
    plan.superseded = [classes[n] for n in entry.supersedes]
    if current is not None and current.state == classify.MERGED:
        plan.action, plan.pr, plan.url = MERGED, current.number, current.url
        plan.reason = f"#{current.number} is merged: nothing to do"
        return plan, None
    if current is not None and current.state != classify.OPEN:
        plan.superseded.append(current)  # the recorded PR closed too: it is superseded now
    merged = [c for c in plan.superseded if c.state == classify.MERGED]
    if merged:
        plan.action, plan.pr, plan.url = MERGED, merged[0].number, merged[0].url
        plan.reason = f"#{merged[0].number} was merged: nothing to re-submit"
        return plan, None
    blocking = [
        c
        for c in plan.superseded
        if c.state in (classify.MAINTAINER, classify.AUTHOR, classify.OPEN)
    ]
    if blocking and not opts.force:
        plan.action = REFUSED
        plan.reason = "; ".join(f"#{c.number} is {c.state}" for c in blocking) + (
            ": re-submitting would override that decision; pass --force if you mean it"
        )
        return plan, None

    status = fork.inspect(gh, entry.fork, entry.upstream)
    plan.facts.append(f"fork: {status.describe(entry.upstream)}")
    if status.kind == fork.DETACHED:
        plan.action, plan.reason = REFUSED, str(fork.refuse_detached(status, entry.upstream))
        return plan, None
    if status.kind == fork.MISSING:
        plan.writes.append(
            Write(
                f"POST /repos/{entry.upstream}/forks", f"create {entry.fork}, default branch only"
            )
        )

    upstream_url = opts.upstream_url or upstream_repo.get("clone_url")
    if not upstream_url:
        raise UpstreamError(f"{entry.upstream} has no clone_url; pass --upstream-url")
    scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="resubmit-")))
    branch = push.build(entry, upstream_url, scratch / entry.name, rebase=opts.rebase)
    fork_sha = None
    if status.kind == fork.ATTACHED and status.clone_url:
        fork_sha = git.ls_remote_branch(status.clone_url, entry.head_branch, cwd=scratch)
    base_label = f"{entry.base_branch} tip" if opts.rebase else "pinned base"
    plan.facts.append(
        f"branch: {branch.commit[:12]} = {base_label} {branch.base[:12]} + "
        f"{branch.patches} patch(es); fork has "
        f"{fork_sha[:12] if fork_sha else 'no such branch'}"
    )
    if fork_sha != branch.commit:
        plan.writes.append(
            Write(_push_call(status.full_name, entry, branch.commit), _lease(fork_sha))
        )

    owner = status.full_name.split("/")[0]
    existing = _find_open(gh, entry, owner) if status.kind == fork.ATTACHED else None
    if (
        current is not None
        and current.state == classify.OPEN
        and not opts.force
        and (existing is None or existing["number"] != current.number)
    ):
        plan.action = REFUSED
        plan.reason = (
            f"the manifest's pr #{current.number} is open from {current.head_label}, "
            f"not {owner}:{entry.head_branch}; a new PR would duplicate it: fix `pr`, "
            "`fork` or `head_branch` in the manifest, or pass --force"
        )
        return plan, None
    title = entry.title
    body = bodies.render(
        entry,
        superseded=plan.superseded,
        check_lines=check_lines,
        evidence_markdown=opts.evidence_markdown,
        base=branch.base,
    )
    if existing is None:
        plan.writes.append(
            Write(
                f"POST /repos/{entry.upstream}/pulls",
                f"draft PR {owner}:{entry.head_branch} -> {entry.base_branch}",
            )
        )
    else:
        plan.pr, plan.url = existing["number"], existing.get("html_url")
        changed = [
            k
            for k, new in (("title", title), ("body", body))
            if bodies.normalize(existing.get(k)) != bodies.normalize(new)
        ]
        if changed:
            plan.writes.append(
                Write(
                    f"PATCH /repos/{entry.upstream}/pulls/{existing['number']}",
                    " and ".join(changed) + " changed",
                )
            )
    links_needed = []
    for item in plan.superseded:
        if item.state != classify.DETACHED and not opts.force:
            continue
        marker = bodies.link_marker(entry.name, item.number)
        comments = preflight.own_comments(
            gh.issue_comments(entry.upstream, item.number), opts.login
        )
        if not any(bodies.has_marker(c.get("body"), marker) for c in comments):
            links_needed.append(item.number)
            plan.writes.append(
                Write(
                    f"POST /repos/{entry.upstream}/issues/{item.number}/comments",
                    "cross-link to the new PR",
                )
            )
    work = _Work(
        entry,
        plan,
        status,
        scratch / entry.name,
        branch,
        fork_sha,
        existing,
        title,
        body,
        links_needed,
    )
    return plan, work


def _open_or_refresh(gh: GitHub, work: _Work, owner: str) -> Json:
    entry = work.entry
    existing = work.existing or _find_open(gh, entry, owner)
    if existing is None:
        try:
            return gh.create_pull(
                entry.upstream,
                title=work.title,
                head=f"{owner}:{entry.head_branch}",
                base=entry.base_branch,
                body=work.body,
            )
        except (UnprocessableError, TransientError) as exc:
            found = _find_open(gh, entry, owner)  # never blind-retry a create: re-query
            if found is None:
                raise GitHubError(f"{exc}; no PR was created; re-run to try again") from None
            existing = found
    fields = {
        k: new
        for k, new in (("title", work.title), ("body", work.body))
        if bodies.normalize(existing.get(k)) != bodies.normalize(new)
    }
    if fields:
        existing = gh.update_pull(entry.upstream, existing["number"], **fields)
    return existing


def execute(
    gh: GitHub, work: _Work, opts: Options, *, login: str, say: Callable[[str], None]
) -> None:
    """Make the planned writes for one entry, in order; record the PR in the manifest."""
    entry, plan = work.entry, work.plan
    before = len(gh.writes)
    status, expected = work.fork, work.fork_sha
    if status.kind == fork.MISSING:
        status = fork.create(
            gh,
            entry.fork,
            entry.upstream,
            login=login,
            attempts=opts.fork_attempts,
            interval=opts.fork_interval,
        )
        if status.note:
            say(f"{entry.name}: {status.note}")
            plan.facts.append(f"fork: {status.note}")
        expected = git.ls_remote_branch(str(status.clone_url), entry.head_branch, cwd=work.scratch)
    made: list[str] = []
    if expected != work.branch.commit:
        push.push(
            work.scratch,
            str(status.clone_url),
            entry.head_branch,
            work.branch.commit,
            expected=expected,
            upstream_url=str(opts.upstream_url),
        )
        made.append(_push_call(status.full_name, entry, work.branch.commit))
    owner = status.full_name.split("/")[0]
    pull = _open_or_refresh(gh, work, owner)
    plan.pr, plan.url = pull["number"], pull.get("html_url")
    for number in work.links_needed:
        marker = bodies.link_marker(entry.name, number)
        if any(
            bodies.has_marker(c.get("body"), marker)
            for c in preflight.own_comments(gh.issue_comments(entry.upstream, number), login)
        ):
            continue
        detached = any(c.number == number and c.state == classify.DETACHED for c in plan.superseded)
        text = bodies.cross_link(
            entry,
            superseded=number,
            new_pr=plan.pr,
            new_url=plan.url or "",
            fork=status.full_name,
            detached=detached,
        )
        try:
            gh.create_comment(entry.upstream, number, text)
        except TransientError as exc:  # never blind-retry: did it land?
            if not any(
                bodies.has_marker(c.get("body"), marker)
                for c in preflight.own_comments(gh.issue_comments(entry.upstream, number), login)
            ):
                raise GitHubError(f"{exc}; the cross-link was not posted; re-run") from None
    made.extend(gh.writes[before:])
    created = f"POST /repos/{entry.upstream}/pulls" in gh.writes[before:]
    plan.writes = [Write(call, "") for call in made]
    plan.action = CREATED if created else (REFRESHED if made else UNCHANGED)
    if opts.manifest_path is not None and plan.pr != entry.pr:
        record_pr(opts.manifest_path, entry.name, plan.pr)
        plan.facts.append(f"manifest: recorded pr = {plan.pr}")


def planned_action(plan: EntryPlan) -> str:
    """Dry-run action: `unchanged` when nothing would be written, else `planned`."""
    if plan.action in (REFUSED, MERGED):
        return plan.action
    return PLANNED if plan.writes else UNCHANGED
