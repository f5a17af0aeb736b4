"""An upstream that is itself a fork: GitHub's `source` is the network's root, `parent` the
repository forked from. A fork of such an upstream is attached (same network), whatever its
`source` names; a fork of another network is not."""

from __future__ import annotations

from patchcarry.github import GitHub
from patchcarry.pulls.reads import Reads, pull_state
from patchcarry.resubmit import fork
from testing import github_scenarios as sc
from testing.fake_github import FakeGitHub, GitHubState

MID = "midorg/Megatron-LM"


def _world(gh: FakeGitHub) -> GitHub:
    state = gh.state
    state.add_token(sc.TOKEN, sc.OWNER)
    state.add_repo(sc.UPSTREAM)
    state.add_repo(MID, fork_of=sc.UPSTREAM)
    state.add_repo("htesd/Megatron-LM-mid", fork_of=MID)  # parent MID, source the root
    state.add_repo("htesd/Megatron-LM-oss", fork_of=sc.UPSTREAM)  # a sibling in the network
    state.add_repo("someone/other")
    state.add_repo("htesd/other-fork", fork_of="someone/other")
    return GitHub(host=gh.url, token=sc.TOKEN)


def test_the_fake_says_source_is_the_root_and_parent_the_forked_repository():
    with FakeGitHub(GitHubState()) as gh:
        repo = _world(gh).request("GET", "/repos/htesd/Megatron-LM-mid")
        assert (repo["parent"]["full_name"], repo["source"]["full_name"]) == (MID, sc.UPSTREAM)


def test_a_fork_of_an_upstream_that_is_itself_a_fork_is_attached():
    with FakeGitHub(GitHubState()) as gh:
        client = _world(gh)
        assert fork.inspect(client, "htesd/Megatron-LM-mid", MID).kind == fork.ForkKind.ATTACHED
        assert fork.inspect(client, "htesd/Megatron-LM-oss", MID).kind == fork.ForkKind.ATTACHED
        other = fork.inspect(client, "htesd/other-fork", MID)
        assert other.kind == fork.ForkKind.DETACHED and "someone/other" in other.note
        assert (
            fork.inspect(client, "htesd/Megatron-LM-mid", sc.UPSTREAM).kind
            == fork.ForkKind.ATTACHED
        )


def test_a_closed_pr_from_a_fork_of_a_fork_upstream_is_not_called_detached():
    with FakeGitHub(GitHubState()) as gh:
        client = _world(gh)
        gh.state.add_pull(MID, number=7, title="t", user=sc.OWNER, head_ref="fix",
                          head_repo="htesd/Megatron-LM-mid", base_ref="main")  # fmt: skip
        gh.state.close_pull(MID, 7, actor=sc.OWNER)
        found = pull_state(Reads(client), MID, 7)
        assert not any("is a fork of" in line for line in found.evidence)
