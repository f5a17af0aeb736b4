"""The audit's evidence: built from the censuses, validated against its schema, rendered."""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from patchcarry import __version__, jsondoc
from patchcarry.audit import findings, known, sites
from patchcarry.audit.runner import Request
from patchcarry.measure.variants import VariantResult

SCHEMA_PATH = Path(__file__).with_name("audit.schema.json")
SCHEMA_ID = "patchcarry-audit/1"


def _iteration(raw: dict[str, Any]) -> dict[str, Any]:
    grouped = sites.group(raw["records"])
    for s in grouped:
        s["in_layer"] = sites.in_layer(s["site"])
        s["known"] = known.entry_for(s)
    unattributed = raw["unattributed"]
    return {
        "index": raw["index"],
        "sites": grouped,
        "unattributed": {"count": len(unattributed),
                         "bytes": sum(u["bytes"] for u in unattributed),
                         "tensors": unattributed[:50]},
    }  # fmt: skip


def _config(raw: dict[str, Any]) -> dict[str, Any]:
    out = {k: raw[k] for k in ("name", "shape", "overrides", "error")}
    out["iterations"] = [_iteration(i) for i in raw.get("iterations", [])]
    return out


def build(request: Request, results: Sequence[VariantResult], *,
          tree: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    """The evidence document (validated)."""
    children = [r.child for r in results if r.child is not None]
    doc: dict[str, Any] = {
        "schema": SCHEMA_ID,
        "tool": {"name": "patchcarry", "version": __version__},
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "tree": tree,
        "model": request.model,
        "device": request.device,
        "iterations": request.iterations,
        "torch_version": children[0]["torch_version"] if children else None,
        "cuda_device": children[0]["cuda_device"] if children else None,
        "cpu_standins": children[0]["cpu_standins"] if children else [],
        "instrumented": children[0]["instrumented"] if children else [],
        "variants": [
            {**r.head("audited"),
             "configs": [_config(c) for c in r.child["configs"]] if r.child else []}
            for r in results
        ],
    }  # fmt: skip
    validate(doc)
    return doc


def validate(doc: dict[str, Any]) -> None:
    jsondoc.validate(doc, SCHEMA_PATH)


def write(doc: dict[str, Any], path: Path) -> Path:
    return jsondoc.write(doc, path, SCHEMA_PATH, indent=2, sort_keys=False)


def load(path: Path) -> dict[str, Any]:
    return jsondoc.load(path, SCHEMA_PATH)


def _cells(values: tuple[int, ...]) -> str:
    return "  ".join(f"{b:>11} B" for b in values)


def render_text(doc: dict[str, Any]) -> str:
    """Bytes per site per iteration, a block per variant and configuration, then the findings."""
    lines = [f"audit: {doc['tree']['label']}, {doc['model']} on {doc['device']}"]
    for v in doc["variants"]:
        if v["status"] == "skipped":
            lines.append(f"{v['name']}: skipped ({v['skip_reason']})")
            continue
        for c in v["configs"]:
            head = f"{v['name']} / {c['name']}"
            if c["error"]:
                lines.append(f"{head}: NOT BUILT: {c['error']}")
                continue
            its = c["iterations"]
            lines.append(f"{head}:")
            cols = "  ".join(f"it{i['index']:>11}" for i in its)
            lines.append(f"  {cols}  fixed by             site")
            for name in sorted(findings.site_names(c), key=str):
                values = findings.series(c, name)
                state = findings.status(findings.last_site(c, name)) or "NEW"
                grows = " (GROWS)" if findings.rising(values) else ""
                lines.append(f"  {_cells(values)}  {state:<20} {name}{grows}")
            un = findings.unattributed_series(c)
            grows = " (GROWS)" if findings.rising(un) else ""
            count = its[-1]["unattributed"]["count"] if its else 0
            lines.append(
                f"  {_cells(un)}  {'-':<20} not attributed ({count} tensor(s) at the last, "
                f"floor {findings.UNATTRIBUTED_FLOOR} B){grows}"
            )
    found = findings.of_doc(doc)
    lines.append(f"findings: {len(found)}" + (":" if found else ""))
    lines.extend(f"  {findings.line(f)}" for f in found)
    return "\n".join(lines)


def layer_sites(config: dict[str, Any]) -> list[dict[str, Any]]:
    """Sites held by a transformer layer at the last iteration (what a fix should remove)."""
    if not config["iterations"]:
        return []
    return [s for s in config["iterations"][-1]["sites"] if s["in_layer"]]


def held_sites(config: dict[str, Any]) -> list[dict[str, Any]]:
    """Sites at the last iteration not kept by design: those an entry fixes and the new ones."""
    if not config["iterations"]:
        return []
    return [s for s in config["iterations"][-1]["sites"] if findings.status(s) != "expected"]


def render_markdown(doc: dict[str, Any]) -> str:
    """The README table: configuration x site, bytes per variant (last iteration)."""
    audited = [v for v in doc["variants"] if v["status"] == "audited"]
    names = [v["name"] for v in audited]
    rows = ["| configuration | site (indices folded) | " + " | ".join(names) + " | fixed by |",
            "|---|---|" + "---|" * len(names) + "---|"]  # fmt: skip
    order = list(dict.fromkeys(c["name"] for v in audited for c in v["configs"]))
    for config_name in order:
        per_variant = {v["name"]: next((c for c in v["configs"] if c["name"] == config_name), None)
                       for v in audited}  # fmt: skip
        errors = {c["error"] for c in per_variant.values() if c is not None and c["error"]}
        if errors:
            error = sorted(errors)[0].replace("|", "/")[:140]
            rows.append(f"| {config_name} | not built on {doc['device']}: `{error}` |"
                        + " |" * len(names)
                        + " |")  # fmt: skip
            continue
        held: dict[str, dict[str, Any]] = {}
        for variant, config in per_variant.items():
            for site in held_sites(config) if config else []:
                held.setdefault(site["site"], {"known": site["known"]})[variant] = site["bytes"]
        if not held:
            rows.append(f"| {config_name} | nothing held but the expected state |"
                        + " 0 B |" * len(names)
                        + " |")  # fmt: skip
        for site_name, figures in held.items():
            cells = " | ".join(f"{figures.get(n, 0)} B" for n in names)
            rows.append(
                f"| {config_name} | `{site_name}` | {cells} | {figures['known'] or '**new**'} |"
            )
    skipped = [v for v in doc["variants"] if v["status"] == "skipped"]
    for v in skipped:
        rows.append(f"\n{v['name']}: skipped ({v['skip_reason']})")
    return "\n".join(rows)


def new_sites(doc: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(variant, configuration, site) for each site no entry fixes and not kept by design."""
    return [(f.variant, f.config, f.site) for f in findings.of_doc(doc) if f.kind == "new"]
