"""The audit on upstream's real hyper-connection GPTModel (MEGATRON_SRC, c76ff61): it finds
exactly the two known sites with the analytic model's bytes, the fix removes the `.grad` site,
both patches leave nothing held by a layer, and without hyper connections nothing is held.

Three child processes (unpatched, fix, both), each auditing both configurations; one more
on a planted copy of the tree (a module-level cache and a gradient hook's closure, each
keeping the decoder output every step): both are new, growing sites at their exact bytes.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from patchcarry.audit import configs, evidence, findings, judge, runner
from patchcarry.cli import main
from patchcarry.manifest import load as load_manifest
from patchcarry.measure import model, variants
from patchcarry.runtime import tree as megatron_tree
from testing import audit_planted

pytestmark = pytest.mark.upstream

HC, NO_HC = "hc-full-uniform-1", "nohc-full-uniform-1"
SHAPE = model.Shape(**configs.SHAPE)
BASELINE = Path(__file__).resolve().parent.parent / "evidence" / "audit-hc-gpt-cpu.json"


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


GPT_MODEL = Path("megatron/core/models/gpt/gpt_model.py")
ANCHOR = "            mhc_multistream = None\n"
PLANTED = """
        _PLANTED_CACHE.append(hidden_states.detach().clone())  # a module-level growing cache
        _kept = hidden_states.detach()  # a gradient hook's closure keeps an activation
        self.embedding.word_embeddings.weight.register_hook(lambda g: g if _kept is None else g)
"""
CACHE_SITE = "megatron.core.models.gpt.gpt_model:_PLANTED_CACHE[*]"
HOOK_SITE = "embedding.word_embeddings.weight._backward_hooks[*]._kept"


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> dict:
    """A copy of the upstream tree whose GPTModel.forward keeps its decoder output twice:
    in a module-level list and in a gradient hook's closure, both once per step."""
    tree = megatron_tree.upstream_tree_from_env()
    if tree is None:
        pytest.skip("needs an upstream Megatron-LM tree: set MEGATRON_SRC (c76ff61 checkout)")
    copy = tmp_path_factory.mktemp("planted")
    shutil.copytree(tree / "megatron", copy / "megatron")
    source = (copy / GPT_MODEL).read_text()
    assert ANCHOR in source
    source = source.replace(ANCHOR, ANCHOR + PLANTED, 1)
    (copy / GPT_MODEL).write_text(source + "\n_PLANTED_CACHE = []\n")
    request = runner.Request(model="hc-gpt", configs=tuple(configs.resolve([HC])), iterations=3)
    child = runner.run_child(copy, request)
    (config,) = child["configs"]
    assert config["error"] is None, config.get("traceback")
    return audit_planted.doc_of(config, HC)


def test_planted_module_global_and_tensor_hook_are_new_growing_sites(planted, tmp_path) -> None:
    config = planted["variants"][0]["configs"][0]
    hidden = SHAPE.seq * SHAPE.mbs * SHAPE.hidden * 4  # the decoder output, fp32
    assert findings.series(config, CACHE_SITE) == (hidden, 2 * hidden, 3 * hidden)
    assert findings.series(config, HOOK_SITE) == (hidden, 2 * hidden, 3 * hidden)
    kinds = {(f.site, f.kind) for f in findings.of_config("unpatched", config)}
    assert kinds == {
        (CACHE_SITE, "new"),
        (CACHE_SITE, "grows"),
        (HOOK_SITE, "new"),
        (HOOK_SITE, "grows"),
    }
    # the carried sites are still there, still known, with the model's bytes
    p = model.predict(SHAPE, "unpatched")
    by_entry: dict[str | None, int] = {}
    for s in evidence.layer_sites(config):
        by_entry[s["known"]] = by_entry.get(s["known"], 0) + s["bytes"]
    assert by_entry == {
        "checkpoint-grad": p.detached_grad_bytes,
        "hc-mlp-norm-manager": p.detached_input_bytes + p.kept_tensor_bytes,
    }
    # every gate fails: --fail-on-new (gpu-check runs it) and the drift judge
    path = evidence.write(planted, tmp_path / "audit.json")
    assert main(["audit", "--render", str(path), "--fail-on-new"]) == 1
    judged = {(f.site, f.kind) for f in judge.judge(planted, evidence.load(BASELINE))}
    assert {(CACHE_SITE, "new"), (HOOK_SITE, "grows")} <= judged
