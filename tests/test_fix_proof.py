"""The fix, proven on the real CheckpointFunction of an unpatched and a patched tree copy.

Each copy is imported in its own child process (`patchcarry.proof.probe`), which checkpoints a
block whose run function keeps its output on the module, for two iterations per scenario.
Expected sizes are restated here from the shapes, not taken from the child's arithmetic.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from patchcarry.proof.probe import ProbeError, run_probe

# Registers the session fixtures once for all modules (shared trees and probe runs).

if TYPE_CHECKING:
    from testing.tree_fixtures import ProofResults

DTYPE_BYTES = {"float32": 4, "bfloat16": 2}
SHORT_DTYPE = {"fp32": "float32", "bf16": "bfloat16"}
BATCH, HIDDEN, INNER = 4, 8, 6  # the probe's documented input shapes

# Detached inputs whose .grad a checkpoint leaves reachable (unpatched), per scenario kind:
# the hidden input at each checkpoint level; never the side input (no grad, or None).
RETAINED_SHAPES = {
    "plain": [[BATCH, HIDDEN]],
    "nested": [[BATCH, HIDDEN], [BATCH, INNER]],
    "side-no-grad": [[BATCH, HIDDEN]],
    "side-none": [[BATCH, HIDDEN]],
}
SCENARIOS = [f"{kind}-{short}" for short in SHORT_DTYPE for kind in RETAINED_SHAPES]
# What the run function got as its second input when checkpoint recomputed it.
SIDE_IN_RECOMPUTE = {"side-no-grad": "tensor requires_grad=False", "side-none": "None"}
PARAM_GRADS = {
    "plain": {"pre.weight", "pre.bias", "block.weight", "block.bias"},
    "nested": {
        "pre.weight",
        "pre.bias",
        "outer.weight",
        "outer.bias",
        "inner.weight",
        "inner.bias",
    },
}


def kind_and_dtype(scenario: str) -> tuple[str, str]:
    kind, short = scenario.rsplit("-", 1)
    return kind, SHORT_DTYPE[short]


def expected_grad_bytes(shapes: list[list[int]], dtype: str) -> int:
    return sum(math.prod(shape) * DTYPE_BYTES[dtype] for shape in shapes)


def iterations(result: dict, scenario: str) -> list[dict]:
    entry = result["scenarios"][scenario]
    assert entry["error"] is None, f"{scenario} failed in the probe child:\n{entry['error']}"
    assert len(entry["iterations"]) == result["iterations"] >= 2
    return entry["iterations"]


def test_each_probe_imported_its_own_copy(proof_results: ProofResults) -> None:
    pair = proof_results.pair
    for tree, result in (
        (pair.unpatched, proof_results.unpatched),
        (pair.patched, proof_results.patched),
    ):
        assert result["module_file"] == str(tree / "megatron/core/tensor_parallel/random.py")
    fixed_line = "                inp.grad = None"
    assert fixed_line in (pair.patched / "megatron/core/tensor_parallel/random.py").read_text()
    assert (
        fixed_line not in (pair.unpatched / "megatron/core/tensor_parallel/random.py").read_text()
    )
    assert proof_results.unpatched["cuda_available"] is False  # so the CPU stand-in was used


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_unpatched_keeps_detached_input_grads_after_backward(
    proof_results: ProofResults, scenario: str
) -> None:
    kind, dtype = kind_and_dtype(scenario)
    want_shapes = RETAINED_SHAPES[kind]
    for it in iterations(proof_results.unpatched, scenario):
        kept = it["retained"]
        assert sorted(g["shape"] for g in kept["live_grads"]) == sorted(want_shapes)
        assert {g["dtype"] for g in kept["live_grads"]} == {dtype}
        assert kept["grad_bytes"] == expected_grad_bytes(want_shapes, dtype) > 0
        assert kept["live_inputs"] >= len(want_shapes)  # weakrefs to the detached leaves alive


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_patched_keeps_no_detached_input_grad(proof_results: ProofResults, scenario: str) -> None:
    unpatched = iterations(proof_results.unpatched, scenario)
    for it, before in zip(iterations(proof_results.patched, scenario), unpatched, strict=True):
        assert it["retained"]["grad_bytes"] == 0
        assert it["retained"]["live_grads"] == []
        # Same situation as unpatched: the kept output still pins the leaves; only .grad is gone.
        assert it["retained"]["live_inputs"] == before["retained"]["live_inputs"] > 0


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_leaf_and_parameter_grads_are_bit_identical(
    proof_results: ProofResults, scenario: str
) -> None:
    kind, _ = kind_and_dtype(scenario)
    want_keys = {"x"} | PARAM_GRADS["nested" if kind == "nested" else "plain"]
    unpatched = iterations(proof_results.unpatched, scenario)
    patched = iterations(proof_results.patched, scenario)
    for before, after in zip(unpatched, patched, strict=True):
        assert set(before["grads"]) == want_keys
        assert before["grads"] == before["reference_grads"]  # checkpointed == un-checkpointed
        assert after["grads"] == before["grads"]  # patched == unpatched
        assert after["reference_grads"] == before["reference_grads"]
        assert before["input_shape_after_forward"] == [BATCH, HIDDEN]  # not distributed
    # The iterations use different inputs, so equality above is not vacuous.
    assert unpatched[0]["grads"]["x"] != unpatched[1]["grads"]["x"]


@pytest.mark.parametrize("kind", sorted(SIDE_IN_RECOMPUTE))
@pytest.mark.parametrize("short", sorted(SHORT_DTYPE))
def test_side_inputs_pass_through_recompute(
    proof_results: ProofResults, kind: str, short: str
) -> None:
    """A no-grad tensor stays no-grad through detach_variable; None stays None (no crash)."""
    for result in (proof_results.unpatched, proof_results.patched):
        for it in iterations(result, f"{kind}-{short}"):
            assert it["side_in_recompute"] == SIDE_IN_RECOMPUTE[kind]


def test_probe_refuses_a_directory_without_megatron(tmp_path: Path) -> None:
    with pytest.raises(ProbeError, match="no megatron/core/__init__.py"):
        run_probe(tmp_path, ("cpu",))
