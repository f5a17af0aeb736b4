"""The resubmit flow's read phase: for each entry, named read steps build the plan and the
`Work` the write phase (`execute.py`) carries out. Nothing here writes anywhere but the
local cache; GitHub objects are read once per run through `Reads`."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import tempfile
from collections.abc import Callable
from pathlib import Path

from patchcarry import git
from patchcarry.errors import BadInputError, NetworkError, UpstreamError
from patchcarry.github import Json, NotFoundError
from patchcarry.manifest import Entry
from patchcarry.proc import CalledProcessError
from patchcarry.resubmit import body as bodies
from patchcarry.resubmit import branch as branches
from patchcarry.resubmit import classify, fork, ownership, preflight, push
from patchcarry.resubmit.live import Cache
from patchcarry.resubmit.plan import MERGED, PLANNED, REFUSED, UNCHANGED, EntryPlan, Write
from patchcarry.resubmit.reads import Reads, pull_state


def _today() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")


@dataclasses.dataclass
class Options:
    dry_run: bool
    force: bool = False
    rebase: bool = False
    rewrite: bool = False
    upstream_url: str | None = None
    evidence_markdown: str | None = None
    manifest_path: Path | None = None
    login: str = ""  # the token's user: only its comments count as this tool's cross-links
    allow_default_branch: bool = False
    fork_attempts: int = 10
    fork_interval: float = 1.0
    git_retries: int = 4  # a new fork's git side lags its API: bounded back-off
    sleep: Callable[[float], None] | None = None
    today: Callable[[], str] = _today


@dataclasses.dataclass
class Work:
    """Everything the write phase needs for one entry, gathered by the read phase."""

    entry: Entry
    plan: EntryPlan
    fork: fork.ForkStatus
    cache: Cache
    branch: branches.BranchPlan
    target: str | None  # the commit the branch moves to (None: it stays)
    push_from: Path | None  # the repo holding `target`
    existing: Json | None  # the open PR
    title: str | None  # None: the title is left as it is
    body: str
    links_needed: list[int]
    section: str  # the tool's section alone (merged into a PR found after a create's 422)


def _find_open(reads: Reads, entry: Entry, owner: str) -> Json | None:
    label = f"{owner}:{entry.head_branch}"
    for pull in reads.open_pulls(entry.upstream, label, entry.base_branch):
        if (pull.get("head") or {}).get("label") == label:
            return pull
    return None


def push_call(fork_name: str, entry: Entry, commit: str) -> str:
    return f"git push {fork_name} {commit[:12]}:refs/heads/{entry.head_branch}"


def _manifest_line(manifest: Path, entry: str, key: str, number: int) -> str:
    """`path:LINE` of the entry's `key = number` line (for a message), else just the path."""
    try:
        lines = manifest.read_text().splitlines()
    except OSError:
        return str(manifest)
    inside = False
    for n, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip().replace(" ", "")
        if text.startswith("name="):
            inside = text == f'name="{entry}"' or text == f"name='{entry}'"
        if inside and (text == f"{key}={number}" or f"{key}=[" in text and str(number) in text):
            return f"{manifest}:{n}"
    return str(manifest)


def classify_all(
    reads: Reads, entries: list[Entry], manifest: Path | None = None
) -> dict[int, classify.Classification]:
    """Every superseded and recorded PR of the selected entries, with same-second siblings."""
    found: dict[int, classify.Classification] = {}
    for entry in entries:
        for number in (*entry.supersedes, *([entry.pr] if entry.pr else [])):
            if number in found:
                continue
            try:
                found[number] = pull_state(reads, entry.upstream, number)
            except NotFoundError:
                key = "pr" if number == entry.pr else "supersedes"
                where = f"{_manifest_line(manifest, entry.name, key, number)}: " if manifest else ""
                raise BadInputError(
                    f"{where}entry {entry.name!r}: `{key}` names #{number}, which "
                    f"{entry.upstream} does not have: fix that line of the manifest"
                ) from None
    classify.add_sibling_evidence(found.values())
    return found


# -- read steps -------------------------------------------------------------------------------
def _read_decisions(
    entry: Entry, opts: Options, classes: dict[int, classify.Classification], plan: EntryPlan
) -> classify.Classification | None | bool:
    """Merged / closed by someone / still open elsewhere: False when the plan is final."""
    current = classes[entry.pr] if entry.pr else None
    plan.superseded = [classes[n] for n in entry.supersedes]
    if current is not None and current.state == classify.MERGED:
        plan.action, plan.pr, plan.url = MERGED, current.number, current.url
        plan.reason = f"#{current.number} is merged: nothing to do"
        return False
    if current is not None and current.state != classify.OPEN:
        plan.superseded.append(current)  # the recorded PR closed too: it is superseded now
    merged = [c for c in plan.superseded if c.state == classify.MERGED]
    if merged:
        plan.action, plan.pr, plan.url = MERGED, merged[0].number, merged[0].url
        plan.reason = f"#{merged[0].number} was merged: nothing to re-submit"
        return False
    blocking = [
        c
        for c in plan.superseded
        if c.state in (classify.MAINTAINER, classify.AUTHOR, classify.UNKNOWN, classify.OPEN)
    ]
    if blocking and not opts.force:
        plan.action = REFUSED
        plan.reason = "; ".join(f"#{c.number} is {c.state}" for c in blocking) + (
            ": re-submitting would override that decision; pass --force if you mean it"
        )
        return False
    return current


def _read_fork(reads: Reads, entry: Entry, plan: EntryPlan) -> fork.ForkStatus | None:
    status = fork.inspect(reads, entry.fork, entry.upstream)
    plan.facts.append(f"fork: {status.describe(entry.upstream)}")
    if status.kind == fork.DETACHED:
        plan.action, plan.reason = REFUSED, str(fork.refuse_detached(status, entry.upstream))
        return None
    if status.kind == fork.MISSING:
        plan.writes.append(
            Write(
                f"POST /repos/{entry.upstream}/forks", f"create {entry.fork}, default branch only"
            )
        )
    return status


def _read_live(
    status: fork.ForkStatus, entry: Entry, cache: Cache
) -> tuple[str | None, str | None, dict[str, str]]:
    """(live head, published record, {entry: its publisher ref}) of the fork branch: one
    `git ls-remote`."""
    if status.kind != fork.ATTACHED or not status.clone_url:
        return None, None, {}
    refs = [
        f"refs/heads/{entry.head_branch}",
        branches.record_ref(entry.head_branch),
        branches.publisher_pattern(entry.head_branch),
    ]
    try:
        found = git.ls_remote_with_token(status.clone_url, refs, cwd=cache.repo)
    except CalledProcessError:
        raise NetworkError(
            f"could not read {status.full_name} with git (a fork's git side can lag its API "
            "for a minute after it is created): retry in a minute"
        ) from None
    return found.get(refs[0]), found.get(refs[1]), branches.publishers(found, entry.head_branch)


def _read_vetting(entry: Entry, pr: int | None, head: str | None, upstream_url: str) -> str:
    """Whether upstream's CI gate (copy-pr-bot's `pull-request/<N>` branch) vetted `head`."""
    if pr is None or head is None:
        return "CI gate: no PR head to vet yet"
    ref = f"refs/heads/pull-request/{pr}"
    code, found, _ = git.ls_remote_refs(upstream_url, [ref])
    if code != 0:
        return f"CI gate: could not read upstream's pull-request/{pr}"
    vetted = found.get(ref)
    if vetted == head:
        return f"CI gate: head {head[:12]} is vetted (upstream's pull-request/{pr} points at it)"
    if vetted:
        return (
            f"CI gate: head {head[:12]} is NOT vetted (pull-request/{pr} is at {vetted[:12]}); "
            f"a maintainer must comment `/ok to test {head}`"
        )
    return f"CI gate: head {head[:12]} is NOT vetted (no pull-request/{pr} on upstream yet)"


def _read_branch(
    entry: Entry,
    opts: Options,
    status: fork.ForkStatus,
    cache: Cache,
    stack: contextlib.ExitStack,
    plan: EntryPlan,
) -> tuple[branches.BranchPlan, str | None, Path | None]:
    live, published, named = _read_live(status, entry, cache)
    base = entry.base_commit
    if opts.rebase:
        base = git.rev_parse(f"refs/patchcarry/heads/{entry.base_branch}", cwd=cache.repo)
    remote = cache.add_fork(status.clone_url) if status.clone_url else "origin"
    decided = branches.decide(
        cache,
        entry,
        remote=remote,
        base=base,
        live=live,
        published=published,
        rewrite=opts.rewrite,
        by=branches.published_by(entry.name, published, named),
    )
    decided.own_record = named.get(entry.name)
    base_label = f"{entry.base_branch} tip" if opts.rebase else "pinned base"
    plan.branch = decided.to_json()
    if decided.kind != branches.REFUSED:  # a refusal's reason is printed once, as the reason
        plan.facts.append(f"branch: {decided.kind.upper()}: {decided.reason}")
    plan.facts.append(_read_vetting(entry, entry.pr, live, str(opts.upstream_url)))
    plan.facts.append(
        f"fork has {live[:12] if live else 'no such branch'}; this tool last published "
        f"{published[:12] if published else 'nothing there (no record)'}"
    )
    plan.facts.extend(decided.dropped_lines())
    if decided.kind == branches.REFUSED:
        plan.action, plan.reason = REFUSED, f"branch {entry.head_branch}: {decided.reason}"
        return decided, None, None
    if decided.kind == branches.FAST_FORWARD:
        return decided, decided.target, cache.repo
    if decided.kind in (branches.NEW, branches.REWRITE):
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="resubmit-")))
        built = push.build(entry, str(opts.upstream_url), scratch / entry.name, rebase=opts.rebase)
        plan.facts.append(
            f"branch: {built.commit[:12]} = {base_label} {built.base[:12]} + "
            f"{built.patches} patch(es)"
        )
        return decided, built.commit, scratch / entry.name
    return decided, None, None


def _read_pull(
    reads: Reads,
    entry: Entry,
    owner: str,
    status: fork.ForkStatus,
    current: classify.Classification | None,
) -> Json | None:
    """The open PR from the fork branch: the recorded one when it still comes from there."""
    label = f"{owner}:{entry.head_branch}"
    if current is not None and current.state == classify.OPEN and current.head_label == label:
        return reads.pull(entry.upstream, current.number)
    return _find_open(reads, entry, owner) if status.kind == fork.ATTACHED else None


def _read_body(
    entry: Entry,
    opts: Options,
    plan: EntryPlan,
    existing: Json | None,
    check_lines: list[str],
    revision: str | None,
    base: str,
) -> tuple[str | None, str, str]:
    """(title to set or None, body, the tool's section): only the tool's section changes;
    the title only when the manifest's title changed since the tool last set it. A body
    whose section cannot be told apart (see `bodies.locate`) is left as it is."""
    found = bodies.locate(existing.get("body") if existing else None, entry.name)
    old = found.section
    if found.problem:
        plan.facts.append(f"body: {found.problem}")
    revisions = [*(old.revisions if old else ()), *([revision] if revision else [])]
    history = [f"#{c.number}" for c in plan.superseded]
    history.append("this PR")
    title: str | None = entry.title
    recorded = entry.title
    if existing is not None:
        if old is None:  # first refresh of a PR someone wrote: keep their title
            title = None
        elif old.title_hash == bodies.title_hash(entry.title):
            title = None  # unchanged in the manifest: a maintainer's rename stands
        if title is not None and existing.get("title") == title:
            title = None
    section = bodies.render_section(
        entry,
        superseded=plan.superseded,
        check_lines=check_lines,
        evidence_markdown=opts.evidence_markdown,
        base=base,
        title=recorded,
        summary=old is not None and old.summary,
        revisions=revisions,
        history=history,
    )
    if existing is None:
        return title, bodies.render_new(entry, section), section
    return title, bodies.merge(existing.get("body"), section, entry.name), section


def _read_links(reads: Reads, entry: Entry, opts: Options, plan: EntryPlan) -> list[int]:
    needed = []
    for item in plan.superseded:
        if item.state != classify.DETACHED and not opts.force:
            continue
        marker = bodies.link_marker(entry.name, item.number)
        ours = preflight.own_comments(reads.comments(entry.upstream, item.number), opts.login)
        if not any(bodies.has_marker(c.get("body"), marker) for c in ours):
            needed.append(item.number)
            plan.writes.append(
                Write(
                    f"POST /repos/{entry.upstream}/issues/{item.number}/comments",
                    "cross-link to the new PR",
                )
            )
    return needed


def prepare(
    reads: Reads,
    entry: Entry,
    opts: Options,
    check_lines: list[str],
    classes: dict[int, classify.Classification],
    cache: Cache,
    stack: contextlib.ExitStack,
) -> tuple[EntryPlan, Work | None]:
    """Read-only: decide, inspect the fork and its branch, find the PR, plan the writes."""
    plan = EntryPlan(
        entry.name, f"{entry.upstream} {entry.base_branch} <- {entry.fork}:{entry.head_branch}"
    )
    plan.facts.extend(f"check: {line}" for line in check_lines)
    if reads.repo(entry.upstream) is None:
        raise UpstreamError(f"{entry.upstream} not found; check --upstream/GH_HOST")
    current = _read_decisions(entry, opts, classes, plan)
    if current is False:
        return plan, None
    current = current if isinstance(current, classify.Classification) else None
    status = _read_fork(reads, entry, plan)
    if status is None:
        return plan, None
    decided, target, push_from = _read_branch(entry, opts, status, cache, stack, plan)
    if decided.kind == branches.REFUSED:
        return plan, None
    owner = status.full_name.split("/")[0]
    existing = _read_pull(reads, entry, owner, status, current)
    ownership.refuse_stranger(existing, opts.login)  # a stranger's PR on our branch is not ours
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
    pr = existing["number"] if existing else None
    revision = None
    if target is not None:
        on = f" on `{decided.live[:12]}`" if decided.live else ""
        revision = f"{opts.today()} `{target[:12]}` {decided.kind}{on}"
        lease = decided.live[:12] if decided.live else "absent"
        plan.writes.append(
            Write(
                push_call(status.full_name, entry, target),
                f"--atomic with {branches.record_ref(entry.head_branch)}; lease: branch {lease}",
            )
        )
        if pr is not None:
            plan.facts.append(f"after the push: the new head needs `/ok to test {target}`")
            if decided.kind == branches.REWRITE and any("is vetted" in f for f in plan.facts):
                plan.facts.append(
                    f"this rewrite throws away the vetting of {decided.live or ''}"[:200]
                )
    title, body, section = _read_body(
        entry, opts, plan, existing, check_lines, revision, entry.base_commit
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
        changed = (["title"] if title is not None else []) + (
            ["body (the tool's section only)"]
            if bodies.normalize(existing.get("body")) != bodies.normalize(body)
            else []
        )
        if changed:
            plan.writes.append(
                Write(f"PATCH /repos/{entry.upstream}/pulls/{pr}", " and ".join(changed))
            )
        if target is not None:
            plan.writes.append(
                Write(f"POST /repos/{entry.upstream}/issues/{pr}/comments", "revision comment")
            )
    links = _read_links(reads, entry, opts, plan)
    work = Work(
        entry, plan, status, cache, decided, target, push_from, existing, title, body, links,
        section,
    )  # fmt: skip
    return plan, work


def planned_action(plan: EntryPlan) -> str:
    """Dry-run action: `unchanged` when nothing would be written, else `planned`."""
    if plan.action in (REFUSED, MERGED):
        return plan.action
    return PLANNED if plan.writes else UNCHANGED
