"""PRs closed by fork detachment and not carried yet, on one upstream or everywhere (search)."""

from __future__ import annotations

import dataclasses
import datetime
import re
import shlex
import time
from collections.abc import Sequence
from typing import Any

from patchcarry import tokens
from patchcarry.adopt.landed import Judge
from patchcarry.adopt.pull import default_name
from patchcarry.check.render import commit_words
from patchcarry.check.report import Landing
from patchcarry.errors import FatalError
from patchcarry.github import RateLimited
from patchcarry.github_types import CommentRef, Forge, PullRef
from patchcarry.markers import opening
from patchcarry.pulls import classify
from patchcarry.pulls.ownership import LINK_PREFIX, own_comments
from patchcarry.pulls.reads import Reads, pull_state, read_pull_state

_SHELL_SAFE_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./:#-]*$")


@dataclasses.dataclass
class Closed:
    upstream: str
    title: str
    item: classify.Classification
    carried_by: str | None  # "manifest entry X" / "cross-link comment" / None
    adopt: str | None  # the command to run, when it was closed by detachment and not carried
    landing: Landing | None = None  # its change on its base branch since (detached, not carried)
    landing_note: str | None = None  # why the landing could not be judged

    @property
    def landed(self) -> str | None:
        """ "landed upstream since as <commit>" when its change has landed, else None."""
        if self.landing is None or not self.landing.landed:
            return None
        return f"{self.landing.verdict} upstream since, as {commit_words(self.landing)}"

    def to_json(self) -> dict[str, object]:
        landing: Any = None if self.landing is None else dataclasses.asdict(self.landing)
        return {**self.item.to_json(), "upstream": self.upstream, "title": self.title,
                "carried_by": self.carried_by, "adopt": self.adopt, "landing": landing,
                "landing_note": self.landing_note}  # fmt: skip


def _cross_linked(comments: list[CommentRef], login: str) -> bool:
    """Whether `login` left a cross-link comment: re-submitted from another checkout."""
    return any(opening(c.body).startswith(LINK_PREFIX) for c in own_comments(comments, login))


@dataclasses.dataclass
class Found:
    """A PR of one upstream closed by fork detachment, and what carries it."""

    item: classify.Classification
    title: str
    resubmitted_by: str | None  # "#N (manifest entry X)" / "cross-link comment" / None
    planned_in: str | None = None  # a manifest entry lists it but has no PR yet

    def to_json(self) -> dict[str, object]:
        return {**self.item.to_json(), "title": self.title, "resubmitted_by": self.resubmitted_by,
                "planned_in": self.planned_in}  # fmt: skip


def scan(
    gh: Forge, upstream: str, author: str, known: dict[int, tuple[str, int | None]], *,
    trusted: str | None = None,
) -> list[Found]:  # fmt: skip
    """Every closed-by-detachment PR of `author` on `upstream`; `trusted` cross-links count."""
    found: list[Found] = []
    classes = []
    reads = Reads(gh)
    query = f"repo:{upstream} is:pr is:closed is:unmerged author:{author}"
    numbers = [hit.number for hit in gh.search_issues(query, max_pages=5)]
    for done, number in enumerate(numbers):
        if _stop(gh, done, len(numbers)):
            break
        try:
            item = pull_state(reads, upstream, number)
            pull = reads.pull(upstream, number)
            entry, new_pr = known.get(number, (None, None))
            by = f"#{new_pr} (manifest entry {entry})" if entry and new_pr else None
            if (
                item.state == classify.PullState.DETACHED and by is None
                and _cross_linked(reads.comments(upstream, number), trusted or author)
            ):  # fmt: skip
                by = "cross-link comment"  # fmt: skip
        except RateLimited as exc:  # what was found stands; the rest is said to be unread
            gh.partial.append(f"stopped after {done} of {len(numbers)} PRs: {exc}")
            break
        classes.append(item)
        if item.state != classify.PullState.DETACHED:
            continue
        found.append(Found(item, pull.title, by, entry if by is None else None))
    classify.add_sibling_evidence(classes)
    return sorted(found, key=lambda f: f.item.number)


PR_READS = 4  # the most API reads one PR costs here: the PR, its events, comments, repository


def _stop(gh: Forge, done: int, total: int) -> bool:
    """Whether the quota left cannot pay for the next PR and resets later than the run may wait."""
    core = gh.quotas.get("core")
    if core is None or core.remaining >= PR_READS:
        return False
    wait = core.reset - time.time()
    if wait <= gh.max_rate_wait:
        return False  # the client waits for the reset itself
    when = datetime.datetime.fromtimestamp(core.reset, tz=datetime.UTC)
    whose = "without a token" if gh.token_kind is None else "for this token"
    more = f"; set {tokens.variable(gh.host)} for 5,000 an hour" if gh.token_kind is None else ""
    gh.partial.append(
        f"stopped after {done} of {total} PRs: GitHub grants {core.limit} requests an hour "
        f"{whose} and {core.remaining} are left until {when:%H:%M} UTC; re-run after that for "
        f"the rest{more}"
    )
    return True


def _adopt_command(upstream: str, number: int, head_ref: str, names: set[str],
                   command: Sequence[str]) -> str:  # fmt: skip
    name = default_name(head_ref, number)
    args = [*command[0].split(" "), f"{upstream}#{number}", *command[1:]]
    if name in names:  # the default name is taken: the command must not fail on a clash
        args += ["--name", f"{name}-{number}"]
    # `#` inside a word is no shell comment: quote only what a shell would misread
    return " ".join(a if _SHELL_SAFE_RE.match(a) else shlex.quote(a) for a in args)


def scan_all(
    gh: Forge, author: str, carried: dict[tuple[str, int], str], names: set[str], *,
    trusted: str | None = None, per_page: int = 100, landed_since: Judge | None = None,
    adopt: Sequence[str] = ("patchcarry adopt",),
) -> list[Closed]:  # fmt: skip
    """`author`'s closed, unmerged PRs everywhere; `carried`: (owner/repo lowercased, N) ->
    entry. A PR `landed_since` finds landed gets no `adopt` command (adopt would refuse it)."""
    query = f"author:{author} is:pr is:closed is:unmerged"
    found: list[Closed] = []
    hits = gh.search_issues(query, per_page=per_page)
    for done, hit in enumerate(hits):
        if _stop(gh, done, len(hits)):
            break
        upstream, number = hit.repo, hit.number
        try:
            pull, item = read_pull_state(gh, upstream, number)
            by = carried.get((upstream.lower(), number))
            command = None
            if item.state == classify.PullState.DETACHED:
                if by is None and _cross_linked(gh.issue_comments(upstream, number),
                                                trusted or author):  # fmt: skip
                    by = "cross-link comment"
                if by is None:
                    command = _adopt_command(upstream, number, pull.head_ref, names, adopt)
            closed = Closed(upstream, pull.title, item, by, command)
            if command is not None and landed_since is not None:
                _judge_landing(closed, pull, landed_since)
        except RateLimited as exc:  # what was found stands; the rest is said to be unread
            gh.partial.append(f"stopped after {done} of {len(hits)} PRs: {exc}")
            break
        found.append(closed)
    classify.add_sibling_evidence(c.item for c in found)
    return sorted(found, key=lambda c: (c.upstream.lower(), c.item.number))


def _judge_landing(closed: Closed, pull: PullRef, landed_since: Judge) -> None:
    try:
        closed.landing = landed_since(closed.upstream, closed.item.number, pull.base_ref)
    except FatalError as exc:  # its head is gone, upstream unreachable: said, not guessed
        closed.landing_note = f"landing not judged: {exc}"
        return
    if closed.landing is None:
        closed.landing_note = "landing not judged: its commits cannot be carried as patches"
    elif closed.landing.landed:
        closed.adopt = None  # adopt refuses it, as it refuses a merged PR
