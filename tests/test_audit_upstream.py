"""The audit on upstream's real hyper-connection GPTModel (MEGATRON_SRC, c76ff61): it finds
exactly the two known sites with the analytic model's bytes, the fix removes the `.grad` site,
both patches leave nothing held by a layer, and without hyper connections nothing is held.

Three child processes (unpatched, fix, both), each auditing both configurations.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from patchcarry.audit import configs, evidence, runner
from patchcarry.manifest import load as load_manifest
from patchcarry.measure import model, variants
from patchcarry.runtime import tree as megatron_tree

pytestmark = pytest.mark.upstream

HC, NO_HC = "hc-full-uniform-1", "nohc-full-uniform-1"
SHAPE = model.Shape(**configs.SHAPE)


@pytest.fixture(scope="module")
def doc() -> dict:
    tree = megatron_tree.upstream_tree_from_env()
    if tree is None:
        pytest.skip("needs an upstream Megatron-LM tree: set MEGATRON_SRC (c76ff61 checkout)")
    request = runner.Request(model="hc-gpt", configs=tuple(configs.resolve([HC, NO_HC])))
    plan = variants.plan(load_manifest(), ["unpatched", "fix", "both"])
    with tempfile.TemporaryDirectory() as work:
        results = runner.run(tree, plan, request, Path(work))
    return evidence.build(
        request, results, tree={"source": str(tree), "label": "-", "commit": None}
    )


def _layer_bytes_by_entry(doc: dict, variant: str, config: str) -> dict[str | None, int]:
    v = next(v for v in doc["variants"] if v["name"] == variant)
    c = next(c for c in v["configs"] if c["name"] == config)
    assert c["error"] is None, c["error"]
    out: dict[str | None, int] = {}
    for s in evidence.layer_sites(c):
        out[s["known"]] = out.get(s["known"], 0) + s["bytes"]
    return out


def test_unpatched_finds_exactly_the_two_known_sites_with_the_model_bytes(doc) -> None:
    p = model.predict(SHAPE, "unpatched")
    assert _layer_bytes_by_entry(doc, "unpatched", HC) == {
        "checkpoint-grad": p.detached_grad_bytes,
        "hc-mlp-norm-manager": p.detached_input_bytes + p.kept_tensor_bytes,
    }
    assert doc["cpu_standins"], "a CPU run without the named stand-ins?"


def test_the_fix_alone_removes_the_grad_site(doc) -> None:
    p = model.predict(SHAPE, "fix")
    assert p.detached_grad_bytes == 0
    assert _layer_bytes_by_entry(doc, "fix", HC) == {
        "hc-mlp-norm-manager": p.detached_input_bytes + p.kept_tensor_bytes
    }


def test_both_patches_leave_nothing_held_by_a_layer(doc) -> None:
    assert _layer_bytes_by_entry(doc, "both", HC) == {}


@pytest.mark.parametrize("variant", ["unpatched", "fix", "both"])
def test_without_hyper_connections_no_layer_holds_anything(doc, variant) -> None:
    assert _layer_bytes_by_entry(doc, variant, NO_HC) == {}


def test_the_sites_are_named_by_the_manager_path(doc) -> None:
    v = next(v for v in doc["variants"] if v["name"] == "unpatched")
    c = next(c for c in v["configs"] if c["name"] == HC)
    names = {s["site"] for s in evidence.layer_sites(c)}
    assert "decoder.layers.*.mlp_norm_manager.tensor → … → AccumulateGrad.variable.grad" in names
    assert all(n.startswith("decoder.layers.*.mlp_norm_manager.") for n in names), names
