"""On a CUDA machine (the self-hosted GPU runner, `scripts/gpu-check`): the real CUDA RNG
path, no stand-ins, and the caching allocator's floor.

- synthetic model on the installed megatron-core: after backward the allocator floor with
  the fix is lower by exactly the predicted `.grad` bytes, and the gradients are bit-identical;
- the real hyper-connection GPTModel (bf16, needs MEGATRON_SRC): the fix frees the predicted
  `.grad` bytes from the floor, and both fixes free the whole predicted graph.

Shapes keep every retained tensor a multiple of the allocator's 512-byte block, so the
floor differences are exact; a tolerance of one block per layer is allowed all the same.
Skipped with the reason on a machine without CUDA.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from patchcarry.manifest import load as load_manifest
from patchcarry.measure import model, session, variants
from patchcarry.runtime import tree as megatron_tree

pytestmark = pytest.mark.gpu

BLOCK = 512  # the CUDA caching allocator rounds each allocation up to 512 bytes


def _cuda_available() -> bool:
    """nvidia-smi lists a GPU (checked without importing torch in the test process)."""
    if shutil.which("nvidia-smi") is None:
        return False
    listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, check=False)
    return listed.returncode == 0 and "GPU" in listed.stdout


@pytest.fixture(scope="module", autouse=True)
def _needs_cuda() -> None:
    if not _cuda_available():
        pytest.skip("needs CUDA (nvidia-smi lists no GPU); runs on the self-hosted GPU runner")


def _measure(model_name: str, tree: Path, shape: model.Shape, names: list[str]) -> dict:
    request = session.Request(model=model_name, shapes=(shape,), device="cuda", iterations=3)
    plan = variants.plan(load_manifest(), names)
    with tempfile.TemporaryDirectory() as work:
        results = session.run(tree, plan, request, Path(work))
    out = {}
    for r in results:
        assert r.child is not None, r.variant.skip_reason
        assert r.child["cpu_standins"] == [], "stand-ins must not be installed with CUDA"
        assert r.child["cuda_device"]
        out[r.variant.name] = r.child["runs"][0]["iterations"]
    return out


def _floor(iterations: list[dict]) -> int:
    return int(iterations[-1]["cuda"]["allocated_floor_bytes"])


def test_synthetic_floor_drops_by_the_grad_bytes_and_grads_are_identical() -> None:
    shape = model.Shape(layers=3, seq=256, mbs=2, hidden=64, streams=4, dtype="fp32")
    runs = _measure("synthetic", megatron_tree.installed_tree(), shape, ["unpatched", "fix"])
    predicted = model.freed(model.shape_for("synthetic", shape), "fix")
    assert predicted == shape.layers * shape.detached_input_bytes()
    assert runs["fix"][-1]["detached_grad_bytes"] == 0
    assert runs["unpatched"][-1]["detached_grad_bytes"] == predicted
    freed = _floor(runs["unpatched"]) - _floor(runs["fix"])
    assert abs(freed - predicted) <= BLOCK * shape.layers, (freed, predicted)
    assert [i["grad_digest"] for i in runs["fix"]] == [i["grad_digest"] for i in runs["unpatched"]]


def test_hc_gpt_floor_matches_the_model() -> None:
    tree = megatron_tree.upstream_tree_from_env()
    if tree is None:
        pytest.skip("needs an upstream Megatron-LM tree: set MEGATRON_SRC (c76ff61 checkout)")
    shape = model.Shape(layers=2, seq=512, mbs=1, hidden=256, streams=4, dtype="bf16")
    runs = _measure("hc-gpt", tree, shape, ["unpatched", "fix", "both"])
    g = shape.layers * shape.detached_input_bytes()
    assert runs["unpatched"][-1]["detached_grad_bytes"] == g
    assert runs["fix"][-1]["detached_grad_bytes"] == 0
    freed_fix = _floor(runs["unpatched"]) - _floor(runs["fix"])
    assert abs(freed_fix - model.freed(shape, "fix")) <= BLOCK * shape.layers, freed_fix
    freed_both = _floor(runs["unpatched"]) - _floor(runs["both"])
    assert freed_both >= model.freed(shape, "both") - BLOCK * shape.layers, freed_both
