"""Paths, sites, known entries, the evidence schema and tables, and the drift judge: plain
data, no torch, no child process."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from patchcarry.audit import evidence, judge, known, sites
from patchcarry.errors import BadInputError

GRAPH = [
    ("grad_fn", "SumBackward1"),
    ("next", "AddBackward0"),
    ("next", "MulBackward0"),
    ("next", "ViewBackward0"),
    ("next", "AccumulateGrad"),
    ("variable", "variable"),
]


def _hops(layer: int, *tail: tuple[str, str]) -> list[tuple[str, str]]:
    holder = [("attr", "decoder"), ("attr", "layers"), ("attr", str(layer))]
    return [*holder, ("attr", "mlp_norm_manager"), ("attr", "tensor"), *tail]


def test_render_reads_like_code_and_elides_long_graph_runs() -> None:
    path = sites.render("model", _hops(0, *GRAPH, ("grad", "grad")))
    assert path == (
        "decoder.layers.0.mlp_norm_manager.tensor → SumBackward1 → … (3 nodes) → "
        "AccumulateGrad.variable.grad"
    )
    assert sites.render("harness", [("closure", "tokens")]) == "harness.tokens"
    assert sites.render("m.x:_G", [("attr", "states_"), ("item", "'a'")]) == "m.x:_G.states_['a']"


def test_site_folds_layer_indices_and_keeps_the_terminal_hop() -> None:
    grad = [sites.site("model", _hops(i, *GRAPH, ("grad", "grad"))) for i in (0, 7)]
    assert (
        grad[0]
        == grad[1]
        == ("decoder.layers.*.mlp_norm_manager.tensor → … → AccumulateGrad.variable.grad")
    )
    assert sites.site("model", _hops(3, *GRAPH)) == (
        "decoder.layers.*.mlp_norm_manager.tensor → … → AccumulateGrad.variable"
    )
    assert sites.site("model", _hops(3)) == "decoder.layers.*.mlp_norm_manager.tensor"
    assert sites.site("model", [("attr", "blocks"), ("attr", "12"), ("item", "3")]) == (
        "blocks.*[*]"
    )


def test_in_layer_is_about_the_holder_not_a_global() -> None:
    assert sites.in_layer("decoder.layers.*.x → … → AccumulateGrad.variable")
    assert sites.in_layer("layers.*.kept")
    assert not sites.in_layer("megatron.core.parallel_state:_GLOBAL_MEMORY_BUFFER.buffer")
    assert not sites.in_layer("harness.tokens")
    assert not sites.in_layer("embedding.word_embeddings.cache")


def _record(hops: list[tuple[str, str]], nbytes: int, origin: str | None = None) -> dict:
    return {
        "path": sites.render("model", hops),
        "site": sites.site("model", hops),
        "bytes": nbytes,
        "origin": origin,
    }


CPF = "CheckpointFunction detached input"


def _records() -> list[dict]:
    out = []
    for layer in (0, 1):
        out.append(_record(_hops(layer, *GRAPH, ("grad", "grad")), 2048, CPF + " .grad"))
        out.append(_record(_hops(layer, *GRAPH), 2048, CPF))
        out.append(_record(_hops(layer), 512))
    return out


def test_group_sums_per_site_and_known_entries_name_the_fix() -> None:
    grouped = sites.group(_records())
    assert [(s["bytes"], s["count"]) for s in grouped] == [(4096, 2), (4096, 2), (1024, 2)]
    by_entry = {}
    for s in grouped:
        by_entry.setdefault(known.entry_for(s), 0)
        by_entry[known.entry_for(s)] += s["bytes"]
    assert by_entry == {"checkpoint-grad": 4096, "hc-mlp-norm-manager": 4096 + 1024}


def test_a_grad_site_of_another_origin_is_not_claimed_by_checkpoint_grad() -> None:
    other = {"site": "decoder.layers.*.x → … → AccumulateGrad.variable.grad", "origins": ["y"]}
    assert known.entry_for(other) is None


def doc_with(variants: dict[str, dict[str, list[dict]]], errors: dict | None = None) -> dict:
    """A valid evidence document: {variant: {config: records}}."""
    errors = errors or {}
    return {
        "schema": "patchcarry-audit/1",
        "tool": {"name": "patchcarry", "version": "0"},
        "created": "2026-01-01T00:00:00+00:00",
        "tree": {"source": "/t", "label": "upstream tree /t @ c76ff61", "commit": "c76ff61"},
        "model": "hc-gpt",
        "device": "cpu",
        "iterations": 1,
        "torch_version": "2",
        "cuda_device": None,
        "cpu_standins": ["install_cuda_rng_state_standin"],
        "instrumented": [],
        "variants": [
            {
                "name": v,
                "sources": [],
                "status": "audited",
                "skip_reason": None,
                "configs": [
                    evidence._config(
                        {
                            "name": c,
                            "shape": {},
                            "overrides": {},
                            "error": errors.get((v, c)),
                            "iterations": []
                            if errors.get((v, c))
                            else [{"index": 0, "records": recs, "unattributed": []}],
                        }
                    )
                    for c, recs in configs.items()
                ],
            }
            for v, configs in variants.items()
        ],
    }


def test_evidence_validates_and_renders_both_tables() -> None:
    doc = doc_with({"unpatched": {"hc": _records()}, "both": {"hc": []}})
    evidence.validate(doc)
    text = evidence.render_text(doc)
    assert "checkpoint-grad" in text and "hc-mlp-norm-manager" in text
    md = evidence.render_markdown(doc)
    assert md.splitlines()[0].endswith("| unpatched | both | fixed by |")
    grad = "`decoder.layers.*.mlp_norm_manager.tensor → … → AccumulateGrad.variable.grad`"
    assert f"| hc | {grad} | 4096 B | 0 B | checkpoint-grad |" in md
    empty = doc_with({"unpatched": {"hc": []}})
    assert "| hc | nothing held but the expected state | 0 B | |" in evidence.render_markdown(empty)
    broken = doc_with({"unpatched": {"hc": []}}, errors={("unpatched", "hc"): "E|x"})
    assert "| hc | not built on cpu: `E/x` | | |" in evidence.render_markdown(broken)
    assert evidence.new_sites(doc) == []
    broken = copy.deepcopy(doc)
    broken["variants"][0]["configs"][0]["iterations"][0]["sites"][0]["bytes"] = -1
    with pytest.raises(BadInputError):
        evidence.validate(broken)


def test_judge_is_quiet_when_the_tip_matches_the_base() -> None:
    base = doc_with({"unpatched": {"hc": _records()}, "both": {"hc": []}})
    assert judge.judge(copy.deepcopy(base), base) == []


def test_judge_reports_a_site_that_appears_grows_survives_or_stops_building() -> None:
    base = doc_with({"unpatched": {"hc": _records(), "moe": []}, "both": {"hc": []}})
    grown = _records()
    grown[2]["bytes"] = 1024  # layer 0's manager tensor doubled
    new = _record([("attr", "decoder"), ("attr", "layers"), ("attr", "0"), ("attr", "ckpt")], 64)
    tip = doc_with(
        {"unpatched": {"hc": grown, "moe": [new]}, "both": {"hc": [new]}},
        errors={},
    )
    kinds = {(f.variant, f.config, f.kind) for f in judge.judge(tip, base)}
    assert kinds == {
        ("unpatched", "hc", "grows"),
        ("unpatched", "moe", "new"),  # no manifest entry fixes it
        ("both", "hc", "new"),
        ("both", "hc", "survives patches"),
    }
    broken = doc_with(
        {"unpatched": {"hc": _records(), "moe": []}}, errors={("unpatched", "moe"): "E"}
    )
    assert [f.kind for f in judge.judge(broken, base)] == ["not built"]


def test_judge_main_writes_the_issue_and_the_output_line(tmp_path, capsys) -> None:
    base = doc_with({"unpatched": {"hc": _records()}})
    tip = doc_with(
        {
            "unpatched": {
                "hc": [*_records(), _record([("attr", "layers"), ("attr", "0"), ("attr", "x")], 8)]
            }
        }
    )
    evidence.write(base, tmp_path / "base.json")
    evidence.write(tip, tmp_path / "tip.json")
    assert (
        judge.main(
            [str(tmp_path / "tip.json"), str(tmp_path / "base.json"), "--out", str(tmp_path)]
        )
        == 0
    )
    assert capsys.readouterr().out.strip() == "retained=true"
    assert "`layers.*.x` | new | 8 B | absent" in (tmp_path / "audit-issue.md").read_text()
    judge.main([str(tmp_path / "base.json"), str(tmp_path / "base.json"), "--out", str(tmp_path)])
    assert capsys.readouterr().out.strip() == "retained=false"


REPO = Path(__file__).resolve().parent.parent
BASELINE = REPO / "evidence" / "audit-hc-gpt-cpu.json"


def test_drift_runs_the_judge_against_the_committed_baseline() -> None:
    drift = (REPO / ".github" / "workflows" / "drift.yml").read_text()
    assert (
        "python -P -m patchcarry.audit.judge out/audit.json evidence/audit-hc-gpt-cpu.json" in drift
    )
    baseline = evidence.load(BASELINE)
    assert judge.judge(baseline, baseline) == []
    # the committed sweep: with every carried patch, no layer holds anything
    both = next(v for v in baseline["variants"] if v["name"] == "both")
    assert all(not evidence.layer_sites(c) for c in both["configs"])
    assert evidence.new_sites(baseline) == []


def test_only_state_kept_by_design_is_expected_any_other_holder_is_new() -> None:
    for name in (
        "harness.tokens",
        "megatron.core.parallel_state:_GLOBAL_MEMORY_BUFFER.buffer[('mpu', torch.float32)]",
        "megatron.core.tensor_parallel.random:_CUDA_RNG_STATE_TRACKER.states_['model-parallel-rng']",
        "megatron.core.transformer.moe.moe_utils:MoEAuxLossAutoScaler.main_loss_backward_scale",
    ):
        assert known.expected(name), name
    for name in (
        "megatron.core.models.gpt.gpt_model:_CACHE[*]",
        "megatron.core.tensor_parallel.random:_CUDA_RNG_STATE_TRACKER.kept",
        "embedding.word_embeddings.weight._backward_hooks[*].kept",
        "optimizer.state['x']",
    ):
        assert known.expected(name) is None, name
        record = _record([("attr", "x")], 8)
        record["site"] = name
        doc = doc_with({"unpatched": {"hc": [record]}})
        assert evidence.new_sites(doc) == [("unpatched", "hc", name)]


def test_judge_reports_a_known_site_that_appears_in_another_configuration() -> None:
    base = doc_with({"unpatched": {"hc": _records(), "moe": []}})
    tip = doc_with({"unpatched": {"hc": _records(), "moe": _records()}})
    kinds = {(f.config, f.kind) for f in judge.judge(tip, base)}
    assert kinds == {("moe", "appears")}
