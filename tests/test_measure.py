"""`measure` on the installed megatron-core with the synthetic model, and the analytic model.

One session-scoped run of the real command (two child processes: unpatched and fix) feeds
the end-to-end assertions; the expected bytes are recomputed here from the shape.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from patchcarry import cli
from patchcarry.errors import BadInputError, ExitCode
from patchcarry.manifest import load as load_manifest
from patchcarry.measure import evidence, model, setup, variants
from testing.forked_children import forked

SHAPE = {"layers": 3, "seq": 8, "mbs": 2, "hidden": 4, "streams": 2}
FP32 = 4


@pytest.fixture(scope="session")
def synthetic_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict, Path, str]:
    out = tmp_path_factory.mktemp("evidence")
    argv = [
        "measure",
        "--model",
        "synthetic",
        "--iterations",
        "2",
        "--out",
        str(out),
        "--require-predicted",
        "0",
    ]
    for key, value in SHAPE.items():
        argv += [f"--{key}", str(value)]
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), forked():  # its children: testing/forked_children.py
        code = cli.main(argv)
    doc = json.loads((out / "synthetic-cpu.json").read_text())
    return code, doc, out, buf.getvalue()


def _variant(doc: dict, name: str) -> dict:
    return next(v for v in doc["runs"][0]["variants"] if v["name"] == name)


def test_synthetic_unpatched_retains_exactly_the_model(synthetic_run) -> None:
    code, doc, _, _ = synthetic_run
    assert code == ExitCode.OK
    per_layer = SHAPE["seq"] * SHAPE["mbs"] * SHAPE["hidden"] * SHAPE["streams"] * FP32
    unpatched = _variant(doc, "unpatched")
    for it in unpatched["iterations"]:
        assert it["detached_grad_bytes"] == SHAPE["layers"] * per_layer
        assert it["detached_input_bytes"] == SHAPE["layers"] * per_layer
        assert it["detached_live_inputs"] == SHAPE["layers"]
    assert unpatched["retained"]["detached_total"] == unpatched["predicted"]["detached_total"]


def test_synthetic_fix_retains_no_grad_and_frees_the_predicted_bytes(synthetic_run) -> None:
    _, doc, _, _ = synthetic_run
    per_layer = SHAPE["seq"] * SHAPE["mbs"] * SHAPE["hidden"] * SHAPE["streams"] * FP32
    fix = _variant(doc, "fix")
    assert [it["detached_grad_bytes"] for it in fix["iterations"]] == [0, 0]
    # the detached inputs stay: the kept block output still references the recomputed graph
    assert fix["retained"]["detached_input_bytes"] == SHAPE["layers"] * per_layer
    assert fix["freed"]["live_tensor_bytes"] == SHAPE["layers"] * per_layer
    assert fix["freed"]["predicted"] == SHAPE["layers"] * per_layer
    assert fix["grads_identical_to_unpatched"] is True


def test_synthetic_reset_and_both_are_skipped_with_a_reason(synthetic_run) -> None:
    _, doc, _, stdout = synthetic_run
    for name in ("reset", "both"):
        v = _variant(doc, name)
        assert v["status"] == "skipped"
        assert "HyperConnectionTransformerLayer" in v["skip_reason"]
    assert "| unpatched |" in stdout and "| fix |" in stdout
    assert doc["tree"]["commit"] is None and "(installed)" in doc["tree"]["label"]
    assert doc["hardware"]["device"] == "cpu" and doc["hardware"]["gpu"] is None


def test_evidence_validates_and_a_broken_one_does_not(synthetic_run) -> None:
    _, doc, out, _ = synthetic_run
    evidence.load(out / "synthetic-cpu.json")  # validates
    broken = copy.deepcopy(doc)
    del _variant(broken, "fix")["retained"]
    with pytest.raises(BadInputError, match="retained"):
        evidence.validate(broken)
    broken = copy.deepcopy(doc)
    broken["runs"][0]["variants"][0]["iterations"][0]["detached_grad_bytes"] = -1
    with pytest.raises(BadInputError, match="detached_grad_bytes"):
        evidence.validate(broken)


def test_plot_is_a_png(synthetic_run) -> None:
    _, _, out, _ = synthetic_run
    assert (out / "synthetic-cpu.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_render_markdown_table_rows(synthetic_run) -> None:
    _, doc, _, _ = synthetic_run
    table = evidence.render_markdown_table(doc)
    rows = [line for line in table.splitlines() if line.startswith("| ")]
    assert [r.split("|")[1].strip() for r in rows[1:]] == ["unpatched", "fix", "reset", "both"]
    assert all(r.count("|") == rows[0].count("|") for r in rows)
    assert "extrapolation" in table.lower() and "2048" in table


def test_require_predicted_fails_when_the_fix_frees_less(synthetic_run) -> None:
    _, doc, _, _ = synthetic_run
    assert setup.fix_meets_prediction(doc, 0.0)
    short = copy.deepcopy(doc)
    _variant(short, "fix")["freed"]["live_tensor_bytes"] -= 1
    assert not setup.fix_meets_prediction(short, 0.0)
    assert setup.fix_meets_prediction(short, 0.05)


def test_model_per_variant() -> None:
    shape = model.Shape(layers=2, seq=8, mbs=1, hidden=16, streams=4, dtype="bf16")
    g = 8 * 1 * 16 * 4 * 2
    k = 8 * 1 * 16 * 2
    assert model.predict(shape, "unpatched") == model.Prediction(2 * g, 2 * g, 2 * k)
    assert model.predict(shape, "fix") == model.Prediction(0, 2 * g, 2 * k)
    assert model.predict(shape, "reset") == model.Prediction(0, 0, 0)
    assert model.predict(shape, "both") == model.Prediction(0, 0, 0)
    assert model.freed(shape, "fix") == 2 * g
    assert model.freed(shape, "both") == 2 * (2 * g + k)
    assert model.shape_for("synthetic", shape).kept_tensor_bytes() == 4 * k
    with pytest.raises(ValueError, match="unknown variant"):
        model.predict(shape, "half")


def test_pr_seed_hidden_is_derived_and_the_extrapolation_matches_the_pr() -> None:
    exact, hidden = model.derive_hidden(model.PR_MEASURED_FIX_FREED_BYTES, **model.PR_SEED)
    assert 2000 < exact < 2100 and hidden == 2048
    assert model.freed(model.pr_seed_shape(), "fix") == 2 * 8192 * 4 * 2048 * 2  # 0.268 GB
    x = model.pr_extrapolation()
    assert x["fix_freed_bytes"] == 9 * 16384 * 4 * 2048 * 2
    assert x["matches_pr"] is True and "not a measurement" in x["label"]


def test_variant_plan() -> None:
    manifest = load_manifest()
    plan = variants.plan(manifest, ["both", "unpatched", "fix", "reset"])
    assert [v.name for v in plan] == ["unpatched", "fix", "reset", "both"]
    assert [p.name[:4] for p in plan[3].patches] == ["0001", "0003"]
    mine = manifest.entries[1].fix.path
    own = variants.plan(manifest, ["reset"], [mine])
    assert [p.path for p in own[0].patches] == [mine] and own[0].sources == (mine.name,)
    with pytest.raises(BadInputError, match="x.patch: patch file not found"):
        variants.plan(manifest, ["reset"], [Path("x.patch")])
    with pytest.raises(BadInputError, match="unknown variant"):
        variants.plan(manifest, ["fixed"])


def test_hc_gpt_without_a_tree_is_a_usage_error(monkeypatch, capsys) -> None:
    monkeypatch.delenv("MEGATRON_SRC", raising=False)
    assert cli.main(["measure", "--model", "hc-gpt"]) == ExitCode.BAD_INPUT
    assert "MEGATRON_SRC" in capsys.readouterr().err
    assert cli.main(["measure", "--model", "hc-gpt", "--seed-config"]) == ExitCode.USAGE


def test_upstream_side_by_side_flags_only_pass_to_fail(tmp_path) -> None:
    from patchcarry.measure import upstream_tests as ut

    report = tmp_path / "r.xml"
    report.write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="t.A" name="ok"/>'
        '<testcase classname="t.A" name="bad"><failure message="x"/></testcase>'
        '<testcase classname="t.A" name="skip"><skipped message="no te"/></testcase>'
        "</testsuite></testsuites>"
    )
    assert ut.junit_outcomes(report) == {
        "t.A::ok": "passed",
        "t.A::bad": "failed",
        "t.A::skip": "skipped",
    }
    assert ut.junit_outcomes(tmp_path / "missing.xml") == {}
    group = ut.GROUPS[0][0]
    before = ut.GroupRun(group, "unpatched", 1, {"a": "passed", "b": "failed", "c": "passed"})
    same = ut.GroupRun(group, "patched", 1, {"a": "passed", "b": "failed", "c": "passed"})
    assert ut.regressions([before, same]) == []
    better = ut.GroupRun(group, "patched", 0, {"a": "passed", "b": "passed", "c": "passed"})
    assert ut.regressions([before, better]) == []
    worse = ut.GroupRun(group, "patched", 1, {"a": "error", "b": "failed"})
    assert ut.regressions([before, worse]) == [
        "a: passed unpatched, error patched",
        "c: passed unpatched, missing patched",
    ]
    clean = ut.GroupRun(group, "unpatched", 0, {})
    assert ut.regressions([clean, ut.GroupRun(group, "patched", 2, {})]) == [
        f"{group}: exit 0 unpatched, 2 patched"
    ]
    table = ut.render_markdown([before, worse])
    assert "| `c` | passed | missing |" in table


def test_the_evidence_records_the_one_line_that_makes_it_again(synthetic_run, monkeypatch) -> None:
    _, doc, _, _ = synthetic_run
    shape = " ".join(f"--{k} {v}" for k, v in SHAPE.items())
    assert doc["command"].startswith("scripts/measure --upstream ")
    assert doc["command"].endswith(
        f"--model synthetic {shape} --dtype fp32 --variants unpatched,fix,reset,both --iterations 2"
    )
    assert doc["command_ran"] is True
    assert f"Produced by: `{doc['command']}`." in evidence.render_markdown_table(doc)
    monkeypatch.delenv("GH_HOST", raising=False)
    import argparse

    args = argparse.Namespace(
        model="hc-gpt", device="cpu", seed_config=False, variants="unpatched,fix", iterations=3
    )
    bf16 = model.Shape(layers=2, seq=512, mbs=1, hidden=256, streams=4, dtype="bf16")
    assert setup.reproduce_command(args, bf16, "NVIDIA/Megatron-LM") == (
        "scripts/measure --upstream https://github.com/NVIDIA/Megatron-LM.git --layers 2 "
        "--seq 512 --mbs 1 --hidden 256 --streams 4 --dtype bf16 --variants unpatched,fix "
        "--iterations 3"
    )


def test_produced_by_names_only_the_command_that_ran() -> None:
    """Issue 48: the committed evidence was made from a tree MEGATRON_SRC named, yet its table
    said "Produced by: scripts/measure --upstream <URL>", a command rebuilt from the options."""
    from patchcarry.install import CHECKOUT

    doc = evidence.load(CHECKOUT / "evidence" / "hc-gpt-cpu.json")
    table = evidence.render_markdown_table(doc)
    assert "Produced by" not in table
    assert f"Reproduce with: `{doc['command']}` (it fetches the tree at the pinned base; " in table
