"""Phase 5 (run.py): the writes in order, each guarded (leases, markers), so a re-run resumes."""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable

from patchcarry import git, progress
from patchcarry.errors import FatalError, GitHubError
from patchcarry.github import LockedError, TransientError, UnprocessableError
from patchcarry.github_types import Forge, PullRef
from patchcarry.manifest import Entry, record_pr
from patchcarry.pulls import locked, ownership
from patchcarry.pulls.classify import Classification, PullState
from patchcarry.push_refusals import raise_push_failure
from patchcarry.resubmit import body as bodies
from patchcarry.resubmit import branch as branches
from patchcarry.resubmit import fork
from patchcarry.resubmit.ci_gate import ok_to_test
from patchcarry.resubmit.live import Cache
from patchcarry.resubmit.model import (
    Action,
    CreateFork,
    CreatePull,
    DcoShown,
    EditPull,
    Options,
    Outlook,
    Plan,
    PostComment,
    PullWrite,
    Push,
    PushBranch,
    Record,
    Write,
)  # fmt: skip
from patchcarry.resubmit.section import merge, normalize


@dataclasses.dataclass
class Context:
    """The run's write-side state shared by its entries."""

    gh: Forge
    opts: Options
    login: str
    upstream_url: str
    cache: Cache
    say: Callable[[str], None]
    forks: dict[str, fork.ForkStatus] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Done:
    """One entry's writes as they are made: the facts they establish, and each write, typed."""

    facts: list[str] = dataclasses.field(default_factory=list)
    made: list[Write] = dataclasses.field(default_factory=list)


def _ensure_fork(ctx: Context, plan: Plan, done: Done) -> fork.ForkStatus:
    """The fork, created at most once per run even when several entries share it."""
    status, entry = plan.fork, plan.entry
    assert status is not None
    if status.kind != fork.ForkKind.MISSING:
        return status
    key = entry.fork.lower()
    if key not in ctx.forks:
        wait = fork.Backoff(ctx.opts.fork_wait, ctx.opts.sleep or time.sleep,
                            progress=ctx.opts.progress, what=f"{entry.fork} to appear")  # fmt: skip
        ctx.forks[key] = fork.create(ctx.gh, entry.fork, entry.upstream, login=ctx.login,
                                        wait=wait)  # fmt: skip
        ctx.forks[key].waited = wait.spent
        done.made.append(CreateFork(entry.upstream, entry.fork))
        if ctx.forks[key].note:
            ctx.say(f"{entry.name}: {ctx.forks[key].note}")
            done.facts.append(f"fork: {ctx.forks[key].note}")
    return ctx.forks[key]


def _push(ctx: Context, plan: Plan, step: Push, status: fork.ForkStatus) -> None:
    """Branch and record in one atomic leased push, backing off while a new fork's git lags."""
    branch, opts = plan.entry.head_branch, ctx.opts
    updates = [
        (step.target, f"refs/heads/{branch}", step.live),
        (step.target, branches.record_ref(branch), step.published),
        (step.target, branches.publisher_ref(plan.entry.name, branch), step.own_record),
    ]
    what = f"git to accept pushes to {status.full_name}"
    wait = fork.Backoff(opts.fork_wait, opts.sleep or time.sleep, first=2.0, spent=status.waited,
                        progress=opts.progress, what=what)  # fmt: skip
    deepened = False  # one deepening, and only a push it changed something for is retried
    while True:
        pushed = git.push_refs_with_lease(str(status.clone_url), updates, cwd=step.push_from)
        if pushed.shallow:
            base = plan.entry.base_branch
            if not deepened:  # minutes on a large upstream
                progress.say(
                    f"{plan.entry.name}: {status.full_name} lacks the history under the new "
                    f"branch's base: fetching {base}'s whole history from upstream so that "
                    "the push goes through (on a large repository this takes minutes) ..."
                )
            shown = not progress.quiet and sys.stderr.isatty()  # git's own progress, live
            if deepened or not git.deepen(ctx.upstream_url, base, cwd=step.push_from,
                                          progress=shown):  # fmt: skip
                raise FatalError(f"the fork refuses the push to {branch} for its shallow "
                                 f"history even after the whole history of upstream's {base} "
                                 "was fetched; push the base branch to the fork (or sync the "
                                 "fork on GitHub), then re-run")  # fmt: skip
            deepened = True
            continue
        if pushed.accepted:
            return
        if not pushed.lagging or not wait.wait():
            break
    raise_push_failure(pushed, branch, step.live)


def execute(ctx: Context, plan: Plan) -> Record:
    """Make the planned writes for one entry, in order; record the PR in the manifest."""
    entry, step = plan.entry, plan.push
    assert plan.pull is not None
    done = Done()
    status = _ensure_fork(ctx, plan, done)
    if step is not None:
        _push(ctx, plan, step, status)
        done.made.append(PushBranch(status.full_name, entry.head_branch, step.target))
    owner = status.full_name.split("/")[0]
    lag = None if step is None else fork.Backoff(COMPARE_WAIT, ctx.opts.sleep or time.sleep, 2.0)
    pull, created = open_or_refresh(ctx.gh, entry, plan.pull, owner, ctx.login, lag, done)
    number, url = pull.number, pull.html_url
    done.facts += _record_number(ctx, entry, number)  # before any comment: a re-run finds it
    if step is not None and plan.pull.existing is not None and not plan.pull.locked:
        revision_comment(
            ctx.gh, entry, number, done, login=ctx.login, cache=ctx.cache,
            clone_url=str(status.clone_url), old=step.live, new=step.target, kind=step.kind,
            ci_gate=step.ci_gate,
        )  # fmt: skip
    cross_links(ctx.gh, entry, plan.links, plan.superseded, done, login=ctx.login, pr=number,
                url=url or "", fork=status.full_name)  # fmt: skip
    return _record(ctx, plan, done, number, url, created)


def _record_number(ctx: Context, entry: Entry, number: int) -> list[str]:
    """The PR's number in the manifest, right after the PR is there and before any comment."""
    if ctx.opts.manifest_path is None or number == entry.pr:
        return []
    record_pr(ctx.opts.manifest_path, entry.name, number)
    return [f"manifest: recorded pr = {number}"]


def _record(ctx: Context, plan: Plan, done: Done, number: int, url: str | None,
            created: bool) -> Record:  # fmt: skip
    """After every write: the record, with the head's DCO result read once (no outlook)."""
    entry, step, rules = plan.entry, plan.push, plan.rules
    kept = [f for f in plan.facts if step is None or not isinstance(f, Outlook)]
    facts, made = [*map(str, kept), *done.facts], done.made
    if step is not None and step.ci_gate:
        facts.append(f"CI gate: the new head {git.short(step.target)} needs a maintainer's "
                     f"{ok_to_test(step.target)}")  # fmt: skip
    action = Action.CREATED if created else (Action.REFRESHED if made else Action.UNCHANGED)
    if step is not None:  # after every write and the record: read once, a report
        shown, line = dco_result(ctx.gh, entry.upstream, step.target)
        assert rules is not None  # the gate judges the rules of every plan that pushes
        rules = rules.copy()
        rules["after_push"] = shown
        facts.append(line)
    return Record(plan, action, number, url, tuple(made), tuple(facts), rules)


# -- the API writes on upstream, each guarded by what was observed or by a marker
COMPARE_WAIT = 60.0  # seconds "No commits between" right after a push is re-checked
# GitHub's 422 where the repository's plan has no drafts (no field says so beforehand)
NO_DRAFTS = "draft pull requests are not supported in this repository"
DRAFTS_REFUSED = (
    'draft: {upstream} does not support draft PRs (GitHub: "Draft pull requests are not '
    'supported in this repository."), so the PR was opened ready for review'
)


def open_or_refresh(
    gh: Forge, entry: Entry, pull: PullWrite, owner: str, login: str,
    lag: fork.Backoff | None, done: Done,
) -> tuple[PullRef, bool]:  # fmt: skip
    """(the PR, whether this run created it). A create whose answer was lost is looked up, never
    retried; with `lag`, "No commits between" is retried while the compare view lags a push."""
    existing = pull.existing
    if existing is None:
        head = f"{owner}:{entry.head_branch}"
        draft = True
        while True:
            try:
                made = gh.create_pull(
                    entry.upstream, title=pull.title or entry.title, head=head,
                    base=entry.base_branch, body=pull.body, maintainer_can_modify=pull.edits,
                    draft=draft,
                )  # fmt: skip
                done.made.append(CreatePull(entry.upstream, head, entry.base_branch))
                return made, True
            except UnprocessableError as exc:
                if draft and NO_DRAFTS in exc.said:  # a 422 created nothing
                    draft = False
                    done.facts.append(DRAFTS_REFUSED.format(upstream=entry.upstream))
                    continue
                if lag is None or "no commits between" not in exc.said:
                    return _found_after_create(gh, entry, pull, head, exc, login, done)
                if not lag.wait():
                    raise GitHubError(
                        f"{exc}. GitHub said so right after this run's push and still after "
                        f"{lag.spent:.0f} s (its compare view can lag a push): re-run in a "
                        "few minutes; the branch is pushed and the re-run opens the PR"
                    ) from None
            except TransientError as exc:
                return _found_after_create(gh, entry, pull, head, exc, login, done)
    fields: dict[str, str | bool] = {}
    if pull.title is not None and existing.title != pull.title:
        fields["title"] = pull.title
    if normalize(existing.body) != normalize(pull.body):
        fields["body"] = pull.body
    if "title" in fields or "body" in fields:  # GitHub has no conditional write
        now = gh.pull(entry.upstream, existing.number)
        done.facts.extend(edited_during_run(now, existing, fields))
        fields = current_text(now, existing, pull, entry.name, fields)
    if pull.edits_change is not None:
        fields["maintainer_can_modify"] = pull.edits_change
    if fields:
        existing = gh.update_pull(entry.upstream, existing.number, **fields)
        done.made.append(EditPull(entry.upstream, existing.number, tuple(fields)))
    return existing, False


def edited_during_run(now: PullRef, read: PullRef, fields: dict[str, str | bool]) -> list[str]:
    """What the record says of someone's edit between the run's read and its write."""
    said = []
    if "title" in fields and now.title != read.title:
        said.append("title: changed on GitHub during this run: kept as it is now")
    if "body" in fields and now.body != read.body:
        said.append("body: edited on GitHub during this run: the tool's section was merged "
                    "into it as it is now, every other byte kept")  # fmt: skip
    return said


def current_text(now: PullRef, read: PullRef, pull: PullWrite, entry_name: str,
                 fields: dict[str, str | bool]) -> dict[str, str | bool]:  # fmt: skip
    """Title and body to PATCH against `now` (re-read): a changed title stays; bodies merge."""
    out: dict[str, str | bool] = {}
    if "title" in fields and now.title == read.title:
        out["title"] = fields["title"]
    if "body" in fields:
        body = pull.body
        if now.body != read.body:
            body = merge(now.body, pull.section, entry_name)
        if normalize(now.body) != normalize(body):
            out["body"] = body
    return out


def _found_after_create(gh: Forge, entry: Entry, pull: PullWrite, head: str, exc: Exception,
                        login: str, done: Done) -> tuple[PullRef, bool]:  # fmt: skip
    """The PR from `head` after a create that failed or lost its answer (the 422 lookup)."""
    found = None
    for candidate in gh.pulls(entry.upstream, state="open", head=head, base=entry.base_branch):
        if candidate.head_label == head:
            found = candidate
    if found is None and isinstance(exc, TransientError):
        raise GitHubError(f"{exc}; the PR may have been created even so (GitHub's list can lag): "
                          "a re-run finds it and does not open a second one") from None  # fmt: skip
    if found is None:
        raise exc
    ownership.refuse_stranger(found, login)  # a stranger's PR on our branch is not ours
    created = isinstance(exc, TransientError)
    if created:
        done.made.append(CreatePull(entry.upstream, head, entry.base_branch))
    # someone's PR, or ours whose answer was lost: only the tool's section goes in, title kept
    body = merge(found.body, pull.section, entry.name)
    if normalize(found.body) != normalize(body):
        found = gh.update_pull(entry.upstream, found.number, body=body)
        done.made.append(EditPull(entry.upstream, found.number, ("body",)))
    return found, created


def revision_comment(
    gh: Forge, entry: Entry, number: int, done: Done, *, login: str, cache: Cache,
    clone_url: str, old: str | None, new: str, kind: str, ci_gate: bool = True,
) -> None:  # fmt: skip
    """The one comment per new revision on the PR: what changed since the previous head."""
    marker = ownership.revision_marker(entry.name, new)
    if ownership.marked(gh.issue_comments(entry.upstream, number), marker, login):
        return
    paths = sorted({f for p in entry.patches() for f in p.files})
    diff, moved = "", None
    if old is not None:  # both heads' histories into the cache (the new one is on the fork)
        progress.say(f"{entry.name}: reading both heads' history for the revision comment ...")
        remote = cache.add_fork(clone_url)
        cache.fetch_histories(remote, [old, new])
        tip = git.own_ref("heads", entry.base_branch)
        rebuilt = not git.is_ancestor(old, new, cwd=cache.repo)
        found = None
        if rebuilt and git.rev_exists(tip, cwd=cache.repo):
            found = git.pr_range_diff(old, new, tip, cwd=cache.repo)
        if found is not None:
            old_base, new_base, diff = found
            moved = (old_base, new_base) if old_base != new_base else None
        else:
            diff = git.range_or_tree_diff(old, new, paths, cwd=cache.repo)
    text = bodies.revision_comment(entry, head=new, old=old, kind=kind, diff=diff or "(no diff)",
                                   moved=moved, ci_gate=ci_gate)  # fmt: skip
    try:
        gh.create_comment(entry.upstream, number, text)
        done.made.append(PostComment(entry.upstream, number, "revision"))
    except LockedError:
        done.facts.append(locked.refused("revision comment", number))


def cross_links(
    gh: Forge, entry: Entry, numbers: tuple[int, ...], superseded: tuple[Classification, ...],
    done: Done, *, login: str, pr: int, url: str, fork: str,
) -> None:  # fmt: skip
    """A cross-link on each superseded PR in `numbers` that does not hold it yet."""
    for number in numbers:
        marker = ownership.link_marker(entry.name, number)
        if ownership.marked(gh.issue_comments(entry.upstream, number), marker, login):
            continue
        detached = any(c.number == number and c.state == PullState.DETACHED for c in superseded)
        text = bodies.cross_link(entry, superseded=number, new_pr=pr, new_url=url, fork=fork,
                                 detached=detached)  # fmt: skip
        try:
            gh.create_comment(entry.upstream, number, text)
        except LockedError:
            done.facts.append(locked.refused("cross-link", number))
            continue
        except TransientError as exc:  # never blind-retry: did it land?
            if not ownership.marked(gh.issue_comments(entry.upstream, number), marker, login):
                raise GitHubError(f"{exc}; the cross-link was not posted; re-run") from None
        done.made.append(PostComment(entry.upstream, number, "cross-link"))


def dco_result(gh: Forge, repo: str, sha: str) -> tuple[DcoShown, str]:
    """The head's DCO check runs, read once after the push: (shown, sentence), never a failure."""
    try:
        runs = [r for r in gh.check_runs(repo, sha) if "dco" in r.name.lower()]
    except GitHubError as exc:
        return {"sha": sha, "dco": None}, f"DCO: not read for {git.short(sha)} ({exc})"
    if not runs:
        return {"sha": sha, "dco": None}, f"DCO: not reported yet for {git.short(sha)}"
    found: dict[str, str | None] = {r.name: r.conclusion or r.status for r in runs}
    said = ", ".join(f"{name} {state}" for name, state in sorted(found.items()))
    return {"sha": sha, "dco": found}, f"DCO: {said} for {git.short(sha)}"
