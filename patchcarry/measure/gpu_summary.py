"""gpu-check's summary.md: what the patches did, each step against its budget, the tables."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

from patchcarry.measure import unit_verdict


@dataclasses.dataclass(frozen=True)
class Outcome:
    step: str
    ok: bool | None  # None: skipped
    seconds: float
    log: str | None
    skip_reason: str | None
    key: str = ""  # the step's --steps name (gpu_check.STEP_KEYS)


def _steps(outcomes: Sequence[Outcome], wall_s: float, budget_s: int) -> list[str]:
    rows = ["| step | result | seconds | log |", "|---|---|---|---|"]
    for o in outcomes:
        result = "skipped: " + str(o.skip_reason) if o.ok is None else ("ok" if o.ok else "FAILED")
        rows.append(f"| {o.step} | {result} | {o.seconds:.0f} | {o.log or ''} |")
    within = "within" if wall_s <= budget_s else "OVER"
    return [*rows, "", f"Wall time: {wall_s:.0f} s ({within} the {budget_s} s budget)", ""]


def _tables(out: Path) -> list[str]:
    from patchcarry.measure import evidence, pretrain_evidence

    parts = []
    for path in sorted(out.glob("hc-gpt-*.json")):
        doc = json.loads(path.read_text())
        if pretrain_evidence.is_pretrain(doc):
            parts += [f"Training loop ({path.name}):", "",
                      pretrain_evidence.render_markdown_table(doc)]  # fmt: skip
        else:
            parts += [f"This repository's harness ({path.name}):", "",
                      evidence.render_markdown_table(doc)]  # fmt: skip
    return parts


def _upstream_tests(out: Path) -> list[str]:
    report = out / "upstream-tests.json"
    if not report.is_file():
        return ["Upstream unit tests: not run", ""]
    recorded = json.loads(report.read_text())
    verdict = unit_verdict.classify(recorded["runs"], set(recorded.get("carried_tests", [])))
    try:
        import transformer_engine  # type: ignore[import-not-found]  # noqa: F401

        te = "installed"
    except ImportError:
        te = "not installed"
    table = out / "upstream-tests.md"
    return [f"Upstream unit tests, unpatched vs patched (Transformer Engine {te}):", "",
            unit_verdict.render(verdict), "Every test, side by side:", "",
            table.read_text() if table.is_file() else "(no table)", ""]  # fmt: skip


def render(out: Path, tree_line: str, outcomes: Sequence[Outcome], *, wall_s: float,
           budget_s: int) -> str:  # fmt: skip
    """summary.md's text (without the closing exit status)."""
    parts = [tree_line, "", *_steps(outcomes, wall_s, budget_s), *_tables(out)]
    log = out / "gpu-tests.xml"
    gpu_log = next((o.log for o in outcomes if o.key == "gpu-tests" and o.log), None)
    if gpu_log and (out / gpu_log).is_file():
        lines = (out / gpu_log).read_text().strip().splitlines()
        parts += [f"GPU tests: {lines[-1] if lines else '(no output)'}", ""]
    elif not log.is_file():
        parts += ["GPU tests: not run", ""]
    parts += _upstream_tests(out)
    for audit in sorted(out.glob("audit-hc-gpt-*.md")):
        parts += ["Retention audit:", "", audit.read_text(), ""]
    return "\n".join(parts)
