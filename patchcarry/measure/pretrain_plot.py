"""The training-loop plot (PNG): allocator floor per step, floor freed vs the model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from patchcarry.measure.plot import COLORS, STYLES, measured_vs_model, save


def write_png(doc: dict[str, Any], path: Path) -> Path:
    """Draw the training-loop evidence `doc` to `path` and return it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    from patchcarry.measure.pretrain_evidence import headline

    measured = [v for v in doc["variants"] if v["status"] == "measured"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.4))
    for v in measured:
        for index, run in enumerate(v["repeats"]):
            steps = run["steps"]
            left.plot([s["index"] for s in steps],
                      [s["allocated_floor_bytes"] / 1e9 for s in steps], marker="o",
                      label=v["name"] if index == 0 else None, color=COLORS.get(v["name"]),
                      **STYLES.get(v["name"], {}))  # fmt: skip
    left.xaxis.set_major_locator(MaxNLocator(integer=True))
    left.set_xlabel("train_step")
    left.set_ylabel("allocator floor after the step (GB)")
    left.legend(loc="center right")
    measured_vs_model(right, [v["name"] for v in measured],
                      [(v["freed"]["floor_bytes"] or 0) / 1e9 for v in measured],
                      [v["freed"]["predicted"] / 1e9 for v in measured], "measured")  # fmt: skip
    right.set_ylabel("floor freed vs unpatched (GB)")
    right.legend()
    return save(fig, path, f"{headline(doc)}\n{doc['tree']['label']}")
