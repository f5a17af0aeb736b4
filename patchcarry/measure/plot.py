"""The evidence plot (PNG, matplotlib Agg): per measured shape, the between-iteration floor
per iteration per variant (left), and retained bytes measured vs predicted (right)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

COLORS = {"unpatched": "tab:red", "fix": "tab:orange", "reset": "tab:blue", "both": "tab:green"}


def _floor(iteration: dict[str, Any], gpu: bool) -> int:
    if gpu:
        return int(iteration["cuda"]["allocated_floor_bytes"])
    return int(iteration["live_tensor_bytes"])


def write_png(evidence: dict[str, Any], path: Path) -> Path:
    """Draw the evidence to `path` and return it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    gpu = evidence["device"] == "cuda"
    runs = evidence["runs"]
    fig, axes = plt.subplots(len(runs), 2, figsize=(12, 4.2 * len(runs)), squeeze=False)
    for row, run in zip(axes, runs, strict=True):
        s = run["shape"]
        title = (
            f"{evidence['model']} {evidence['device']}: L={s['layers']} seq={s['seq']} "
            f"mbs={s['mbs']} h={s['hidden']} n={s['streams']} {s['dtype']}"
        )
        measured = [v for v in run["variants"] if v["status"] == "measured"]
        left, right = row
        for v in measured:
            xs = [i["index"] for i in v["iterations"]]
            ys = [_floor(i, gpu) / 1e6 for i in v["iterations"]]
            left.plot(xs, ys, marker="o", label=v["name"], color=COLORS.get(v["name"]))
        left.xaxis.set_major_locator(MaxNLocator(integer=True))
        left.set_xlabel("iteration")
        left.set_ylabel("allocator floor (MB)" if gpu else "live non-parameter tensors (MB)")
        left.set_title(f"between-iteration floor\n{title}", fontsize=9)
        left.legend()
        names = [v["name"] for v in measured]
        width = 0.38
        xs_bar = range(len(measured))
        right.bar(
            [x - width / 2 for x in xs_bar],
            [v["retained"]["detached_total"] / 1e6 for v in measured],
            width,
            label="measured (detached inputs + .grad)",
            color="tab:gray",
        )
        right.bar(
            [x + width / 2 for x in xs_bar],
            [v["predicted"]["detached_total"] / 1e6 for v in measured],
            width,
            label="analytic model",
            color="tab:purple",
            alpha=0.6,
        )
        right.set_xticks(list(xs_bar), names)
        right.set_ylabel("retained (MB)")
        right.set_title("retained after backward: measured vs predicted", fontsize=9)
        right.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
