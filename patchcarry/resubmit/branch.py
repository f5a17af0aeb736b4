"""What a refresh does to the fork branch, which others push to too: a ref pushed atomically
with it records what the tool published; only that head may be rebuilt, others get commits."""

from __future__ import annotations

import dataclasses
import enum

from patchcarry import git, install
from patchcarry.manifest import Entry
from patchcarry.resubmit.ci_gate import ok_to_test
from patchcarry.resubmit.live import Applied, Cache, Revision, on_top, revise
from patchcarry.resubmit.section import locate


def record_ref(branch: str) -> str:
    """The fork ref naming the commit this tool last published on `branch`."""
    return git.own_ref("published", branch)


PUBLISHER_PREFIX = git.own_ref("publisher", "")


def publisher_ref(entry_name: str, branch: str) -> str:
    """The fork ref naming which entry published the record's commit on `branch`."""
    return f"{PUBLISHER_PREFIX}{entry_name}/{branch}"


def publisher_pattern(branch: str) -> str:
    """`git ls-remote` pattern for every entry's publisher ref of `branch`."""
    return f"{PUBLISHER_PREFIX}*/{branch}"


def publishers(found: dict[str, str], branch: str) -> dict[str, str]:
    """{entry name: commit} from an ls-remote answer (entry names hold no slash)."""
    out = {}
    for ref, sha in found.items():
        name = ref.removeprefix(PUBLISHER_PREFIX).removesuffix(f"/{branch}")
        if ref.startswith(PUBLISHER_PREFIX) and ref.endswith(f"/{branch}") and "/" not in name:
            out[name] = sha
    return out


def published_by(entry_name: str, published: str | None, named: dict[str, str]) -> str | None:
    """The entry the record names: this one if its publisher ref holds the commit, else another."""
    if published is None:
        return None
    if named.get(entry_name) == published:
        return entry_name
    return next((name for name, sha in sorted(named.items()) if sha == published), None)


LISTED = 50  # dropped commits the plan's text names one by one; the rest are counted


class BranchKind(enum.StrEnum):
    """What a refresh does to the fork branch (the table above)."""

    NEW = "new"
    UNCHANGED = "unchanged"
    FAST_FORWARD = "fast-forward"
    REWRITE = "rewrite"
    REFUSED = "refused"


@dataclasses.dataclass
class Dropped:
    sha: str
    author: str
    subject: str

    def line(self) -> str:
        return f"{git.short(self.sha)} {self.author}: {self.subject}"


@dataclasses.dataclass
class BranchPlan:
    kind: BranchKind
    reason: str
    live: str | None  # the fork branch's head now (None: absent)
    published: str | None  # what the record says this tool last published
    target: str | None = None  # the commit to push (fast-forward); a rebuild is made later
    dropped: list[Dropped] = dataclasses.field(default_factory=list)
    added: list[str] = dataclasses.field(default_factory=list)
    revises: Revision | None = None  # the earlier revision of the fix it updates
    held: list[str] = dataclasses.field(default_factory=list)  # what waits for --update-live
    # a rebuild of the tool's own publication whose head already holds every fix patch
    rebuild_holds_fix: bool = False

    def dropped_lines(self) -> list[str]:
        """The plan's text for a rewrite: a total, each commit up to LISTED, then a count."""
        if not self.dropped:
            return []
        lines = [f"--rewrite drops {len(self.dropped)} commit(s) (every commit of base..head):"]
        lines += [f"  drops {d.line()}" for d in self.dropped[:LISTED]]
        if len(self.dropped) > LISTED:
            lines.append(f"  and {len(self.dropped) - LISTED} more (--json lists them all)")
        return lines

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind, "reason": self.reason, "live": self.live,
            "published": self.published, "dropped": [dataclasses.asdict(d) for d in self.dropped],
            "revises": self.revises.to_json() if self.revises else None, "held": self.held,
        }  # fmt: skip


def assess(
    cache: Cache, entry: Entry, *, remote: str, base: str, live: str | None,
    published: str | None, rewrite: bool, by: str | None = None,
) -> BranchPlan:  # fmt: skip
    """Local git only: what to do with `entry.head_branch` given its live head and the record."""
    patches = entry.patches()
    if live is None:
        return BranchPlan(BranchKind.NEW, "the fork has no such branch yet", live, published)
    if by is not None and by != entry.name:
        reason = (
            f"the fork's record says entry {by!r} published this branch: two entries on one "
            f"branch would rebuild each other's PR, so nothing is pushed, not even with "
            f"--rewrite; give entry {entry.name!r} its own head_branch in the manifest"
        )
        return BranchPlan(BranchKind.REFUSED, reason, live, published)
    cache.fetch_head(remote, live)
    on_live = cache.apply(live, patches)
    if live == published and not on_live.failed and not on_live.added:
        reason = "the head is what this tool last published"
        return BranchPlan(BranchKind.UNCHANGED, reason, live, published)
    # Only a head the tool built whole is rebuilt, not a commit on top of someone's work.
    ours = live == published and by == entry.name and not on_top(cache.message(live), entry.name)
    if ours or rewrite:
        plan = _rebuild(cache, entry, remote, base, live, published, ours=ours)
        holds = {f.name for f in entry.fixes} <= set(on_live.contained)
        if ours and not rewrite and plan.kind == BranchKind.REWRITE and holds:
            plan = dataclasses.replace(plan, added=on_live.added, rebuild_holds_fix=True)
        return plan
    return _on_top(cache, entry, remote, base, live, published, on_live)


def _rebuild(
    cache: Cache, entry: Entry, remote: str, base: str, live: str, published: str | None, *,
    ours: bool,
) -> BranchPlan:  # fmt: skip
    """Replace the branch by base + patches: the tool's own publication, or `--rewrite`."""
    wanted = cache.apply(base, entry.patches())
    if wanted.failed:
        names = ", ".join(p.name for p in wanted.failed)
        reason = f"{names} does not apply on the base {git.short(base)}: run "
        reason += f"{install.command('check')} {entry.name}"
        return BranchPlan(BranchKind.REFUSED, reason, live, published)
    if ours:
        reason = "the head is exactly what this tool last published, so it is rebuilt "
        reason += "(no one else's commit is dropped)"
        return BranchPlan(BranchKind.REWRITE, reason, live, published)
    between = cache.commits_between(remote, live, stop=base)
    dropped = [Dropped(sha, *cache.describe(sha)) for sha in between]
    reason = "--rewrite: the branch is replaced by base + patches; the commits below leave it"
    return BranchPlan(BranchKind.REWRITE, reason, live, published, dropped=dropped)


def _on_top(
    cache: Cache, entry: Entry, remote: str, base: str, live: str, published: str | None,
    on_live: Applied,
) -> BranchPlan:  # fmt: skip
    """Someone's head: only commits on top (or an update of an earlier revision), or refused."""
    why = "the head is not what this tool published" + (
        f" (it published {git.short(published)})" if published else " (no publication record)"
    )
    if on_live.failed:
        revised = revise(cache, entry, remote=remote, live=live, stop=base)
        if revised is not None:
            return _revised(cache, entry, revised, why, live, published)
        files = sorted({f for p in on_live.failed for f in p.files})
        reason = (
            f"{why}, and {', '.join(p.name for p in on_live.failed)} neither applies on it nor "
            f"is already in it: the branch holds a different edit of {', '.join(files)}. "
            "Nothing is dropped without --rewrite (its plan names what goes); or bring the "
            "branch in line by hand, then re-run"
        )
        return BranchPlan(BranchKind.REFUSED, reason, live, published)
    if not on_live.added:
        reason = f"{why}; it already holds every patch of this entry: nothing to add"
        return BranchPlan(BranchKind.UNCHANGED, reason, live, published)
    target = cache.commit_on(live, on_live.tree, entry, on_live.added)
    reason = f"{why}: one commit on top adds {', '.join(on_live.added)}; every commit stays"
    return BranchPlan(BranchKind.FAST_FORWARD, reason, live, published, target=target,
                      added=on_live.added)  # fmt: skip


def _revised(cache: Cache, entry: Entry, revised: Revision, why: str, live: str,
             published: str | None) -> BranchPlan:  # fmt: skip
    """Fast-forward that updates an earlier revision of the fix, or a refusal naming why not."""
    fix = entry.fix.name
    if revised.tree is None:
        reason = (
            f"{why}; {revised.line()} holds an earlier revision of {fix} ({revised.why}), but "
            f"it cannot be updated cleanly: {'; '.join(revised.conflicts)}. Nothing is dropped "
            "without --rewrite (its plan names what goes); or bring the branch in line by "
            "hand, then re-run"
        )
        return BranchPlan(BranchKind.REFUSED, reason, live, published, revises=revised)
    extra = f"; it also adds {', '.join(revised.added)}" if revised.added else ""
    sentence = (
        f"{git.short(revised.old)} on this branch ({revised.author}: {revised.subject}) holds an "
        f"earlier revision of this change: {revised.why}. This commit turns it into the "
        f"revision in patchcarry's {fix}{extra}."
    )
    target = cache.commit_on(live, revised.tree, entry, [fix, *revised.added], revises=sentence)
    reason = (
        f"{why}: {revised.line()} holds an earlier revision of {fix} ({revised.why}); one "
        f"commit on top turns it into this repo's revision{extra}; every commit stays"
    )
    return BranchPlan(BranchKind.FAST_FORWARD, reason, live, published, target=target,
                      added=[fix, *revised.added], revises=revised)  # fmt: skip


# A live PR whose head already holds the carried fix is left as its author left it (a push
# restarts upstream's CI vetting); what else the tool could add waits for `--update-live`.
FLAG = "--update-live"


def _cost(new_head: str, ci_gate: bool) -> str:
    """What a new head costs an open PR: its CI vetting, else its checks, start over."""
    if not ci_gate:
        return "Its cost: the PR's head changes, so its checks run again on the new head"
    return (
        "Its cost: the PR's head changes, so its CI vetting starts over; only one of upstream's "
        f"PR vetters (a maintainer) can re-vet it, by commenting {ok_to_test(new_head)}"
    )


def keep_live_head(decided: BranchPlan, entry: Entry, *, live_pr: bool, opt_in: bool,
                   ci_gate: bool = True) -> BranchPlan:  # fmt: skip
    """`decided`, or `unchanged` when an open PR's head holds the fix (no `--update-live`)."""
    if not live_pr or opt_in:
        return decided
    if decided.rebuild_holds_fix:  # the tool's own publication: a rebuild is a force-push
        reason = (
            f"the PR's head {git.short(decided.live or '')} is what this tool published and "
            f"already holds the carried fix; nothing is pushed. Held back until you pass {FLAG}: a "
            f"rebuild of the branch that adds {', '.join(decided.added)}. "
            f"{_cost('<new head>', ci_gate)}"
        )
        return dataclasses.replace(
            decided, kind=BranchKind.UNCHANGED, reason=reason, target=None, added=[],
            held=decided.added,
        )  # fmt: skip
    if decided.kind != BranchKind.FAST_FORWARD or decided.target is None:
        return decided
    fixes = {f.name for f in entry.fixes}
    if decided.revises is None and fixes & set(decided.added):
        return decided  # the head lacks the fix's code: carrying it is the job itself
    if decided.revises is not None:
        revises = decided.revises
        what = f"an earlier revision of the fix ({revises.why}) in {git.short(revises.old)}"
    else:
        what = "every fix patch"
    held = ", ".join(decided.added)
    live = decided.live or ""
    reason = (f"the PR's head {git.short(live)} already holds the carried fix ({what}); nothing is "
              f"pushed. Held back until you pass {FLAG}: one commit {git.short(decided.target)} on "
              f"top that adds {held}. {_cost(decided.target, ci_gate)}")  # fmt: skip
    return dataclasses.replace(decided, kind=BranchKind.UNCHANGED, reason=reason, target=None,
                               added=[], held=decided.added)  # fmt: skip


def keep_body(existing_body: str | None, entry: Entry, *, ours: bool, pushing: bool,
              opt_in: bool) -> str:  # fmt: skip
    """Why the PR's description is left alone ("" when the tool may write its section): on a
    head the tool did not publish, a body without its section is its author's text."""
    if pushing or opt_in or ours or locate(existing_body, entry.name).section is not None:
        return ""
    return (f"body: left as its author wrote it (no patchcarry section in it); {FLAG} adds the "
            "tool's section")  # fmt: skip
