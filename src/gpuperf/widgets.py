"""Interactive explorers: sliders over a recorded sweep, and live re-measurement on a GPU.

Imported lazily (``gp.widgets``): a GPU box may lack ipywidgets, and nothing else
in the package needs it. In the static book a widget cannot run, so every chapter
also shows the whole sweep as a figure.
"""

from __future__ import annotations

import html

import matplotlib.pyplot as plt

from . import plots
from . import validate as v


def _has_gpu() -> bool:
    from . import MODE

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
    import os
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
            ceilings: dict | None = None, logx: bool = False, ylabel: str | None = None):
    """Sliders over the parameters in ``controls``; plot ``y`` against ``x`` for the selection.

    ``controls`` maps a column of ``result`` to the values offered (usually
    ``result.values(column)``). The recorded sweep is drawn for the selected values;
    on a GPU, ``live(**params)`` (a function returning a dict with ``y``) re-measures the
    selected point when the button is pressed, and the live point is drawn beside the
    recorded curve. Under the simulator the button is absent and the figure says the
    values are recorded.
    """
    v.result(result)
    v.column(result, x, "x")
    v.column(result, y, "y")
    controls = _options(controls, result)
    if live is not None:
        v.function(live, "live", what="a function live(**params) -> dict with the y column")
    plots._ceilings_arg(ceilings)
    v.boolean(logx, "logx")
    if ylabel is not None:
        v.string(ylabel, "ylabel")
    w = _ipywidgets()
    sliders = {
        name: w.SelectionSlider(options=values, value=values[0], description=name,
                                continuous_update=False,
                                style={"description_width": "initial"})
        for name, values in controls.items()
    }
    out = w.Output()
    status = w.HTML()
    live_points: list[tuple[dict, float]] = []

    def redraw(*_):
        sel = {k: s.value for k, s in sliders.items()}
        rows = result.select(**sel)
        if not any(r.get(y) is not None for r in rows):
            with out:
                out.clear_output(wait=True)
            shown = ", ".join(f"{k}={val}" for k, val in sel.items())
            status.value = html.escape(f"no recorded rows for {shown} in {result.name}: "
                                       "choose other values.")
            return
        with out:
            out.clear_output(wait=True)
            fig = plots.lines(result, x=x, y=y, rows=rows, ceilings=ceilings, logx=logx,
                              ylabel=ylabel,
                              title=f"{result.name}: " + ", ".join(f"{k}={v}" for k, v in sel.items()))
            ax = fig.axes[0]
            for params, value in live_points:
                if all(params.get(k) == v for k, v in sel.items()):
                    ax.scatter([params[x]], [value], marker="*", s=160, color="tab:red",
                               zorder=4, label="measured live now")
            if any(all(p.get(k) == v for k, v in sel.items()) for p, _ in live_points):
                plots.legend_if_labelled(ax, fontsize=8)
            plt.show()
        best = max((r for r in rows if r.get(y) is not None), key=lambda r: r[y], default=None)
        status.value = (f"<small>{result.label}. Best here: {x}={best[x]} at "
                        f"{best[y]:,.1f} {plots.UNITS.get(y, y)}</small>" if best else "")

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


def pick(result, *, controls: dict, show, description: str = ""):
    """A general explorer: ``show(**selection)`` draws whatever it likes for the selection."""
    v.result(result)
    controls = _options(controls, result)
    v.function(show, "show", what="a function show(**selection) that draws")
    v.string(description, "description", empty=True)
    w = _ipywidgets()
    out = w.Output()
    sliders = {name: w.SelectionSlider(options=opts, value=opts[0], description=name,
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


def interact(fn, **controls):
    """Sliders for a pure function (a model or a diagram): ``fn(**values)`` draws a figure.

    Each control is a list of options (``dtype=["float32", "float64"]``, ``stride=[1, 2, 4]``)
    or a tuple ``(low, high, step)`` of numbers for a slider.
    """
    v.function(fn, "fn", what="a function that draws a figure")
    if not controls:
        raise ValueError("interact() needs at least one control, e.g. stride=(1, 32, 1).")
    specs = {}
    for name, spec in controls.items():
        if isinstance(spec, tuple) and len(spec) == 3 and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) for x in spec):
            lo, hi, step = (v.number(x, f"{name}[{i}]") for i, x in enumerate(spec))
            if not lo < hi or not step > 0:
                raise ValueError(f"{name}={spec!r} must be (low, high, step) with low < high and "
                                 "step > 0; or pass a list of options.")
            specs[name] = spec
        else:
            specs[name] = v.sequence(spec, name)
    w = _ipywidgets()
    out = w.Output()
    sliders = {}
    for name, spec in specs.items():
        if isinstance(spec, list):
            sliders[name] = w.SelectionSlider(options=spec, description=name,
                                              continuous_update=False)
        else:
            lo, hi, step = spec
            cls = w.IntSlider if all(isinstance(v, int) for v in spec) else w.FloatSlider
            sliders[name] = cls(min=lo, max=hi, step=step, value=lo, description=name,
                                continuous_update=False)

    def redraw(*_):
        with out:
            out.clear_output(wait=True)
            fn(**{k: s.value for k, s in sliders.items()})
            plt.show()

    for s in sliders.values():
        s.observe(redraw, names="value")
    redraw()
    return w.VBox([*sliders.values(), out])
