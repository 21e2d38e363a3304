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
    ax.set(xlim=(0, 100), ylim=(0, 100))
    regions = [ax.text(2, 2, "latency: neither side busy", fontsize=8, color="0.4"),
               ax.text(98, 2, "memory-bound", fontsize=8, color="0.4", ha="right"),
               ax.text(2, 96, "compute-bound", fontsize=8, color="0.4", va="top")]
    _place_labels(fig, ax, [(r["kernel"], r["memory_pct"], r["sm_pct"],
                             plots.COLORS[i % len(plots.COLORS)]) for i, r in enumerate(res.rows)],
                  avoid=regions)
    ax.set(xlim=(0, 100), ylim=(0, 100), xlabel="memory throughput (% of peak)",
           ylabel="SM (compute) throughput (% of peak)")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    plots.source_label(fig, res.label)
    return fig


# How far (in points) a label keeps from every other point's centre.
_DOT_MARGIN_PX = 6

# Where a point's label may go (offset in points, horizontal alignment), tried in this order.
_SPOTS = [((5, 4), "left"), ((5, -10), "left"), ((0, 7), "center"), ((0, -13), "center"),
          ((-5, 4), "right"), ((-5, -10), "right"),
          ((5, 12), "left"), ((5, -18), "left"), ((-5, 12), "right"), ((-5, -18), "right")]


def _place_labels(fig, ax, points, avoid=()) -> None:
    """Label each ``(text, x, y, color)`` point, in its dot's colour, at the first spot where
    the label stays inside the axes and overlaps no label placed before it, no *other* point
    (with a margin of :data:`_DOT_MARGIN_PX`, so that a label never sits over a neighbour's dot
    and reads as its) and no artist of ``avoid``, measured with the renderer."""
    from matplotlib.transforms import Bbox

    renderer = fig.canvas.get_renderer()
    inside = ax.get_window_extent(renderer)
    m = _DOT_MARGIN_PX * fig.dpi / 72
    dots = [Bbox.from_extents(px - m, py - m, px + m, py + m)
            for px, py in (ax.transData.transform((x, y)) for _, x, y, _ in points)]
    taken = [a.get_window_extent(renderer) for a in avoid]
    for i, (text, x, y, color) in enumerate(points):
        for j, (offset, ha) in enumerate(_SPOTS):
            note = ax.annotate(text, (x, y), textcoords="offset points", xytext=offset,
                               ha=ha, fontsize=7, color=color)
            box = note.get_window_extent(renderer).expanded(1.04, 1.1)
            fits = (box.x0 >= inside.x0 and box.x1 <= inside.x1 and box.y0 >= inside.y0
                    and box.y1 <= inside.y1)
            clear = not any(box.overlaps(t) for t in taken) and not any(
                box.overlaps(d) for k, d in enumerate(dots) if k != i)
            if (fits and clear) or j == len(_SPOTS) - 1:
                taken.append(box)
                break
            note.remove()
