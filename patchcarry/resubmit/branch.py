"""Decides what a refresh does to the fork branch, which people other than this tool push to.

The publication record is a ref on the fork itself, `refs/patchcarry/published/<branch>`,
pushed atomically with the branch and naming the commit this tool last published there. A ref
on the fork (rather than the manifest, a file on one machine, or a commit trailer, which
anyone's rebase copies) is read by the same `git ls-remote` that reads the branch, from any
clone or CI job that can read the fork, and no one else's push moves it. A branch head equal
to that record holds nothing the tool did not publish, so it may be rebuilt (leased on that
value); any other head holds someone's work, and the default only adds commits on top:

  new           the branch does not exist: push `base + patches`
  unchanged     the branch already holds this repo's change: nothing to push
  fast-forward  one commit on the live head turns its tree into "live tree + the patches";
                or, when the branch holds an earlier revision of the fix (revise.py), one
                commit that turns that revision into this repo's (3-way, per file)
  rewrite       replace the branch (own publication, or `--rewrite`): the plan names each
                commit it drops
  refused       the patches neither apply on the live head nor are already in it

The record also names the entry that published it: beside it, `refs/patchcarry/publisher/
<entry>/<branch>` holds the same commit, moved in the same atomic push. A record whose commit
no publisher ref of this entry holds (another entry's, from another manifest or clone, or a
record older than the names) is no licence to rebuild; another entry's branch is refused.
"""

from __future__ import annotations

import dataclasses

from patchcarry.manifest import Entry
from patchcarry.resubmit import revise
from patchcarry.resubmit.live import FAST_FORWARD_NOTE, Applied, Cache

NEW, UNCHANGED, FAST_FORWARD = "new", "unchanged", "fast-forward"
LISTED = 50  # dropped commits the plan's text names one by one; the rest are counted
REWRITE, REFUSED = "rewrite", "refused"


@dataclasses.dataclass
class Dropped:
    sha: str
    author: str
    subject: str

    def line(self) -> str:
        return f"{self.sha[:12]} {self.author}: {self.subject}"


@dataclasses.dataclass
class BranchPlan:
    kind: str
    reason: str
    live: str | None  # the fork branch's head now (None: absent)
    published: str | None  # what the record says this tool last published
    target: str | None = None  # the commit to push (fast-forward); a rebuild is made later
    dropped: list[Dropped] = dataclasses.field(default_factory=list)
    added: list[str] = dataclasses.field(default_factory=list)
    revises: revise.Revision | None = None  # the earlier revision of the fix it updates
    held: list[str] = dataclasses.field(default_factory=list)  # what waits for --update-live
    # a rebuild of the tool's own publication whose head already holds every fix patch
    # (only `added` is new): hold.keep_live_head holds it on an open PR, as it holds a commit
    # on top of someone's head
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
            "kind": self.kind,
            "reason": self.reason,
            "live": self.live,
            "published": self.published,
            "dropped": [dataclasses.asdict(d) for d in self.dropped],
            "revises": self.revises.to_json() if self.revises else None,
            "held": self.held,
        }


def assess(
    cache: Cache,
    entry: Entry,
    *,
    remote: str,
    base: str,
    live: str | None,
    published: str | None,
    rewrite: bool,
    by: str | None = None,
) -> BranchPlan:
    """Local git only: what to do with `entry.head_branch` given its live head and the
    record (`by`: the entry the record names, see `branch_refs.published_by`)."""
    patches = entry.patches()
    if live is None:
        return BranchPlan(NEW, "the fork has no such branch yet", live, published)
    if by is not None and by != entry.name:
        return BranchPlan(
            REFUSED,
            f"the fork's record says entry {by!r} published this branch: two entries on one "
            f"branch would rebuild each other's PR, so nothing is pushed, not even with "
            f"--rewrite; give entry {entry.name!r} its own head_branch in the manifest",
            live,
            published,
        )
    cache.fetch_head(remote, live)
    on_live = cache.apply(live, patches)
    if live == published and not on_live.failed and not on_live.added:
        return BranchPlan(UNCHANGED, "the head is what this tool last published", live, published)
    # A publication that was itself a commit on top of someone's work is not rebuilt: that
    # would drop their commits underneath. Only a head the tool built whole is.
    ours = live == published and by == entry.name and FAST_FORWARD_NOTE not in cache.message(live)
    if ours or rewrite:
        plan = _rebuild(cache, entry, remote, base, live, published, ours=ours)
        fixes = {f.name for f in entry.fixes}
        if ours and not rewrite and plan.kind == REWRITE and fixes <= set(on_live.contained):
            plan = dataclasses.replace(plan, added=on_live.added, rebuild_holds_fix=True)
        return plan
    return _on_top(cache, entry, remote, base, live, published, on_live)


def _rebuild(
    cache: Cache,
    entry: Entry,
    remote: str,
    base: str,
    live: str,
    published: str | None,
    *,
    ours: bool,
) -> BranchPlan:
    """Replace the branch by base + patches: the tool's own publication, or `--rewrite`
    (which names every commit it drops)."""
    wanted = cache.apply(base, entry.patches())
    if wanted.failed:
        names = ", ".join(p.name for p in wanted.failed)
        return BranchPlan(
            REFUSED,
            f"{names} does not apply on the base {base[:12]}: run scripts/check {entry.name}",
            live,
            published,
        )
    if ours:
        return BranchPlan(
            REWRITE,
            "the head is exactly what this tool last published, so it is rebuilt "
            "(no one else's commit is dropped)",
            live,
            published,
        )
    dropped = [
        Dropped(sha, *cache.describe(sha)) for sha in cache.commits_between(remote, live, stop=base)
    ]
    return BranchPlan(
        REWRITE,
        "--rewrite: the branch is replaced by base + patches; the commits below leave it",
        live,
        published,
        dropped=dropped,
    )


def _on_top(
    cache: Cache,
    entry: Entry,
    remote: str,
    base: str,
    live: str,
    published: str | None,
    on_live: Applied,
) -> BranchPlan:
    """Someone's head: only commits on top (or an update of an earlier revision), or refused."""
    why = "the head is not what this tool published" + (
        f" (it published {published[:12]})" if published else " (no publication record)"
    )
    if on_live.failed:
        revised = revise.revise(cache, entry, remote=remote, live=live, stop=base)
        if revised is not None:
            return _revised(cache, entry, revised, why, live, published)
        files = sorted({f for p in on_live.failed for f in p.files})
        return BranchPlan(
            REFUSED,
            f"{why}, and {', '.join(p.name for p in on_live.failed)} neither applies on it nor "
            f"is already in it: the branch holds a different edit of {', '.join(files)}. "
            "Nothing is dropped without --rewrite (its plan names what goes); or bring the "
            "branch in line by hand, then re-run",
            live,
            published,
        )
    if not on_live.added:
        return BranchPlan(
            UNCHANGED,
            f"{why}; it already holds every patch of this entry: nothing to add",
            live,
            published,
        )
    target = cache.commit_on(live, on_live.tree, entry, on_live.added)
    return BranchPlan(
        FAST_FORWARD,
        f"{why}: one commit on top adds {', '.join(on_live.added)}; every commit stays",
        live,
        published,
        target=target,
        added=on_live.added,
    )


def _revised(
    cache: Cache,
    entry: Entry,
    revised: revise.Revision,
    why: str,
    live: str,
    published: str | None,
) -> BranchPlan:
    """Fast-forward that updates an earlier revision of the fix, or a refusal naming why not."""
    fix = entry.fix.name
    if revised.tree is None:
        return BranchPlan(
            REFUSED,
            f"{why}; {revised.line()} holds an earlier revision of {fix} ({revised.why}), but "
            f"it cannot be updated cleanly: {'; '.join(revised.conflicts)}. Nothing is dropped "
            "without --rewrite (its plan names what goes); or bring the branch in line by "
            "hand, then re-run",
            live,
            published,
            revises=revised,
        )
    extra = f"; it also adds {', '.join(revised.added)}" if revised.added else ""
    sentence = (
        f"{revised.old[:12]} on this branch ({revised.author}: {revised.subject}) holds an "
        f"earlier revision of this change: {revised.why}. This commit turns it into the "
        f"revision in patchcarry's {fix}{extra}."
    )
    target = cache.commit_on(live, revised.tree, entry, [fix, *revised.added], revises=sentence)
    return BranchPlan(
        FAST_FORWARD,
        f"{why}: {revised.line()} holds an earlier revision of {fix} ({revised.why}); one "
        f"commit on top turns it into this repo's revision{extra}; every commit stays",
        live,
        published,
        target=target,
        added=[fix, *revised.added],
        revises=revised,
    )
