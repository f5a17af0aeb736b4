"""The evidence plot (PNG): floor per iteration per variant, measured vs predicted bytes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

COLORS = {"unpatched": "tab:red", "fix": "tab:orange", "reset": "tab:blue", "both": "tab:green"}
# `both` is dashed and thinner: it usually lies exactly on `reset`.
STYLES = {"both": {"linestyle": "--", "linewidth": 1.2}}


def _floor(iteration: dict[str, Any], gpu: bool) -> int:
    if gpu:
        return int(iteration["cuda"]["allocated_floor_bytes"])
    return int(iteration["live_tensor_bytes"])


def measured_vs_model(axes: Any, names: list[str], measured: list[float], predicted: list[float],
                      label: str) -> Any:  # fmt: skip
    """Bars per variant: measured (grey) beside the analytic model (purple); the measured bars."""
    width = 0.38
    xs = range(len(names))
    bars = axes.bar([x - width / 2 for x in xs], measured, width, label=label, color="tab:gray")
    axes.bar([x + width / 2 for x in xs], predicted, width, label="analytic model",
             color="tab:purple", alpha=0.6)  # fmt: skip
    axes.set_xticks(list(xs), names)
    return bars


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
        title = (f"{evidence['model']} {evidence['device']}: L={s['layers']} seq={s['seq']} "
                 f"mbs={s['mbs']} h={s['hidden']} n={s['streams']} {s['dtype']}")  # fmt: skip
        measured = [v for v in run["variants"] if v["status"] == "measured"]
        left, right = row
        for v in measured:
            xs = [i["index"] for i in v["iterations"]]
            ys = [_floor(i, gpu) / 1e6 for i in v["iterations"]]
            left.plot(xs, ys, marker="o", label=v["name"], color=COLORS.get(v["name"]),
                      **STYLES.get(v["name"], {}))  # fmt: skip
        left.xaxis.set_major_locator(MaxNLocator(integer=True))
        left.set_xlabel("iteration")
        left.set_ylabel("allocator floor (MB)" if gpu else "live non-parameter tensors (MB)")
        left.set_title(f"between-iteration floor\n{title}", fontsize=9)
        left.legend(loc="center right")
        measured_bars = measured_vs_model(
            right, [v["name"] for v in measured],
            [v["retained"]["detached_total"] / 1e6 for v in measured],
            [v["predicted"]["detached_total"] / 1e6 for v in measured],
            "measured (detached inputs + .grad)",
        )  # fmt: skip
        right.bar_label(measured_bars, [f"{v['retained']['detached_total']} B" for v in measured],
                        fontsize=8)  # fmt: skip
        right.set_ylabel("retained (MB)")
        right.set_title("retained after backward: measured vs predicted", fontsize=9)
        right.legend()
    where = evidence["hardware"]["gpu"] or f"CPU: {evidence['hardware']['cpu_model']}"
    return save(fig, path, f"{evidence['tree']['label']} ({where})")


def save(fig: Any, path: Path, title: str) -> Path:
    """Title, lay out, write `path` (its folder made) and free the figure."""
    import matplotlib.pyplot as plt

    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> int:
    """`python -m patchcarry.measure.plot EVIDENCE.json [OUT.png]`: redraw from a file."""
    import sys

    from patchcarry.measure import evidence

    args = sys.argv[1:] if argv is None else argv
    source = Path(args[0])
    write_png(evidence.load(source), Path(args[1]) if len(args) > 1 else source.with_suffix(".png"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
