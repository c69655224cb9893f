"""The bench report as a PNG: one row per case, its median ratio on a log
scale drawn from 1 (no difference), with the goal marked where the case has
one."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def render(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")  # no display; must precede pyplot
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FormatStrFormatter, NullFormatter

    results = report["results"]
    names = [r["case"] for r in results]
    ratios = [r["ratio"] for r in results]
    colors = [{True: "tab:green", False: "tab:red", None: "tab:gray"}[r["met"]] for r in results]

    fig, ax = plt.subplots(figsize=(8, 0.45 * len(results) + 1.4))
    rows = range(len(results))
    ax.hlines(rows, 1.0, ratios, colors=colors, linewidth=2)
    ax.scatter(ratios, rows, color=colors, zorder=3)
    for row, r in enumerate(results):
        op, _, bound = r["goal"].partition(" ")
        if op in ("<=", ">="):
            ax.plot([float(bound)] * 2, [row - 0.4, row + 0.4], color="black", linewidth=1.5)
        kind = "B/A" if r.get("ratio_kind") == "speed" else "A/B"
        ax.annotate(
            f"{r['ratio']:.3g} ({kind})",
            (r["ratio"], row),
            xytext=(0, 7),
            textcoords="offset points",
            ha="center",
            fontsize=8,
        )
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.axvline(1.0, color="gray", linewidth=0.8, linestyle=":")
    ax.set_yticks(list(rows), names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("median ratio (log scale); black tick: goal; green met, red missed, gray report")
    low, high = min(ratios + [1.0]) / 2, max(ratios + [1.0]) * 4
    ax.set_xlim(low, high)
    ticks = (0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1, 3, 10, 30, 100, 300, 1000, 3000)
    if high / low < 20:  # a narrow range: finer ticks
        ticks = (0.5, 0.8, 0.9, 1, 1.1, 1.25, 1.5, 2, 3)
    ax.set_xticks([t for t in ticks if low <= t <= high])
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
