"""Every holder kind, on a tiny model of this repository's own (testing/audit_planted.py, one
child process for all scenarios): the planted activation is reported at the holder's path with
its exact bytes, it is new, and every gate fails (`--fail-on-new`, which gpu-check runs, and
the drift judge); a transient tensor changes nothing; a growing leak fails on growth alone;
unattributed bytes fail with their dtype, shape and creating op."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from patchcarry.audit import evidence, findings, judge
from patchcarry.cli import main
from testing import audit_planted, forked_children
from testing.audit_planted import ACTIVATION_BYTES as ACT

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    """One child for every scenario, forked from this worker's torch process (it imported torch
    once for the proof, measure and audit children too: testing/forked_children.py)."""
    out = subprocess.run(
        [*forked_children.python_command(), "-m", "testing.audit_planted"],
        cwd=REPO,
        env={**os.environ, **forked_children.SERVER_ENV},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    result: dict[str, Any] = json.loads(out)
    return result


def doc_of(config: dict[str, Any]) -> dict[str, Any]:
    return audit_planted.doc_of(config, "tiny")


def _gates(doc: dict[str, Any], baseline: dict[str, Any], tmp_path: Path) -> tuple[int, int]:
    """(`audit --render --fail-on-new` exit code, the judge's finding count vs `baseline`)."""
    path = evidence.write(doc, tmp_path / "audit.json")
    return main(["audit", "--render", str(path), "--fail-on-new"]), len(judge.judge(doc, baseline))


HOLDERS = {
    "module_global": ("planted.cache:_CACHE[*]", (ACT, 2 * ACT, 3 * ACT)),
    "class_attribute": ("planted.holder:Holder.last", (ACT,) * 3),
    "closure": ("layers.*.callback.kept", (ACT,) * 3),
    "module_hook": ("layers.*._forward_pre_hooks[*].seen['input']", (ACT,) * 3),
    "tensor_hook": ("layers.*.weight._backward_hooks[*].kept", (ACT, 2 * ACT, 3 * ACT)),
    "post_accumulate_hook": ("layers.*.weight._post_accumulate_grad_hooks[*].kept", (ACT,) * 3),
    "node_metadata": ("layers.*.out → … → AddmmBackward0.metadata['kept']", (ACT,) * 3),
    "optimizer_state": ("optimizer.state['activation']['h']", (ACT,) * 3),
    "dp_wrapper": ("last_batch", (ACT,) * 3),
    "partial": ("layers.*._forward_hooks[*].args[*]['out']", (ACT,) * 3),
    "bound_method": ("layers.*._forward_hooks[*].__self__.out", (ACT,) * 3),
}


@pytest.mark.parametrize("scenario", sorted(HOLDERS))
def test_each_holder_kind_is_a_new_site_with_its_exact_bytes(raw, scenario, tmp_path) -> None:
    site, planted = HOLDERS[scenario]
    doc, clean = doc_of(raw[scenario]), doc_of(raw["clean"])
    config = doc["variants"][0]["configs"][0]
    assert findings.series(config, site) == planted, findings.site_names(config)
    assert ("unpatched", "tiny", site) in evidence.new_sites(doc)
    assert f"| tiny | `{site}` | {planted[-1]} B | **new** |" in evidence.render_markdown(doc)
    code, judged = _gates(doc, clean, tmp_path)
    assert code == 1 and judged > 0


def test_a_clean_run_passes_every_gate(raw, tmp_path, capsys) -> None:
    doc = doc_of(raw["clean"])
    assert findings.of_doc(doc) == []
    assert _gates(doc, doc, tmp_path) == (0, 0)
    assert "findings: 0" in capsys.readouterr().out


def test_a_tensor_set_and_cleared_within_forward_changes_nothing(raw) -> None:
    clean, transient = (doc_of(raw[n])["variants"][0]["configs"][0] for n in ("clean", "transient"))
    assert [i["sites"] for i in transient["iterations"]] == [
        i["sites"] for i in clean["iterations"]
    ]
    assert findings.unattributed_series(transient) == findings.unattributed_series(clean)
    assert list(findings.of_config("unpatched", transient)) == []


def test_a_growing_leak_fails_on_growth_alone(raw, tmp_path, capsys) -> None:
    """Held by the harness (state kept by design, never new), but it grows every iteration."""
    doc = doc_of(raw["grows_expected"])
    found = findings.of_doc(doc)
    assert [(f.site, f.kind, f.series) for f in found] == [
        ("harness.ctx['history'][*]", "grows", (ACT, 2 * ACT, 3 * ACT))
    ]
    assert evidence.new_sites(doc) == []
    assert _gates(doc, doc, tmp_path) == (1, 1)
    out = capsys.readouterr().out
    assert f"GROWS: unpatched / tiny: harness.ctx['history'][*]: {ACT} B → {2 * ACT} B" in out


def test_the_text_report_shows_each_sites_series(raw, capsys) -> None:
    text = evidence.render_text(doc_of(raw["tensor_hook"]))
    row = next(line for line in text.splitlines() if "_backward_hooks" in line)
    assert row.split()[:6] == [str(ACT), "B", str(2 * ACT), "B", str(3 * ACT), "B"]
    assert row.split()[6] == "NEW" and row.endswith("(GROWS)")


def test_unattributed_bytes_that_grow_fail_with_dtype_shape_and_op(raw, tmp_path) -> None:
    """Kept only by a hook on an autograd node (C++ holds it: the walk cannot see it)."""
    doc = doc_of(raw["unattributed"])
    config = doc["variants"][0]["configs"][0]
    assert findings.unattributed_series(config) == (ACT, 2 * ACT, 3 * ACT)
    (found,) = [f for f in findings.of_doc(doc) if f.site == findings.UNATTRIBUTED]
    assert found.kind == "grows"
    assert f"{ACT} B float32[4, 8] op MulBackward0" in found.detail
    assert _gates(doc, doc, tmp_path) == (1, 1)


def test_unattributed_bytes_past_the_floor_fail_even_when_steady(raw) -> None:
    config = evidence._config({**raw["clean"], "name": "tiny"})
    for i in config["iterations"]:
        i["unattributed"] = {
            "count": 1,
            "bytes": findings.UNATTRIBUTED_FLOOR + 4,
            "tensors": [{"bytes": 1028, "dtype": "float32", "shape": [257], "op": None}],
        }
    assert [(f.kind, f.series[-1]) for f in findings.of_config("unpatched", config)] == [
        ("not attributed", findings.UNATTRIBUTED_FLOOR + 4)
    ]
    for i in config["iterations"]:
        i["unattributed"]["bytes"] = findings.UNATTRIBUTED_FLOOR
    assert list(findings.of_config("unpatched", config)) == []
