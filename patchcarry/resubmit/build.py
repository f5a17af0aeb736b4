"""Phase 2 (run.py), local git only: the new fork branch and whether it needs `workflow`."""

from __future__ import annotations

import contextlib
import dataclasses
import tempfile
from pathlib import Path

from patchcarry import git, install, patchrules, progress
from patchcarry.errors import FatalError, UpstreamError
from patchcarry.manifest import Entry
from patchcarry.resubmit import branch as branches
from patchcarry.resubmit import fork
from patchcarry.resubmit.live import Cache
from patchcarry.resubmit.model import Options
from patchcarry.resubmit.observe import ForkSide, Observed, RunFacts


@dataclasses.dataclass(frozen=True)
class Built:
    """What the branch work found and made for one entry."""

    branch: branches.BranchPlan
    target: str | None = None  # the commit the branch moves to (None: it stays)
    push_from: Path | None = None  # the repo holding `target`
    assembled: Assembled | None = None  # a branch built new (base + patches)
    base_label: str = "pinned base"
    workflow: str | None = None  # why the push needs the `workflow` scope (None: it does not)


def build_entry(seen: Observed, facts: RunFacts, opts: Options,
                stack: contextlib.ExitStack) -> Built | None:  # fmt: skip
    """The branch for `seen.entry`; None when the reads settled it (no fork branch to work on)."""
    status, entry, cache = seen.fork, seen.entry, Cache(facts.cache)
    if status is None or status.kind == fork.ForkKind.DETACHED:
        return None
    base = entry.base_commit
    if opts.rebase:
        base = git.rev_parse(git.own_ref("heads", entry.base_branch), cwd=cache.repo)
    remote = cache.add_fork(status.clone_url) if status.clone_url else "origin"
    by = branches.published_by(entry.name, seen.published, dict(seen.publishers))
    decided = branches.assess(cache, entry, remote=remote, base=base, live=seen.live,
                              published=seen.published, rewrite=opts.rewrite, by=by)  # fmt: skip
    decided = branches.keep_live_head(decided, entry, live_pr=seen.pull is not None,
                                  opt_in=opts.update_live,
                                  ci_gate=seen.ci_gate is not False)  # fmt: skip
    label = f"{entry.base_branch} tip" if opts.rebase else "pinned base"
    built = Built(decided, base_label=label)
    if decided.kind == branches.BranchKind.FAST_FORWARD:
        built = dataclasses.replace(built, target=decided.target, push_from=cache.repo)
    elif decided.kind in (branches.BranchKind.NEW, branches.BranchKind.REWRITE):
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="resubmit-")))
        progress.say(f"{entry.name}: fetching the {label} from upstream to build on ...")
        made = assemble(entry, facts.upstream_url, scratch / entry.name, rebase=opts.rebase)
        built = dataclasses.replace(built, target=made.commit, push_from=scratch / entry.name,
                                    assembled=made)  # fmt: skip
    if built.target is None:
        return built
    if decided.kind != branches.BranchKind.FAST_FORWARD:
        progress.say(f"{entry.name}: reading the fork's branches' history to tell whether the push "
                     f"brings a {WORKFLOWS}/ change (the `workflow` scope) ...")  # fmt: skip
    workflow = needs_scope(built.target, built.push_from, decided.kind, len(entry.patches()), cache,
                           seen.fork_side)  # fmt: skip
    return dataclasses.replace(built, workflow=workflow)


@dataclasses.dataclass
class Assembled:
    base: str  # the commit the patches were applied on
    commit: str  # the branch tip to push
    patches: int


def assemble(entry: Entry, upstream_url: str, scratch: Path, *, rebase: bool) -> Assembled:
    """Base (pinned, or with `rebase` the tip), fetched shallow, + `git am` of the patches."""
    git.init(scratch)
    ref = f"refs/heads/{entry.base_branch}" if rebase else entry.base_commit
    try:
        base = git.fetch_commit(upstream_url, ref, cwd=scratch, shallow=True)
    except git.GitError as exc:
        raise UpstreamError(
            f"could not fetch {ref} from {upstream_url} ({exc.said}); "
            "check --upstream-url and that the commit exists upstream"
        ) from None
    git.checkout_detached(base, cwd=scratch)
    name, email = entry.fix.author_name, entry.fix.author_email
    patches = entry.patches()
    try:
        paths = [p.path for p in patches]
        commit = git.am(paths, cwd=scratch, committer_name=name, committer_email=email)
    except git.GitError as exc:
        where = f"{entry.base_branch} tip" if rebase else "the pinned base"
        raise FatalError(
            f"{entry.name}: the patches do not apply with `git am` on {where} {git.short(base)}: "
            f"{exc.said}; run {install.command('check')} {entry.name}"
        ) from None
    patchrules.refuse_special(entry.name, git.special_paths(base, commit, cwd=scratch))
    return Assembled(base=base, commit=commit, patches=len(patches))


# GitHub wants the `workflow` scope for a push with a commit, new to the fork, that changes
# `.github/workflows/` to contents no fork branch holds.
WORKFLOWS = ".github/workflows"
MAX_HEADS = 20  # fork branches whose history is read to tell which commits are new to it
MAX_NEW = 200  # new commits judged one by one (each reads its trees lazily)


def _changes(commit: str, parents: list[str], cwd: Path) -> list[tuple[str, str, str]]:
    """(status, path, new blob) of each workflow file `commit` changes (merges: `-m`)."""
    first = parents[0] if len(parents) > 1 else None
    return git.changes_under(commit, WORKFLOWS, cwd=cwd, first_parent=first)


def _held(heads: tuple[str, ...], cwd: Path) -> set[tuple[str, str]]:
    """Every (path, blob) of a workflow file on the fork's branches (trees only)."""
    return {held for sha in heads for held in git.blobs_under(sha, WORKFLOWS, cwd=cwd)}


def needs_scope(
    target: str | None, push_from: Path | None, kind: str, patches: int, cache: Cache,
    side: ForkSide | None,
) -> str | None:  # fmt: skip
    """Why the push of `target` needs the `workflow` scope, or None when it does not."""
    if target is None or push_from is None or kind == branches.BranchKind.FAST_FORWARD:
        return None  # nothing pushed, or one commit on the live head, which the fork has
    base = git.rev_parse(f"{target}~{patches}", cwd=push_from)
    heads = side.heads if side is not None else ()
    owner = side.owner if side is not None else "the fork"
    if not heads:
        if not git.rev_exists(f"{base}:{WORKFLOWS}", cwd=push_from):
            return None
        return (f"{owner} has no branch yet: all of the pushed history is new to it, "
                f"its {WORKFLOWS}/ included")  # fmt: skip
    assert side is not None
    remote = cache.add_fork(side.url)
    cache.fetch_heads(remote, heads)
    cache.fetch_histories(remote, heads[:MAX_HEADS])
    cache.fetch_history("origin", base)
    listed = git.rev_list_with_parents(base, *heads[:MAX_HEADS], cwd=cache.repo)[::-1]
    parents = dict(listed)  # oldest first, each with its parents
    new = [sha for sha, _ in listed]
    if not new:
        return None
    if len(new) > MAX_NEW:
        return (f"{len(new)} commits of the pushed history are new to {owner} (more than the "
                f"{MAX_NEW} judged one by one); any of them may change {WORKFLOWS}/")  # fmt: skip
    held = _held(heads, cache.repo)
    for commit in new:
        for status, path, blob in _changes(commit, parents[commit], cache.repo):
            if status != "D" and (path, blob) in held:
                continue
            verb = {"A": "adds", "D": "deletes"}.get(status, "changes")
            what = "merge commit" if len(parents[commit]) > 1 else "commit"
            against = " (against its first parent)" if what == "merge commit" else ""
            return (
                f"{what} {git.short(commit)} of the pushed history {verb} {path}{against}, which "
                f"no branch of {owner} holds with those contents"
            )
    return None
