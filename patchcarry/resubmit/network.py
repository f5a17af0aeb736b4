"""Which fork network a repository belongs to, as GitHub's repository answer says it.

GitHub names two repositories on a fork: `parent`, the one it was forked from, and `source`,
the root of the whole network. An upstream may itself be a fork (a team's fork of Megatron-LM
taking PRs): its forks have it as `parent` and its own root as `source`. Any repository of the
upstream's network can open a PR to it, so "attached" means: a fork whose `source` is the
upstream's root (the upstream itself when it is no fork)."""

from __future__ import annotations

from typing import Any, Protocol

Json = dict[str, Any]


class RepoReader(Protocol):
    def repo(self, full_name: str) -> Json | None: ...


def root(reader: RepoReader, upstream: str) -> str:
    """The root of `upstream`'s network: its `source` when it is a fork, else itself (also
    when it cannot be read: the caller reports that on its own)."""
    repo = reader.repo(upstream)
    if repo and repo.get("fork"):
        return str((repo.get("source") or {}).get("full_name") or upstream)
    return upstream


def same_network(repo: Json, network_root: str) -> bool:
    """Whether `repo` (a repository answer) is a fork in the network rooted at `network_root`."""
    source = (repo.get("source") or {}).get("full_name")
    return bool(repo.get("fork") and source and source.lower() == network_root.lower())
