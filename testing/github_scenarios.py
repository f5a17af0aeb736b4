"""Preloaded GitHub situations for the fake server (testing/fake_github.py).

`detached_fork_close` rebuilds what happened to #6117: htesd's old fork left NVIDIA/Megatron-LM's
fork network (it was made private), so GitHub auto-closed every open PR from it, attributing the
close to the fork owner, in the same second for #6117 and its sibling #6017, and the API now
shows both with `head.repo: null`. Head shas are the real ones from refs/pull/N/head; timestamps
are illustrative but fixed, so tests are deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from patchcarry import git

if TYPE_CHECKING:  # imported lazily so pytest can load testing.fake_github as a plugin first
    from testing.fake_github_state import GitHubState, Pull

UPSTREAM = "NVIDIA/Megatron-LM"
OWNER = "htesd"
OLD_FORK = "htesd/Megatron-LM"
NEW_FORK = "htesd/Megatron-LM-oss"
MAINTAINER = "yaox12"
BOT = "copy-pr-bot[bot]"
TOKEN = "fake-token-htesd"  # a fake credential for the fake server; never a real one
MAINTAINER_TOKEN = "fake-token-yaox12"
BASE_BRANCH = "dev"
CLOSED_AT = "2026-08-05T06:41:19Z"  # one second for both auto-closed PRs

CHECKPOINT_TITLE = "Fix cross-iteration gradient retention in CheckpointFunction.backward"
CHECKPOINT_BRANCH = "fix/checkpoint-detached-grad-retention"
CHECKPOINT_HEAD = "25a782469e6033367f77b00ab53981d8e7c6a89b"  # refs/pull/6117/head
HC_TITLE = "Fix inter-iteration activation retention in HyperConnectionTransformerLayer"
HC_BRANCH = "fix/hc-mlp-norm-manager-retention"
HC_HEAD = "6a1b6085335835f36cc05e1630e06fd343840644"  # refs/pull/6017/head

NewFork = Literal["attached", "detached", "none"]


@dataclass(frozen=True)
class DetachedForkClose:
    """What `detached_fork_close` loaded: names and numbers tests assert on."""

    upstream: str
    owner: str
    token: str
    old_fork: str | None  # None: deleted outright
    new_fork: str | None  # None: not created yet (the resubmit flow must fork)
    closed: tuple[int, ...]
    closed_at: str


def ensure_upstream(state: GitHubState, clone_url: str | Path) -> None:
    """NVIDIA/Megatron-LM (an organization's repository, default branch main) and its people."""
    if UPSTREAM in state.repos:
        return
    state.add_user("NVIDIA", type="Organization", name="NVIDIA Corporation")
    state.add_user(BOT, type="Bot")
    state.add_token(MAINTAINER_TOKEN, MAINTAINER)
    state.add_repo(UPSTREAM, clone_url, default_branch="main", created_at="2019-03-21T16:14:07Z")
    # Illustrative: `DCO gate` is the check upstream's dco-gate workflows publish; a run reads
    # the real rules of `dev` from GitHub, this only gives the loopback one something to say.
    checks = {"strict_required_status_checks_policy": False, "do_not_enforce_on_create": False,
              "required_status_checks": [{"context": "DCO gate"}]}  # fmt: skip
    state.add_branch_rule(UPSTREAM, BASE_BRANCH, "required_status_checks", checks)


def fork_as_github_makes_it(upstream_git: Path, dest: Path) -> None:
    """A bare fork of `upstream_git` at `dest` as GitHub makes one: upstream's objects (shared
    through alternates, as a fork network shares them) and its branches. A push to it then
    sends only what is new, as one to github.com does, not a large upstream's whole history."""
    git.git("init", "-q", "--bare", str(dest), cwd=dest.parent)
    (dest / "objects" / "info" / "alternates").write_text(f"{upstream_git / 'objects'}\n")
    _, heads, _ = git.git("for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/",
                          cwd=upstream_git)  # fmt: skip
    updates = "".join(f"create {ref} {sha}\n" for sha, ref in map(str.split, heads.splitlines()))
    git.git("update-ref", "--stdin", cwd=dest, stdin=updates)


def detached_fork_close(
    state: GitHubState,
    upstream_clone_url: str | Path,
    fork_clone_url: str | Path | None = None,
    *,
    new_fork: NewFork = "attached",
    old_fork: Literal["private", "deleted"] = "private",
) -> DetachedForkClose:
    """#6117 and #6017: closed without merge by htesd in the same second, `head.repo: null`.

    `new_fork`: "attached" adds htesd/Megatron-LM-oss as a real fork (fork: true, parent and
    source = upstream) at `fork_clone_url`; "detached" adds it as a plain repository (fork:
    false), from which GitHub refuses pull requests; "none" leaves it to be created.
    """
    ensure_upstream(state, upstream_clone_url)
    state.add_token(TOKEN, OWNER)
    if old_fork == "private":  # it left the network: a plain private repository now
        state.add_repo(OLD_FORK, None, private=True, created_at="2026-07-01T08:00:00Z")
    sibling = _old_pull(state, 6017, HC_TITLE, HC_BRANCH, HC_HEAD, "2026-07-24T08:20:11Z")
    state.add_comment(UPSTREAM, 6017, user=MAINTAINER, body="/ok to test",
                      at="2026-08-05T02:55:02Z")  # fmt: skip
    pull = _old_pull(state, 6117, CHECKPOINT_TITLE, CHECKPOINT_BRANCH, CHECKPOINT_HEAD,
                     "2026-07-29T04:25:40Z")  # fmt: skip
    for closed in (sibling, pull):
        state.close_pull(UPSTREAM, closed.number, actor=OWNER, at=CLOSED_AT)
    if new_fork != "none":
        fork_of = UPSTREAM if new_fork == "attached" else None
        state.add_repo(NEW_FORK, fork_clone_url, default_branch="main", fork_of=fork_of,
                       created_at="2026-08-07T07:30:00Z")  # fmt: skip
    return DetachedForkClose(
        upstream=UPSTREAM,
        owner=OWNER,
        token=TOKEN,
        old_fork=OLD_FORK if old_fork == "private" else None,
        new_fork=NEW_FORK if new_fork != "none" else None,
        closed=(6017, 6117),
        closed_at=CLOSED_AT,
    )


def _old_pull(
    state: GitHubState, number: int, title: str, branch: str, head: str, created_at: str
) -> Pull:
    pull = state.add_pull(
        UPSTREAM,
        number=number,
        title=title,
        body=f"# What does this PR do ?\n\n{title}.",
        user=OWNER,
        head_ref=branch,
        head_repo=None,  # the old fork is gone from the network
        head_sha=head,
        head_label=f"{OWNER}:{branch}",
        base_ref=BASE_BRANCH,
        created_at=created_at,
    )
    state.add_comment(UPSTREAM, number, user=BOT, at=created_at,
                      body="This pull request requires additional validation before any "
                           "workflows can run on NVIDIA's runners.")  # fmt: skip
    return pull


def _fork_pull(state: GitHubState, fork: str, number: int, title: str, branch: str) -> Pull:
    if fork not in state.repos:
        state.add_repo(fork, None, default_branch="main", fork_of=UPSTREAM)
    owner = fork.split("/")[0]
    return state.add_pull(UPSTREAM, number=number, title=title, user=owner, head_ref=branch,
                          head_repo=fork, base_ref=BASE_BRANCH)  # fmt: skip


def maintainer_closed(
    state: GitHubState, upstream_clone_url: str | Path, *, number: int = 6200
) -> Pull:
    """A PR from an attached fork that a maintainer (yaox12) closed without merging."""
    ensure_upstream(state, upstream_clone_url)
    _fork_pull(state, NEW_FORK, number, "Maintainer-closed change", "fix/closed")
    state.add_comment(UPSTREAM, number, user=MAINTAINER, body="Superseded; closing.")
    return state.close_pull(UPSTREAM, number, actor=MAINTAINER)


def merged(state: GitHubState, upstream_clone_url: str | Path, *, number: int = 6100) -> Pull:
    """A PR from an attached fork that a maintainer merged."""
    ensure_upstream(state, upstream_clone_url)
    pull = _fork_pull(state, NEW_FORK, number, "Merged change", "fix/merged")
    return state.merge_pull(UPSTREAM, pull.number, actor=MAINTAINER)
