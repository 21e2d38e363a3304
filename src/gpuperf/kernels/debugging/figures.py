"""The chapter's figure: each kernel's Speed of Light as a point."""

from __future__ import annotations

from gpuperf import validate as v

from .checks import BUSY_PCT


def plot_speed_of_light(res, *, title: str = "Speed of Light: how busy each side was"):
    """Each kernel of ``profiling_speed_of_light`` as a point: memory throughput against SM
    throughput, in % of peak, with the ``BUSY_PCT`` lines that split the plane."""
    import matplotlib.pyplot as plt

    from gpuperf import plots

    v.result(res)
    fig, ax = plt.subplots(figsize=(plots.COLUMN_INCHES, 5))
    ax.axvline(BUSY_PCT, color="0.6", ls="--", lw=1)
    ax.axhline(BUSY_PCT, color="0.6", ls="--", lw=1)
    ax.plot([0, 100], [0, 100], color="0.85", lw=1)
    for i, r in enumerate(res.rows):
        ax.plot(r["memory_pct"], r["sm_pct"], "o", color=plots.COLORS[i % len(plots.COLORS)])
        ax.annotate(r["kernel"], (r["memory_pct"], r["sm_pct"]), textcoords="offset points",
                    xytext=(5, 4), fontsize=7)
    ax.text(2, 2, "latency: neither side busy", fontsize=8, color="0.4")
    ax.text(BUSY_PCT + 1, 2, "memory-bound", fontsize=8, color="0.4")
    ax.text(2, 96, "compute-bound", fontsize=8, color="0.4", va="top")
    ax.set(xlim=(0, 100), ylim=(0, 100), xlabel="memory throughput (% of peak)",
           ylabel="SM (compute) throughput (% of peak)")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    plots.source_label(fig, res.label)
    return fig
