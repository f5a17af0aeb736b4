"""Phase 2 of an entry's journey: local git only. What the fork branch becomes (`branch.
assess`: unchanged, a commit on top, a rebuild, or refused), the new branch built when one is
needed (`assemble`), and whether the push changes .github/workflows (`capability`). Objects
come into the cache by the ids the read phase observed; no ref or API is read here."""

from __future__ import annotations

import contextlib
import dataclasses
import tempfile
from pathlib import Path

from patchcarry import git
from patchcarry.resubmit import assemble, branch_refs, fork, hold, workflow_scope
from patchcarry.resubmit import branch as branches
from patchcarry.resubmit.live import Cache
from patchcarry.resubmit.observe import Observed, RunFacts
from patchcarry.resubmit.options import Options


@dataclasses.dataclass(frozen=True)
class Built:
    """What the branch work found and made for one entry."""

    branch: branches.BranchPlan
    target: str | None = None  # the commit the branch moves to (None: it stays)
    push_from: Path | None = None  # the repo holding `target`
    assembled: assemble.Branch | None = None  # a branch built new (base + patches)
    base_label: str = "pinned base"
    workflow: str | None = None  # why the push needs the `workflow` scope (None: it does not)


def build_entry(
    seen: Observed, facts: RunFacts, opts: Options, stack: contextlib.ExitStack
) -> Built | None:
    """The branch for `seen.entry`; None when the reads settled it (no fork branch to work on)."""
    status, entry, cache = seen.fork, seen.entry, Cache(facts.cache)
    if status is None or status.kind == fork.DETACHED:
        return None
    base = entry.base_commit
    if opts.rebase:
        base = git.rev_parse(f"refs/patchcarry/heads/{entry.base_branch}", cwd=cache.repo)
    remote = cache.add_fork(status.clone_url) if status.clone_url else "origin"
    decided = branches.assess(
        cache,
        entry,
        remote=remote,
        base=base,
        live=seen.live,
        published=seen.published,
        rewrite=opts.rewrite,
        by=branch_refs.published_by(entry.name, seen.published, dict(seen.publishers)),
    )
    decided = hold.keep_live_head(decided, entry, live_pr=seen.pull is not None,
                                  opt_in=opts.update_live)  # fmt: skip
    label = f"{entry.base_branch} tip" if opts.rebase else "pinned base"
    built = Built(decided, base_label=label)
    if decided.kind == branches.FAST_FORWARD:
        built = dataclasses.replace(built, target=decided.target, push_from=cache.repo)
    elif decided.kind in (branches.NEW, branches.REWRITE):
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="resubmit-")))
        made = assemble.build(entry, facts.upstream_url, scratch / entry.name, rebase=opts.rebase)
        built = dataclasses.replace(
            built, target=made.commit, push_from=scratch / entry.name, assembled=made
        )
    if built.target is None:
        return built
    workflow = workflow_scope.needs_scope(
        built.target, built.push_from, decided.kind, len(entry.patches()), cache, seen.fork_side
    )
    return dataclasses.replace(built, workflow=workflow)
