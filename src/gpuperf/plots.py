"""The figures every chapter uses, in one style.

Every figure says what it measures (axis labels with units), where the ceiling is
(dashed lines, labelled), and where the numbers came from (the result's label:
GPU, live or recorded, date, versions). Each function returns the Figure.
"""

from __future__ import annotations

import html
import re
import textwrap

import matplotlib.pyplot as plt

from . import validate as v

# The book's content column is 688 px; a figure drawn at 100 dpi wider than this many inches
# is shrunk to fit it, labels included (tests/check_built_book.py measures it).
COLUMN_INCHES = 6.8
# The longest line of a horizontal bar chart's label, in characters.
BAR_LABEL_CHARS = 30
CEILING_STYLE = {"linestyle": "--", "linewidth": 1.2}
COLORS = plt.rcParams["axes.prop_cycle"].by_key()["color"]
UNITS = {"gbps": "bandwidth (GB/s)", "ms": "time (ms)", "tflops": "TFLOP/s",
         "pct_copy": "% of device-to-device copy", "pct_peak": "% of theoretical peak"}

# Column names as a reader reads them, for axes and legends a caller did not label.
COLUMN_WORDS = {"block": "threads per block", "threads": "threads per block",
                "blocks_per_sm": "blocks per SM", "warps_per_sm": "warps per SM",
                "n": "elements", "ilp": "loads in flight per thread", "stride": "stride",
                "factor": "coarsening factor", "tile": "tile", "grid": "blocks in the grid",
                "blocks": "blocks", "mib": "MiB", "bytes": "bytes", "chunks": "chunks",
                "streams": "streams", "version": "version", "method": "method",
                "kernel": "kernel", "occupancy": "occupancy", "offset": "offset (elements)",
                "dtype": "element type", "elem_bytes": "element size (bytes)"}

def value_words(column: str, value):
    """A record's value in words where ``records.VALUE_WORDS`` has them, else the value
    itself."""
    from . import records

    return records.value_words(column, value)


def _category_words(column: str, value):
    """A category's tick label on a plot: its words (``value_words``), wrapped onto lines of
    at most 16 characters so that long words do not run into their neighbours."""
    import textwrap

    said = value_words(column, value)
    return textwrap.fill(said, 16) if isinstance(said, str) else said


# A caption counts the other points within this share of its highest rate: close enough that
# one run of a sweep does not order them.
TIE = 0.02


def words(column: str) -> str:
    """A column's name in words (``blocks_per_sm`` -> "blocks per SM"), for labels."""
    v.string(column, "column")
    return COLUMN_WORDS.get(column) or UNITS.get(column) or column.replace("_", " ")


def default_title(result) -> str:
    """A figure's title when the caller gives none: the experiment's title in words and the
    GPU, never the experiment's internal name."""
    from . import records

    v.result(result, "result")
    try:
        what = records.get(result.name).title
    except ValueError:  # an ad-hoc Result: no registered experiment of that name
        what = result.name.replace("_", " ")
    return textwrap.shorten(what, 90, placeholder="…") + f" ({result.gpu})"


def _percent(pct: float) -> str:
    """A share for a label: whole percent from 1% up, one significant digit below (never "0%"
    for a bar that is not zero)."""
    if pct == 0 or abs(pct) >= 1:
        return f"{pct:.0f}%"
    return f"{pct:.1g}%"


def _series_label(series: str, key) -> str:
    """A legend entry: a named series as its name ("v6"), a number with its column's words."""
    return str(key) if isinstance(key, str) else f"{words(series)} = {key}"


def source_label(fig, label: str | None) -> None:
    """Write where the numbers came from (GPU, live or recorded, date) in the figure's corner."""
    if not hasattr(fig, "text") or not hasattr(fig, "axes"):
        raise TypeError(f"fig must be a matplotlib Figure, not {type(fig).__name__}.")
    if label is not None:
        v.string(label, "label", empty=True)
    if label:
        fig.text(0.99, 0.005, label, ha="right", va="bottom", fontsize=7, color="0.35")


def _rows_arg(result, rows, *cols):
    if rows is None:
        rows = result.rows
    else:
        rows = v.sequence(rows, "rows", empty=True)
        for i, r in enumerate(rows):
            if not isinstance(r, dict):
                raise TypeError(f"rows[{i}] must be a dict (a row of {result.name}), not "
                                f"{type(r).__name__}. Pass result.select(...) or a subset of "
                                "result.rows.")
    if not rows:
        raise ValueError(f"rows is empty: there are no recorded rows of {result.name} to draw. "
                         "Check the filters (result.values(column) lists what was recorded).")
    return rows


def _xy_args(result, x, y, series, rows) -> list:
    """The checks every curve plot makes: ``result``, its columns ``x``, ``y`` and
    ``series`` (optional); returns the rows to draw."""
    v.result(result)
    v.column(result, x, "x")
    v.column(result, y, "y")
    if series is not None:
        v.column(result, series, "series")
    return _rows_arg(result, rows)


def _ceilings_arg(ceilings, name="ceilings"):
    if ceilings is None:
        return None
    v.mapping(ceilings, name)
    for k, val in ceilings.items():
        if val is not None:
            v.positive(val, f"{name}[{k!r}]")
    return ceilings


def _ax_arg(ax):
    if ax is not None and not hasattr(ax, "figure"):
        raise TypeError(f"ax must be a matplotlib Axes (or None), not {type(ax).__name__}.")
    return ax


CEILING_LABELS = ("left", "right")


def _ceiling_lines(ax, ceilings: dict | None, horizontal: bool = True,
                   labels: str = "left") -> None:
    """Dashed ceiling lines, each labelled with its name and value: above the line at the
    left edge (``labels="left"``), or below it at the right edge (``"right"``), for a figure
    whose curves cross the left end of a line."""
    right = labels == "right"
    for i, (name, value) in enumerate((ceilings or {}).items()):
        if value is None:
            continue
        color = ["0.25", "tab:red", "tab:purple", "tab:brown"][i % 4]
        if horizontal:
            ax.axhline(value, color=color, **CEILING_STYLE)
            ax.annotate(f"{name}: {value:,.0f}" if value >= 100 else f"{name}: {value:.3g}",
                        xy=(0.995 if right else 0.005, value), xycoords=("axes fraction", "data"),
                        xytext=(-2, -2) if right else (2, 2), textcoords="offset points",
                        ha="right" if right else "left", va="top" if right else "baseline",
                        fontsize=8, color=color)
        else:
            ax.axvline(value, color=color, **CEILING_STYLE)


def copy_ceilings(result, *, peak: bool = True) -> dict:
    """The bandwidth ceilings of the run that produced ``result``, ready for ``ceilings=`` (every
    experiment measures the copy ceiling again in its own run: the label says so)."""
    v.result(result)
    v.boolean(peak, "peak")
    c = result.ceilings
    out = {"device-to-device copy, this run": c.get("copy_gbps")}  # each run measures its own
    if peak:
        out["theoretical peak"] = c.get("peak_gbps")
    return out


def legend_if_labelled(ax, **kwargs):
    """Draw the legend only when something on ``ax`` has a label: an empty legend box, and
    matplotlib's "No artists with labels" warning, otherwise."""
    if not hasattr(ax, "get_legend_handles_labels"):
        raise TypeError(f"ax must be a matplotlib Axes (e.g. fig.axes[0]), not {type(ax).__name__}.")
    handles, _ = ax.get_legend_handles_labels()
    return ax.legend(**kwargs) if handles else None


# How each reference GPU's recorded values are drawn beside a live measurement: the first
# reference dashed (bars: diamonds), the second dotted (triangles), and so on.
REFERENCE_STYLES = ("--", ":", "-.")
REFERENCE_MARKERS = ("D", "^", "v")
# A roofline's filled markers: a new shape each time the colours run out, so that no two
# kernels share both colour and shape.
POINT_MARKERS = ("o", "s", "^", "D", "v", "P")


def live_references(result) -> list:
    """The other GPUs' recorded results of ``result``'s experiment, to draw beside it.

    Only beside a measurement of a GPU the course has no record of, or of this GPU now
    (a live result): a replay of a shipped record is already a reference. Never in the
    built book (its explorers have a GPU control instead). A result that is not a
    registered experiment has none."""
    from . import records
    from ._mode import static_book

    v.result(result)
    if static_book():
        return []
    try:
        shipped = records.references(result.name)
    except ValueError:  # not a registered experiment, or a record that does not load
        return []
    if result.source != "live" and any(r.gpu == result.gpu for r in shipped):
        return []
    return [r for r in shipped if r.gpu != result.gpu]


def gpu_label(res) -> str:
    """The GPU of a result, as short as a legend needs ("H100 80GB HBM3"), marked where the
    result was not measured with today's code ("H100 80GB HBM3, code not fingerprinted")."""
    v.result(res, "res")
    name = str(res.gpu).replace("NVIDIA ", "")
    status = res.code_status
    return name if status == "same" else name + (", earlier code" if status == "other"
                                                 else ", code not fingerprinted")


# Column names a caption says in words (a caption is read, not typed back as code).
_CAPTION_WORDS = {"n_chunks": "chunks", "n_streams": "streams", "n_ch": "N",
                  "total_ms": "total time"}


def _say(name: str) -> str:
    """A column's name as a caption says it: ``n_chunks`` is "chunks", ``total_ms`` "total
    time", any other underscore a space."""
    if name in _CAPTION_WORDS:
        return _CAPTION_WORDS[name]
    if name.endswith("_ms"):
        return name[:-3].replace("_", " ") + " time"
    return name.replace("_", " ")


def _best_caption(result, rows, x: str, y: str, *, sel: dict | None = None,
                  everything=None, labels: dict | None = None) -> str:
    """"Highest point here: ..." for the shown rows: the largest rate, or the smallest time,
    in words, never the columns' internal names: ``labels`` (an explorer's axis labels,
    "threads per block"; a trailing "(unit)" is dropped, the value carries the unit), else
    ``words``.

    ``sel``: the values that picked the shown rows (an explorer's slice, ``{"n_chunks": 1}``):
    the caption then names the slice ("Highest point with chunks = 1 ...") and, with
    ``everything`` (all the rows the slice was taken from), for a rate the highest over all of
    them where it lies outside the slice, so that a slice's top is never read as the
    explorer's (the explorer may be given a part of a sweep, so the caption names its curves,
    not the sweep). Other points within ``TIE`` of the top are counted: the caption names a
    highest point, not a best configuration, when several lie that close."""
    from .records import _units

    unit = _units(result.name).get(y) or ""
    lower_is_better = unit in ("ms", "us", "s", "ns") or y.endswith(("_ms", "_us")) or y == "ms"
    # Only a time or a rate has a "best"; for anything else (occupancy, registers, counts)
    # the caption names the highest point without judging it.
    judged = lower_is_better or "/s" in unit or y in ("gbps", "tflops", "gflops")
    pts = [r for r in rows if r.get(y) is not None]
    if not pts:
        return ""
    pick = min if lower_is_better and judged else max
    best = pick(pts, key=lambda r: r[y])

    def value(r):
        shown = f"{r[y]:,.3g}" if abs(r[y]) < 10 else f"{r[y]:,.1f}"
        return f"{shown} {unit}".rstrip() if judged else shown + (f" ({unit})" if unit else "")

    said_as = {k: re.sub(r"\s*\([^()]*\)$", "", w) for k, w in (labels or {}).items() if w}

    def name(k):
        if k in said_as:
            return said_as[k]
        return _say(k) if k in _CAPTION_WORDS or k.endswith("_ms") else words(k)

    def said(k, val):
        val = value_words(k, val)
        return f"{name(k)} = {val.replace('_', ' ') if isinstance(val, str) else val}"

    where = "here" if not sel else "with " + ", ".join(said(k, val) for k, val in sel.items())
    if not judged:   # a tie at the top (two factors both at full occupancy) names each
        tied = list(dict.fromkeys(r[x] for r in pts if r[y] == best[y]))
        vals = [said(x, v).split(" = ", 1)[1] for v in tied]
        at = f"{name(x)} = " + (vals[0] if len(vals) == 1 else ", ".join(vals[:-1]) + " and " + vals[-1])
        text = f"{result.label}. Highest {name(y)} {where}: {at} at {value(best)}"
    else:
        text = (f"{result.label}. {'Lowest' if lower_is_better else 'Highest'} point {where}: "
                f"{said(x, best[x])} at {value(best)}")

    def near(among, top):   # other points of a rate within TIE of ``top``
        return sum(1 for r in among if r is not top and r[y] >= (1 - TIE) * top[y])

    if judged and not lower_is_better and near(pts, best):
        text += f" ({near(pts, best)} other points here within {TIE:.0%} of it)"
    # A rate or a speedup compares across slices; a time does not (another slice may be
    # another amount of work, a smaller problem), so a time's caption names its slice only.
    rest = [r for r in (everything or []) if r.get(y) is not None] if not lower_is_better else []
    if sel and rest:
        top = pick(rest, key=lambda r: r[y])
        if top[y] != best[y]:
            at = ", ".join(said(k, top.get(k)) for k in (*sel, x))
            text += f"; highest over all the curves of this explorer: {at} at {value(top)}"
            if judged and near(rest, top):
                text += f" ({near(rest, top)} other points within {TIE:.0%} of it)"
        else:
            text += "; that is also the highest of all the curves of this explorer"
    return html.escape(text)


def _same_selection(rows, exclude) -> dict:
    """The columns every row of ``rows`` shares one value of (names, flags and integer
    parameters; measured floats never), except ``exclude``: what selected these rows."""
    shared = {}
    for key, val in rows[0].items():
        if key in exclude or isinstance(val, float) or val is None:
            continue
        if not isinstance(val, (str, bool, int)):
            continue
        if all(r.get(key) == val for r in rows):
            shared[key] = val
    return shared


def _references_arg(ax, result, references) -> list:
    """``ax`` checked, and ``references`` as a list of results (by default
    :func:`live_references` of ``result``)."""
    if not hasattr(ax, "plot") or not hasattr(ax, "get_lines"):
        raise TypeError(f"ax must be a matplotlib Axes (e.g. fig.axes[0]), not "
                        f"{type(ax).__name__}.")
    if references is None:
        return live_references(result)
    references = v.sequence(references, "references", empty=True)
    for i, res in enumerate(references):
        v.result(res, f"references[{i}]")
    return references


def _widen_to(ax, values, horizontal=False) -> None:
    """Make room for ``values`` on the value axis (y, or x for horizontal bars)."""
    values = [val for val in values if val is not None]
    if not values:
        return
    low, high = ax.get_xlim() if horizontal else ax.get_ylim()
    if max(values) > high:
        (ax.set_xlim if horizontal else ax.set_ylim)(low, 1.05 * max(values))


def reference_curves(ax, result, *, x: str, y: str, series: str | None = None, rows=None,
                     sel: dict | None = None, references=None, colors: dict | None = None,
                     connect: bool = True, x_factor: float = 1.0) -> list[str]:
    """Draw the reference GPUs' recorded ``y`` against ``x`` beside ``result``'s on ``ax``.

    ``references`` defaults to :func:`live_references` (none in the built book, none beside
    a replayed record). The reference rows are those matching ``sel``, by default the values
    that all shown ``rows`` share (say ``version="v8"``); with ``series``, one line per
    series value, in that series' colour (``colors``, default the order of ``rows``). Each
    GPU gets its own line style and one legend entry; ``connect=False`` draws markers only
    (a scatter), and ``x_factor`` scales ``x`` as the figure does (KiB drawn as bytes, say).
    Returns one caption line per GPU drawn ("recorded on ..., best here ...").
    """
    rows = _xy_args(result, x, y, series, rows)
    if sel is not None:
        v.mapping(sel, "sel")
    if colors is not None:
        v.mapping(colors, "colors")
    v.boolean(connect, "connect")
    v.positive(x_factor, "x_factor")
    references = _references_arg(ax, result, references)
    if not references:
        return []
    sel = _same_selection(rows, {x, y, series}) if sel is None else sel
    keys = list(dict.fromkeys(r.get(series) for r in rows)) if series else [None]
    colors = colors or {key: COLORS[i % len(COLORS)] for i, key in enumerate(keys)}
    categorical = any(isinstance(r.get(x), str) for r in rows)
    captions, drawn_values = [], []
    for j, res in enumerate(references):
        picked = [r for r in res.rows if all(r.get(k) == val for k, val in sel.items())
                  and r.get(x) is not None and r.get(y) is not None]
        labelled = False
        for key in keys:
            pts = [(r[x] if categorical else r[x] * x_factor, r[y]) for r in picked
                   if series is None or r.get(series) == key]
            if not pts:
                continue
            pts = pts if categorical else sorted(pts)
            color = colors.get(key, "0.3") if series else COLORS[(j + 1) % len(COLORS)]
            ax.plot(*zip(*pts), linestyle="none" if categorical or not connect
                    else REFERENCE_STYLES[j % len(REFERENCE_STYLES)],
                    marker=REFERENCE_MARKERS[j % len(REFERENCE_MARKERS)], markersize=4,
                    linewidth=1.1, color=color, alpha=0.75,
                    label=None if labelled else f"{gpu_label(res)} (recorded)")
            labelled = True
            drawn_values += [py for _, py in pts]
        if labelled:
            captions.append(_best_caption(res, picked, x, y))
    if captions and ax.get_lines() and ax.get_lines()[0].get_label().startswith("_") \
            and series is None:
        ax.get_lines()[0].set_label(f"{gpu_label(result)} ({result.source})")
    _widen_to(ax, drawn_values)
    return captions


def reference_bars(ax, result, *, label: str, y: str, rows=None, sel: dict | None = None,
                   references=None, horizontal: bool = True) -> list[str]:
    """Mark the reference GPUs' recorded ``y`` on ``result``'s bars (one marker per bar and
    GPU, drawn by :func:`bars`); the rest as :func:`reference_curves`."""
    v.result(result)
    v.column(result, label, "label")
    v.column(result, y, "y")
    rows = _rows_arg(result, rows)
    if sel is not None:
        v.mapping(sel, "sel")
    v.boolean(horizontal, "horizontal")
    references = _references_arg(ax, result, references)
    sel = _same_selection(rows, {label, y}) if sel is None else sel
    captions, drawn_values = [], []
    for j, res in enumerate(references):
        picked = {str(r[label]): r[y] for r in res.rows
                  if all(r.get(k) == val for k, val in sel.items()) and r.get(y) is not None
                  and r.get(label) is not None}
        pts = [(i, picked[str(r[label])]) for i, r in enumerate(rows) if str(r[label]) in picked]
        if not pts:
            continue
        pos, vals = zip(*pts)
        xs, ys = (vals, pos) if horizontal else (pos, vals)
        ax.plot(xs, ys, linestyle="none", marker=REFERENCE_MARKERS[j % len(REFERENCE_MARKERS)],
                markersize=6, color=["0.15", "tab:purple", "tab:brown"][j % 3], zorder=3,
                label=f"{gpu_label(res)} (recorded)")
        drawn_values += list(vals)
        captions.append(_best_caption(res, [r for r in res.rows if str(r.get(label)) in picked
                                            and all(r.get(k) == val for k, val in sel.items())],
                                      label, y))
    _widen_to(ax, drawn_values, horizontal=horizontal)
    return captions


def lines(result, *, x: str, y: str = "gbps", series: str | None = None, rows=None,
          ceilings: dict | None = None, logx: bool = False, logy: bool = False,
          base: int = 2, title: str | None = None, xlabel: str | None = None,
          ylabel: str | None = None, ax=None, marker: str = "o", references: bool = True,
          ceiling_labels: str = "left"):
    """``y`` against ``x``, one line per value of ``series``, with ceiling lines (labelled
    above the line at the left edge, or with ``ceiling_labels="right"`` below it at the right).

    Beside a live measurement (in a notebook on a GPU, or a GPU recorded with
    ``GPUPERF_RECORD``) the reference GPUs' recorded curves are drawn too
    (:func:`reference_curves`); ``references=False`` leaves them out."""
    rows = _xy_args(result, x, y, series, rows)
    _ceilings_arg(ceilings)
    v.choice(ceiling_labels, "ceiling_labels", CEILING_LABELS)
    v.boolean(logx, "logx")
    v.boolean(logy, "logy")
    v.integer(base, "base", minimum=2)
    v.boolean(references, "references")
    _ax_arg(ax)
    fig, ax = (ax.figure, ax) if ax is not None else plt.subplots(figsize=(COLUMN_INCHES, 4))
    groups = {}
    for r in rows:
        groups.setdefault(r.get(series) if series else None, []).append(r)
    # Categories on x (tile shapes such as "4x4") keep the sweep's order and get markers
    # only: a line between categories would suggest values between them.
    categorical = any(isinstance(r.get(x), str) for r in rows)
    order = {val: i for i, val in enumerate(dict.fromkeys(r.get(x) for r in rows))}
    for i, (key, grp) in enumerate(groups.items()):
        pts = sorted(((r[x], r[y]) for r in grp if r.get(y) is not None),
                     key=(lambda p: order[p[0]]) if categorical else None)
        if not pts:
            continue
        xs, ys = zip(*pts)
        if categorical:   # a category in words where the record's values have them
            xs = [_category_words(x, val) for val in xs]
        ax.plot(xs, ys, marker=marker, color=COLORS[i % len(COLORS)],
                linestyle="none" if categorical else "-",
                label=None if key is None else _series_label(series, key))
    _ceiling_lines(ax, ceilings, labels=ceiling_labels)
    if logx:
        ax.set_xscale("log", base=base)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel or words(x))
    ax.set_ylabel(ylabel or UNITS.get(y, y))
    ax.set_title(title or default_title(result), fontsize=10)
    ax.grid(alpha=0.3)
    ax.set_ylim(bottom=0) if not logy else None
    if references:  # a live measurement: the reference GPUs' recorded curves beside it
        reference_curves(ax, result, x=x, y=y, series=series, rows=rows)
    legend_if_labelled(ax, fontsize=8, loc="best")
    source_label(fig, result.label)
    fig.tight_layout()
    return fig


def heatmap(result, *, x: str, y: str, value: str = "gbps", title: str | None = None,
            fmt: str = "{:.0f}", ceiling: float | None = None, ax=None, references: bool = True):
    """A grid of ``value`` over two parameters, annotated; color relative to ``ceiling``.

    Beside a live measurement (see :func:`live_references`) each cell also shows the
    reference GPUs' recorded value, in small type under the measured one; ``references=False``
    leaves them out."""
    import numpy as np

    v.result(result)
    for pname, col in (("x", x), ("y", y), ("value", value)):
        v.column(result, col, pname)
    v.string(fmt, "fmt")
    if ceiling is not None:
        v.positive(ceiling, "ceiling")
    _ax_arg(ax)
    v.boolean(references, "references")
    sel = _same_selection(result.rows, {x, y, value})
    theirs = [(gpu_label(res), {(r[x], r[y]): r[value] for r in res.rows
                           if all(r.get(k) == val for k, val in sel.items())
                           and r.get(value) is not None})
              for res in (live_references(result) if references else [])]
    theirs = [(gpu, cells) for gpu, cells in theirs if cells]
    xs = sorted({r[x] for r in result.rows if r.get(x) is not None})
    ys = sorted({r[y] for r in result.rows if r.get(y) is not None})
    grid = np.full((len(ys), len(xs)), np.nan)
    for r in result.rows:
        if r.get(x) in xs and r.get(y) in ys and r.get(value) is not None:
            grid[ys.index(r[y]), xs.index(r[x])] = r[value]
    fig, ax = (ax.figure, ax) if ax is not None else plt.subplots(figsize=(COLUMN_INCHES, 4))
    vmax = ceiling or np.nanmax(grid)
    im = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis", vmin=0, vmax=vmax)
    ax.set_xticks(range(len(xs)), [str(v) for v in xs])
    ax.set_yticks(range(len(ys)), [str(v) for v in ys])
    ax.set_xlabel(words(x))
    ax.set_ylabel(words(y))
    for i in range(len(ys)):
        for j in range(len(xs)):
            if np.isnan(grid[i, j]):
                continue
            ink = "white" if grid[i, j] < 0.6 * vmax else "black"
            below = [fmt.format(cells[(xs[j], ys[i])]) for _, cells in theirs
                     if (xs[j], ys[i]) in cells]
            ax.text(j, i + (0.15 if below else 0), fmt.format(grid[i, j]), ha="center",
                    va="center", fontsize=8, color=ink)
            if below:  # the recorded GPUs' values, in the order the caption names them
                ax.text(j, i - 0.2, " / ".join(below), ha="center", va="center", fontsize=6,
                        color=ink, alpha=0.85)
    if theirs:
        ax.annotate(f"large: {gpu_label(result)} ({result.source}); small: "
                    + " / ".join(f"{gpu} (recorded)" for gpu, _ in theirs),
                    xy=(0, 1.01), xycoords="axes fraction", fontsize=7, va="bottom")
    cb = fig.colorbar(im, ax=ax)
    cb.set_label(UNITS.get(value, value) + (" (color scale: 0 to the ceiling)" if ceiling else ""))
    ax.set_title(title or default_title(result), fontsize=10, pad=14 if theirs else None)
    source_label(fig, result.label)
    fig.tight_layout()
    return fig


def bars(result, *, label: str, y: str = "gbps", rows=None, ceiling: tuple | None = None,
         reference: float | None = None, title: str | None = None, ylabel: str | None = None,
         horizontal: bool = True, annotate_pct_of: float | None = None, ax=None,
         references: bool = True):
    """One bar per row (e.g. per kernel version), with a ceiling line and % labels.

    ``ceiling`` is ``(name, value)``; bars are annotated with their value and, when
    ``annotate_pct_of`` is given, their percentage of it. Beside a live measurement the
    reference GPUs' recorded values are marked on the bars (:func:`reference_bars`);
    ``references=False`` leaves them out.
    """
    v.result(result)
    v.column(result, label, "label")
    v.column(result, y, "y")
    rows = _rows_arg(result, rows)
    if ceiling is not None:
        if not isinstance(ceiling, (tuple, list)) or len(ceiling) != 2:
            raise TypeError(f"ceiling must be a (name, value) pair, not {ceiling!r}; e.g. "
                            "ceiling=('device-to-device copy', res.ceilings['copy_gbps']).")
        if ceiling[1] is not None:
            v.positive(ceiling[1], "ceiling[1]")
    for pname, val in (("reference", reference), ("annotate_pct_of", annotate_pct_of)):
        if val is not None:
            v.positive(val, pname)
    v.boolean(horizontal, "horizontal")
    v.boolean(references, "references")
    _ax_arg(ax)
    names = [str(r[label]) for r in rows]
    if horizontal:  # long names on two lines or more, so the figure keeps to the page's width
        names = [textwrap.fill(name, BAR_LABEL_CHARS) for name in names]
    vals = [r.get(y) or 0 for r in rows]
    n = len(rows)
    lines = sum(name.count("\n") for name in names)
    if ax is None:
        fig, ax = plt.subplots(figsize=(COLUMN_INCHES, 0.35 * n + 0.15 * lines + 1.4) if horizontal
                               else (min(COLUMN_INCHES, max(6, 0.6 * n)), 4))
    else:
        fig = ax.figure
    pos = range(n)
    if horizontal:
        ax.barh(pos, vals, color=COLORS[0])
        ax.set_yticks(list(pos), names)
        ax.invert_yaxis()
        ax.set_xlabel(ylabel or UNITS.get(y, y))
    else:
        ax.bar(pos, vals, color=COLORS[0])
        ax.set_xticks(list(pos), names, rotation=30, ha="right")
        ax.set_ylabel(ylabel or UNITS.get(y, y))
    for i, val in enumerate(vals):
        text = f"{val:,.0f}" if val >= 100 else f"{val:.3g}"
        if annotate_pct_of:
            text += f"  ({_percent(100 * val / annotate_pct_of)})"
        if horizontal:
            ax.annotate(text, (val, i), xytext=(3, 0), textcoords="offset points",
                        va="center", fontsize=8)
        else:
            ax.annotate(text, (i, val), xytext=(0, 3), textcoords="offset points",
                        ha="center", fontsize=8)
    if ceiling and ceiling[1]:
        name, value = ceiling
        (ax.axvline if horizontal else ax.axhline)(value, color="tab:red", **CEILING_STYLE,
                                                   label=f"{name}: {value:,.0f}")
    if references:  # a live measurement: the reference GPUs' recorded values beside it
        reference_bars(ax, result, label=label, y=y, rows=rows, horizontal=horizontal)
    legend_if_labelled(ax, fontsize=8, loc="lower right" if horizontal else "upper left")
    if reference:
        (ax.axvline if horizontal else ax.axhline)(reference, color="0.3", linestyle=":")
    ax.set_title(title or default_title(result), fontsize=10)
    ax.grid(alpha=0.3, axis="x" if horizontal else "y")
    source_label(fig, result.label)
    fig.tight_layout()
    return fig


def timeline(spans, *, title: str = "Timeline", label: str | None = None,
             ideal: list | None = None, ax=None):
    """A Gantt chart: one lane per stream, one box per copy or kernel.

    ``spans``: dicts ``{"stream", "kind" ("h2d"|"kernel"|"d2h"|other), "start_ms",
    "end_ms", "label"}``. ``ideal`` (same form) is drawn hatched below, for comparison.
    """
    colors = {"h2d": "tab:blue", "kernel": "tab:green", "d2h": "tab:orange"}
    for pname, group in (("spans", spans), ("ideal", ideal)):
        if group is None and pname == "ideal":
            continue
        for i, sp in enumerate(v.sequence(group, pname, empty=pname == "ideal")):
            if not isinstance(sp, dict) or not {"stream", "start_ms", "end_ms"} <= set(sp):
                raise TypeError(f"{pname}[{i}] must be a dict with 'stream', 'start_ms' and "
                                f"'end_ms' (and 'kind'), not {sp!r}.")
            start = v.nonnegative(sp["start_ms"], f"{pname}[{i}]['start_ms']")
            if v.number(sp["end_ms"], f"{pname}[{i}]['end_ms']") < start:
                raise ValueError(f"{pname}[{i}] ends ({sp['end_ms']} ms) before it starts "
                                 f"({start} ms).")
    v.string(title, "title", empty=True)
    if label is not None:
        v.string(label, "label", empty=True)
    _ax_arg(ax)
    lanes = sorted({s["stream"] for s in spans} | {s["stream"] for s in (ideal or [])},
                   key=str)
    fig, ax = (ax.figure, ax) if ax is not None else plt.subplots(
        figsize=(COLUMN_INCHES, 0.5 * len(lanes) * (2 if ideal else 1) + 1.5))
    rows = [("measured", s) for s in spans] + [("ideal", s) for s in (ideal or [])]
    labels = []
    for which in ("measured", "ideal") if ideal else ("measured",):
        for lane in lanes:
            labels.append(f"{which} {lane}" if ideal else f"stream {lane}")
    for which, s in rows:
        y = labels.index(f"{which} {s['stream']}" if ideal else f"stream {s['stream']}")
        ax.barh(y, s["end_ms"] - s["start_ms"], left=s["start_ms"], height=0.6,
                color=colors.get(s.get("kind"), "0.6"), edgecolor="black", linewidth=0.4,
                hatch="//" if which == "ideal" else None, alpha=0.6 if which == "ideal" else 1)
    ax.set_yticks(range(len(labels)), labels)
    ax.invert_yaxis()
    ax.set_xlabel("time (ms)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in colors.values()]
    ax.legend(handles, ["host to device", "kernel", "device to host"], fontsize=8,
              loc="upper right")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3, axis="x")
    source_label(fig, label)
    fig.tight_layout()
    return fig


def _points_arg(points, name="points"):
    for i, p in enumerate(v.sequence(points, name, empty=True)):
        if not isinstance(p, dict) or not {"name", "intensity", "tflops"} <= set(p):
            raise TypeError(f"{name}[{i}] must be a dict with 'name', 'intensity' (FLOP/byte) "
                            f"and 'tflops', not {p!r}.")
        v.positive(p["intensity"], f"{name}[{i}]['intensity']")
        v.positive(p["tflops"], f"{name}[{i}]['tflops']")
    return points


def _open_marker(ax, p, color, marker, label) -> None:
    """A roofline point drawn open: another GPU's, or the same kernel at a second intensity."""
    ax.scatter([p["intensity"]], [p["tflops"]], facecolors="none", zorder=3, edgecolors=color,
               linewidths=1.2, s=42, marker=marker, label=label)


def roofline(points, *, bw_gbps: float, peak_tflops: float, label: str | None = None,
             title: str = "Roofline", ax=None, xlim=(1 / 16, 256), height: float = 4.5,
             references=None, more_roofs=(), second_intensity=None):
    """Attainable TFLOP/s against arithmetic intensity (FLOP/byte), with kernels placed on it.

    ``points``: dicts ``{"name", "intensity" (FLOP/byte), "tflops"}``. The figure is as wide
    as the book's column and ``height`` inches tall (more room for many names).
    ``references``: ``{gpu name: points}`` of other GPUs, drawn as open markers in the colour
    of the point of the same name (one legend entry per GPU), beside a live measurement.
    ``more_roofs``: further roofs drawn dashed, each ``(label, value, unit)`` with ``unit``
    "GB/s" (a memory roof: a slope) or "TFLOP/s" (a compute roof: a level), e.g. an L2 roof or
    a theoretical peak beside the measured ones.
    ``second_intensity``: ``(what, points)``, the same kernels at a second intensity (e.g. FLOP
    per byte through the L2, read against an L2 roof): each drawn as an open marker in the
    colour of the point of the same name, joined to it by a dotted line at the same TFLOP/s,
    with one legend entry that says ``what`` the open markers' bytes are.
    """
    import numpy as np

    _points_arg(points)
    references = v.mapping(references, "references") if references is not None else {}
    for gpu, theirs in references.items():
        v.string(gpu, "references key")
        _points_arg(theirs, f"references[{gpu!r}]")
    v.positive(bw_gbps, "bw_gbps")
    v.positive(peak_tflops, "peak_tflops")
    more_roofs = v.sequence(more_roofs, "more_roofs", empty=True)
    for i, roof_ in enumerate(more_roofs):
        if (not isinstance(roof_, (tuple, list)) or len(roof_) != 3
                or roof_[2] not in ("GB/s", "TFLOP/s")):
            raise ValueError(f"more_roofs[{i}] must be (label, value, unit) with unit 'GB/s' or "
                             f"'TFLOP/s', not {roof_!r}.")
        v.string(roof_[0], f"more_roofs[{i}][0]")
        v.positive(roof_[1], f"more_roofs[{i}][1]")
    xlim = v.sequence(xlim, "xlim")
    if len(xlim) != 2 or not 0 < v.positive(xlim[0], "xlim[0]") < v.positive(xlim[1], "xlim[1]"):
        raise ValueError(f"xlim must be (low, high) with 0 < low < high, not {xlim!r}.")
    second_what, second = None, []
    if second_intensity is not None:
        if not isinstance(second_intensity, (tuple, list)) or len(second_intensity) != 2:
            raise TypeError(f"second_intensity must be (what, points), not {second_intensity!r}.")
        second_what = v.string(second_intensity[0], "second_intensity[0]")
        second = list(_points_arg(second_intensity[1], "second_intensity[1]"))
        names = {p["name"] for p in points}
        stray = [p["name"] for p in second if p["name"] not in names]
        if stray:
            raise ValueError(f"second_intensity[1] names points that are not in points: {stray}; "
                             "each open marker is drawn beside its filled point.")
    _ax_arg(ax)
    v.positive(height, "height")
    fig, ax = (ax.figure, ax) if ax is not None else plt.subplots(figsize=(COLUMN_INCHES, height))
    xs = np.logspace(np.log2(xlim[0]), np.log2(xlim[1]), 200, base=2)
    roof = np.minimum(xs * bw_gbps / 1e3, peak_tflops)
    ridge = peak_tflops * 1e3 / bw_gbps
    memory_text = f"memory roof {bw_gbps:,.0f} GB/s"
    compute_text = f"compute roof {peak_tflops:.1f} TFLOP/s (ridge at {ridge:.1f} FLOP/B)"
    tops = [peak_tflops] + [r[1] for r in more_roofs if r[2] == "TFLOP/s"]
    if more_roofs:
        # Several roofs: named in a legend in the upper left, where no point can sit (above
        # the memory roof), rather than along lines that cross the points.
        ax.plot(xs, roof, color="0.2", linewidth=1.5, label=f"{memory_text}; {compute_text}")
        styles = ("--", ":", "-.", (0, (5, 1)), (0, (1, 3)))
        for i, (name, value, unit) in enumerate(more_roofs):
            style = styles[i % len(styles)]
            line = (np.minimum(xs * value / 1e3, max(tops)) if unit == "GB/s"
                    else np.full_like(xs, value))
            ax.plot(xs, line, color="0.4", linewidth=1, linestyle=style,
                    label=f"{name} {value:,.0f} GB/s" if unit == "GB/s"
                    else f"{name} {value:.1f} TFLOP/s")
    else:
        ax.plot(xs, roof, color="0.2", linewidth=1.5)
        ax.annotate(memory_text, xy=(xlim[0] * 1.3, xlim[0] * 1.3 * bw_gbps / 1e3),
                    fontsize=8, rotation=0, va="bottom")
        # Right-aligned at the plot's edge: from the ridge it ran off the axes when the ridge
        # sat within a few octaves of the right end.
        ax.annotate(compute_text, xy=(xlim[1], peak_tflops), xytext=(-4, 4),
                    textcoords="offset points", fontsize=8, ha="right")
    color_of, marker_of = {}, {}
    for p in points:
        if p["name"] not in color_of:
            k = len(color_of)
            color_of[p["name"]] = COLORS[k % len(COLORS)]
            marker_of[p["name"]] = POINT_MARKERS[(k // len(COLORS)) % len(POINT_MARKERS)]
        ax.scatter([p["intensity"]], [p["tflops"]], color=color_of[p["name"]], zorder=3,
                   marker=marker_of[p["name"]])
    drawn = []
    filled = {p["name"]: p for p in points}
    for k, p in enumerate(second):
        mate = filled[p["name"]]
        ax.plot([p["intensity"], mate["intensity"]], [p["tflops"], mate["tflops"]],
                color=color_of[p["name"]], linewidth=0.8, linestyle=":", zorder=2)
        _open_marker(ax, p, color_of[p["name"]], marker_of[p["name"]],
                     f"open: {second_what}" if k == 0 else None)
        drawn.append(p["tflops"])
    for j, (gpu, theirs) in enumerate(references.items()):
        for k, p in enumerate(t for t in theirs if t["name"] in color_of):
            _open_marker(ax, p, color_of[p["name"]], REFERENCE_MARKERS[j % len(REFERENCE_MARKERS)],
                         f"{gpu} (recorded)" if k == 0 else None)
            drawn.append(p["tflops"])
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlim(xlim[0], xlim[1])
    low = min([p["tflops"] for p in points] + drawn + [xlim[0] * bw_gbps / 1e3])
    ax.set_ylim(low / 1.6, max(tops + drawn) * 2.2)
    ax.set_xlabel("arithmetic intensity (FLOP per byte of DRAM traffic"
                  + ("; open markers: see the legend)" if second else ")"))
    ax.set_ylabel("TFLOP/s")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3, which="both")
    if more_roofs:
        lines = [line for line in ax.get_lines() if not line.get_label().startswith("_")]
        ax.add_artist(ax.legend(lines, [line.get_label() for line in lines], fontsize=7,
                                loc="upper left"))
    if drawn:
        marks = [c for c in ax.collections if not c.get_label().startswith("_")]
        ax.legend(marks, [c.get_label() for c in marks], fontsize=7, loc="lower right")
    source_label(fig, label)
    fig.tight_layout()
    legends = [a for a in ax.get_children() if isinstance(a, plt.matplotlib.legend.Legend)]
    # An open marker and its dotted line to the filled one: no name may be written over them.
    joins = []
    for p in second:
        (x0, y0), (x1, _) = ax.transData.transform([(p["intensity"], p["tflops"]),
                                                    (filled[p["name"]]["intensity"], p["tflops"])])
        joins.append(plt.matplotlib.transforms.Bbox([[min(x0, x1) - 5, y0 - 5],
                                                     [max(x0, x1) + 5, y0 + 5]]))
    # Every marker, filled or open, is kept clear too: a name is never written over a point.
    # The margin is the open marker's radius and edge (s=42 pt^2: about 3.9 pt) and a little more, in
    # pixels at this figure's dpi (5 px was less than an open marker at 100 dpi), below the
    # 5 pt offset that keeps a point's own name beside it.
    pad = 4.5 * fig.dpi / 72
    for p in list(points) + second:
        x, y = ax.transData.transform((p["intensity"], p["tflops"]))
        joins.append(plt.matplotlib.transforms.Bbox([[x - pad, y - pad], [x + pad, y + pad]]))
    _place_labels(ax, [(p["name"], p["intensity"], p["tflops"], color_of[p["name"]])
                       for p in points],
                  obstacles=list(ax.texts) + legends, boxes=joins)
    return fig


def _place_labels(ax, labelled, obstacles=(), boxes=()) -> None:
    """Name each point beside it, inside the axes and clear of the other names: try right,
    then left, then further up or down (with a thin leader line) until a free place is found.
    ``obstacles``: artists to keep clear of; ``boxes``: more places to keep clear of, as
    display-space bounding boxes. Each of ``labelled`` is ``(name, x, y)`` or
    ``(name, x, y, colour)``: a name in its point's colour."""
    renderer = ax.figure.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    placed = [t.get_window_extent(renderer) for t in obstacles] + list(boxes)
    for name, x, y, *colour in sorted(labelled, key=lambda t: -t[2]):
        colour = colour[0] if colour else "black"
        for dy in (0, -9, 9, -18, 18, -27, 27, -36, 36, -45, 45):
            done = False
            for dx, ha in ((5, "left"), (-5, "right")):
                where = {"xytext": (dx, dy - 3), "textcoords": "offset points", "fontsize": 8,
                         "ha": ha, "color": colour}
                text = ax.annotate(name, (x, y), **where)  # measured without its leader line
                box = text.get_window_extent(renderer)
                text.remove()
                inside = (box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0
                          and box.y1 <= frame.y1)
                if inside and not any(box.overlaps(other) for other in placed):
                    placed.append(box)
                    ax.annotate(name, (x, y), **where, arrowprops=None if dy == 0 else
                                {"arrowstyle": "-", "color": colour, "linewidth": 0.6,
                                 "shrinkA": 0, "shrinkB": 3})
                    done = True
                    break
            if done:
                break
        else:  # no free place: put it on the point's right anyway, rather than drop it
            ax.annotate(name, (x, y), xytext=(5, -3), textcoords="offset points", fontsize=8,
                        color=colour)
