"""gpu-check's verdict on upstream's unit tests, from recorded outcomes (as an H200 gave
them): regressions apart from the carried tests' expected flip, and failures equal in both
trees with their cause named."""

from __future__ import annotations

from patchcarry.manifest import load as load_manifest
from patchcarry.measure import unit_verdict, upstream_tests

RANDOM = "tests/unit_tests/tensor_parallel/test_random.py"
RETENTION = "tests/unit_tests/transformer/test_hyper_connection_layer_retention.py"
FLIP = "tests.unit_tests.tensor_parallel.test_random::test_checkpoint_clears_detached_input_grad"
TE = "tests.unit_tests.transformer.test_transformer_layer.TestTE::test_gpu_forward"
WS = "tests.unit_tests.tensor_parallel.test_random::test_model_parallel_cuda_manual_seed"
OK = "tests.unit_tests.tensor_parallel.test_random::test_cuda_rng_tracker"
KEEP = "tests.unit_tests.transformer.test_hyper_connection_layer_retention.T::" + (
    "test_mlp_norm_manager_released_after_forward"
)
TE_ERROR = "ModuleNotFoundError: No module named 'transformer_engine'"
WS_ERROR = "AssertionError: assert 1 == 8 where 1 = torch.distributed.get_world_size()"


def _run(group: str, tree: str, outcomes: dict, messages: dict | None = None, code: int = 1):
    return {"group": group, "tree": tree, "exit_code": code, "outcomes": outcomes,
            "messages": messages or {}}  # fmt: skip


def _carried() -> set[str]:
    return unit_verdict.carried_tests(t for e in load_manifest().entries for t in e.tests)


def test_the_carried_tests_are_read_from_the_test_patches() -> None:
    assert _carried() == {
        "test_checkpoint_clears_detached_input_grad",
        "test_mlp_norm_manager_released_after_forward",
    }
    paths = [path for path, _ in upstream_tests.groups(list(_test_patches()))]
    assert RETENTION in paths and paths.count(RANDOM) == 1


def _test_patches():
    return (t for e in load_manifest().entries for t in e.tests)


def test_h200_outcomes_separate_the_flip_from_the_machines_failures() -> None:
    failing = {TE: "error", WS: "failed"}
    messages = {TE: TE_ERROR, WS: WS_ERROR}
    runs = [
        _run(RANDOM, "unpatched", {FLIP: "failed", OK: "passed", **failing}, messages),
        _run(RANDOM, "patched", {FLIP: "passed", OK: "passed", **failing}, messages),
        _run(RETENTION, "unpatched", {KEEP: "failed"}),
        _run(RETENTION, "patched", {KEEP: "passed"}, code=0),
    ]
    verdict = unit_verdict.classify(runs, _carried())
    assert verdict.ok and verdict.regressions == [] and verdict.missed_flips == []
    assert verdict.expected_flips == [FLIP, KEEP]
    assert verdict.same_in_both == {"Transformer Engine missing": [TE], "world size": [WS]}
    text = unit_verdict.render(verdict)
    assert "Regressions (pass unpatched, fail patched): 0" in text
    assert "- Transformer Engine missing: 1" in text and "- world size: 1" in text


def test_a_regression_and_a_carried_test_that_does_not_flip_fail_the_check() -> None:
    runs = [
        _run(RANDOM, "unpatched", {FLIP: "passed", OK: "passed"}, code=0),
        _run(RANDOM, "patched", {FLIP: "passed", OK: "failed"}, {OK: "AssertionError"}),
    ]
    verdict = unit_verdict.classify(runs, _carried())
    assert not verdict.ok
    assert verdict.regressions == [
        f"{OK}: passed unpatched, failed patched",
        f"{RANDOM}: exit 0 unpatched, 1 patched",
    ]
    assert verdict.missed_flips == [
        f"{FLIP}: passed unpatched, passed patched (expected a flip)",
        "test_mlp_norm_manager_released_after_forward: not run in either tree",
    ]


def test_an_unknown_cause_is_not_guessed() -> None:
    assert unit_verdict.cause("RuntimeError: CUDA error: an illegal memory access") == (
        "fails the same way in both trees"
    )
