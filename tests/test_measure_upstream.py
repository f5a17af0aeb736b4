"""The real hyper-connection GPTModel of an upstream tree (MEGATRON_SRC) on CPU: measured
retention equals the analytic model per layer for 1 and 4 residual streams, and the fix
alone frees exactly half of what both fixes free from the detached inputs.

Three child processes (unpatched, fix, both), each measuring both stream counts. The
`reset` variant is measured by `scripts/measure` (evidence/hc-gpt-cpu.json).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from patchcarry.manifest import load as load_manifest
from patchcarry.measure import model, session, variants
from patchcarry.runtime import tree as megatron_tree

pytestmark = pytest.mark.upstream

LAYERS, SEQ, MBS, HIDDEN = 2, 8, 1, 16
STREAMS = (1, 4)


def _upstream_tree() -> Path:
    tree = megatron_tree.upstream_tree_from_env()
    if tree is None:
        pytest.skip("needs an upstream Megatron-LM tree: set MEGATRON_SRC (c76ff61 checkout)")
    return tree


@pytest.fixture(scope="module")
def measured() -> dict[str, dict]:
    tree = _upstream_tree()
    shapes = tuple(
        model.Shape(layers=LAYERS, seq=SEQ, mbs=MBS, hidden=HIDDEN, streams=n, dtype="fp32")
        for n in STREAMS
    )
    request = session.Request(model="hc-gpt", shapes=shapes, iterations=2, vocab=64)
    manifest = load_manifest()
    plan = variants.plan(manifest, ["unpatched", "fix", "both"])
    with tempfile.TemporaryDirectory() as work:
        results = session.run(tree, plan, request, Path(work))
    out = {}
    for r in results:
        assert r.child is not None, r.variant.skip_reason
        assert r.child["cpu_standins"], "CPU run without the named stand-ins?"
        out[r.variant.name] = {run["shape"]["streams"]: run for run in r.child["runs"]}
    return out


@pytest.mark.parametrize("streams", STREAMS)
def test_unpatched_retains_grad_and_input_per_layer(measured, streams) -> None:
    per_layer = SEQ * MBS * HIDDEN * streams * 4  # [seq, mbs, hidden*n] fp32
    for it in measured["unpatched"][streams]["iterations"]:
        assert it["detached_live_inputs"] == LAYERS
        assert it["detached_grad_bytes"] == LAYERS * per_layer
        assert it["detached_input_bytes"] == LAYERS * per_layer


@pytest.mark.parametrize("streams", STREAMS)
def test_each_variant_matches_the_model(measured, streams) -> None:
    shape = model.Shape(
        layers=LAYERS, seq=SEQ, mbs=MBS, hidden=HIDDEN, streams=streams, dtype="fp32"
    )
    floor = {}
    for name, runs in measured.items():
        last = runs[streams]["iterations"][-1]
        p = model.predict(shape, name)
        assert (last["detached_grad_bytes"], last["detached_input_bytes"]) == (
            p.detached_grad_bytes,
            p.detached_input_bytes,
        ), name
        floor[name] = last["live_tensor_bytes"]
    # the wider floor: what each fix frees, kept manager tensor included, to the byte
    assert floor["unpatched"] - floor["fix"] == model.freed(shape, "fix")
    assert floor["unpatched"] - floor["both"] == model.freed(shape, "both")


@pytest.mark.parametrize("streams", STREAMS)
def test_fix_alone_frees_half_of_both_from_the_detached_inputs(measured, streams) -> None:
    def detached(name: str) -> int:
        last = measured[name][streams]["iterations"][-1]
        return last["detached_grad_bytes"] + last["detached_input_bytes"]

    freed_fix = detached("unpatched") - detached("fix")
    freed_both = detached("unpatched") - detached("both")
    assert freed_both > 0 and 2 * freed_fix == freed_both


def test_gradients_are_bit_identical_across_variants(measured) -> None:
    for streams in STREAMS:
        digests = {
            name: [it["grad_digest"] for it in runs[streams]["iterations"]]
            for name, runs in measured.items()
        }
        assert digests["fix"] == digests["unpatched"] == digests["both"]
