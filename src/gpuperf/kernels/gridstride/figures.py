"""Chapter 1's figures: the size sweep against its ceilings, and which thread handles which element."""

from __future__ import annotations

from gpuperf import validate


def plot_size_sweep(result):
    """``gridstride_size_sweep``: GB/s against bytes moved, timed two ways (the GPU's time,
    launch left out; one call as an application waits for it, launch counted, with the middle
    half of its calls shaded where the record keeps their quartiles), with the copy ceilings."""
    validate.result(result, "result")
    for c in ("bytes", "gbps", "gbps_launch_counted"):
        validate.column(result, c, "result column")
    from gpuperf import plots

    fig = plots.lines(result, x="bytes", y="gbps", ceilings=plots.copy_ceilings(result),
                      logx=True, xlabel="bytes moved (read + written)", ylabel="GB/s",
                      title=f"grid-stride copy: bandwidth against size ({result.gpu})")
    ax = fig.axes[0]
    ax.lines[0].set_label("GPU time (launch left out)")
    pts = sorted((r["bytes"], r["gbps_launch_counted"]) for r in result.rows)
    ax.plot(*zip(*pts), marker="s", linestyle="--", color=plots.COLORS[1],
            label="one call, launch counted")
    if all(r.get("ms_launch_counted_q1") and r.get("ms_launch_counted_q3") for r in result.rows):
        # the middle half of the calls timed at each size (records made in interleaved rounds)
        band = sorted((r["bytes"], r["bytes"] / (r["ms_launch_counted_q3"] * 1e6),
                       r["bytes"] / (r["ms_launch_counted_q1"] * 1e6)) for r in result.rows)
        xs, lo, hi = zip(*band)
        ax.fill_between(xs, lo, hi, color=plots.COLORS[1], alpha=0.2, linewidth=0,
                        label="one call: middle half of the calls")
    plots.legend_if_labelled(ax, fontsize=8, loc="lower right")  # ceiling labels sit top left
    return fig


# --------------------------------------------------------------------------- diagrams


def draw_grid_stride(n: int = 20, blocks: int = 2, threads: int = 4, ax=None):
    """Which thread handles which element: a grid of ``blocks`` x ``threads`` over ``n`` elements.

    Each row of boxes is one pass of the grid-stride loop; the color is the thread's
    global index. With ``blocks * threads >= n`` it is the one-element-per-thread picture.
    """
    validate.positive_int(threads, "threads", maximum=64)
    if ax is not None and not hasattr(ax, "figure"):
        raise TypeError(f"ax must be a matplotlib Axes or None, not {type(ax).__name__}.")
    import matplotlib.pyplot as plt

    from gpuperf import plots

    n = validate.positive_int(n, "n", maximum=512)
    blocks = validate.positive_int(blocks, "blocks", maximum=64)
    threads = validate.block_size(threads)
    total = blocks * threads
    passes = (n + total - 1) // total
    if ax is None:
        _, ax = plt.subplots(figsize=(min(plots.COLUMN_INCHES, 0.45 * total + 2), 0.6 * passes + 1.6))
    cmap = plt.get_cmap("tab20" if total <= 20 else "viridis")
    for i in range(n):
        tid, step = i % total, i // total
        color = cmap(tid / max(total - 1, 1)) if total > 20 else cmap(tid % 20)
        ax.add_patch(plt.Rectangle((tid, -step), 0.95, 0.9, color=color))
        ax.text(tid + 0.47, -step + 0.45, str(i), ha="center", va="center", fontsize=7)
    for b in range(1, blocks):
        ax.axvline(b * threads - 0.025, color="black", linewidth=1)
    ax.set_xlim(-0.2, total + 0.2)
    ax.set_ylim(-passes + 0.8, 1.1)
    ax.set_xticks([t + 0.47 for t in range(total)],
                  [f"b{t // threads}\nt{t % threads}" for t in range(total)], fontsize=7)
    ax.set_yticks([-p + 0.45 for p in range(passes)], [f"pass {p}" for p in range(passes)])
    ax.set_title(f"{n} elements, grid [{blocks}, {threads}]: element i is handled by thread "
                 f"i % {total} (stride = {blocks} x {threads} = {total})", fontsize=9)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    return ax.figure
