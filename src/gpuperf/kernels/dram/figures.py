"""Chapter 3's figures: diagrams of the DRAM model, its explorer, and the measured plots.

``draw_burst``, ``draw_banks``, ``draw_interleaving``, ``draw_matmul_phases``,
``explore_model``: the model (no GPU). ``plot_latency``, ``plot_littles_law``,
``plot_loaded_latency``, ``plot_occupancy``, ``plot_strides``: the experiments' results.
"""

from __future__ import annotations

import math

import numpy as np

from gpuperf import validate

from .experiments import _check_res, littles_law_agreement
from .kernels import FLOAT_BYTES
from .measured import strides_visible
from .models import (
    TEXTBOOK,
    DramLayout,
    _check_layout,
    bank_schedule,
    banks_needed,
    bus_utilization,
    channels_used,
    phase_usage,
    tile_loads,
)

# --------------------------------------------------------------------------- figures of the model


_CHANNEL_COLORS = ["#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860",
                   "#DA8BC3", "#8C8C8C", "#CCB974", "#64B5CD"]


def _figure(w, h):
    # Through pyplot, so that a notebook shows the figure at the end of the cell (a bare
    # matplotlib.figure.Figure is only shown if it is the cell's last expression).
    import matplotlib.pyplot as plt

    from gpuperf import plots

    w = min(w, plots.COLUMN_INCHES)  # never wider than the book's column

    return plt.figure(figsize=(w, h), layout="constrained")


def _channel_color(ch: int, bank: int = 0, banks: int = 1):
    from matplotlib.colors import to_rgb

    r, g, b = to_rgb(_CHANNEL_COLORS[ch % len(_CHANNEL_COLORS)])
    # Later banks of a channel: the same hue, lighter.
    f = 0.55 * bank / max(banks - 1, 1)
    return (r + (1 - r) * f, g + (1 - g) * f, b + (1 - b) * f)


def draw_burst(burst_bytes: int = 32, request: int = 21, words: int = 32, word_bytes: int = 4,
               ratio: float = 10.0):
    """A DRAM row: the burst around a requested address, and what a burst costs in time.

    Top: ``words`` consecutive words; the one asked for (``request``, a word index) and
    the rest of its burst are delivered together. Bottom: reading the burst's words one
    access at a time would cost the cell-array latency (``ratio`` transfer times) per
    word; a burst pays it once, then streams the words over the bus.
    """
    for _name, _val in (("burst_bytes", burst_bytes), ("request", request), ("words", words),
                       ("word_bytes", word_bytes)):
        validate.positive_int(_val, _name, minimum=0 if _name == "request" else 1)
    words = validate.positive_int(words, "words", maximum=256)
    ratio = validate.nonnegative(ratio, "ratio")
    burst_bytes = validate.positive_int(burst_bytes, "burst_bytes", minimum=word_bytes)
    if burst_bytes % word_bytes:
        raise ValueError("burst_bytes must be a multiple of word_bytes.")
    request = validate.positive_int(request, "request", minimum=0, maximum=words - 1)
    per_burst = burst_bytes // word_bytes
    first = request // per_burst * per_burst
    fig = _figure(9, 3.6)
    ax, ax2 = fig.subplots(2, 1, height_ratios=[1, 1.3])
    for w in range(words):
        in_burst = first <= w < first + per_burst
        color = "#4C72B0" if in_burst else "#E5E5E5"
        ax.add_patch(_rect(w, 0, 0.95, 1, color))
        ax.text(w + 0.47, 0.5, str(w), ha="center", va="center", fontsize=7,
                color="white" if in_burst else "#555555")
        if w % per_burst == 0:
            ax.axvline(w - 0.025, color="#333333", lw=0.8)
    ax.annotate("requested word", (request + 0.47, 1.0), (request + 0.47, 1.7), ha="center",
                arrowprops={"arrowstyle": "->"}, fontsize=8)
    ax.set_xlim(-0.5, words + 0.5)
    ax.set_ylim(-0.2, 2.0)
    ax.axis("off")
    ax.set_title(f"One DRAM row, {word_bytes}-byte words, {burst_bytes}-byte bursts: the sense "
                 f"amplifiers read the whole burst (blue) at once", fontsize=9)
    # Timing: one access per word against one burst.
    y_single, y_burst = 1.0, 0.0
    t = 0.0
    for _ in range(per_burst):
        ax2.add_patch(_rect(t, y_single, ratio, 0.6, "#BBBBBB"))
        ax2.add_patch(_rect(t + ratio, y_single, 1, 0.6, "#222222"))
        t += ratio + 1
    ax2.add_patch(_rect(0, y_burst, ratio, 0.6, "#BBBBBB"))
    for k in range(per_burst):
        ax2.add_patch(_rect(ratio + k, y_burst, 0.95, 0.6, "#222222"))
    ax2.set_xlim(0, max(t, ratio + per_burst) * 1.02)
    ax2.set_ylim(-0.3, 1.9)
    ax2.set_yticks([y_burst + 0.3, y_single + 0.3],
                   ["one burst", f"{per_burst} separate\naccesses"])
    ax2.set_xlabel("time (in word-transfer times; grey: cell-array access, black: transfer)")
    ax2.text(ratio + per_burst + 1, y_burst + 0.3,
             f"{ratio + per_burst:.0f} against {t:.0f}: {t / (ratio + per_burst):.1f}x faster",
             va="center", fontsize=8)
    for side in ("top", "right"):
        ax2.spines[side].set_visible(False)
    return fig


def _rect(x, y, w, h, color, **kw):
    from matplotlib.patches import Rectangle

    return Rectangle((x, y), w, h, facecolor=color, edgecolor=kw.pop("edgecolor", "none"), **kw)


def draw_banks(ratio: float = 4.0, banks: int = 2, accesses: int | None = None):
    """The textbook's bank timing: grey cell-array accesses, black bursts on the shared bus."""
    validate.nonnegative(ratio, "ratio")
    if accesses is not None:
        validate.positive_int(accesses, "accesses", maximum=1000)
    banks = validate.positive_int(banks, "banks", maximum=64)
    accesses = accesses or max(3 * banks, 6)
    sched = bank_schedule(ratio, banks, accesses)
    fig = _figure(9, 0.45 * (banks + 1) + 1.6)
    ax = fig.subplots()
    for a in sched:
        y = banks - a["bank"]
        ax.add_patch(_rect(a["start"], y, a["ready"] - a["start"], 0.7, "#BBBBBB"))
        if a["bus_start"] > a["ready"]:  # the data wait for the bus
            ax.add_patch(_rect(a["ready"], y, a["bus_start"] - a["ready"], 0.7, "white",
                               edgecolor="#BBBBBB", hatch="///"))
        ax.add_patch(_rect(a["bus_start"], y, 1, 0.7, "#222222"))
        ax.add_patch(_rect(a["bus_start"], 0, 1, 0.7, _channel_color(a["bank"] % 10)))
    end = sched[-1]["bus_end"]
    ax.set_xlim(0, end * 1.01)
    ax.set_ylim(-0.3, banks + 0.9)
    ax.set_yticks([0.35] + [banks - b + 0.35 for b in range(banks)],
                  ["bus"] + [f"bank {b}" for b in range(banks)])
    ax.set_xlabel("time (burst-transfer times)")
    util = bus_utilization(ratio, banks)
    ax.set_title(f"access latency R = {ratio:g} transfer times, {banks} bank"
                 f"{'s' if banks > 1 else ''}: the bus is busy {util:.0%} of the time "
                 f"(R + 1 = {banks_needed(ratio)} banks keep it full)", fontsize=9)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return fig


def draw_interleaving(layout: DramLayout = TEXTBOOK, n_elements: int = 16,
                      element_bytes: int = FLOAT_BYTES):
    """Which elements of an array sit in which channel and bank (the textbook's Fig. 6.9)."""
    _check_layout(layout)
    element_bytes = validate.positive_int(element_bytes, "element_bytes")
    n_elements = validate.positive_int(n_elements, "n_elements", maximum=512)
    cells: dict[tuple[int, int], list[int]] = {}
    for r in layout.table(n_elements, element_bytes):
        cells.setdefault((r["channel"], r["bank"]), []).append(r["element"])
    C, B = layout.channels, layout.banks_per_channel
    fig = _figure(min(2.2 * C + 1, 14), 0.9 * B + 1.2)
    ax = fig.subplots()
    for ch in range(C):
        for bank in range(B):
            elems = cells.get((ch, bank), [])
            ax.add_patch(_rect(ch + 0.04, B - 1 - bank + 0.06, 0.92, 0.88,
                               _channel_color(ch, bank, B)))
            text = ", ".join(f"M[{e}]" for e in elems[:8]) + (" ..." if len(elems) > 8 else "")
            ax.text(ch + 0.5, B - 1 - bank + 0.5, f"bank {bank}\n{_wrap(text, 22)}",
                    ha="center", va="center", fontsize=7)
    ax.set_xlim(0, C)
    ax.set_ylim(0, B)
    ax.set_xticks([c + 0.5 for c in range(C)], [f"channel {c}" for c in range(C)])
    ax.set_yticks([])
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    ax.set_title(f"{n_elements} elements of {element_bytes} bytes, {layout.burst_bytes}-byte "
                 f"bursts, {C} channels x {B} banks: burst k goes to channel k mod {C}, "
                 f"bank (k div {C}) mod {B}", fontsize=9)
    return fig


def _wrap(text: str, width: int) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width)) if text else "(empty)"


def draw_matmul_phases(width: int = 4, tile: int = 2, *, matrix: str = "M",
                       layout: DramLayout = TEXTBOOK, element_bytes: int = FLOAT_BYTES,
                       max_phases: int = 4):
    """Which channel and bank every element loaded in each phase lives in, and the load per channel.

    Top row: the matrix, one panel per phase; each element loaded in that phase is
    coloured by its channel (lighter for higher banks) and labelled with the blocks that
    load it. Bottom: distinct bursts asked of each channel in each phase.
    """
    _check_layout(layout)
    validate.positive_int(element_bytes, "element_bytes")
    validate.choice(matrix, "matrix", ("M", "N"))
    width = validate.positive_int(width, "width", maximum=64)
    tile = validate.positive_int(tile, "tile", maximum=width)
    phases = math.ceil(width / tile)
    shown = min(phases, validate.positive_int(max_phases, "max_phases"))
    # Panels share the column; a cell gets a label only if it is big enough to read.
    from gpuperf import plots  # lazily: matplotlib only when drawing
    panel = (min(2.6 * shown + 0.5, plots.COLUMN_INCHES) - 0.5) / shown
    fig = _figure(2.6 * shown + 0.5, panel + 3.0)
    axes = fig.subplots(2, shown, squeeze=False, height_ratios=[panel + 0.6, 1.6])
    C, B = layout.channels, layout.banks_per_channel
    labels = panel / width >= 0.3
    for ph in range(shown):
        ax = axes[0][ph]
        who: dict[int, list[tuple[int, int]]] = {}
        for acc in tile_loads(width, tile, ph, matrix=matrix, layout=layout,
                              element_bytes=element_bytes):
            for e in acc["elements"]:
                who.setdefault(e, []).append(acc["block"])
        for e in range(width * width):
            r, c = divmod(e, width)
            if e in who:
                ch, bank = layout.locate_element(e, element_bytes)
                color = _channel_color(ch, bank, B)
            else:
                color = "#F2F2F2"
            ax.add_patch(_rect(c, width - 1 - r, 0.96, 0.96, color))
            if labels and e in who:
                ch, bank = layout.locate_element(e, element_bytes)
                text = f"c{ch}b{bank}"
                if phases <= 2:  # few blocks: name the ones that load the element
                    text += "\n" + " ".join(f"{by}{bx}" for by, bx in sorted(set(who[e])))
                ax.text(c + 0.48, width - 1 - r + 0.48, text, ha="center", va="center",
                        fontsize=6 if width > 4 else 7)
        ax.set_xlim(0, width)
        ax.set_ylim(0, width)
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
        used = channels_used(width, tile, ph, matrix=matrix, layout=layout,
                             element_bytes=element_bytes)
        ax.set_title(f"phase {ph}\nchannels {used}", fontsize=9)
        usage = phase_usage(width, tile, ph, matrix=matrix, layout=layout,
                            element_bytes=element_bytes)
        bx = axes[1][ph]
        bottom = np.zeros(C)
        for bank in range(B):
            counts = np.array([usage.get((ch, bank), 0) for ch in range(C)], dtype=float)
            bx.bar(range(C), counts, bottom=bottom,
                   color=[_channel_color(ch, bank, B) for ch in range(C)],
                   edgecolor="white", label=f"bank {bank}")
            bottom += counts
        bx.set_xticks(range(C), [f"c{c}" for c in range(C)])
        bx.yaxis.get_major_locator().set_params(integer=True)
        bx.set_ylabel("bursts" if ph == 0 else "")
        for side in ("top", "right"):
            bx.spines[side].set_visible(False)
    fig.suptitle(f"{width}x{width} tiled matrix product, {tile}x{tile} tiles: the elements of "
                 f"{matrix} each phase loads ({shown} of {phases} phases shown)"
                 + ("\nlabels: c<channel>b<bank>"
                    + (", then the blocks (by bx) that load it" if phases <= 2 else "")
                    if labels else ""),
                 fontsize=9)
    return fig


def explore_model():
    """Sliders over the model: bank timing, and channels per phase of the tiled product.

    Built from ``gpuperf.widgets.interact`` (sliders redrawing into an output area), like
    every other explorer of the course.
    """
    from gpuperf import widgets  # imported here: a GPU box may lack ipywidgets

    def matmul_view(width, tile, matrix, burst_bytes, channels, banks):
        layout = DramLayout(burst_bytes, channels, banks)
        fig = draw_matmul_phases(width, min(tile, width), matrix=matrix, layout=layout)
        if tile > width:  # say so: otherwise the figure just repeats the tile = width one
            fig.text(0.5, -0.01, f"tile {tile} is wider than the {width}x{width} matrix: drawn "
                     f"with tile {width}", ha="center", va="top", fontsize=8, color="#a00")
        return fig

    # Both start where the chapter's figures start.
    banks_tab = widgets.interact(lambda ratio, banks: draw_banks(ratio, banks),
                                 start={"ratio": 4, "banks": 2},
                                 ratio=(1, 24, 1), banks=(1, 26, 1))
    matmul_tab = widgets.interact(matmul_view,
                                  start={"width": 4, "tile": 2, "burst_bytes": 8,
                                         "channels": 4, "banks": 2},
                                  width=(2, 32, 1), tile=[1, 2, 4, 8, 16], matrix=["M", "N"],
                                  burst_bytes=[4, 8, 16, 32, 64], channels=(1, 8, 1),
                                  banks=(1, 4, 1))
    return widgets.tabs({"banks on a channel": banks_tab,
                         "tiled matmul: channels per phase": matmul_tab})


# --------------------------------------------------------------------------- measured figures


def _style(ax, res, title):
    ax.set_title(title + "\n", fontsize=10)
    ax.grid(True, which="both", alpha=0.25)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.text(0.995, 1.0, res.label, transform=ax.transAxes, ha="right", va="bottom", fontsize=7,
            color="#555555")


def plot_latency(res):
    """Latency against working set: the L1, L2 and DRAM plateaus, L2's size marked."""
    _check_res(res, "order", "kib", "latency_ns")
    from gpuperf import plots  # lazily: matplotlib only when drawing
    fig = _figure(8, 4.2)
    ax = fig.subplots()
    for i, order in enumerate(res.values("order")):
        rows = sorted(res.select(order=order), key=lambda r: r["kib"])
        ax.plot([r["kib"] * 1024 for r in rows], [r["latency_ns"] for r in rows], "o-",
                ms=4, color=_CHANNEL_COLORS[i], label=f"{order} chain")
    plots.reference_curves(ax, res, x="kib", y="latency_ns", series="order", rows=res.rows,
                           x_factor=1024, colors={order: _CHANNEL_COLORS[i] for i, order
                                                  in enumerate(res.values("order"))})
    ax.set_xscale("log", base=2)
    l2 = (res.meta.get("device") or {}).get("l2_bytes")
    if l2:
        ax.axvline(l2, color="#999999", ls="--", lw=1)
        # Bottom right of the line, below the DRAM plateau and right of the L2 steps.
        ax.text(l2, 0.04, f" L2 = {l2 / 2**20:.0f} MiB", fontsize=8, va="bottom",
                color="#555555", transform=ax.get_xaxis_transform())
    ax.set_xticks([2**k for k in range(12, 31, 2)],
                  [_bytes_label(2**k) for k in range(12, 31, 2)], fontsize=8)
    ax.set_xlabel("working set (one 4-byte index per 128-byte line)")
    ax.set_ylabel("load-to-use latency (ns)")
    ax.legend(fontsize=8, loc="upper left")
    _style(ax, res, "Pointer chasing: one dependent load at a time")
    return fig


def _bytes_label(n: float) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n:g} B"


def plot_littles_law(res):
    """Measured bandwidth against bytes in flight, Little's law and the ceilings over it.

    Right: measurement / prediction (with the round latency) against the measured bandwidth,
    the 20% band shaded; filled markers where bandwidth still rises in proportion.
    """
    _check_res(res, "ilp", "warps_per_sm", "gbps", "bytes_in_flight")
    from gpuperf import plots  # lazily: matplotlib only when drawing
    fig = _figure(plots.COLUMN_INCHES, 8.4)
    ax, rax = fig.subplots(2, 1, height_ratios=[1.4, 1])
    ilps = sorted(res.values("ilp"))
    for i, ilp in enumerate(ilps):
        rows = sorted(res.select(ilp=ilp), key=lambda r: r["bytes_in_flight"])
        ax.plot([r["bytes_in_flight"] for r in rows], [r["gbps"] for r in rows], "o-", ms=4,
                color=_CHANNEL_COLORS[i], label=f"{ilp} load{'s' if ilp > 1 else ''}/thread",
                lw=1)
    plots.reference_curves(ax, res, x="bytes_in_flight", y="gbps", series="ilp", rows=res.rows,
                           colors={ilp: _CHANNEL_COLORS[i] for i, ilp in enumerate(ilps)})
    latency = res.rows[0]["latency_ns"]
    textbook = sorted((r["bytes_in_flight"], r["textbook_gbps"]) for r in res.rows)
    xs, line = (np.array(v, dtype=float) for v in zip(*textbook))
    ceiling = res.ceilings.get("copy_gbps")
    top = max([r["gbps"] for r in res.rows] + [ceiling or 0])
    keep = line <= 1.3 * top
    ax.plot(xs[keep], line[keep], "k--", lw=1.2,
            label=f"Little's law, one load's latency: bytes in flight / {latency:.0f} ns")
    for i, ilp in enumerate(ilps):
        # The same law with one warp's measured round of ilp loads alone (round_ns).
        rows = sorted(res.select(ilp=ilp), key=lambda r: r["bytes_in_flight"])
        pts = [(r["bytes_in_flight"], r["predicted_gbps"]) for r in rows
               if r["predicted_gbps"] <= 1.3 * top]
        if pts:
            ax.plot(*zip(*pts), ":", color=_CHANNEL_COLORS[i], lw=1.2,
                    label="Little's law, one warp's round alone (dotted)" if i == 0 else None)
    if ceiling:
        ax.axhline(ceiling, color="#C44E52", lw=1, ls=":")
        # Below its line, so that it clears the theoretical peak's label above the next line.
        ax.text(xs[0], ceiling * 0.97, f"device copy {ceiling:.0f} GB/s", fontsize=8,
                va="top", color="#C44E52")
    peak = res.ceilings.get("peak_gbps")
    if peak:
        ax.axhline(peak, color="#999999", lw=1, ls=":")
        ax.text(xs[0], peak * 1.02, f"theoretical {peak:.0f} GB/s", fontsize=8, va="bottom",
                color="#777777")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks([2**k for k in range(14, 25, 2)],
                  [_bytes_label(2**k) for k in range(14, 25, 2)], fontsize=8)
    ax.set_xlabel("allowed bytes in flight = SMs x resident warps x 32 x loads per thread x 4 B")
    ax.set_ylabel("bandwidth (GB/s, log scale)")
    ax.legend(fontsize=7, loc="lower right")
    _style(ax, res, "Bandwidth needs bytes in flight: latency x bandwidth")

    rax.axhspan(1 / 1.2, 1.2, color="#55A868", alpha=0.12, lw=0)   # littles_law_agreement's
    rax.axhline(1.0, color="k", lw=0.8)
    agree = littles_law_agreement(res)
    for i, ilp in enumerate(ilps):
        for linear in (True, False):
            pts = [(r["gbps"], 1 / r["ratio"]) for r in agree if r["ilp"] == ilp
                   and r["linear"] == linear]
            if pts:
                rax.plot(*zip(*pts), "o", ms=5, color=_CHANNEL_COLORS[i],
                         mfc=_CHANNEL_COLORS[i] if linear else "none")
        # The last point of each curve has no next doubling to judge: a hollow square.
        last = max(res.select(ilp=ilp), key=lambda r: r["warps_per_sm"])
        rax.plot(last["gbps"], last["gbps"] / last["predicted_gbps"], "s", ms=5,
                 color=_CHANNEL_COLORS[i], mfc="none")
    rax.set_xscale("log")
    rax.set_ylim(0, 1.3)
    rax.set_xlabel("measured bandwidth (GB/s, log scale)")
    rax.set_ylabel("measured / Little's law (one warp's round)")
    rax.set_title("filled: doubling the warps still gives 1.8 times the bandwidth or more\n"
                  "hollow: past the bend; square: the last point (no doubling to judge)\n"
                  "band: agreement (either at most 1.2 times the other)", fontsize=8)
    rax.grid(alpha=0.3)
    return fig


def plot_occupancy(res):
    """Copy bandwidth against occupancy, for 1 and 4 elements per thread."""
    _check_res(res, "ilp", "occupancy", "gbps")
    from gpuperf import plots  # lazily: matplotlib only when drawing
    fig = _figure(8, 4.2)
    ax = fig.subplots()
    # The block size changes along with the occupancy: one marker shape per block size.
    shapes = dict(zip(sorted(res.values("block")) if "block" in res.columns else [],
                      "vsDoP^<>hX*"))
    for i, ilp in enumerate(sorted(res.values("ilp"))):
        rows = sorted(res.select(ilp=ilp), key=lambda r: (r["occupancy"], -r["gbps"]))
        for r in rows:
            ax.plot(r["occupancy"], r["gbps"], shapes.get(r.get("block"), "o"), ms=5,
                    color=_CHANNEL_COLORS[i])
        ax.plot([], [], "o", ms=5, color=_CHANNEL_COLORS[i],
                label=f"{ilp} element{'s' if ilp > 1 else ''}/thread")
        best: dict[float, float] = {}
        for r in rows:
            best[r["occupancy"]] = max(best.get(r["occupancy"], 0), r["gbps"])
        ax.plot(list(best), list(best.values()), "-", color=_CHANNEL_COLORS[i], lw=1)
    plots.reference_curves(ax, res, x="occupancy", y="gbps", series="ilp", rows=res.rows,
                           connect=False, colors={ilp: _CHANNEL_COLORS[i] for i, ilp
                                                  in enumerate(sorted(res.values("ilp")))})
    ceiling = res.ceilings.get("copy_gbps")
    if ceiling:
        ax.axhline(ceiling, color="#C44E52", lw=1, ls=":")
        ax.text(55, ceiling * 1.02, f"device copy {ceiling:.0f} GB/s", fontsize=8,
                color="#C44E52")
        ax.set_ylim(0, 1.5 * ceiling)  # room for the legend above the ceiling
    ax.plot([], [], "-", color="0.45", lw=1, label="line: the best block size at each occupancy")
    for block, shape in shapes.items():
        ax.plot([], [], shape, ms=5, color="0.45", ls="none", label=f"blocks of {block} threads")
    ax.set_xlabel("theoretical occupancy (% of the SM's warp slots, from the CUDA occupancy API)")
    ax.set_ylabel("copy bandwidth (GB/s, read + write)")
    ax.set_xlim(0, 105)
    ax.legend(fontsize=7, loc="upper left", ncol=2)
    _style(ax, res, "A memory-bound copy against occupancy")
    return fig


def plot_strides(res):
    """Bandwidth with concurrent warps a power of two apart, and one chunk more."""
    _check_res(res, "padded", "stride_bytes", "gbps")
    from gpuperf import plots  # lazily: matplotlib only when drawing
    fig = _figure(8, 4.2)
    ax = fig.subplots()
    for i, padded in enumerate((False, True)):
        rows = sorted(res.select(padded=padded), key=lambda r: r["stride_bytes"])
        ax.plot([r["stride_bytes"] for r in rows], [r["gbps"] for r in rows], "o-", ms=4,
                color=_CHANNEL_COLORS[i],
                label="stride + 128 B (padded)" if padded else "power-of-two stride")
    plots.reference_curves(ax, res, x="stride_bytes", y="gbps", series="padded", rows=res.rows,
                           colors={False: _CHANNEL_COLORS[0], True: _CHANNEL_COLORS[1]})
    ceiling = res.ceilings.get("copy_gbps")
    if ceiling:
        ax.axhline(ceiling, color="#C44E52", lw=1, ls=":")
        ax.annotate("copy ceiling (bytes read + written)", (0.01, ceiling),
                    xycoords=("axes fraction", "data"), ha="left", va="bottom", fontsize=8,
                    color="#C44E52")
    facts = res.meta.get("device") or {}
    visible = ({"rows", "ilp"} <= set(res.columns) and facts.get("sm_count")
               and facts.get("max_threads_per_sm"))
    limit = strides_visible(res)["largest_stride_bytes"] if visible else None
    if limit:
        ax.axvspan(limit * 1.41, max(r["stride_bytes"] for r in res.rows) * 1.41,
                   color="0.85", zorder=0,
                   label=f"beyond {_bytes_label(limit)}: concurrent warps read runs of one row "
                         "(not a stride test)")
    ax.set_xscale("log", base=2)
    ax.set_xticks([2**k for k in range(7, 26, 2)],
                  [_bytes_label(2**k) for k in range(7, 26, 2)], fontsize=8)
    ax.set_ylim(0, None)
    ax.set_xlabel("distance between the chunks that concurrent warps read")
    ax.set_ylabel("read bandwidth (GB/s)")
    ax.legend(fontsize=8, loc="lower left")
    _style(ax, res, "Power-of-two strides: does everything land in one channel?")
    return fig


def plot_loaded_latency(res):
    """Left: latency under load against the bandwidth carried, per loads per thread, with the
    idle latency and the copy ceiling. Right: the bytes in flight the measurement implies
    (bandwidth x loaded latency) against those the loads allow, with the line where they are
    equal."""
    _check_res(res, "ilp", "gbps", "loaded_ns", "idle_ns", "implied_in_flight",
               "bytes_in_flight")
    from gpuperf import plots  # lazily: matplotlib only when drawing
    fig = _figure(plots.COLUMN_INCHES, 7.6)
    ax, rax = fig.subplots(2, 1)
    ilps = sorted(res.values("ilp"))
    for i, ilp in enumerate(ilps):
        rows = sorted(res.select(ilp=ilp), key=lambda r: r["gbps"])
        label = f"{ilp} load{'s' if ilp > 1 else ''}/thread"
        ax.plot([r["gbps"] for r in rows], [r["loaded_ns"] for r in rows], "o-", ms=4, lw=1,
                color=_CHANNEL_COLORS[i], label=label)
        rax.plot([r["bytes_in_flight"] for r in rows], [r["implied_in_flight"] for r in rows],
                 "o-", ms=4, lw=1, color=_CHANNEL_COLORS[i], label=label)
    idle = res.rows[0]["idle_ns"]
    ax.axhline(idle, color="k", lw=0.8, ls="--")
    ax.text(ax.get_xlim()[0], idle * 1.03, f" the probe alone: {idle:.0f} ns", fontsize=8)
    ceiling = res.ceilings.get("copy_gbps")
    if ceiling:
        ax.axvline(ceiling, color="#C44E52", lw=1, ls=":")
        lo, hi = ax.get_ylim()
        ax.text(ceiling, lo + 0.5 * (hi - lo), f"device copy\n{ceiling:.0f} GB/s ", fontsize=8,
                color="#C44E52", ha="right", va="center")
    ax.set_xlabel("bandwidth carried by the load (GB/s)")
    ax.set_ylabel("probe's latency per load (ns)")
    ax.legend(fontsize=7, loc="upper left")
    _style(ax, res, "The probe's latency against the bandwidth the kernel carries")
    lo = min(r["bytes_in_flight"] for r in res.rows)
    hi = max(r["bytes_in_flight"] for r in res.rows)
    rax.plot([lo, hi], [lo, hi], "k--", lw=0.8, label="all the loads' bytes in flight")
    rax.set_xscale("log", base=2)
    rax.set_yscale("log", base=2)
    ticks = [2**k for k in range(14, 26, 2) if lo / 2 <= 2**k <= hi * 2]
    rax.set_xticks(ticks, [_bytes_label(t) for t in ticks], fontsize=8)
    rax.set_yticks(ticks, [_bytes_label(t) for t in ticks], fontsize=8)
    rax.set_xlabel("bytes in flight the resident warps' loads allow")
    rax.set_ylabel("bandwidth x loaded latency")
    rax.legend(fontsize=7, loc="upper left")
    rax.grid(alpha=0.3)
    return fig


def show_model_table(rows: list[dict], headers: dict, caption: str = "") -> str:
    """Display rows computed from the model (not measured) as an HTML table, one column per
    entry of ``headers`` (column -> the words its header shows), under ``caption``. Returns the
    HTML; outside Jupyter it prints one line per row instead."""
    import html

    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
        raise TypeError("rows must be a non-empty list of dicts (one per table row), e.g. "
                        "[{'banks': 1, 'utilization': 0.05}].")
    if not isinstance(headers, dict) or not headers:
        raise TypeError("headers must be a dict from column to the words its header shows, "
                        "e.g. {'banks': 'banks per channel'}.")
    missing = [c for c in headers if c not in rows[0]]
    if missing:
        raise ValueError(f"headers names columns {missing} that the rows do not have; they have "
                         f"{list(rows[0])}.")
    validate.string(caption, "caption", empty=True)

    def cell(x):
        text = f"{x:.3g}" if isinstance(x, float) else str(x)
        return f"<td>{html.escape(text)}</td>"

    head = "".join(f"<th>{html.escape(w)}</th>" for w in headers.values())
    body = "".join("<tr>" + "".join(cell(r[c]) for c in headers) + "</tr>" for r in rows)
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    out = (f"<table class='gp-table'>{cap}<thead><tr>{head}</tr></thead>"
           f"<tbody>{body}</tbody></table>")
    try:
        from IPython import get_ipython
        from IPython.display import HTML, display
    except ImportError:  # pragma: no cover - IPython ships with the course
        get_ipython = None
    if get_ipython is not None and get_ipython() is not None:
        display(HTML(out))
    else:
        for r in rows:
            print("; ".join(f"{w}: {cell(r[c])[4:-5]}" for c, w in headers.items()))
    return out
