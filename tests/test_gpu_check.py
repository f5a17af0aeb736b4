"""gpu-check on CPU: what it would run on one H200 (the steps and their arguments), and its
summary from recorded outcomes: regressions apart from the carried tests' flip and from the
failures the machine causes in both trees, step times against the budget, every table."""

from __future__ import annotations

import json
from pathlib import Path

from patchcarry.measure import gpu_check, gpu_summary, pretrain_evidence
from testing import recorded_gpu

FLIP = "tests.unit_tests.tensor_parallel.test_random::test_checkpoint_clears_detached_input_grad"
TE = "tests.unit_tests.transformer.test_transformer_layer.TestTE::test_gpu_forward"
GROUP = "tests/unit_tests/tensor_parallel/test_random.py"


def _plan(tmp_path: Path, **kw) -> tuple[list, list]:
    args = {"dry_run": False, "gpu_count": 1, "gpu_gib": 140, "has_gpu_tests": True, **kw}
    return gpu_check.plan(tmp_path, **args)


def test_on_one_h200_every_step_is_planned(tmp_path) -> None:
    side, alone = _plan(tmp_path)
    names = [s.name for s in side + alone]
    assert names == [
        "GPU tests (pytest -m gpu)",
        "upstream unit tests, unpatched vs patched",
        "retention audit, one process per variant",
        "seed configuration, this harness",
        "seed configuration, upstream's training loop",
        "9 layers, seq 16384, upstream's training loop",
    ]
    assert all(s.skip_reason is None for s in side + alone)
    assert [s.key for s in alone] == ["seed-loop", "big-loop"]
    harness = " ".join(side[3].argv)
    loop, big = (" ".join(s.argv) for s in alone)
    assert "--seed-config" in harness and "--device cuda" in harness
    assert "--harness pretrain --repeats 2" in loop and "--layers" not in loop
    assert "--harness pretrain" in big and "--layers 9 --seq 16384" in big
    assert "--sweep" in " ".join(side[2].argv) and "--nproc 1" in " ".join(side[1].argv)


def test_a_smaller_gpu_skips_the_big_run_and_a_dry_run_skips_the_loop(tmp_path) -> None:
    _, alone = _plan(tmp_path, gpu_gib=80)
    assert alone[1].skip_reason == "the GPU has 80 GiB (< 120)"
    side, alone = _plan(tmp_path, dry_run=True, gpu_count=0, gpu_gib=0, has_gpu_tests=False)
    assert "--no-torchrun" in side[1].argv and "--config" in side[2].argv
    assert "--dtype bf16" in " ".join(side[3].argv) and side[3].skip_reason is None
    assert [s.skip_reason is not None for s in alone] == [True, True]
    assert side[0].skip_reason and "run from a checkout" in side[0].skip_reason


def test_summary_from_recorded_outcomes(tmp_path) -> None:
    pretrain_evidence.write(
        recorded_gpu.pretrain_doc(), tmp_path / "hc-gpt-pretrain-cuda-2l-seq8192.json"
    )
    runs = [
        {"group": GROUP, "tree": "unpatched", "exit_code": 1,
         "outcomes": {FLIP: "failed", TE: "error"},
         "messages": {TE: "ModuleNotFoundError: No module named 'transformer_engine'"}},
        {"group": GROUP, "tree": "patched", "exit_code": 1,
         "outcomes": {FLIP: "passed", TE: "error"},
         "messages": {TE: "ModuleNotFoundError: No module named 'transformer_engine'"}},
    ]  # fmt: skip
    carried = ["test_checkpoint_clears_detached_input_grad"]
    (tmp_path / "upstream-tests.json").write_text(
        json.dumps({"runs": runs, "carried_tests": carried})
    )
    tests = "upstream unit tests, unpatched vs patched"
    big = "9 layers, seq 16384, upstream's training loop"
    outcomes = [
        gpu_summary.Outcome(tests, True, 95.0, "logs/u.log", None),
        gpu_summary.Outcome(big, None, 0.0, None, "small"),
    ]
    text = gpu_summary.render(
        tmp_path, "Upstream tree: c76ff61", outcomes, wall_s=540, budget_s=600
    )
    assert "| upstream unit tests, unpatched vs patched | ok | 95 | logs/u.log |" in text
    assert "| 9 layers, seq 16384, upstream's training loop | skipped: small | 0 |  |" in text
    assert "Wall time: 540 s (within the 600 s budget)" in text
    assert "Regressions (pass unpatched, fail patched): 0" in text
    assert f"- `{FLIP}`" in text
    assert "- Transformer Engine missing: 1" in text and f"  - `{TE}`" in text
    assert "Training loop (hc-gpt-pretrain-cuda-2l-seq8192.json)" in text
    assert "| fix | 14341913088 B (14.34 GB) | 268435456 B (268.44 MB) |" in text
    over = gpu_summary.render(tmp_path, "t", outcomes, wall_s=700, budget_s=600)
    assert "Wall time: 700 s (OVER the 600 s budget)" in over


def test_steps_selects_and_an_unknown_step_is_a_usage_error(tmp_path) -> None:
    from patchcarry import cli
    from patchcarry.errors import ExitCode

    side, alone = _plan(tmp_path)
    assert [s.key for s in side + alone] == list(gpu_check.STEP_KEYS)
    chosen = gpu_check.only(side + alone, ["seed-loop", "big-loop"])
    assert [s.key for s in chosen if s.skip_reason is None] == ["seed-loop", "big-loop"]
    assert cli.main(["gpu-check", "--steps", "seed-loop,nope", str(tmp_path / "o")]) == (
        ExitCode.USAGE
    )
    assert not (tmp_path / "o").exists()


def test_the_gpu_tests_line_follows_the_step_key_not_its_title(tmp_path) -> None:
    """The summary finds the GPU tests' log by the step's key; a reworded title keeps it."""
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "gpu-tests.log").write_text("...\n3 passed in 9.1s\n")
    renamed = gpu_summary.Outcome("GPU checks", True, 9.0, "logs/gpu-tests.log", None, "gpu-tests")
    text = gpu_summary.render(tmp_path, "t", [renamed], wall_s=10, budget_s=600)
    assert "GPU tests: 3 passed in 9.1s" in text
