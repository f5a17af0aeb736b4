"""Phase 1 (run.py): every read once into frozen values; a settled entry costs no more."""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Mapping
from pathlib import Path

from patchcarry import git, hosts
from patchcarry.check import render
from patchcarry.check.report import CheckReport
from patchcarry.check.run import run_checks
from patchcarry.errors import BadInputError, NetworkError, UpstreamError, UsageError
from patchcarry.github import NotFoundError
from patchcarry.github_types import BranchRef, Forge, PullRef, RepoRef, RuleRef
from patchcarry.manifest import Entry, key_line
from patchcarry.measure.impact import Impact, for_entries
from patchcarry.pulls import classify, ownership
from patchcarry.pulls.classify import Classification, PullState
from patchcarry.pulls.reads import Reads, pull_state
from patchcarry.resubmit import branch as branches
from patchcarry.resubmit import ci_gate, default_branch, fork, inert
from patchcarry.resubmit.body import carries_unit_tests
from patchcarry.resubmit.model import Options


def today() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")


@dataclasses.dataclass(frozen=True)
class RunFacts:
    """What holds for every entry of the run, read once."""

    token: bool  # whether a token is set (without it the run is a dry run)
    login: str  # the token's user ("" without a token): only its comments count as ours
    token_kind: str | None
    scopes: frozenset[str] | None
    upstream_url: str
    today: str  # the date a revision line records
    report: CheckReport
    cache: Path  # the check's blob-less cache repo: the live branches are read there
    classes: Mapping[int, Classification]  # every superseded and recorded PR, classified
    defaults: Mapping[str, str | None]  # entry name -> its fork's default branch
    # upstream -> its PR template, as its default branch holds it (None: it has none)
    templates: Mapping[str, str | None] = dataclasses.field(default_factory=dict)
    # the token user's commit emails (None without a token): other authors' text is made inert
    own_emails: frozenset[str] | None = None
    # upstream -> whether copy-pr-bot vets its PR heads (`ci_gate`); missing: not read
    ci_gates: Mapping[str, bool] = dataclasses.field(default_factory=dict)
    impacts: Mapping[str, Impact | None] = dataclasses.field(default_factory=dict)  # by entry


@dataclasses.dataclass(frozen=True)
class Vetting:
    """Upstream's CI gate branch for PR `pr` as read (`readable` False: it could not be)."""

    pr: int
    readable: bool
    sha: str | None

    def vets(self, head: str | None) -> bool:
        """Whether upstream's CI gate points at `head`: it is vetted."""
        return self.readable and head is not None and self.sha == head


@dataclasses.dataclass(frozen=True)
class ForkSide:
    """The fork's branches as git reads them: what GitHub counts when judging workflow scope."""

    url: str
    owner: str  # whose branches, in words ("OWNER/NAME (to be made)")
    heads: tuple[str, ...] = ()  # every branch head (commits the fork has, with their trees)


@dataclasses.dataclass(frozen=True)
class Settled:
    """The entry's outcome without any further read: merged (`merged` set) or refused."""

    reason: str
    merged: Classification | None = None


@dataclasses.dataclass(frozen=True)
class Observed:
    """Everything read for one entry; fields after `settled` stay empty once it is settled."""

    entry: Entry
    check_lines: tuple[str, ...]
    applies: bool
    review_lines: tuple[str, ...] = ()  # the check's results in a reviewer's words (PR body)
    pr_template: str | None = None  # upstream's PR template (its default branch)
    impact: Impact | None = None  # the measured impact the body shows
    token_login: str = ""  # the run's token user, so `decide` needs this value alone
    own_emails: frozenset[str] | None = None  # the token user's commit emails (RunFacts')
    current: Classification | None = None  # the manifest's recorded PR
    superseded: tuple[Classification, ...] = ()
    settled: Settled | None = None  # what `current` and `superseded` alone decide (`settle`)
    fork: fork.ForkStatus | None = None
    live: str | None = None  # the fork branch's head (None: absent)
    published: str | None = None  # the publication record's commit
    publishers: Mapping[str, str] = dataclasses.field(default_factory=dict)
    vetting: Vetting | None = None
    pull: PullRef | None = None  # the open PR from the fork branch
    linked: frozenset[int] = frozenset()  # superseded PRs that hold our cross-link already
    locked: frozenset[int] = frozenset()  # superseded PRs whose conversation is locked
    rules: tuple[RuleRef, ...] | None = ()  # upstream's active rules (None: not readable)
    fork_side: ForkSide | None = None  # the fork's branches (for the workflow scope)
    classic: BranchRef | None = None  # the base branch: what anyone may read of its protection
    upstream_repo: RepoRef | None = None  # GET /repos answers, read anyway (archived, who may
    fork_repo: RepoRef | None = None  # open PRs): judged by the gate before any write
    # whether upstream vets PR heads with copy-pr-bot (`ci_gate`); None: not read
    ci_gate: bool | None = None


def observe_run(entries: list[Entry], opts: Options, gh: Forge, reads: Reads, *,
                token: str | None) -> RunFacts:  # fmt: skip
    """The run's facts: login, upstream URL, the check, the PRs' states, default branches."""
    user = gh.user() if token is not None else None
    login = user.login if user is not None else ""
    upstreams = sorted({e.upstream for e in entries})
    if len(upstreams) > 1 and opts.upstream_url:
        raise UsageError("--upstream-url names one repository, but the entries use several")
    url = opts.upstream_url or _clone_url(reads, upstreams[0], gh.host)
    report = run_checks(entries, upstream=url)
    assert report.cache is not None  # an upstream check always has its cache
    defaults = {e.name: _default_branch(reads, e) for e in entries}
    classes = _classify_all(reads, entries, opts.manifest_path)
    cache = Path(report.cache)
    tips = {u: default_branch.tip(reads, u, cache) for u in upstreams}
    templates = {u: default_branch.pr_template(reads, u, cache, tip) for u, tip in tips.items()}
    gates = {u: ci_gate.uses_copy_pr_bot(cache, tip) for u, tip in tips.items()}
    own = inert.own_emails(user) if user is not None else None
    found = for_entries(entries, opts.evidence, opts.manifest_path, carries_unit_tests)
    return RunFacts(token is not None, login, gh.token_kind, gh.scopes, url, today(), report, cache,
                    classes, defaults, templates, own, gates, found)  # fmt: skip


# GitHub's documentation: a token not authorized for an organisation that enforces SAML SSO
# "may receive a 404 Not Found or a 403 Forbidden error" on its resources
_HIDDEN = (
    "If its organisation enforces SAML single sign-on, GitHub answers a token not authorized "
    "for it with 404: authorize the token for the organisation (Settings > Developer settings "
    "> your token > Configure SSO); otherwise check the name"
)


def _clone_url(reads: Reads, upstream: str, host: str) -> str:
    repo = reads.repo(upstream)
    if repo is None:
        raise UpstreamError(f"{upstream} not found on {host}. {_HIDDEN}")
    return hosts.answered_git_url(reads.host, upstream, repo.clone_url)


def _default_branch(reads: Reads, entry: Entry) -> str | None:
    """The fork's default branch; a missing fork would get upstream's (default_branch_only)."""
    repo = reads.repo(entry.fork) or reads.repo(entry.upstream)
    return repo.default_branch if repo else None


def _classify_all(reads: Reads, entries: list[Entry],
                  path: Path | None) -> dict[int, Classification]:  # fmt: skip
    """Every superseded and recorded PR of the selected entries, with same-second siblings."""
    found: dict[int, Classification] = {}
    for entry in entries:
        for number in (*entry.supersedes, *([entry.pr] if entry.pr else [])):
            if number in found:
                continue
            try:
                found[number] = pull_state(reads, entry.upstream, number)
            except NotFoundError:
                key = "pr" if number == entry.pr else "supersedes"
                where = f"{key_line(path, entry.name, key)}: " if path else ""
                if reads.repo(entry.upstream) is None:  # not even the repository: unknowable
                    raise UpstreamError(
                        f"{where}entry {entry.name!r}: `{key}` names #{number}, but the token "
                        f"sees neither it nor {entry.upstream} (404). {_HIDDEN}"
                    ) from None
                raise BadInputError(
                    f"{where}entry {entry.name!r}: `{key}` names #{number}, which "
                    f"{entry.upstream} does not have: fix that line of the manifest"
                ) from None
    classify.add_sibling_evidence(found.values())
    return found


def observe_entry(reads: Reads, facts: RunFacts, entry: Entry, opts: Options) -> Observed:
    """One entry's reads, in the order they settle it."""
    result = facts.report.entry(entry.name)
    lines = tuple(render.sentences(result, entry))
    dates = git.commit_dates([r.commit for r in result.refs if r.commit], cwd=facts.cache)
    review = tuple(render.review_sentences(result, entry, dates))
    template, gated = facts.templates.get(entry.upstream), facts.ci_gates.get(entry.upstream)
    seen = Observed(entry, lines, result.status.ok, review, template,
                    facts.impacts.get(entry.name), ci_gate=gated)  # fmt: skip
    if not seen.applies:
        return seen
    if reads.repo(entry.upstream) is None:
        raise UpstreamError(f"{entry.upstream} not found; check --upstream-repo/GH_HOST")
    current, superseded = history(entry, facts.classes)
    seen = dataclasses.replace(seen, token_login=facts.login, own_emails=facts.own_emails,
                               current=current, superseded=superseded,
                               settled=settle(current, superseded, force=opts.force))  # fmt: skip
    if seen.settled is not None:
        return seen
    status = fork.inspect(reads, entry.fork, entry.upstream)
    seen = dataclasses.replace(seen, fork=status)
    if status.kind == fork.ForkKind.DETACHED:
        return seen
    live, published, publishers = _read_live(status, entry, facts.cache)
    return dataclasses.replace(
        seen, live=live, published=published, publishers=publishers,
        vetting=_read_vetting(entry, live, facts.upstream_url) if seen.ci_gate else None,
        pull=_read_pull(reads, entry, status, current),
        linked=_read_links(reads, entry, superseded, opts.force, facts.login),
        locked=frozenset(c.number for c in superseded
                         if reads.pull(entry.upstream, c.number).locked),
        rules=_read_rules(reads, entry.upstream, entry.base_branch),
        fork_side=_read_fork_side(reads, entry, status, facts),
        classic=reads.branch(entry.upstream, entry.base_branch),
        upstream_repo=reads.repo(entry.upstream),
        fork_repo=reads.repo(entry.fork) if status.kind == fork.ForkKind.ATTACHED else None,
    )  # fmt: skip


def _read_live(status: fork.ForkStatus, entry: Entry,
               cache: Path) -> tuple[str | None, str | None, dict[str, str]]:  # fmt: skip
    """(live head, published record, {entry: its publisher ref}): one `git ls-remote`."""
    if status.kind != fork.ForkKind.ATTACHED or not status.clone_url:
        return None, None, {}
    branch = entry.head_branch
    refs = [f"refs/heads/{branch}", branches.record_ref(branch), branches.publisher_pattern(branch)]
    try:
        found = git.ls_remote_with_token(status.clone_url, refs, cwd=cache)
    except git.GitError:
        raise NetworkError(
            f"could not read {status.full_name} with git (a fork's git side can lag its API "
            "for a minute after it is created): retry in a minute"
        ) from None
    return found.get(refs[0]), found.get(refs[1]), branches.publishers(found, branch)


def _read_vetting(entry: Entry, head: str | None, upstream_url: str) -> Vetting | None:
    """Upstream's CI gate (copy-pr-bot's branch for the PR), when there is a head."""
    if entry.pr is None or head is None:
        return None
    ref = f"refs/heads/{ci_gate.gate_branch(entry.pr)}"
    code, found, _ = git.ls_remote_refs(upstream_url, [ref])
    return Vetting(entry.pr, code == 0, found.get(ref) if code == 0 else None)


def _read_pull(reads: Reads, entry: Entry, status: fork.ForkStatus,
               current: Classification | None) -> PullRef | None:  # fmt: skip
    """The open PR from the fork branch: the recorded one when it still comes from there."""
    label = f"{status.full_name.split('/')[0]}:{entry.head_branch}"
    if current is not None and current.state == classify.PullState.OPEN:
        if current.head_label == label:
            return reads.pull(entry.upstream, current.number)
    if status.kind != fork.ForkKind.ATTACHED:
        return None
    for pull in reads.open_pulls(entry.upstream, label, entry.base_branch):
        if pull.head_label == label:  # the whole PR: a list item
            return reads.pull(entry.upstream, pull.number)  # lacks maintainer_can_modify
    return None


def _read_links(reads: Reads, entry: Entry, superseded: tuple[Classification, ...], force: bool,
                login: str) -> frozenset[int]:  # fmt: skip
    """The superseded PRs a cross-link may go to that already hold the token user's."""
    linked = set()
    for item in superseded:
        if item.state != classify.PullState.DETACHED and not force:
            continue
        marker = ownership.link_marker(entry.name, item.number)
        if ownership.marked(reads.comments(entry.upstream, item.number), marker, login):
            linked.add(item.number)
    return frozenset(linked)


def _read_fork_side(reads: Reads, entry: Entry, status: fork.ForkStatus,
                    facts: RunFacts) -> ForkSide:  # fmt: skip
    """The fork's heads (one `ls-remote`); a fork to be made: upstream's default branch alone."""
    if status.kind == fork.ForkKind.ATTACHED and status.clone_url:
        url, repo = status.clone_url, reads.repo(entry.fork)
        owner, pattern = entry.fork, "refs/heads/*"
    else:
        url, repo = facts.upstream_url, reads.repo(entry.upstream)
        owner, pattern = f"{entry.fork} (to be made)", ""
    default = (repo.default_branch if repo else None) or "main"
    ref = f"refs/heads/{default}"
    code, found, _ = git.ls_remote_refs(url, [pattern or ref], cwd=facts.cache)
    found = found if code == 0 else {}
    # the branches most likely to hold the pushed history first: only MAX_HEADS are read
    first = [r for r in (f"refs/heads/{entry.base_branch}", ref) if r in found]
    heads = tuple(dict.fromkeys(found[r] for r in [*first, *found]))
    return ForkSide(url, owner, heads)


# What the superseded and recorded PRs alone settle, before the fork is read: merged
# (nothing to do) or a decision someone else made (refused without --force).
_BLOCKING = (classify.PullState.MAINTAINER, classify.PullState.AUTHOR,
             classify.PullState.UNKNOWN, classify.PullState.OPEN)  # fmt: skip


def history(
    entry: Entry, classes: Mapping[int, Classification]
) -> tuple[Classification | None, tuple[Classification, ...]]:
    """(the recorded PR, every PR it supersedes, the recorded one too if closed unmerged)."""
    current = classes[entry.pr] if entry.pr else None
    superseded = [classes[n] for n in entry.supersedes]
    if current is not None and current.state not in (PullState.OPEN, PullState.MERGED):
        superseded.append(current)
    return current, tuple(superseded)


def settle(current: Classification | None, superseded: tuple[Classification, ...], *,
           force: bool) -> Settled | None:  # fmt: skip
    """Merged / closed by someone / still open elsewhere; None when the entry goes on."""
    if current is not None and current.state == classify.PullState.MERGED:
        return Settled(f"#{current.number} is merged: nothing to do", current)
    merged = [c for c in superseded if c.state == classify.PullState.MERGED]
    if merged:
        return Settled(f"#{merged[0].number} was merged: nothing to re-submit", merged[0])
    blocking = [c for c in superseded if c.state in _BLOCKING]
    if blocking and not force:
        return Settled(
            "; ".join(f"#{c.number} is {c.state}" for c in blocking)
            + ": re-submitting would override that decision; pass --force if you mean it"
        )
    return None


def _read_rules(reads: Reads, upstream: str, branch: str) -> tuple[RuleRef, ...] | None:
    """The base branch's active rules; None where GitHub serves no rulesets (404): not "none"."""
    try:
        return tuple(reads.branch_rules(upstream, branch))
    except NotFoundError:
        return None
