"""The reachability walk's memory: linear in the objects visited (a parent map, a path rebuilt
only when asked), bounded by a stated limit that is an error when hit. Memory is measured with
tracemalloc (testing/audit_walk_bench.py, also `scripts/audit-walk-bench`); no time is."""

from __future__ import annotations

import pytest
import torch

from patchcarry.audit import walk
from testing import audit_walk_bench


def test_a_walk_over_a_10k_deep_autograd_chain_stays_under_the_stated_bound() -> None:
    run = audit_walk_bench.measure(10_000)
    assert run["longest_path"] > 10_000  # the deepest saved tensor's path was rebuilt
    assert run["peak_mib"] <= audit_walk_bench.BOUND_MIB, run


def test_the_object_limit_is_an_error_not_a_silent_cut() -> None:
    holder = audit_walk_bench.holder(200)
    with pytest.raises(walk.WalkLimit, match="limit of 100 objects from root model"):
        walk.reach([("model", holder)], max_objects=100)
    assert len(walk.reach([("model", holder)], max_objects=1_000)) == 202


def test_paths_are_rebuilt_from_the_parent_map_shortest_first() -> None:
    kept = torch.ones(2)
    found = walk.reach([("model", {"a": [kept], "b": {"c": [kept]}})])
    (only,) = found
    assert [(h.kind, h.label) for h in only.path] == [("item", "'a'"), ("item", "0")]
