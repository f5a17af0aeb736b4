"""`measure --model hc-gpt --device cpu --dtype bf16` on an upstream tree (MEGATRON_SRC): the
model is wrapped in upstream's own `Float16Module`, as `get_model` wraps it for training, so
bf16 runs on CPU and every figure is exact.

Without the wrapper the hyper-connection module's fp32 outputs meet bf16 layers and the first
forward fails (`expected m1 and m2 to have the same dtype` in `linear_qkv`). A small shape,
the real command, every variant in its own process; the expected bytes come from the shape.
"""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from patchcarry import cli
from patchcarry.errors import ExitCode
from patchcarry.measure import model
from patchcarry.runtime import tree as megatron_tree

pytestmark = pytest.mark.upstream

SHAPE = {"layers": 2, "seq": 8, "mbs": 1, "hidden": 16, "streams": 4}
BF16 = 2


@pytest.fixture(scope="module")
def bf16_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict]:
    if megatron_tree.upstream_tree_from_env() is None:
        pytest.skip("needs an upstream Megatron-LM tree: set MEGATRON_SRC (c76ff61 checkout)")
    out = tmp_path_factory.mktemp("bf16")
    argv = ["measure", "--model", "hc-gpt", "--device", "cpu", "--dtype", "bf16"]
    argv += ["--iterations", "2", "--out", str(out), "--require-predicted", "0"]
    argv += ["--variants", "unpatched,fix,both"]  # three processes: seconds on two cores
    for key, value in SHAPE.items():
        argv += [f"--{key}", str(value)]
    with contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(argv)
    return code, json.loads((out / "hc-gpt-cpu.json").read_text())


def test_bf16_runs_on_cpu_and_every_variant_matches_the_model_to_the_byte(bf16_run) -> None:
    code, doc = bf16_run
    assert code == ExitCode.OK
    shape = model.Shape(dtype="bf16", **SHAPE)
    g = SHAPE["seq"] * SHAPE["mbs"] * SHAPE["hidden"] * SHAPE["streams"] * BF16
    k = SHAPE["seq"] * SHAPE["mbs"] * SHAPE["hidden"] * BF16
    expected = {  # (detached .grad, detached inputs, live-tensor floor freed)
        "unpatched": (2 * g, 2 * g, 0),
        "fix": (0, 2 * g, 2 * g),
        "both": (0, 0, 2 * (2 * g + k)),
    }
    variants = {v["name"]: v for v in doc["runs"][0]["variants"]}
    assert set(variants) == set(expected)
    for name, (grad, inputs, freed) in expected.items():
        v = variants[name]
        assert v["status"] == "measured", v.get("skip_reason")
        assert (v["retained"]["detached_grad_bytes"], v["retained"]["detached_input_bytes"]) == (
            grad,
            inputs,
        ), name
        assert v["freed"]["live_tensor_bytes"] == freed == model.freed(shape, name), name
        assert v["grads_identical_to_unpatched"] is True, name
    assert (g, k) == (1024, 256)  # the figures above, written out: 2 layers, bf16
