"""The reduce chapter's figures: which threads add what in each rung, and the rounding error
of a float32 sum by the order of its additions."""

from __future__ import annotations

from gpuperf import validate

from .kernels import VERSIONS


def _tree_steps(version: str, width: int):
    """For a tree rung: per step, the (thread, destination, source) triples that add."""
    steps = []
    if version in ("v0", "v1.5"):
        s = 1
        while s < width:
            steps.append([(t, t, t + s) for t in range(width) if t % (2 * s) == 0])
            s *= 2
    elif version == "v1":
        s = 1
        while s < width:
            steps.append([(t, 2 * s * t, 2 * s * t + s) for t in range(width) if 2 * s * t < width])
            s *= 2
    else:  # sequential addressing (v2 onwards)
        s = width // 2
        while s > 0:
            steps.append([(t, t, t + s) for t in range(s)])
            s //= 2
    return steps


_DIAGRAM_NOTES = {
    "single-thread": "one thread walks every element; the rest of the GPU idles",
    "block-atomic": "one block: thread t adds x[t], x[t+B], ...; one atomic per thread",
    "grid-atomic": "grid-stride loop over the whole grid; one atomic per thread",
    "shared-atomic": "grid-stride sums, a shared-memory tree per block, one atomic per block",
    "v0": "tid % (2s) == 0 picks the threads: they thin out inside every warp",
    "v1": "thread t adds at 2*s*t: no divergence while 32+ threads work; strided addresses share banks",
    "v1.5": "same threads as v0; the test is a mask, tid & (2s - 1), not a division",
    "v2": "thread t adds t + s: contiguous threads on contiguous addresses",
    "v3": "each thread adds two elements while loading: half the blocks",
    "v4": "v3, then the last 6 steps in one warp with no barrier (a race since Volta)",
    "v4.1": "the last warp keeps its sum in a register, syncwarp between read and write",
    "v4.2": "the last warp adds through shfl_down_sync: registers only",
    "v5": "every step unrolled for a compile-time block size",
    "v6": "each thread sums many elements first (coalesced rounds), then v5's tree",
    "v7": "warp shuffles, one slot per warp in shared memory, one barrier, warp 0 finishes",
    "v8": "16-byte loads over a grid sized to the GPU, then v7's block reduce",
}


def draw_rung(version: str, width: int = 16):
    """A diagram of which threads add what in ``version``, for a block of ``width`` threads.

    Tree rungs draw one row of shared-memory slots per step, an arrow from each
    slot read to the slot written, labelled by the thread that adds; load rungs
    colour the input by the thread that reads each element.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, Rectangle

    validate.choice(version, "version", VERSIONS)
    width = validate.positive_int(width, "width", minimum=4, maximum=64)
    if width & (width - 1):
        raise ValueError(f"width={width} must be a power of two (the tree halves it).")
    cmap = plt.get_cmap("tab20")

    def cells(ax, y, colours, labels=None, alpha=1.0):
        for k, c in enumerate(colours):
            ax.add_patch(Rectangle((k, y), 0.92, 0.8, facecolor=c, edgecolor="0.3",
                                   linewidth=0.6, alpha=alpha))
            if labels is not None and labels[k] != "":
                ax.text(k + 0.46, y + 0.4, str(labels[k]), ha="center", va="center", fontsize=7)

    load_rungs = ("single-thread", "block-atomic", "grid-atomic", "shared-atomic", "v3", "v6", "v8")
    tree_rungs = ("v0", "v1", "v1.5", "v2", "v3", "v4", "v4.1", "v4.2", "v5", "v6", "shared-atomic")
    rows = []  # (kind, payload)
    if version in load_rungs:
        rows.append(("load", None))
    if version in tree_rungs:
        rows += [("step", s) for s in _tree_steps(version, width)]
    if version in ("v7", "v8"):
        rows.append(("warps", None))
    def step_height(payload):
        # The arcs of a step rise about 0.35 / 2 of the distance they span: leave that much
        # room above the cells, and no more (short steps sit close together).
        span = max((abs(src - dst) for _, dst, src in payload), default=1)
        return 1.3 + 0.18 * span

    height = sum(step_height(p) if kind == "step" else 2.6 for kind, p in rows) + 1
    from gpuperf import plots

    fig, ax = plt.subplots(figsize=(min(plots.COLUMN_INCHES, max(6.0, width * 0.42)),
                                    0.55 * height + 0.8))
    y = height
    barrier = {"v4": "no barrier", "v4.1": "syncwarp", "v4.2": "shfl_down_sync",
               "v5": "shfl_down_sync", "v6": "shfl_down_sync"}
    for kind, payload in rows:
        if kind == "load":
            y -= 2.6
            n_in = 4 * width if version == "v8" else 2 * width
            if version == "single-thread":
                owner = [0] * n_in
            elif version == "v3":
                owner = [k % width for k in range(n_in)]
            elif version == "v6":
                owner = [k % width for k in range(n_in)]
            elif version == "v8":
                owner = [k // 4 for k in range(n_in)]  # one 16-byte load per thread per round
            else:  # grid-stride rungs: thread t reads t, t + width, ...
                owner = [k % width for k in range(n_in)]
            scale = max(1, n_in // width)
            ax.text(-0.4, y + 1.8, "x (coloured by the thread that reads it)", fontsize=8,
                    ha="left", va="bottom")
            for k, t in enumerate(owner):
                ax.add_patch(Rectangle((k / scale, y + 1.0), 0.92 / scale, 0.7,
                                       facecolor=cmap(t % 20), edgecolor="0.3", linewidth=0.4))
            ax.text(-0.4, y + 0.2, "one value per thread after the load", fontsize=8, ha="left",
                    va="bottom")
            if version == "single-thread":  # thread 0 holds the running sum; the rest idle
                cells(ax, y - 0.7, [cmap(0)] + ["0.93"] * (width - 1),
                      labels=[0] + [""] * (width - 1))
                ax.text(width + 0.2, y - 0.3, "threads 1, 2, ... idle", fontsize=7, va="center")
            else:
                cells(ax, y - 0.7, [cmap(t % 20) for t in range(width)], labels=list(range(width)))
            if version == "v8":
                ax.text(width + 0.2, y + 1.3, "one color block = one 16-byte load", fontsize=7)
            if version in ("block-atomic", "grid-atomic"):
                # The block boundaries: one block of all the threads, or a grid of several.
                per = width if version == "block-atomic" else width // 4
                for b in range(width // per):
                    ax.add_patch(Rectangle((b * per - 0.06, y - 0.78), per - 0.02, 0.96,
                                           fill=False, edgecolor="black", linewidth=1.6))
                    ax.text(b * per + (per - 0.08) / 2, y - 1.05, f"block {b}", fontsize=7,
                            ha="center", va="top")
                what = ("one block; each thread: one atomic add"
                        if version == "block-atomic" else
                        f"{width // per} blocks; each thread: one atomic add")
                ax.text(width + 0.2, y - 0.3, what, fontsize=7, va="center")
                y -= 0.7
            y -= 0.8
        elif kind == "step":
            y -= step_height(payload)
            active = {t for t, _, _ in payload}
            dsts = {d for _, d, _ in payload}
            colours = [cmap(next(t for t, d, _ in payload if d == k) % 20) if k in dsts else "0.93"
                       for k in range(width)]
            cells(ax, y, colours, labels=[k for k in range(width)])
            for t, d, s in payload:
                arrow = FancyArrowPatch((s + 0.46, y + 0.85), (d + 0.46, y + 0.85),
                                        connectionstyle="arc3,rad=0.35", arrowstyle="-|>",
                                        mutation_scale=7, linewidth=0.7, color=cmap(t % 20))
                ax.add_patch(arrow)
            stride = payload[0][2] - payload[0][1] if payload else 0
            threads = sorted(active)
            shown = ", ".join(map(str, threads[:6])) + (" ..." if len(threads) > 6 else "")
            note = f"s={stride}: threads {shown} add"
            last_warp = version in barrier and stride < max(2, width // 4) and width > 4
            if last_warp:  # no `if tid < s` in the last warp: every lane adds, the rest unused
                note = f"s={stride}: every lane adds; lane{'s' if len(threads) > 1 else ''} {shown} kept"
            sync = barrier.get(version, "syncthreads") if last_warp else "syncthreads"
            ax.text(width + 0.2, y + 0.4, f"{note}   [{sync}]", fontsize=7, va="center")
        elif kind == "warps":
            y -= 2.6
            warps = max(2, width // 4)
            per = width // warps
            colours = [cmap((k // per) % 20) for k in range(width)]
            cells(ax, y + 1.2, colours, labels=[f"w{k // per}" if k % per == 0 else ""
                                                for k in range(width)])
            ax.text(width + 0.2, y + 1.6, "round 1: shfl_down_sync inside each warp",
                    fontsize=7, va="center")
            cells(ax, y, [cmap(k % 20) for k in range(warps)],
                  labels=[f"w{k}" for k in range(warps)])
            ax.text(warps + 0.2, y + 0.4, "lane 0 of each warp -> warp_sums[w]; ONE syncthreads; "
                    "round 2: warp 0 shuffles", fontsize=7, va="center")
            y -= 0.2
    ax.set_xlim(-0.5, width + 9)
    ax.set_ylim(y - 0.6, height)
    ax.axis("off")
    ax.set_title(f"{version}: {_DIAGRAM_NOTES[version]}", fontsize=9, loc="left")
    fig.tight_layout()
    return fig


def plot_summation_errors(rows):
    """Relative error against n for each order of additions, with each order's worst-case bound
    (n - 1 or log2 n roundings of at most 2^-24 each)."""
    rows = validate.sequence(rows, "rows")
    for i, r in enumerate(rows):
        if not isinstance(r, dict) or not {"n", "order", "rel_error", "bound"} <= set(r):
            raise TypeError(f"rows[{i}] must be a row of summation_errors(), a dict with n, "
                            "order, rel_error and bound.")
    import matplotlib.pyplot as plt

    from gpuperf import plots

    fig, ax = plt.subplots(figsize=(plots.COLUMN_INCHES, 3.8))
    for order, color in zip(dict.fromkeys(r["order"] for r in rows), ("C3", "C0", "C2", "C1")):
        mine = [r for r in rows if r["order"] == order]
        # The pages call the tree "v2's tree order": the legend says the same.
        name = (f"v2's tree (blocks of {order[len('tree of '):]})" if order.startswith("tree of ")
                else order)
        ax.plot([r["n"] for r in mine], [max(r["rel_error"], 1e-12) for r in mine], "o-",
                color=color, label=f"{name}: measured")
        ax.plot([r["n"] for r in mine], [r["bound"] for r in mine], ":", color=color,
                label=f"{name}: worst-case bound")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("elements summed")
    ax.set_ylabel("relative error against float64")
    ax.set_title("float32 sums of values in [0.5, 1.5), computed on the CPU", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


# A version is at its host floor while its time per call is within this factor of its lowest
# median time per call over the sizes (the pages state the rule beside the figure).
HOST_FLOOR_WITHIN = 1.2

# One colour per version on every line figure of the chapter (each sweep draws a subset).
VERSION_COLORS = {"v2": "C4", "v3": "C0", "v5": "C5", "v6": "C6", "v7": "C1", "v8": "C2",
                  "cupy.sum": "C9"}


def color_versions(fig):
    """Give each version's line on ``fig`` its colour from ``VERSION_COLORS``, so a version looks
    the same in every figure, and redraw the legends to match. Returns ``fig``."""
    from gpuperf import plots

    if not hasattr(fig, "axes"):
        raise TypeError(f"fig must be a matplotlib Figure, not {type(fig).__name__}.")
    for ax in fig.axes:
        for line in ax.get_lines():
            if line.get_label() in VERSION_COLORS:
                line.set_color(VERSION_COLORS[line.get_label()])
        if ax.get_legend() is not None:
            plots.legend_if_labelled(ax, fontsize=8, loc="best")
    return fig


def host_bound_limit(result, versions, *, within: float = HOST_FLOOR_WITHIN) -> int:
    """The largest ``n`` of the size sweep ``result`` at which each of ``versions`` still takes
    at most ``within`` times its smallest time per call: up to there the time hardly grows with
    the data, so the host's launches, more than the kernel, set it."""
    validate.result(result)
    validate.positive(within, "within")
    limit = None
    for version in versions:
        rows = sorted(result.select(version=version), key=lambda r: r["n"])
        if not rows:
            raise ValueError(f"version={version!r} is not in {result.name}; choose from "
                             f"{result.values('version')}.")
        floor = min(r["ms"] for r in rows)
        last = max(r["n"] for r in rows if r["ms"] <= within * floor)
        limit = last if limit is None else min(limit, last)
    return limit


def plot_size_sweep(result, versions, *, title: str | None = None):
    """Bandwidth against the array size for ``versions`` of ``reduce_size_sweep``. Each
    version's host-bound sizes (:func:`host_bound_limit` of that version alone: its time per
    call still at its floor) get open markers, since versions leave their floors at different
    sizes; the sizes where every version is host-bound are shaded and labelled."""
    from matplotlib.lines import Line2D

    from gpuperf import plots

    validate.result(result)
    versions = list(versions)
    limit = host_bound_limit(result, versions)
    rows = [r for r in result.rows if r["version"] in versions]
    fig = plots.lines(result, x="n", y="gbps", series="version", rows=rows, logx=True,
                      ceilings=plots.copy_ceilings(result), xlabel="array size n (float32 elements)",
                      ylabel="effective bandwidth (GB/s)",
                      title=title or f"Bandwidth by array size ({result.gpu})")
    ax = fig.axes[0]
    # One colour per version on every page and figure (VERSION_COLORS); a version not listed
    # there takes its place among all the sweep's versions, not among the ones drawn here.
    every = [str(v) for v in result.values("version")]
    for line in ax.get_lines():
        if line.get_label() in VERSION_COLORS:
            line.set_color(VERSION_COLORS[line.get_label()])
        elif line.get_label() in every:
            line.set_color(plots.COLORS[every.index(line.get_label()) % len(plots.COLORS)])
    colors = {line.get_label(): line.get_color() for line in ax.get_lines()}
    for version in versions:
        own = host_bound_limit(result, [version])
        pts = sorted((r["n"], r["gbps"]) for r in rows
                     if r["version"] == version and r["n"] <= own and r.get("gbps") is not None)
        if pts and str(version) in colors:
            xs, ys = zip(*pts)
            ax.plot(xs, ys, linestyle="none", marker="o", markerfacecolor="white",
                    markeredgecolor=colors[str(version)], zorder=3)
    low = min(r["n"] for r in rows)
    ax.axvspan(low / 1.3, limit * 1.3, color="0.85", zorder=0)
    ax.text((low * limit) ** 0.5, 0.17, "host-bound:\nthe launches set\nthe time, not the kernel",
            transform=ax.get_xaxis_transform(), ha="center", va="center", fontsize=8)
    handles, labels = ax.get_legend_handles_labels()
    handles.append(Line2D([], [], linestyle="none", marker="o", markerfacecolor="white",
                          markeredgecolor="0.3"))
    labels.append(f"open marker: up to its last size\nwithin {HOST_FLOOR_WITHIN:g}× its lowest\nmedian time per call")
    # Above the shaded label and below the ceilings' labels, clear of the curves on the right.
    ax.legend(handles, labels, fontsize=8, loc="lower left", bbox_to_anchor=(0.01, 0.3))
    return fig
