"""Interactive explorers: sliders over a recorded sweep, and live re-measurement on a GPU.

Imported lazily (``gp.widgets``): a GPU box may lack ipywidgets, and nothing else
in the package needs it. In the static book no kernel runs, so while the book is built
(``GPUPERF_STATIC_BOOK=1``, set by the book's Sphinx extension for the kernels it starts)
every explorer renders as self-contained HTML instead: the same figures, drawn in
advance for the recorded values, behind sliders that run in the reader's browser.
"""

from __future__ import annotations

import base64
import html
import io
import itertools
import json
import math
import os
import textwrap
import uuid

import matplotlib.pyplot as plt

from . import plots
from . import validate as v
from ._mode import STATIC_ENV, static_book  # noqa: F401 (STATIC_ENV: for tests)

# A static explorer draws every combination of its sliders when there are at most this
# many; otherwise each slider moves alone from the starting point (the others reset).
_MAX_FRAMES = 40
_MAX_VALUES = 9  # values per slider in a static explorer (ends and start always kept)


def _explorer_title(result, sel: dict, names: dict | None = None, what: str | None = None) -> str:
    """An explorer figure's title: what the experiment measures (or ``what``, where the
    experiment's title says more than one selection shows), then the picked values in words
    ("threads per block = 256"), never the experiment's or the columns' internal names."""
    picked = ", ".join(f"{(names or {}).get(k) or plots.words(k)} = {plots.value_words(k, val)}"
                       for k, val in sel.items())
    head = (plots.default_title(result) if what is None
            else textwrap.shorten(what, 90, placeholder="…") + f" ({result.gpu})")
    return head + (f"\n{picked}" if picked else "")


def _has_gpu() -> bool:
    from .mode import MODE

    return MODE == "gpu"


def _options(controls, result=None, name="controls") -> dict:
    """``controls`` as {name: [options]}: every control is an option list, never a scalar."""
    v.mapping(controls, name, empty=False)
    out = {}
    for key, values in controls.items():
        if result is not None:
            v.column(result, key, f"{name} key")
        else:
            v.string(key, f"{name} key")
        out[key] = v.sequence(values, f"{name}[{key!r}]")
    return out


def _ipywidgets():
    try:
        import ipywidgets
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError(
            "the explorers need ipywidgets: `python -m pip install ipywidgets` (it is in "
            "requirements.txt), then restart the kernel."
        ) from err
    return ipywidgets


def _selfcheck_press(name: str, press) -> None:
    """Under ``python -m gpuperf.selfcheck`` (``GPUPERF_SELFCHECK_LOG`` set), press the
    "measure live" button once, as a student would, and log what happened: the self-check
    fails a notebook whose live measurement raises."""
    import json
    import time

    log = os.environ.get("GPUPERF_SELFCHECK_LOG")
    if not log:
        return
    t0 = time.perf_counter()
    err = press(None)
    entry = {"explorer": name, "ok": err is None, "seconds": round(time.perf_counter() - t0, 3),
             "error": None if err is None else f"{type(err).__name__}: {err}"}
    with open(log, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")


def explore(result, *, x: str, y: str = "gbps", controls: dict, live=None,
            ceilings=None, logx: bool = False, ylabel: str | None = None,
            xlabel: str | None = None, names: dict | None = None, apart: dict | None = None,
            logy: bool = False, keep=None, title: str | None = None):
    """Sliders over the parameters in ``controls``; plot ``y`` against ``x`` for the selection.

    ``controls`` maps a column of ``result`` to the values offered (usually
    ``result.values(column)``). The recorded sweep is drawn for the selected values;
    on a GPU, ``live(**params)`` (a function returning a dict with ``y``) re-measures the
    selected point when the button is pressed, and the live point is drawn beside the
    recorded curve. Under the simulator the button is absent and the figure says the
    values are recorded. When other GPUs' records hold the same experiment, a live
    measurement gets their recorded curves beside it (``plots.reference_curves``), and the
    built book gets a ``GPU`` control: each GPU's curve with its own ceilings, or all of
    them overlaid.
    ``ceilings`` is a dict of name -> value, or a function of a result returning one
    (``gp.plots.copy_ceilings``), so that each GPU's curve gets that GPU's ceilings.
    ``names`` maps a control's column to the words its slider, the title and the caption use
    (``{"n": "size n"}``); a control not in it is said by ``plots.words``.
    ``apart`` maps values of ``x`` that are no point on the axis to the words of their tick
    (``{0: "sized to the data"}``): their points are drawn unjoined, right of the curve.
    ``logy``: a log y axis, for rates that differ by orders of magnitude.
    ``keep``, a function of one GPU's Result returning the Result to draw (its rows cut, say, at
    a limit computed from that GPU's own record), is applied alike to ``result`` and to every
    other GPU's recorded curve.
    ``title``: what the figure shows, in place of the experiment's title (the picked values
    follow it).
    """
    v.result(result)
    v.column(result, x, "x")
    v.column(result, y, "y")
    controls = _options(controls, result)
    if live is not None:
        v.function(live, "live", what="a function live(**params) -> dict with the y column")
    ceilings_of = _ceilings_function(result, ceilings)
    v.boolean(logx, "logx")
    v.boolean(logy, "logy")
    apart = dict(v.mapping(apart or {}, "apart"))
    for _k, _w in apart.items():
        v.string(_w, f"apart[{_k!r}]")
    if ylabel is not None:
        v.string(ylabel, "ylabel")
    if xlabel is not None:
        v.string(xlabel, "xlabel")
    names = dict(v.mapping(names or {}, "names"))
    for _k, _w in names.items():
        v.string(_w, f"names[{_k!r}]")
    if keep is not None:
        v.function(keep, "keep", what="a function keep(result) -> the Result to draw")
    if title is not None:
        v.string(title, "title")
    static = static_book()
    others = _other_gpus(result) if static else []
    beside = [] if static else plots.live_references(result)
    if keep is not None:  # every GPU's curve cut by the same rule, from its own record
        result, others, beside = (_kept(keep, result), [_kept(keep, r) for r in others],
                                  [_kept(keep, r) for r in beside])

    def draw(sel, live_points=()):
        """The figure for one selection (None if nothing is recorded) and its caption."""
        rows = result.select(**sel)
        if not any(r.get(y) is not None for r in rows):
            shown = ", ".join(f"{k}={val}" for k, val in sel.items())
            return None, html.escape(f"no recorded rows for {shown} in {result.name}: "
                                     "choose other values.")
        joined = [r for r in rows if r.get(x) not in apart] or rows
        fig = plots.lines(result, x=x, y=y, rows=joined, ceilings=ceilings_of(result), logx=logx,
                          logy=logy, xlabel=xlabel, ylabel=ylabel, references=False,
                          title=_explorer_title(result, sel, names, title))
        ax = fig.axes[0]
        _mark_apart(ax, [[r for r in rows if r.get(x) in apart]], joined, x=x, y=y,
                    apart=apart, logx=logx)
        # Beside a live measurement: the reference GPUs' recorded curves for the same
        # selection, so that a student sees where their GPU stands.
        captions = [plots._best_caption(result, rows, x, y, sel=sel, everything=result.rows,
                                        labels={**names, x: xlabel, y: ylabel}),
                    *plots.reference_curves(ax, result, x=x, y=y, rows=rows, sel=sel,
                                            references=beside)]
        for params, value in live_points:
            if all(params.get(k) == v for k, v in sel.items()):
                ax.scatter([params[x]], [value], marker="*", s=160, color="tab:red",
                           zorder=4, label="measured live now")
        plots.legend_if_labelled(ax, fontsize=8)
        return fig, "<br>".join(c for c in captions if c)

    if static:
        note = ("Recorded values (the caption says where from); run the notebook on a GPU to "
                "measure live.")
        if not others:
            return _flipbook(controls, {k: vals[0] for k, vals in controls.items()},
                             lambda **sel: draw(sel), note=note, labels=names)
        by_gpu = {plots.gpu_label(result): result}
        for res in others:
            by_gpu.setdefault(plots.gpu_label(res), res)
        gpu_controls = {"GPU": [*by_gpu, ALL_GPUS], **controls}
        return _flipbook(gpu_controls, {k: vals[0] for k, vals in gpu_controls.items()},
                         lambda **sel: _draw_gpus(result, by_gpu, sel, x=x, y=y, apart=apart,
                                                  ceilings_of=ceilings_of, logx=logx, logy=logy,
                                                  xlabel=xlabel, ylabel=ylabel, names=names,
                                                  title=title),
                         note=note, labels=names)
    w = _ipywidgets()
    sliders = {
        name: w.SelectionSlider(options=[(str(plots.value_words(name, x)), x) for x in values],
                                value=values[0], description=names.get(name) or plots.words(name),
                                continuous_update=False,
                                style={"description_width": "initial"})
        for name, values in controls.items()
    }
    out = w.Output()
    status = w.HTML()
    live_points: list[tuple[dict, float]] = []

    def redraw(*_):
        sel = {k: s.value for k, s in sliders.items()}
        with out:
            out.clear_output(wait=True)
            fig, caption = draw(sel, live_points)
            if fig is not None:
                plt.show()
        status.value = caption if fig is None else f"<small>{caption}</small>"

    for s in sliders.values():
        s.observe(redraw, names="value")
    children = [*sliders.values()]
    if live is not None and _has_gpu():
        xs = w.SelectionSlider(options=list(result.values(x)), description=f"live {x}",
                               style={"description_width": "initial"})
        button = w.Button(description="measure live", icon="bolt")

        def measure(_):
            params = {**{k: s.value for k, s in sliders.items()}, x: xs.value}
            button.disabled = True
            status.value = f"<small>measuring {html.escape(str(params))} ...</small>"
            try:
                row = live(**params)
                if not isinstance(row, dict) or row.get(y) is None:
                    raise TypeError(f"live(**params) returned {v._short(row)}, not a dict "
                                    f"with {y!r}")
                live_points.append((params, row[y]))
            except Exception as err:  # show it where the user looks, keep the button usable
                button.disabled = False
                status.value = html.escape(f"measuring {params} failed: "
                                           f"{type(err).__name__}: {err}")
                return err
            button.disabled = False
            redraw()
            return None

        button.on_click(measure)
        _selfcheck_press(result.name, measure)
        children += [w.HBox([xs, button])]
    elif not _has_gpu():
        children.append(w.HTML("<small>No GPU in this session: the explorer shows recorded "
                               "values; on a GPU a <i>measure live</i> button appears.</small>"))
    redraw()
    return w.VBox([*children, status, out])


ALL_GPUS = "all, overlaid"


def _kept(keep, res):
    """``keep(res)``, checked to be a Result with rows."""
    out = keep(res)
    v.result(out, "keep(result)")
    if not out.rows:
        raise ValueError(f"keep left no rows of {res.name} on {res.gpu}: keep at least one.")
    return out


def _other_gpus(result) -> list:
    """The shipped records of ``result``'s experiment on GPUs other than ``result``'s."""
    from . import records

    try:
        return records.references(result.name, besides=result.gpu)
    except ValueError:  # not a registered experiment (a hand-made Result), or no records
        return []


def _ceilings_function(result, ceilings):
    """``ceilings`` as a function of a result: each GPU's curve gets that GPU's ceilings.

    ``ceilings`` is a dict (drawn for ``result``; when it is ``plots.copy_ceilings(result)``,
    each other GPU gets its own copy ceilings, other dicts only ``result``), a function
    ``ceilings(res) -> dict`` (e.g. ``gp.plots.copy_ceilings``), or None."""
    if ceilings is None:
        return lambda res: None
    if callable(ceilings):
        try:
            plots._ceilings_arg(ceilings(result), "ceilings(result)")
        except Exception as err:  # noqa: BLE001 - any failure of the caller's function
            raise TypeError(f"ceilings is a function, so ceilings(result) must return a dict "
                            f"of name -> positive value (or None); it failed: "
                            f"{type(err).__name__}: {err}") from None
        return ceilings
    plots._ceilings_arg(ceilings)
    for peak in (True, False):
        if ceilings == plots.copy_ceilings(result, peak=peak):
            return lambda res, peak=peak: plots.copy_ceilings(res, peak=peak)
    return lambda res: ceilings if res is result else None


def _mark_apart(ax, groups: list, joined: list, *, x, y, apart: dict, logx: bool) -> None:
    """Draw the rows of each group (one group a GPU, in its colour) whose ``x`` is a value of
    ``apart`` as unjoined diamonds right of the curve of ``joined``, each at a tick named by
    its words in ``apart``."""
    if not apart or not any(groups):
        return
    xs = sorted({r[x] for r in joined if isinstance(r.get(x), (int, float))})
    if not xs:
        return
    places = {}
    for k, value in enumerate(a for a in apart if any(r.get(x) == a for g in groups for r in g)):
        places[value] = (xs[-1] * 2.0 ** (1.5 * (k + 1)) if logx and xs[0] > 0 else
                         xs[-1] + (k + 1) * max((xs[-1] - xs[0]) / 4, 1))
    for i, rows in enumerate(groups):
        for r in rows:
            if r.get(x) in places and r.get(y) is not None:
                ax.plot([places[r[x]]], [r[y]], marker="D", linestyle="none",
                        color=plots.COLORS[i % len(plots.COLORS)])
    edge = (xs[-1] * 2.0 ** 0.75 if logx and xs[0] > 0 else
            xs[-1] + max((xs[-1] - xs[0]) / 8, 0.5))
    ax.axvline(edge, color="0.6", linewidth=0.8, linestyle=":")
    ticks = [t for t in ax.get_xticks() if xs[0] <= t <= xs[-1]] if not logx else xs
    ax.set_xticks(list(ticks) + list(places.values()))
    ax.set_xticklabels([f"{t:g}" for t in ticks] + [apart[a] for a in places])
    ax.minorticks_off()
    top = max((r[y] for g in groups for r in g if r.get(x) in places and r.get(y) is not None),
              default=0)
    if top * 1.05 > ax.get_ylim()[1]:
        ax.set_ylim(top=top * 1.05)
    hi = max(places.values())
    ax.set_xlim(right=hi * 1.4 if logx and xs[0] > 0 else hi + max((xs[-1] - xs[0]) / 8, 0.5))


def _draw_gpus(result, by_gpu: dict, sel: dict, *, x, y, ceilings_of, logx, xlabel, ylabel,
               names=None, apart=None, logy=False, title=None):
    """The static explorer's figure for one GPU of ``by_gpu`` (or all, overlaid) and its
    caption: each GPU's curve with its own ceilings, each caption line naming GPU and date."""
    sel = dict(sel)
    choice = sel.pop("GPU")
    shown = list(by_gpu.items()) if choice == ALL_GPUS else [(choice, by_gpu[choice])]
    apart = apart or {}
    parts = [(label, res, res.select(**sel)) for label, res in shown]
    parts = [p for p in parts if any(r.get(y) is not None for r in p[2])]
    spare = [[r for r in p[2] if r.get(x) in apart] for p in parts]
    parts = [(label, res, [r for r in rows if r.get(x) not in apart] or rows)
             for label, res, rows in parts]
    if not parts:
        picked = ", ".join(f"{k}={val}" for k, val in sel.items())
        return None, html.escape(f"no recorded rows for {picked} in {result.name} on {choice}: "
                                 "choose other values.")

    label0, res0, rows0 = parts[0]
    overlay = len(parts) > 1
    fig = plots.lines(res0, x=x, y=y, rows=rows0, ceilings=None if overlay else ceilings_of(res0),
                      logx=logx, logy=logy, xlabel=xlabel, ylabel=ylabel,
                      title=_explorer_title(result, sel, names, title))
    if overlay:
        ax = fig.axes[0]
        categorical = any(isinstance(r.get(x), str) for r in rows0)
        ax.get_lines()[0].set_label(label0)
        tops = []
        for i, (label, res, rows) in enumerate(parts):
            if i:
                pts = [(plots._category_words(x, r[x]) if categorical else r[x], r[y])
                       for r in rows if r.get(y) is not None]
                pts = pts if categorical else sorted(pts)
                ax.plot(*zip(*pts), marker="s", linestyle="none" if categorical else "--",
                        color=plots.COLORS[i % len(plots.COLORS)], label=label)
                tops += [py for _, py in pts]
            for name, value in (ceilings_of(res) or {}).items():
                if value:
                    ax.axhline(value, color=plots.COLORS[i % len(plots.COLORS)], linestyle=":",
                               linewidth=1, label=f"{name}, {label}")
                    tops.append(value)
        # plots.lines fixed the y range to the first GPU's data: widen it to every GPU's data
        # and ceilings, or points and legend entries would lie off the plot.
        ax.set_ylim(None if logy else 0, max([ax.get_ylim()[1], *(1.05 * t for t in tops)]))
        ax.legend(fontsize=7)
    _mark_apart(fig.axes[0], spare, rows0, x=x, y=y, apart=apart, logx=logx)
    return fig, "<br>".join(plots._best_caption(res, res.select(**sel), x, y, sel=sel,
                                                everything=res.rows,
                                                labels={**(names or {}), x: xlabel, y: ylabel})
                            for _, res, _rows in parts)


def _png_uri(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=fig.dpi, bbox_inches="tight")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _sampled(values: list, start) -> list:
    """At most ``_MAX_VALUES`` of ``values``, evenly spread, the ends and ``start`` kept."""
    if len(values) <= _MAX_VALUES:
        return list(values)
    keep = {round(i * (len(values) - 1) / (_MAX_VALUES - 1)) for i in range(_MAX_VALUES)}
    keep.add(values.index(start))
    return [values[i] for i in sorted(keep)]


def _flipbook(controls: dict, start: dict, render, note: str = "", labels: dict | None = None):
    """Sliders that run in the browser over figures drawn in advance.

    ``render(**selection)`` returns ``(figure or None, caption HTML)``. With at most
    ``_MAX_FRAMES`` combinations every combination is drawn; otherwise each slider moves
    alone from ``start`` and the others return to it, which the note says. ``labels``: the
    words a control is shown with, where not its name.
    """
    from IPython.display import HTML

    values = {k: _sampled(list(vals), start[k]) for k, vals in controls.items()}
    names = list(values)
    start_idx = tuple(values[k].index(start[k]) for k in names)
    joint = math.prod(len(vals) for vals in values.values()) <= _MAX_FRAMES
    if joint:
        combos = itertools.product(*(range(len(values[k])) for k in names))
    else:
        combos = [start_idx] + [start_idx[:j] + (i,) + start_idx[j + 1:]
                                for j, k in enumerate(names) for i in range(len(values[k]))]
    frames = {}
    for idx in combos:
        key = ",".join(map(str, idx))
        if key in frames:
            continue
        fig, caption = render(**{k: values[k][i] for k, i in zip(names, idx)})
        frames[key] = [_png_uri(fig) if fig is not None else "", caption]
    plt.close("all")
    uid = "gpfb-" + uuid.uuid4().hex[:10]
    # A control with one value is shown as text: a slider that cannot move would puzzle.
    rows = "".join(
        f'<label style="display:block;margin:2px 0"><span style="display:inline-block;'
        f'min-width:8em">{html.escape((labels or {}).get(k) or plots.words(k))}</span>'
        + (f'<input type="range" min="0" max="{len(values[k]) - 1}" step="1" value="{i}" '
           f'data-k="{j}" style="width:18em;vertical-align:middle"> '
           if len(values[k]) > 1 else "")
        + f'<output>{html.escape(str(plots.value_words(k, values[k][i])))}</output></label>'
        for j, (k, i) in enumerate(zip(names, start_idx)))
    how = ("" if joint else " Each slider moves alone from the starting point (the others "
           "return to it); the notebook offers every combination.")
    first = frames[",".join(map(str, start_idx))]
    script = f"""(function() {{
  const root = document.getElementById("{uid}");
  const frames = {json.dumps(frames)};
  const labels = {json.dumps([[str(plots.value_words(k, v)) for v in values[k]] for k in names])};
  const start = {json.dumps(list(start_idx))};
  const joint = {json.dumps(joint)};
  const inputs = Array.from(root.querySelectorAll("input[type=range]"));
  const img = root.querySelector("img"), caption = root.querySelector(".gp-fb-caption");
  function show(moved) {{
    if (!joint) inputs.forEach(el => {{ if (el !== moved) el.value = start[+el.dataset.k]; }});
    const idx = start.slice();
    inputs.forEach(el => {{
      idx[+el.dataset.k] = +el.value;
      el.nextElementSibling.textContent = labels[+el.dataset.k][+el.value];
    }});
    const frame = frames[idx.join(",")];
    img.style.display = frame && frame[0] ? "" : "none";
    if (frame && frame[0]) img.src = frame[0];
    caption.innerHTML = frame ? "<small>" + frame[1] + "</small>" : "";
  }}
  inputs.forEach(el => el.addEventListener("input", () => show(el)));
}})();"""
    return HTML(
        f'<div id="{uid}" class="gp-flipbook">{rows}'
        f'<img alt="explorer figure" src="{first[0]}" style="max-width:100%;'
        f'{"" if first[0] else "display:none"}">'
        f'<div class="gp-fb-caption"><small>{first[1]}</small></div>'
        f'<div><small>{note}{how}</small></div><script>{script}</script></div>')


def tabs(pages: dict):
    """Explorers side by side under titles: tabs in a notebook, one after another in the book."""
    v.mapping(pages, "pages", empty=False)
    for title, page in pages.items():
        if not hasattr(page, "data" if static_book() else "layout"):
            raise TypeError(f"pages[{title!r}] is {v._short(page)}, not an explorer: pass what "
                            "interact() or explore() returned.")
    if static_book():
        from IPython.display import HTML

        return HTML("".join(f"<p><b>{html.escape(str(title))}</b></p>{page.data}"
                            for title, page in pages.items()))
    w = _ipywidgets()
    box = w.Tab(children=list(pages.values()))
    for i, title in enumerate(pages):
        box.set_title(i, str(title))
    return box


def pick(result, *, controls: dict, show, description: str = ""):
    """A general explorer: ``show(**selection)`` draws whatever it likes for the selection."""
    v.result(result)
    controls = _options(controls, result)
    v.function(show, "show", what="a function show(**selection) that draws")
    v.string(description, "description", empty=True)
    w = _ipywidgets()
    out = w.Output()
    sliders = {name: w.SelectionSlider(options=opts, value=opts[0], description=plots.words(name),
                                       continuous_update=False,
                                       style={"description_width": "initial"})
               for name, opts in controls.items()}

    def redraw(*_):
        sel = {k: s.value for k, s in sliders.items()}
        if not result.select(**sel):
            with out:
                out.clear_output(wait=True)
                print("no recorded rows for " + ", ".join(f"{k}={val}" for k, val in sel.items()))
            return
        with out:
            out.clear_output(wait=True)
            show(**{k: s.value for k, s in sliders.items()})
            plt.show()

    for s in sliders.values():
        s.observe(redraw, names="value")
    redraw()
    head = [w.HTML(f"<small>{description}</small>")] if description else []
    return w.VBox([*head, *sliders.values(), out])


def interact(fn, *, start: dict | None = None, **controls):
    """Sliders for a pure function (a model or a diagram): ``fn(**values)`` draws a figure.

    Each control is a list of options (``dtype=["float32", "float64"]``, ``stride=[1, 2, 4]``)
    or a tuple ``(low, high, step)`` of numbers for a slider. ``start`` gives the values
    the sliders start at (by default the first option, or ``low``).
    """
    v.function(fn, "fn", what="a function that draws a figure")
    if not controls:
        raise ValueError("interact() needs at least one control, e.g. stride=(1, 32, 1).")
    start = {} if start is None else dict(v.mapping(start, "start"))
    for name in start:
        if name not in controls:
            raise ValueError(f"start has {name!r}, which is not a control; the controls are "
                             f"{sorted(controls)}.")
    options = {}
    ranges = {}  # name -> (low, high, step), for the controls given as a range
    for name, spec in controls.items():
        if isinstance(spec, tuple) and len(spec) == 3 and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) for x in spec):
            for i, x in enumerate(spec):
                v.number(x, f"{name}[{i}]")
            lo, hi, step = ranges[name] = spec
            if not lo < hi or not step > 0:
                raise ValueError(f"{name}={spec!r} must be (low, high, step) with low < high and "
                                 "step > 0; or pass a list of options.")
            count = int(math.floor((hi - lo) / step + 1e-9)) + 1
            values = [lo + i * step for i in range(count)]
            if all(isinstance(x, int) for x in spec):
                values = [int(x) for x in values]
        else:
            values = list(v.sequence(spec, name))
        if name in start and start[name] not in values:
            raise ValueError(f"start[{name!r}]={start[name]!r} is not one of {name}'s values "
                             f"({values[0]!r} ... {values[-1]!r}).")
        options[name] = values
    first = {k: start.get(k, vals[0]) for k, vals in options.items()}

    def draw(**sel):
        fig = fn(**sel)
        return (fig if isinstance(fig, plt.Figure) else plt.gcf()), ""

    if static_book():
        return _flipbook(options, first, draw,
                         note="Drawn in advance for the values the sliders offer.")
    w = _ipywidgets()
    out = w.Output()
    sliders = {}
    for name, vals in options.items():
        if name in ranges:
            lo, hi, step = ranges[name]
            cls = w.IntSlider if all(isinstance(x, int) for x in ranges[name]) else w.FloatSlider
            sliders[name] = cls(min=lo, max=hi, step=step, value=first[name], description=plots.words(name),
                                continuous_update=False)
        else:
            sliders[name] = w.SelectionSlider(options=vals, value=first[name], description=plots.words(name),
                                              continuous_update=False,
                                              style={"description_width": "initial"})

    def redraw(*_):
        with out:
            out.clear_output(wait=True)
            fn(**{k: s.value for k, s in sliders.items()})
            plt.show()

    for s in sliders.values():
        s.observe(redraw, names="value")
    redraw()
    return w.VBox([*sliders.values(), out])
