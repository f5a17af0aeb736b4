"""The drift watch's verdict on a retention audit of upstream's tip.

Writes DIR/audit-issue.md and prints `retained=true|false` for $GITHUB_OUTPUT."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from patchcarry.audit import evidence, findings
from patchcarry.audit.findings import Finding


def _configs(doc: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(v["name"], c["name"]): c for v in doc["variants"] if v["status"] == "audited"
            for c in v["configs"]}  # fmt: skip


def judge(current: dict[str, Any], baseline: dict[str, Any]) -> list[Finding]:
    """Every finding (see the module docstring), in the current document's order."""
    base = _configs(baseline)
    out = []
    own = findings.of_doc(current)
    for (variant, name), config in _configs(current).items():
        before = base.get((variant, name))
        if config["error"]:
            if before is not None and not before["error"]:
                out.append(Finding(variant, name, config["error"], "not built", ()))
            continue
        before_bytes = {
            s["site"]: s["bytes"] for s in (evidence.held_sites(before) if before else [])
        }
        for f in own:
            if (f.variant, f.config) == (variant, name):
                out.append(dataclasses.replace(f, baseline=before_bytes.get(f.site)))
        flagged = {f.site for f in out if (f.variant, f.config) == (variant, name)}
        for s in evidence.held_sites(config):
            old = before_bytes.get(s["site"])
            if variant == "both":
                kind = "survives patches"
            elif before is None or old is None:
                kind = "appears"
            elif s["bytes"] > old:
                kind = "grows"
            else:
                continue
            if kind != "survives patches" and s["site"] in flagged:
                continue  # already a finding of the audit itself
            series = findings.series(config, s["site"])
            out.append(Finding(variant, name, s["site"], kind, series, baseline=old))
    return out


def issue_body(found: Sequence[Finding], current: dict[str, Any], run_url: str = "") -> str:
    lines = [
        f"The daily retention audit of {current['tree']['label']} found {len(found)} "
        "site(s) where tensors stay alive between iterations that no carried fix removes, "
        "that grow every iteration, that the pinned base did not keep, or that survive this "
        "repository's patches.", "",
        "| variant | configuration | site | finding | bytes per iteration | at the pinned base |",
        "| --- | --- | --- | --- | --- | --- |",
    ]  # fmt: skip
    for f in found:
        old = "absent" if f.baseline is None else f"{f.baseline} B"
        values = " → ".join(f"{b} B" for b in f.series) or "0 B"  # not built: no series
        detail = f" ({f.detail})" if f.detail else ""
        lines.append(
            f"| {f.variant} | {f.config} | `{f.site}` | {f.kind}{detail} | {values} | {old} |"
        )
    lines += [
        "", "```text", evidence.render_text(current), "```", "",
        f"Run: {run_url or '(local)'} (artifact `drift-report` has audit.json).",
        "Next: reproduce with `scripts/audit --sweep --megatron-src <tip tree>`; a new site that "
        "a small change removes is carried as a manifest entry. This issue is updated daily and "
        "closed by the workflow once the audit matches the pinned base again.",
    ]  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("current", type=Path)
    parser.add_argument("baseline", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--run-url", default="")
    args = parser.parse_args(argv)
    current, baseline = evidence.load(args.current), evidence.load(args.baseline)
    found = judge(current, baseline)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "audit-issue.md").write_text(issue_body(found, current, args.run_url))
    print(f"retained={'true' if found else 'false'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
