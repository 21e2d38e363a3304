"""The streams chapter's figures: timelines, speedups, bandwidths and the explorer widget."""

from __future__ import annotations

from gpuperf import validate
from gpuperf.mode import SIMULATOR

from .experiments import EXPLORE_CHUNKS, EXPLORE_ITERS, _check_res, explore_measure
from .kernels import KINDS

KIND_COLORS = {"h2d": "tab:blue", "kernel": "tab:green", "d2h": "tab:orange"}  # as plots.timeline
KIND_NAMES = {"h2d": "copy in (H2D)", "kernel": "kernel", "d2h": "copy out (D2H)"}


def timeline_spans(res, work: str, case: str, schedule: str = "measured") -> list[dict]:
    """The spans of one case of ``streams_timeline``, ready for ``plots.timeline``."""
    _check_res(res, "work", "case", "schedule", "stream", "start_ms", "end_ms")
    validate.choice(work, "work", res.values("work"))
    validate.choice(case, "case", res.values("case"))
    validate.choice(schedule, "schedule", res.values("schedule"))
    keys = ("stream", "kind", "start_ms", "end_ms", "label", "chunk")
    return [{k: r[k] for k in keys} for r in res.select(work=work, case=case, schedule=schedule)]


def busy_ms(res, work: str, case: str, kind: str = "kernel") -> float:
    """How long at least one ``kind`` operation was in flight in one measured case of
    ``streams_timeline``: the length of the union of those spans, in ms.

    A measured span runs from the moment its stream reached the operation to its end, so
    it contains the operation's own run: the union is at least the time the engine was
    busy with that kind. Overlapping spans of different streams count once."""
    from gpuperf import nsight  # the one union of intervals (also the CUPTI timeline's)

    validate.choice(kind, "kind", KINDS)
    return nsight.union_ms([(s["start_ms"], s["end_ms"]) for s in timeline_spans(res, work, case)
                      if s["kind"] == kind])


def plot_timeline(res, work: str | None = None, *, cases=None):
    """Every case of ``streams_timeline`` for one work, one panel each, on one time axis.

    The pipelined case is drawn with the ideal schedule (hatched) below it, so that
    the overlap achieved and the overlap possible are read off together.
    """
    _check_res(res, "work", "case", "schedule")
    if work is not None:
        validate.choice(work, "work", res.values("work"))
    if cases is not None:
        for _i, _c in enumerate(validate.sequence(cases, "cases")):
            validate.choice(_c, f"cases[{_i}]", res.values("case"))
    import matplotlib.pyplot as plt

    from gpuperf import plots

    work = work or res.values("work")[0]
    rows = res.select(work=work)
    shown = [c for c in dict.fromkeys(r["case"] for r in rows) if cases is None or c in cases]
    lanes = [len({r["stream"] for r in rows if r["case"] == c}) *
             (2 if c == "pipelined" else 1) for c in shown]
    end = max(r["end_ms"] for r in rows if r["case"] in shown) * 1.02
    fig, axes = plt.subplots(len(shown), 1, figsize=(plots.COLUMN_INCHES,
                                                     1.2 * len(shown) + 0.35 * sum(lanes)),
                             sharex=True, squeeze=False,
                             gridspec_kw={"height_ratios": [n + 1 for n in lanes]})
    for ax, case in zip(axes[:, 0], shown):
        spans = timeline_spans(res, work, case)
        ideal = timeline_spans(res, work, case, "ideal") or None
        total = max(s["end_ms"] for s in spans)
        title = f"{case}: {total:.2f} ms"
        if ideal:
            title += f" (ideal from the one-stream stage times: {max(s['end_ms'] for s in ideal):.2f} ms)"
        plots.timeline(spans, ideal=ideal, title=title, ax=ax)
        ax.set_xlim(0, end)
        if ax is not axes[-1, 0]:
            ax.set_xlabel("")
            legend = ax.get_legend()
            if legend is not None:
                legend.remove()
    # Each panel added the source label; keep one. Before the suptitle: removing a figure's
    # suptitle this way breaks tight_layout in matplotlib 3.10 (Colab's).
    for text in list(fig.texts):
        text.remove()
    iters = rows[0]["iters"]
    steps = f", {iters:,} steps" if iters else ""
    fig.suptitle(f"{plots.value_words('work', work)}{steps}, "
                 f"2^25 float32 in {rows[0]['n_chunks']} chunks",
                 fontsize=10)
    plots.source_label(fig, res.label)
    fig.tight_layout()
    return fig


def plot_default_stream(res):
    """Each case of ``streams_default_stream`` as a timeline, one axis per case."""
    _check_res(res, "case")
    import matplotlib.pyplot as plt

    cases = res.values("case")
    end = max(res.column("end_ms")) * 1.05
    from gpuperf import plots

    fig, axes = plt.subplots(len(cases), 1, figsize=(plots.COLUMN_INCHES, 1.6 * len(cases) + 0.6),
                             sharex=True,
                             squeeze=False)
    for ax, case in zip(axes[:, 0], cases):
        spans = res.select(case=case)
        for s in spans:
            color = "#C44E52" if s["stream"] == 0 else KIND_COLORS["kernel"]
            ax.barh(s["stream"], max(s["end_ms"] - s["start_ms"], end * 0.004),
                    left=s["start_ms"], color=color, height=0.7)
        middle = [sp["label"] for sp in spans if sp["stream"] == 0]
        ax.set_yticks([0, 1, 2])
        ax.set_yticklabels(["per-thread" if middle and middle[0].startswith("per-thread")
                            else "default", "stream 1", "stream 2"])
        ax.invert_yaxis()
        ax.set_title(f"{case}: {spans[0]['makespan_ms']:.2f} ms", fontsize=10)
    axes[-1, 0].set_xlim(0, end)
    axes[-1, 0].set_xlabel("time since the reference event (ms)")
    fig.suptitle(res.label, fontsize=9)
    fig.tight_layout()
    return fig


def plot_speedup(res):
    """Speedup over serial against the number of streams: measured and ideal, per work."""
    _check_res(res)
    import matplotlib.pyplot as plt

    from gpuperf import plots  # lazily: matplotlib only when drawing
    fig, ax = plt.subplots(figsize=(plots.COLUMN_INCHES, 4))
    for i, work in enumerate(res.values("work")):
        rows = res.select(work=work)
        x = [r["n_streams"] for r in rows]
        color, shown = f"C{i}", plots.value_words("work", work)
        ax.plot(x, [r["speedup"] for r in rows], "o-", color=color, label=f"{shown}, measured")
        ax.plot(x, [r["ideal_speedup"] for r in rows], "--", color=color,
                label=f"{shown}, ideal from stage times")
        bound = rows[0]["serial_ms"] / rows[0]["bound_ms"]
        ax.axhline(bound, color=color, lw=0.8, ls=":")
        ax.annotate(f"busiest engine bound {bound:.2f}x", (x[-1], bound), color=color,
                    fontsize=8, ha="right", va="bottom")
    plots.reference_curves(ax, res, x="n_streams", y="speedup", series="work", rows=res.rows,
                           colors={work: f"C{i}" for i, work in enumerate(res.values("work"))})
    ax.set_xlabel("streams")
    ax.set_ylabel("speedup over serial (x)")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    ax.set_title(f"{res.rows[0]['n_chunks']} chunks ({res.label})", fontsize=9)
    fig.tight_layout()
    return fig


def plot_host_bandwidth(res):
    """Copy bandwidth against size, pageable and pinned, each direction."""
    _check_res(res)
    import matplotlib.pyplot as plt

    from gpuperf import plots  # lazily: matplotlib only when drawing
    fig, ax = plt.subplots(figsize=(plots.COLUMN_INCHES, 4))
    for memory, ls in (("pinned", "-"), ("pageable", "--")):
        for direction, color in (("h2d", KIND_COLORS["h2d"]), ("d2h", KIND_COLORS["d2h"])):
            rows = res.select(memory=memory, direction=direction)
            ax.plot([r["mib"] for r in rows], [r["gbps"] for r in rows], "o" + ls, color=color,
                    label=f"{memory}, {KIND_NAMES[direction]}")
        # Matched on the memory kind only: older records lack the copy-engine column.
        plots.reference_curves(ax, res, x="mib", y="gbps", series="direction",
                               rows=res.select(memory=memory), sel={"memory": memory},
                               colors=KIND_COLORS)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("copy size (MiB)")
    ax.set_ylabel("GB/s")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    ax.set_title(res.label, fontsize=9)
    fig.tight_layout()
    return fig


def plot_explore(res, *, chunk_counts=(4, 8, 32)):
    """Speedup against streams for each arithmetic intensity, one panel per chunk count.

    Solid: measured; dotted: the ideal from the one-stream stage times.
    """
    _check_res(res, "n_chunks")
    for _i, _c in enumerate(validate.sequence(chunk_counts, "chunk_counts")):
        validate.choice(_c, f"chunk_counts[{_i}]", res.values("n_chunks"))
    import matplotlib.pyplot as plt

    from gpuperf import plots

    # One panel per chunk count, side by side while they fit the column, else stacked.
    across = len(chunk_counts) <= 2
    fig, axes = plt.subplots(1 if across else len(chunk_counts), len(chunk_counts) if across else 1,
                             figsize=(plots.COLUMN_INCHES, 3.6 if across else 2.4 * len(chunk_counts)),
                             sharey=True, sharex=not across, squeeze=False)
    for ax, n_chunks in zip(axes.flat, chunk_counts):
        for i, iters in enumerate(res.values("iters")):
            rows = res.select(iters=iters, n_chunks=n_chunks)
            if not rows:
                continue
            x = [r["n_streams"] for r in rows]
            ax.plot(x, [r["speedup"] for r in rows], "o-", color=f"C{i}",
                    label=(f"{iters:,} relaxation steps" if iters else "the add")
                    + f" ({rows[0]['flop_per_byte']:.3g} FLOP/B)")
            ax.plot(x, [r["serial_ms"] / r["ideal_ms"] for r in rows], ":", color=f"C{i}")
        plots.reference_curves(ax, res, x="n_streams", y="speedup", series="iters",
                               rows=res.select(n_chunks=n_chunks),
                               colors={it: f"C{i}" for i, it in enumerate(res.values("iters"))})
        ax.axhline(1, color="0.5", lw=0.8)
        ax.set_title(f"{n_chunks} chunks", fontsize=10)
        ax.set_ylabel("speedup over serial (x)", fontsize=8)
    axes.flat[-1].set_xlabel("streams")
    axes[0, 0].legend(fontsize=7, title="solid: measured; dotted: ideal", title_fontsize=7)
    fig.suptitle(res.label, fontsize=9)
    fig.tight_layout()
    return fig


def explore(res=None):
    """Sliders over streams, chunks and arithmetic intensity (live on a GPU).

    Widgets are imported here, not at module import: a GPU box may lack ipywidgets.
    """
    if res is not None:
        _check_res(res, "n_streams", "n_chunks", "iters")
    from gpuperf import records, widgets

    res = res or records.run("streams_explore", live=False if SIMULATOR else None)
    return widgets.explore(res, x="n_streams", y="speedup",
                           controls={"n_chunks": list(EXPLORE_CHUNKS),
                                     "iters": list(EXPLORE_ITERS)},
                           live=None if SIMULATOR else explore_measure)


def plot_chunking(res):
    """``streams_chunking``: the pipeline's time against the number of chunks, issued through
    Numba and through the driver, with the host's time to issue each run (dashed), the ideal
    from the GPU's stage times (dotted) and the busiest engine's total (a labelled line)."""
    _check_res(res, "issue", "n_chunks", "total_ms", "issue_ms", "ideal_ms", "bound_ms")
    import matplotlib.pyplot as plt

    from gpuperf import plots

    fig, ax = plt.subplots(figsize=(plots.COLUMN_INCHES, 5))
    names = {"numba": "through Numba", "driver": "one driver call each"}
    for i, issue in enumerate(("numba", "driver")):
        rows = sorted(res.select(issue=issue), key=lambda r: r["n_chunks"])
        x = [r["n_chunks"] for r in rows]
        ax.plot(x, [r["total_ms"] for r in rows], "o-", color=f"C{i}",
                label=f"pipeline, copies and kernels {names[issue]}")
        ax.plot(x, [r["issue_ms"] for r in rows], "--", color=f"C{i}",
                label=f"host's time to issue them, {names[issue]}")
    rows = sorted(res.select(issue="driver"), key=lambda r: r["n_chunks"])
    ax.plot([r["n_chunks"] for r in rows], [r["ideal_ms"] for r in rows], ":", color="0.3",
            label="ideal pipeline from the GPU's stage times")
    bound = rows[0]["bound_ms"]
    ax.axhline(bound, color="0.5", lw=0.8)
    ax.annotate(f"busiest engine: {bound:.1f} ms", (rows[0]["n_chunks"], bound),
                fontsize=8, color="0.3", va="top", xytext=(2, -3), textcoords="offset points")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("chunks")
    ax.set_ylabel("time per run (ms)")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
    ax.set_title(f"{rows[0]['n_streams']} streams, memory-bound add\n{res.label}", fontsize=9)
    fig.tight_layout()
    return fig
