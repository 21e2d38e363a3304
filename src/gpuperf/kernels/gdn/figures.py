"""The case study's figures and displayed tables: the headline table and bars, the
scaling panels, and the diagram of who writes what under each algorithm."""

from __future__ import annotations

import numpy as np

from gpuperf import validate as v

from .experiments import BATCH, HEADLINE

# The error against float64 stays in the full table folded below it (the page fits 752 px).
HEADLINE_COLUMNS = ("method", "launches", "allocated_mb", "moved_mb", "ms", "reduce_ms",
                    "total_ms", "pct_floor", "speedup_vs_previous")

# How the page names each method: the article's algorithms by their number, as the text does.
METHOD_WORDS = {"replicate": "1 replicate", "per_channel": "2 per channel",
                "shared": "3 shared memory", "registers": "4 registers",
                "fused": "fused", "cublas": "cuBLAS"}
HEADLINE_HEADERS = {"method": "method", "launches": "launches", "allocated_mb": "allocates",
                    "moved_mb": "must move", "ms": "algorithm alone (ms)",
                    "reduce_ms": "reduction (ms)", "total_ms": "whole gradient (ms)",
                    "pct_floor": "algorithm alone",
                    "speedup_vs_previous": "speedup over the row above (whole gradient)",
                    "rel_err": "error against float64"}


def _worded(res):
    """A copy of ``res`` whose ``method`` column reads as the page names the methods."""
    from gpuperf.records import Result

    rows = [{**r, "method": METHOD_WORDS.get(r.get("method"), r.get("method"))}
            for r in res.rows]
    return Result(res.name, rows, res.meta, res.source)


def show_headline(head) -> None:
    """The headline table, in the columns the chapter discusses; a method that was skipped
    (no CuPy, say) gets a ``note`` column saying why."""
    v.result(head, "head")
    columns = [c for c in HEADLINE_COLUMNS if c in head.columns]
    if any(r.get("note") for r in head.rows):
        columns.append("note")
    _worded(head).show(columns, headers={c: HEADLINE_HEADERS[c] for c in columns
                                         if c in HEADLINE_HEADERS})


def plot_headline(head, label: str = ""):
    """Time of each method at the headline size (the whole gradient, and the part that builds
    the raw contributions), against the floor of its must-move bytes at copy speed. Bars are
    not stacked: on the log axis each bar's right end is its value."""
    import matplotlib.pyplot as plt

    from gpuperf import plots

    v.result(head, "head")
    v.string(label, "label", empty=True)
    rows = [r for r in head.rows if r.get("total_ms")]
    if not rows:
        raise ValueError(f"head ({head!r}) has no row with total_ms; pass the headline table.")
    fig, ax = plt.subplots(figsize=(plots.COLUMN_INCHES, 3.8))
    names = [METHOD_WORDS.get(r["method"], r["method"]) for r in rows]
    # On a log axis a stacked segment's length means nothing: every bar starts at the axis
    # and its right end is its value. The whole gradient is the wide bar; the part that
    # builds the raw contributions (where there is a separate reduction) the narrow one in it.
    ax.barh(names, [r["total_ms"] for r in rows], color="tab:orange", height=0.7,
            label="whole gradient (build, then reduce)")
    staged = [r for r in rows if r.get("reduce_ms") is not None]
    ax.barh([METHOD_WORDS.get(r["method"], r["method"]) for r in staged],
            [r["ms"] for r in staged], color="tab:blue",
            height=0.35, label="building the raw contributions alone")
    ax.barh(names, [r["floor_ms"] for r in rows], fill=False, edgecolor="black",
            linestyle="--", label="floor: must-move bytes at copy speed")
    ax.set_xscale("log")
    # the reference GPUs' records are whole sweeps: mark their rows at the headline size
    plots.reference_bars(ax, head, label="method", y="total_ms", rows=rows,
                         sel={"n_ch": HEADLINE["n_ch"], "side": HEADLINE["side"]})
    ax.invert_yaxis()
    ax.set_xlabel("time (ms, log scale; each bar's right end is its value)")
    ax.set_title(f"dL/dgamma, N={HEADLINE['n_ch']}, {HEADLINE['side']}x{HEADLINE['side']}, "
                 f"batch {BATCH}", fontsize=10)
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(alpha=0.3, axis="x")
    plots.source_label(fig, label or head.label)
    fig.tight_layout()
    return fig


def plot_scaling(res):
    """Time of each method against the channel count, one panel per image size."""
    import matplotlib.pyplot as plt

    from gpuperf import plots

    v.result(res, "res")
    for column in ("side", "n_ch", "total_ms", "method"):
        v.column(res, column, "res column")
    sides = res.values("side")
    fig, axes = plt.subplots(len(sides), 1, figsize=(plots.COLUMN_INCHES, 3.2 * len(sides)),
                             sharex=True, squeeze=False)
    for ax, side in zip(axes.flat, sides):
        plots.lines(res.where(side=side), x="n_ch", y="total_ms", series="method", logx=True,
                    logy=True, ax=ax, title=f"{side}x{side} images, batch {BATCH}",
                    xlabel="channels N", ylabel="time for dL/dgamma (ms)")
        if ax is not axes.flat[-1]:
            ax.set_xlabel("")
        if ax.get_legend() is not None:
            ax.get_legend().remove()
        ax.tick_params(labelbottom=True)
    # One legend for all panels (the methods and their colours are the same in each).
    handles, labels = axes.flat[0].get_legend_handles_labels()
    labels = [label.split("=", 1)[-1].strip() for label in labels]
    fig.legend(handles, [METHOD_WORDS.get(label, label) for label in labels], loc="upper center",
               ncol=3, fontsize=8, frameon=False, title="method", title_fontsize=8)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.7 / (3.2 * len(sides))))
    return fig


def draw_organization(n_ch: int = 3, n_s: int = 8, block: int = 4):
    """Who writes what: the raw matrix (``N*N`` rows x ``S`` samples) under each algorithm.

    Each cell is one raw contribution ``raw[k*N + j, s]``; its colour is the block that
    writes it, numbered within its launch (algorithm 1: the one flat product launch, after
    four replication launches; algorithm 2: N launches, whose block numbers start again at
    0, separated by solid lines; algorithms 3 and 4: block (x, k) of the single 2D launch,
    rows of gamma separated by dashed lines). Numbers in the cells are the writing thread's
    id within its block.
    """
    v.positive_int(n_ch, "n_ch", maximum=8)
    v.positive_int(n_s, "n_s", maximum=64)
    v.positive_int(block, "block", maximum=64)
    import matplotlib.pyplot as plt

    rows = n_ch * n_ch
    from gpuperf import plots

    fig, axes = plt.subplots(1, 3, figsize=(plots.COLUMN_INCHES, 0.3 * rows + 2.2), sharey=True,
                             layout="constrained")
    titles = ["1. replicate: 4 copy launches,\nthen 1 flat product launch (shown)",
              "2. per channel: N launches\nof N*S threads",
              "3 and 4. one launch,\nblock (x, k): row k of gamma"]
    cmap = plt.get_cmap("tab20")
    for panel, ax in enumerate(axes):
        colour = np.zeros((rows, n_s))
        tid = np.zeros((rows, n_s), dtype=int)
        for r in range(rows):
            k, j = divmod(r, n_ch)
            for s in range(n_s):
                if panel == 0:  # one launch over all N*N*S cells
                    flat = r * n_s + s
                    colour[r, s], tid[r, s] = flat // block, flat % block
                elif panel == 1:  # launch k covers rows k*N .. k*N + N-1; its blocks start at 0
                    flat = j * n_s + s
                    colour[r, s], tid[r, s] = flat // block, flat % block
                else:  # block (x, k) of one 2D launch
                    colour[r, s], tid[r, s] = k * -(-n_s // block) + s // block, s % block
        ax.imshow(colour % 20, cmap=cmap, vmin=0, vmax=19, aspect="auto")
        for r in range(rows):
            for s in range(n_s):
                ax.text(s, r, str(tid[r, s]), ha="center", va="center", fontsize=6)
        if panel:
            for k in range(1, n_ch):
                ax.axhline(k * n_ch - 0.5, color="black", linewidth=1.5,
                           linestyle="-" if panel == 1 else "--")
        ax.set_title(titles[panel], fontsize=9)
        ax.set_xlabel("sample s" if panel != 1 else "sample s (a pixel of an image)", fontsize=8)
        ax.set_xticks(range(n_s))
    axes[0].set_yticks(range(rows), [f"k={r // n_ch}, j={r % n_ch}" for r in range(rows)])
    fig.suptitle(f"raw[k*N + j, s] for N={n_ch}, S={n_s}, blocks of {block} threads: colour = block "
                 "(numbered within its launch),\nnumber = thread in its block; solid lines: separate "
                 "launches, dashed: rows of gamma", fontsize=9)
    return fig
