"""The resubmit flow's write phase: the planned writes for one entry, in order, each checked
again right before it is made (a re-run after any failure resumes)."""

from __future__ import annotations

import time
from collections.abc import Callable

from patchcarry import git
from patchcarry.errors import GitHubError
from patchcarry.github import GitHub, Json, TransientError, UnprocessableError
from patchcarry.manifest import record_pr
from patchcarry.resubmit import body as bodies
from patchcarry.resubmit import branch as branches
from patchcarry.resubmit import classify, fork, ownership, preflight, push, rules
from patchcarry.resubmit.flow import Options, Work, push_call
from patchcarry.resubmit.plan import CREATED, REFRESHED, UNCHANGED, Write


def _ensure_fork(
    gh: GitHub,
    work: Work,
    opts: Options,
    login: str,
    forks: dict[str, fork.ForkStatus],
    say: Callable[[str], None],
) -> fork.ForkStatus:
    """The fork, created at most once per run even when several entries share it."""
    status = work.fork
    if status.kind != fork.MISSING:
        return status
    key = work.entry.fork.lower()
    if key not in forks:
        forks[key] = fork.create(
            gh,
            work.entry.fork,
            work.entry.upstream,
            login=login,
            attempts=opts.fork_attempts,
            interval=opts.fork_interval,
            sleep=opts.sleep or time.sleep,
        )
        if forks[key].note:
            say(f"{work.entry.name}: {forks[key].note}")
            work.plan.facts.append(f"fork: {forks[key].note}")
    return forks[key]


def _push(work: Work, status: fork.ForkStatus, opts: Options) -> None:
    """Branch and publication record in one atomic push, each leased on what was read. A
    fork's git side lags its API right after creation: bounded back-off before giving up."""
    entry, decided = work.entry, work.branch
    assert work.target is not None and work.push_from is not None
    updates = [
        (work.target, f"refs/heads/{entry.head_branch}", decided.live),
        (work.target, branches.record_ref(entry.head_branch), decided.published),
        (work.target, branches.publisher_ref(entry.name, entry.head_branch), decided.own_record),
    ]
    sleep = opts.sleep or time.sleep
    for attempt in range(opts.git_retries + 1):
        accepted, message = git.push_refs_with_lease(
            str(status.clone_url), updates, cwd=work.push_from
        )
        if not accepted and "shallow update not allowed" in message:
            git.unshallow(str(opts.upstream_url), cwd=work.push_from)
            continue
        if accepted:
            return
        lagging = "not found" in message.lower() or "could not read" in message.lower()
        if not lagging or attempt == opts.git_retries:
            break
        sleep(min(2.0 * 2**attempt, 30.0))
    push.raise_push_failure(message, entry.head_branch, decided.live, lagging=lagging)


def _open_or_refresh(gh: GitHub, work: Work, owner: str, login: str) -> tuple[Json, bool]:
    """(the PR, whether this run created it). A create whose answer was lost is looked up
    (never blindly retried) and still reported as created."""
    entry = work.entry
    existing = work.existing
    created = False
    if existing is None:
        head = f"{owner}:{entry.head_branch}"
        try:
            return gh.create_pull(
                entry.upstream, title=work.title or entry.title, head=head,
                base=entry.base_branch, body=work.body,
            ), True  # fmt: skip
        except (UnprocessableError, TransientError) as exc:
            found = None
            for pull in gh.pulls(entry.upstream, state="open", head=head, base=entry.base_branch):
                if (pull.get("head") or {}).get("label") == head:
                    found = pull
            if found is None and isinstance(exc, TransientError):
                raise GitHubError(
                    f"{exc}; the PR may have been created even so (GitHub's list can lag): "
                    "a re-run finds it and does not open a second one"
                ) from None
            if found is None:
                raise
            ownership.refuse_stranger(found, login)  # a stranger's PR on our branch is not ours
            existing, created = found, isinstance(exc, TransientError)
            if created:
                gh.writes.append(f"POST /repos/{entry.upstream}/pulls")
            # someone's PR (opened between the read and the POST), or ours whose answer was
            # lost: either way only the tool's section goes into the body found, title kept
            body = bodies.merge(existing.get("body"), work.section, entry.name)
            if bodies.normalize(existing.get("body")) != bodies.normalize(body):
                existing = gh.update_pull(entry.upstream, existing["number"], body=body)
            return existing, created
    fields = {}
    if work.title is not None and existing.get("title") != work.title:
        fields["title"] = work.title
    if bodies.normalize(existing.get("body")) != bodies.normalize(work.body):
        fields["body"] = work.body
    if fields:
        existing = gh.update_pull(entry.upstream, existing["number"], **fields)
    return existing, created


def _marked(gh: GitHub, upstream: str, number: int, marker: str, login: str) -> bool:
    """Whether the token's user already left a comment with `marker` on #number."""
    ours = preflight.own_comments(gh.issue_comments(upstream, number), login)
    return any(bodies.has_marker(c.get("body"), marker) for c in ours)


def _revision_comment(
    gh: GitHub, work: Work, number: int, login: str, status: fork.ForkStatus
) -> None:
    entry, decided = work.entry, work.branch
    assert work.target is not None
    marker = bodies.revision_marker(entry.name, work.target)
    if _marked(gh, entry.upstream, number, marker, login):
        return
    old = decided.live
    paths = sorted({f for p in entry.patches() for f in p.files})
    diff = ""
    if old is not None:  # both heads' histories into the cache (the new one is on the fork)
        remote = work.cache.add_fork(str(status.clone_url))
        for head in (old, work.target):
            work.cache.fetch_history(remote, head)
        diff = git.range_or_tree_diff(old, work.target, paths, cwd=work.cache.repo)
    text = bodies.revision_comment(
        entry, head=work.target, old=old, kind=decided.kind, diff=diff or "(no diff)"
    )
    gh.create_comment(entry.upstream, number, text)


def execute(
    gh: GitHub,
    work: Work,
    opts: Options,
    *,
    login: str,
    forks: dict[str, fork.ForkStatus],
    say: Callable[[str], None],
) -> None:
    """Make the planned writes for one entry, in order; record the PR in the manifest."""
    entry, plan = work.entry, work.plan
    before = len(gh.writes)
    status = _ensure_fork(gh, work, opts, login, forks, say)
    made: list[str] = []
    if work.target is not None:
        _push(work, status, opts)
        made.append(push_call(status.full_name, entry, work.target))
    owner = status.full_name.split("/")[0]
    pull, created = _open_or_refresh(gh, work, owner, login)
    plan.pr, plan.url = pull["number"], pull.get("html_url")
    if work.target is not None and work.existing is not None:
        _revision_comment(gh, work, plan.pr, login, status)
    for number in work.links_needed:
        marker = bodies.link_marker(entry.name, number)
        if _marked(gh, entry.upstream, number, marker, login):
            continue
        detached = any(c.number == number and c.state == classify.DETACHED for c in plan.superseded)
        text = bodies.cross_link(
            entry, superseded=number, new_pr=plan.pr, new_url=plan.url or "",
            fork=status.full_name, detached=detached,
        )  # fmt: skip
        try:
            gh.create_comment(entry.upstream, number, text)
        except TransientError as exc:  # never blind-retry: did it land?
            if not _marked(gh, entry.upstream, number, marker, login):
                raise GitHubError(f"{exc}; the cross-link was not posted; re-run") from None
    made.extend(gh.writes[before:])
    if work.target is not None:  # what the plan said would follow the push has happened
        plan.facts = [f for f in plan.facts if not f.startswith("after the push:")]
        plan.facts.append(f"CI gate: the new head {work.target[:12]} needs a maintainer's "
                          f"`/ok to test {work.target}`")  # fmt: skip
    plan.writes = [Write(call, "") for call in made]
    plan.action = CREATED if created else (REFRESHED if made else UNCHANGED)
    if opts.manifest_path is not None and plan.pr != entry.pr:
        record_pr(opts.manifest_path, entry.name, plan.pr)
        plan.facts.append(f"manifest: recorded pr = {plan.pr}")
    if work.target is not None:  # after every write and the record: read once, a report
        shown, line = rules.dco_result(gh, entry.upstream, work.target)
        plan.rules = {**(plan.rules or {}), "after_push": shown}
        plan.facts.append(line)
