"""The PR body's "Measured impact", from evidence files (the body never types a figure).

With `--evidence PATH`, that file. Otherwise the evidence committed beside the manifest
(`<repository>/evidence/`, the manifest being `<repository>/patches/series.toml`): upstream's
training loop on a GPU when the repository has it (floor, peak, reserved, step-time ratio and
the command that produced it, per shape), else the CPU measurement, said to be CPU; else
nothing (the body says no evidence was given).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from patchcarry import inputs, install
from patchcarry.errors import BadInputError
from patchcarry.units import human_bytes

CPU_EVIDENCE = "hc-gpt-cpu.json"


def evidence_dir(manifest_path: Path) -> Path:
    return Path(manifest_path).absolute().parent.parent / "evidence"


def _variant(doc: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next(
        (v for v in doc["variants"] if v["name"] == name and v["status"] == "measured"), None
    )


def _spread(spread: dict[str, int]) -> str:
    low, high = spread["min"], spread["max"]
    return human_bytes(low) if low == high else f"{human_bytes(low)} – {human_bytes(high)}"


def gpu_sentence(doc: dict[str, Any]) -> str:
    """One training-loop measurement in words: what the fixes free, against the model."""
    s = doc["shape"]
    parts = [
        f"On {doc['hardware']['gpu']}, upstream's own `pretrain_gpt.py` at "
        f"{str(doc['tree']['commit'] or doc['tree']['label'])[:12]} ({s['layers']} layers, "
        f"seq {s['seq']}, mbs {s['mbs']}, hidden {s['hidden']}, {s['streams']} streams, "
        f"{s['dtype']}):"
    ]
    base = _variant(doc, "unpatched")
    for name, label in (("fix", "the fix frees"), ("reset", "the reset frees"),
                        ("both", "both fixes free")):  # fmt: skip
        v = _variant(doc, name)
        if v is None or base is None:
            continue
        parts.append(
            f"{label} {human_bytes(v['freed']['floor_bytes'])} of the allocator floor "
            f"between iterations (the model predicts {human_bytes(v['freed']['predicted'])}); "
            f"peak {_spread(base['peak_bytes'])} → {_spread(v['peak_bytes'])}, reserved "
            f"{_spread(base['reserved_bytes'])} → {_spread(v['reserved_bytes'])}, step-time "
            f"ratio {v['step_time_ratio']:.3f};"
        )
    parts.append(f"produced by `{doc['command']}`.")
    return " ".join(parts)


def render_file(path: Path) -> str:
    """The impact text of one evidence file (training loop or this repository's harness)."""
    from patchcarry.measure import evidence, pretrain_evidence

    doc = inputs.read_json(Path(path), "evidence file")  # one line, exit 5, when it is not
    if pretrain_evidence.is_pretrain(doc):
        doc = pretrain_evidence.load(path)
        return f"{gpu_sentence(doc)}\n\n{pretrain_evidence.render_markdown_table(doc)}"
    doc = evidence.load(path)
    table = str(evidence.render_markdown_table(doc))
    if doc["device"] == "cpu":
        return f"Measured on CPU only (no GPU evidence in this repository):\n\n{table}"
    return table


def gpu_files(folder: Path) -> list[Path]:
    """The committed training-loop evidence files, in name order."""
    from patchcarry.measure import pretrain_evidence

    found = []
    for path in sorted(folder.glob("*.json")):
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and pretrain_evidence.is_pretrain(doc):
            found.append(path)
    return found


def measured_impact(explicit: Path | None, manifest_path: Path) -> str | None:
    """The "Measured impact" text: `explicit`, else committed GPU evidence, else CPU, else None."""
    if explicit is not None:
        if not explicit.is_file():
            measure = install.command("measure")
            raise BadInputError(f"--evidence {explicit}: no such file; run {measure} first")
        return render_file(explicit)
    folder = evidence_dir(manifest_path)
    files = gpu_files(folder) or [p for p in [folder / CPU_EVIDENCE] if p.is_file()]
    if not files:
        return None
    return "\n\n".join(render_file(p).strip() for p in files) + "\n"
