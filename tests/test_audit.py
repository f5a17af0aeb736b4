"""The audit on the installed megatron-core (no upstream tree): the synthetic checkpointed
stack, whose run function keeps an intermediate of the recomputed graph on `self.kept`, is found
and named by that attribute path, with the detached inputs behind it, to the byte; the fix
removes the `.grad` site. Two child processes (unpatched, fix) on patched copies.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from patchcarry.audit import evidence, runner
from patchcarry.cli import main
from patchcarry.manifest import load as load_manifest
from patchcarry.measure import variants
from patchcarry.runtime import tree as megatron_tree
from testing.forked_children import forked

LAYERS, SEQ, MBS, WIDTH = 2, 4, 1, 8  # the synthetic stack: width = hidden x streams
SHAPE = {"layers": LAYERS, "seq": SEQ, "mbs": MBS, "hidden": WIDTH, "streams": 1, "dtype": "fp32"}
PER_LAYER = SEQ * MBS * WIDTH * 4  # [seq, mbs, width] fp32, input = output width
GRAD_SITE = "blocks.*.kept → … → AccumulateGrad.variable.grad"
INPUT_SITE = "blocks.*.kept → … → AccumulateGrad.variable"


@pytest.fixture(scope="module")
def doc() -> dict:
    request = runner.Request(
        model="synthetic",
        configs=({"name": "synthetic", "shape": SHAPE, "overrides": {}},),
        iterations=2,
    )
    plan = variants.plan(load_manifest(), ["unpatched", "fix"])
    with tempfile.TemporaryDirectory() as work, forked():  # testing/forked_children.py
        results = runner.run(megatron_tree.installed_tree(), plan, request, Path(work))
    return evidence.build(request, results, tree={"source": "-", "label": "-", "commit": None})


def _sites(doc: dict, variant: str) -> dict[str, dict]:
    v = next(v for v in doc["variants"] if v["name"] == variant)
    config = v["configs"][0]
    assert config["error"] is None, config["error"]
    return {s["site"]: s for s in config["iterations"][-1]["sites"]}


def test_the_kept_intermediate_is_named_by_its_attribute_path(doc) -> None:
    found = _sites(doc, "unpatched")
    assert found["blocks.*.kept"]["bytes"] == LAYERS * PER_LAYER
    assert found[INPUT_SITE]["bytes"] == LAYERS * PER_LAYER
    assert found[GRAD_SITE]["bytes"] == LAYERS * PER_LAYER
    assert found[GRAD_SITE]["known"] == "checkpoint-grad"
    assert found[GRAD_SITE]["origins"] == ["CheckpointFunction detached input .grad"]
    assert found[INPUT_SITE]["origins"] == ["CheckpointFunction detached input"]
    assert found[GRAD_SITE]["example"].startswith("blocks.0.kept → ")
    assert doc["cpu_standins"] == ["install_cuda_rng_state_standin"]


def test_every_iteration_sees_the_same_sites(doc) -> None:
    v = next(v for v in doc["variants"] if v["name"] == "unpatched")
    per_iteration = [
        {s["site"]: s["bytes"] for s in i["sites"]} for i in v["configs"][0]["iterations"]
    ]
    assert per_iteration[0] == per_iteration[1]


def test_the_fix_removes_only_the_grad_site(doc) -> None:
    before, after = _sites(doc, "unpatched"), _sites(doc, "fix")
    assert set(before) - set(after) == {GRAD_SITE}
    assert after[INPUT_SITE]["bytes"] == LAYERS * PER_LAYER


def test_the_parameters_optimizer_state_and_buffers_are_not_counted(doc) -> None:
    for v in doc["variants"]:
        for s in v["configs"][0]["iterations"][-1]["sites"]:
            assert not s["site"].startswith("optimizer"), s
            assert not s["site"].endswith((".weight", ".bias")), s


def test_list_configs_names_the_paths_not_built_on_cpu(capsys) -> None:
    assert main(["audit", "--list-configs"]) == 0
    out = capsys.readouterr().out
    assert "hc-full-uniform-1:" in out and "(not built on CPU) mla_up_proj" in out


def test_hc_gpt_without_a_tree_says_how_to_get_one_exit_5(monkeypatch, capsys) -> None:
    monkeypatch.delenv("MEGATRON_SRC", raising=False)
    assert main(["audit"]) == 5  # a missing tree, like a missing extra
    assert "--megatron-src" in capsys.readouterr().err


def test_on_cuda_one_child_per_variant_holds_every_configuration() -> None:
    configs = tuple({"name": n, "shape": SHAPE, "overrides": {}} for n in ("a", "b", "c"))
    cuda = runner.Request(model="hc-gpt", configs=configs, device="cuda")
    assert cuda.one_process and not runner.Request(model="hc-gpt", configs=configs).one_process
    child = cuda.child_request(list(configs))
    assert [c["name"] for c in child["configs"]] == ["a", "b", "c"]
    assert child["config_timeout_s"] == runner.CONFIG_TIMEOUT_S


def test_a_configuration_past_its_time_is_its_own_error_in_a_shared_child(monkeypatch) -> None:
    import time

    from patchcarry.audit import census, child

    def hangs(request: dict, config: dict) -> None:
        end = time.monotonic() + 5  # bounded, so the test fails (not hangs) without the alarm
        while time.monotonic() < end:
            time.sleep(0.01)
        raise RuntimeError("ran to the end")

    monkeypatch.setattr(child, "_build", hangs)
    request = {"device": "cuda", "config_timeout_s": 0.2}
    out = child.audit_config(request, {"name": "stuck"}, census.OriginTracker())
    assert out["error"] == "did not finish within 0.2 s on cuda" and out["iterations"] == []
