"""The fix with `distribute_saved_activations=True` over tensor-parallel size 2 on CPU.

Two ranks (forked from each probe child, gloo on loopback) call the tree's
`parallel_state.initialize_model_parallel(tensor_model_parallel_size=2)`; the checkpoint
input is split across them in forward and gathered back in backward.
"""

from __future__ import annotations

import math
import types
from typing import TYPE_CHECKING

import pytest

# Registers the session fixtures once for all modules (shared trees and probe runs).

if TYPE_CHECKING:
    from testing.tree_fixtures import ProofResults

BATCH, HIDDEN, TP = 4, 8, 2
DTYPE_BYTES = {"float32": 4, "bfloat16": 2}
SCENARIOS = {"tp2-distribute-fp32": "float32", "tp2-distribute-bf16": "bfloat16"}
RANKED = [(name, rank) for name in SCENARIOS for rank in range(TP)]


def iterations(result: dict, scenario: str, rank: int) -> list[dict]:
    entry = result["scenarios"].get(f"{scenario}@rank{rank}")
    setup = result["scenarios"].get(f"setup@rank{rank}") or result["scenarios"].get("tp2")
    assert entry is not None, f"rank {rank} reported nothing: {setup}"
    assert entry["error"] is None, f"{scenario} on rank {rank} failed:\n{entry['error']}"
    assert len(entry["iterations"]) == result["iterations"] >= 2
    return entry["iterations"]


@pytest.mark.parametrize(("scenario", "rank"), RANKED)
def test_saved_activation_was_distributed(
    proof_results: ProofResults, scenario: str, rank: int
) -> None:
    for result in (proof_results.unpatched, proof_results.patched):
        for it in iterations(result, scenario, rank):
            assert it["input_shape_after_forward"] == [BATCH * HIDDEN // TP]


@pytest.mark.parametrize(("scenario", "rank"), RANKED)
def test_unpatched_keeps_gathered_input_grad_patched_none(
    proof_results: ProofResults, scenario: str, rank: int
) -> None:
    dtype = SCENARIOS[scenario]
    full = math.prod([BATCH, HIDDEN]) * DTYPE_BYTES[dtype]  # gathered back to the full input
    unpatched = iterations(proof_results.unpatched, scenario, rank)
    patched = iterations(proof_results.patched, scenario, rank)
    for before, after in zip(unpatched, patched, strict=True):
        assert before["retained"]["grad_bytes"] == full > 0
        assert [g["shape"] for g in before["retained"]["live_grads"]] == [[BATCH, HIDDEN]]
        assert after["retained"]["grad_bytes"] == 0
        assert after["retained"]["live_grads"] == []
        assert after["retained"]["live_inputs"] == before["retained"]["live_inputs"] > 0


@pytest.mark.parametrize(("scenario", "rank"), RANKED)
def test_grads_bit_identical_to_reference(
    proof_results: ProofResults, scenario: str, rank: int
) -> None:
    unpatched = iterations(proof_results.unpatched, scenario, rank)
    patched = iterations(proof_results.patched, scenario, rank)
    rank0 = iterations(proof_results.unpatched, scenario, 0)
    for before, after, first in zip(unpatched, patched, rank0, strict=True):
        assert {"x", "pre.weight", "block.weight"} <= set(before["grads"])
        assert before["grads"] == before["reference_grads"]
        assert after["grads"] == before["grads"]
        assert after["reference_grads"] == before["reference_grads"]
        assert before["grads"] == first["grads"]  # both ranks computed the same replicated block


def test_split_gather_standin_replaces_only_current_device_in_one_module() -> None:
    torch = pytest.importorskip("torch")
    from patchcarry.runtime.standins_dist import install_split_gather_cpu_device_standin

    tp_utils_like = types.ModuleType("tp_utils_like")
    tp_utils_like.torch = torch
    real_current_device = torch.cuda.current_device
    installed = install_split_gather_cpu_device_standin(tp_utils_like)
    if torch.cuda.is_available():
        assert installed is False and tp_utils_like.torch is torch
        return
    assert installed is True
    assert tp_utils_like.torch.cuda.current_device() == torch.device("cpu")
    assert tp_utils_like.torch.empty is torch.empty  # everything else is real torch
    assert tp_utils_like.torch.cuda.is_available is torch.cuda.is_available
    assert torch.cuda.current_device is real_current_device  # torch itself is untouched
