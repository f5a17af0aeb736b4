"""The write phase's API writes on upstream: the PR's create or edit, the revision comment,
the cross-links. Each is guarded by what was observed or by a marker checked right before it
(a re-run after any failure resumes; a lost answer is looked up, never blindly retried)."""

from __future__ import annotations

from typing import Any

from patchcarry import git
from patchcarry.errors import GitHubError
from patchcarry.github import GitHub, Json, LockedError, TransientError, UnprocessableError
from patchcarry.manifest import Entry
from patchcarry.resubmit import body as bodies
from patchcarry.resubmit import ownership
from patchcarry.resubmit.backoff import Backoff
from patchcarry.resubmit.classify import DETACHED, Classification
from patchcarry.resubmit.decide import PullWrite
from patchcarry.resubmit.live import Cache
from patchcarry.resubmit.preflight import own_comments


def open_or_refresh(
    gh: GitHub, entry: Entry, pull: PullWrite, owner: str, login: str,
    lag: Backoff | None = None,
) -> tuple[Json, bool]:  # fmt: skip
    """(the PR, whether this run created it). A create whose answer was lost is looked up
    (never blindly retried) and still reported as created. With `lag` (this run pushed the
    branch), "No commits between" is re-checked while it waits: GitHub's compare view can
    lag a push (dotnet/buildtools#1140, hub#1258)."""
    existing = pull.existing
    if existing is None:
        head = f"{owner}:{entry.head_branch}"
        while True:
            try:
                return gh.create_pull(
                    entry.upstream, title=pull.title or entry.title, head=head,
                    base=entry.base_branch, body=pull.body, maintainer_can_modify=pull.edits,
                ), True  # fmt: skip
            except UnprocessableError as exc:
                if NO_COMMITS in str(exc).lower() and lag is not None:
                    if lag.wait():
                        continue  # a 422 created nothing: the create may be sent again
                    raise GitHubError(
                        f"{exc}. GitHub said so right after this run's push and still after "
                        f"{lag.spent:.0f} s (its compare view can lag a push): re-run in a "
                        "few minutes; the branch is pushed and the re-run opens the PR"
                    ) from None
                return _found_after_create(gh, entry, pull, head, exc, login)
            except TransientError as exc:
                return _found_after_create(gh, entry, pull, head, exc, login)
    fields: dict[str, str | bool] = {}
    if pull.title is not None and existing.get("title") != pull.title:
        fields["title"] = pull.title
    if bodies.normalize(existing.get("body")) != bodies.normalize(pull.body):
        fields["body"] = pull.body
    if pull.edits_change is not None:
        fields["maintainer_can_modify"] = pull.edits_change
    if fields:
        existing = gh.update_pull(entry.upstream, existing["number"], **fields)
    return existing, False


def _found_after_create(
    gh: GitHub, entry: Entry, pull: PullWrite, head: str, exc: Exception, login: str
) -> tuple[Json, bool]:
    """The PR from `head` after a create that failed or lost its answer (the 422 lookup)."""
    found = None
    for candidate in gh.pulls(entry.upstream, state="open", head=head, base=entry.base_branch):
        if (candidate.get("head") or {}).get("label") == head:
            found = candidate
    if found is None and isinstance(exc, TransientError):
        raise GitHubError(
            f"{exc}; the PR may have been created even so (GitHub's list can lag): "
            "a re-run finds it and does not open a second one"
        ) from None
    if found is None:
        raise exc
    ownership.refuse_stranger(found, login)  # a stranger's PR on our branch is not ours
    created = isinstance(exc, TransientError)
    if created:
        gh.writes.append(f"POST /repos/{entry.upstream}/pulls")
    # someone's PR (opened between the read and the POST), or ours whose answer was
    # lost: either way only the tool's section goes into the body found, title kept
    body = bodies.merge(found.get("body"), pull.section, entry.name)
    if bodies.normalize(found.get("body")) != bodies.normalize(body):
        found = gh.update_pull(entry.upstream, found["number"], body=body)
    return found, created


NO_COMMITS = "no commits between"


def locked_line(what: str, number: int) -> str:
    """The fact for a comment a locked conversation refused (it was locked after the read)."""
    return (
        f'{what}: not posted, #{number} was locked before the write (403 "Unable to '
        'create comment because issue is locked."); a re-run posts it once unlocked'
    )


def marked(gh: GitHub, upstream: str, number: int, marker: str, login: str) -> bool:
    """Whether the token's user already left a comment with `marker` on #number."""
    ours = own_comments(gh.issue_comments(upstream, number), login)
    return any(bodies.has_marker(c.get("body"), marker) for c in ours)


def revision_comment(
    gh: GitHub, entry: Entry, number: int, *, login: str, cache: Cache, clone_url: str,
    old: str | None, new: str, kind: str,
) -> list[str]:  # fmt: skip
    """The one comment per new revision on the PR: what changed since the previous head
    (the facts to record: a comment a locked conversation refused)."""
    marker = bodies.revision_marker(entry.name, new)
    if marked(gh, entry.upstream, number, marker, login):
        return []
    paths = sorted({f for p in entry.patches() for f in p.files})
    diff = ""
    if old is not None:  # both heads' histories into the cache (the new one is on the fork)
        remote = cache.add_fork(clone_url)
        for head in (old, new):
            cache.fetch_history(remote, head)
        diff = git.range_or_tree_diff(old, new, paths, cwd=cache.repo)
    text = bodies.revision_comment(entry, head=new, old=old, kind=kind, diff=diff or "(no diff)")
    try:
        gh.create_comment(entry.upstream, number, text)
    except LockedError:
        return [locked_line("revision comment", number)]
    return []


def cross_links(
    gh: GitHub, entry: Entry, numbers: tuple[int, ...], superseded: tuple[Classification, ...],
    *, login: str, pr: int, url: str, fork: str,
) -> list[str]:  # fmt: skip
    """A cross-link on each superseded PR in `numbers` that does not hold it yet (the facts
    to record: links a conversation locked since the read refused)."""
    facts = []
    for number in numbers:
        marker = bodies.link_marker(entry.name, number)
        if marked(gh, entry.upstream, number, marker, login):
            continue
        detached = any(c.number == number and c.state == DETACHED for c in superseded)
        text = bodies.cross_link(
            entry, superseded=number, new_pr=pr, new_url=url, fork=fork, detached=detached
        )
        try:
            gh.create_comment(entry.upstream, number, text)
        except LockedError:
            facts.append(locked_line("cross-link", number))
        except TransientError as exc:  # never blind-retry: did it land?
            if not marked(gh, entry.upstream, number, marker, login):
                raise GitHubError(f"{exc}; the cross-link was not posted; re-run") from None
    return facts


def dco_result(gh: GitHub, repo: str, sha: str) -> tuple[dict[str, Any], str]:
    """The head's DCO check runs, read once after the push: (JSON, the plan's sentence). A
    report, never a failure: the writes are done, and GitHub answers 422 "No commit found" for
    a head its PR does not show yet."""
    try:
        found_runs = gh.check_runs(repo, sha)
    except GitHubError as exc:
        return {"sha": sha, "dco": None}, f"DCO: not read for {sha[:12]} ({exc})"
    runs = [r for r in found_runs if "dco" in str(r.get("name", "")).lower()]
    if not runs:
        return {"sha": sha, "dco": None}, f"DCO: not reported yet for {sha[:12]}"
    found = {str(r.get("name")): r.get("conclusion") or r.get("status") for r in runs}
    said = ", ".join(f"{name} {state}" for name, state in sorted(found.items()))
    return {"sha": sha, "dco": found}, f"DCO: {said} for {sha[:12]}"
