"""The drift watch's verdict on a retention audit of upstream's tip (tested Python, not YAML).

    python -m patchcarry.audit.judge CURRENT.json BASELINE.json --out DIR

CURRENT is `scripts/audit --json` on the base branch's tip; BASELINE the committed audit at the
pinned base (evidence/audit-hc-gpt-cpu.json). A finding is a site held by a layer that
  - appears: absent from the baseline's same variant and configuration, or
  - grows: more bytes than there, or
  - survives every carried patch: present in `both` (our patches should leave no layer holding
    anything), or
  - was not built at the tip but was at the base (the audit lost sight of that path).
Writes DIR/audit-issue.md and prints `retained=true|false` (for $GITHUB_OUTPUT): true opens or
updates the one issue, false closes it.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from patchcarry.audit import evidence

TITLE = "Retention audit: a Megatron layer keeps more alive between iterations at upstream's tip"


@dataclasses.dataclass(frozen=True)
class Finding:
    variant: str
    config: str
    site: str
    kind: str  # "appears" | "grows" | "survives patches" | "not built"
    bytes: int
    baseline_bytes: int | None


def _configs(doc: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (v["name"], c["name"]): c
        for v in doc["variants"]
        if v["status"] == "audited"
        for c in v["configs"]
    }


def judge(current: dict[str, Any], baseline: dict[str, Any]) -> list[Finding]:
    """Every finding (see the module docstring), in the current document's order."""
    base = _configs(baseline)
    findings = []
    for (variant, name), config in _configs(current).items():
        before = base.get((variant, name))
        if config["error"]:
            if before is not None and not before["error"]:
                findings.append(Finding(variant, name, config["error"], "not built", 0, None))
            continue
        before_bytes = {
            s["site"]: s["bytes"] for s in (evidence.layer_sites(before) if before else [])
        }
        for s in evidence.layer_sites(config):
            old = before_bytes.get(s["site"])
            if variant == "both":
                kind = "survives patches"
            elif before is None or old is None:
                kind = "appears"
            elif s["bytes"] > old:
                kind = "grows"
            else:
                continue
            findings.append(Finding(variant, name, s["site"], kind, s["bytes"], old))
    return findings


def issue_body(findings: Sequence[Finding], current: dict[str, Any], run_url: str = "") -> str:
    lines = [
        f"The daily retention audit of {current['tree']['label']} found {len(findings)} "
        "site(s) where a layer keeps tensors alive between iterations that the pinned base "
        "did not (or that survive this repository's patches).",
        "",
        "| variant | configuration | site | finding | bytes | at the pinned base |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for f in findings:
        old = "absent" if f.baseline_bytes is None else f"{f.baseline_bytes} B"
        lines.append(f"| {f.variant} | {f.config} | `{f.site}` | {f.kind} | {f.bytes} B | {old} |")
    lines += [
        "",
        "```text",
        evidence.render_text(current),
        "```",
        "",
        f"Run: {run_url or '(local)'} (artifact `drift-report` has audit.json).",
        "Next: reproduce with `scripts/audit --sweep --megatron-src <tip tree>`; a new site that "
        "a small change removes is carried as a manifest entry. This issue is updated daily and "
        "closed by the workflow once the audit matches the pinned base again.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("current", type=Path)
    parser.add_argument("baseline", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--run-url", default="")
    args = parser.parse_args(argv)
    current, baseline = evidence.load(args.current), evidence.load(args.baseline)
    findings = judge(current, baseline)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "audit-issue.md").write_text(issue_body(findings, current, args.run_url))
    print(f"retained={'true' if findings else 'false'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
