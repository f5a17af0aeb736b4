"""`measure --harness pretrain` around the run, on CPU: the refusal without a GPU, the
wrapper that reads every `train_step`, the variant trees, upstream's own parser accepting the
arguments, and the evidence (schema, table, plot) from recorded step figures."""

from __future__ import annotations

import contextlib
import io
import types

import pytest

from patchcarry import cli
from patchcarry.errors import ExitCode
from patchcarry.measure import (
    model,
    pretrain,
    pretrain_args,
    pretrain_child,
    pretrain_evidence,
    pretrain_plot,
    pretrain_setup,
)
from patchcarry.runtime import tree as megatron_tree
from testing import recorded_gpu

SEED = model.pr_seed_shape()


@pytest.mark.torch  # the measure stack (torch, matplotlib) answers first without it
def test_without_a_gpu_it_refuses_in_one_line_and_writes_nothing(tmp_path, capsys) -> None:
    if pretrain.gpus():
        pytest.skip("a GPU is listed here")
    out = tmp_path / "evidence"
    code = cli.main(["measure", "--harness", "pretrain", "--out", str(out)])
    assert code == ExitCode.BAD_INPUT
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "needs a CUDA GPU" in err[0]
    assert not out.exists()
    assert cli.main(["measure", "--harness", "pretrain", "--device", "cpu"]) == ExitCode.USAGE


def test_the_seed_configuration_by_default_and_layers_seq_override() -> None:
    def shape(*extra: str) -> model.Shape:
        from patchcarry.cli import build_parser

        args = build_parser()[0].parse_args(["measure", "--harness", "pretrain", *extra])
        args.device = "cuda"
        return pretrain_setup.shape_for(args)

    assert shape() == SEED
    big = shape("--layers", "9", "--seq", "16384")
    assert (big.layers, big.seq, big.hidden, big.streams, big.dtype) == (9, 16384, 2048, 4, "bf16")
    argv = pretrain_args.argv(big, iterations=5)
    pairs = dict(zip(argv, argv[1:], strict=False))
    assert pairs["--num-layers"] == "9" and pairs["--seq-length"] == "16384"
    assert pairs["--num-residual-streams"] == "4" and "--bf16" in argv
    assert pretrain_setup.command_line(big, 5, 2) == (
        "python -m patchcarry measure --harness pretrain --layers 9 --seq 16384 "
        "--iterations 5 --repeats 2"
    )
    assert pretrain_setup.command_line(SEED, 5, 1, ["unpatched", "fix"]) == (
        "python -m patchcarry measure --harness pretrain --iterations 5 --repeats 1 "
        "--variants unpatched,fix"
    )


def test_the_wrapper_reads_the_allocator_after_every_train_step() -> None:
    calls = []
    training = types.SimpleNamespace(train_step=lambda *a, **k: calls.append(a) or ("loss",))
    allocated = iter([100, 90])

    class Allocator:  # the four torch.cuda calls the wrapper makes, recorded
        def synchronize(self) -> None: ...
        def reset_peak_memory_stats(self) -> None: ...
        def memory_allocated(self) -> int:
            return next(allocated)

        def max_memory_allocated(self) -> int:
            return 500

        def memory_reserved(self) -> int:
            return 1000

    steps: list[dict] = []
    clock = iter([0.0, 0.25, 1.0, 1.5])
    pretrain_child.read_every_step(training, steps, Allocator(), lambda: next(clock))
    assert training.train_step(1) == ("loss",) and training.train_step(2) == ("loss",)
    assert calls == [(1,), (2,)]
    assert [(s["index"], s["allocated_floor_bytes"], s["step_time_s"]) for s in steps] == [
        (0, 100, 0.25),
        (1, 90, 0.5),
    ]
    assert steps[0]["peak_bytes"] == 500 and steps[0]["reserved_bytes"] == 1000


@pytest.mark.torch  # the plot needs matplotlib, in the torch test set
def test_evidence_table_and_plot_from_recorded_steps(tmp_path) -> None:
    peaks = {"unpatched": [30 * 10**9, 31 * 10**9], "fix": [30 * 10**9] * 2,
             "both": [29 * 10**9] * 2}  # fmt: skip
    doc = recorded_gpu.pretrain_doc(peaks)
    path = pretrain_evidence.write(doc, tmp_path / "p.json")
    assert pretrain_evidence.load(path) == doc and pretrain_evidence.is_pretrain(doc)
    by = {v["name"]: v for v in doc["variants"]}
    assert by["fix"]["freed"] == {"floor_bytes": 268_435_456, "predicted": 268_435_456}
    assert by["both"]["freed"]["floor_bytes"] == 603_979_776 == model.freed(SEED, "both")
    assert by["unpatched"]["peak_bytes"] == {"min": 30 * 10**9, "max": 31 * 10**9}
    assert by["fix"]["step_time_ratio"] == 1.0 and doc["repeats"] == 2
    table = pretrain_evidence.render_markdown_table(doc)
    assert "| fix | 14341913088 B (14.34 GB) | 268435456 B (268.44 MB) |" in table
    assert "| 1.000 |" in table and "30000000000 B (30.00 GB) – 31000000000 B" in table
    assert "| reset | skipped: not run |" in table and recorded_gpu.COMMAND in table
    assert pretrain_plot.write_png(doc, tmp_path / "p.png").stat().st_size > 0
    assert pretrain_setup.fix_meets_prediction(doc, 0.0)
    by["fix"]["freed"]["floor_bytes"] -= 1
    assert not pretrain_setup.fix_meets_prediction(doc, 0.0)
    assert pretrain_setup.fix_meets_prediction(doc, 0.05)
    del by["fix"]["freed"]  # skipped or not asked for: nothing was held to the prediction
    assert not pretrain_setup.fix_meets_prediction(doc, 0.05)


def test_variant_trees_carry_upstreams_scripts_and_the_built_helpers(tmp_path) -> None:
    src = tmp_path / "src"
    (src / "megatron" / "core" / "datasets").mkdir(parents=True)
    (src / "megatron" / "core" / "__init__.py").write_text("")
    (src / "pretrain_gpt.py").write_text("# upstream's script\n")
    (src / "gpt_builders.py").write_text("")
    tree = megatron_tree.prepared_copy(src, [], tmp_path / "unpatched")
    assert (tree / "pretrain_gpt.py").read_text() == "# upstream's script\n"
    assert (tree / "gpt_builders.py").is_file()
    installed = tmp_path / "site"
    built = pretrain.prebuilt_helpers(tree, installed)
    assert built is None  # nothing built there
    import sysconfig

    name = f"helpers_cpp{sysconfig.get_config_var('EXT_SUFFIX')}"
    (installed / pretrain.HELPERS).mkdir(parents=True)
    (installed / pretrain.HELPERS / name).write_bytes(b"ELF")
    assert pretrain.prebuilt_helpers(tree, installed) == tree / pretrain.HELPERS / name
    assert pretrain.prebuilt_helpers(tree, installed) is None  # the tree has one now


@pytest.mark.upstream
@pytest.mark.torch  # upstream's megatron.training imports torch
def test_upstreams_own_parser_accepts_the_arguments() -> None:
    src = megatron_tree.upstream_tree_from_env()
    if src is None:
        pytest.skip("needs an upstream Megatron-LM tree: set MEGATRON_SRC (c76ff61 checkout)")
    argv = pretrain_args.argv(SEED, iterations=6)
    parsed = pretrain.run_child(src, argv, timeout_s=300, parse_only=True)["parsed"]
    assert parsed["num_layers"] == 2 and parsed["seq_length"] == 8192
    assert parsed["hidden_size"] == 2048 and parsed["num_residual_streams"] == 4
    assert parsed["bf16"] is True and parsed["params_dtype"] == "torch.bfloat16"
    assert parsed["transformer_impl"] == "local" and parsed["enable_hyper_connections"] is True
    assert (parsed["recompute_granularity"], parsed["recompute_method"]) == ("full", "uniform")
    assert parsed["recompute_num_layers"] == 1 and parsed["mock_data"] is True
    assert parsed["untie_embeddings_and_output_weights"] is True


def test_the_shim_refusal_is_quiet(capsys) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli.main(["measure", "--harness", "pretrain", "--model", "synthetic",
                         "--device", "cuda"]) == ExitCode.USAGE  # fmt: skip
