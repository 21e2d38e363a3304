"""Interactive explorers: sliders over a recorded sweep, and live re-measurement on a GPU.

Imported lazily (``gp.widgets``): a GPU box may lack ipywidgets, and nothing else
in the package needs it. In the static book a widget cannot run, so every chapter
also shows the whole sweep as a figure.
"""

from __future__ import annotations

import matplotlib.pyplot as plt

from . import SIMULATOR, plots


def _ipywidgets():
    try:
        import ipywidgets
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError(
            "the explorers need ipywidgets: `python -m pip install ipywidgets` (it is in "
            "requirements.txt), then restart the kernel."
        ) from err
    return ipywidgets


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
    w = _ipywidgets()
    missing = [c for c in [x, y, *controls] if c not in result.columns]
    if missing:
        raise ValueError(f"{result.name} has no column(s) {missing}; columns are {result.columns}.")
    sliders = {
        name: w.SelectionSlider(options=list(values), value=list(values)[0], description=name,
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
                ax.legend(fontsize=8)
            plt.show()
        best = max((r for r in rows if r.get(y) is not None), key=lambda r: r[y], default=None)
        status.value = (f"<small>{result.label}. Best here: {x}={best[x]} at "
                        f"{best[y]:,.1f} {plots.UNITS.get(y, y)}</small>" if best else "")

    for s in sliders.values():
        s.observe(redraw, names="value")
    children = [*sliders.values()]
    if live is not None and not SIMULATOR:
        xs = w.SelectionSlider(options=result.values(x), description=f"live {x}",
                               style={"description_width": "initial"})
        button = w.Button(description="measure live", icon="bolt")

        def measure(_):
            params = {**{k: s.value for k, s in sliders.items()}, x: xs.value}
            button.disabled = True
            status.value = f"<small>measuring {params} ...</small>"
            try:
                row = live(**params)
                live_points.append((params, row[y]))
            finally:
                button.disabled = False
            redraw()

        button.on_click(measure)
        children += [w.HBox([xs, button])]
    elif SIMULATOR:
        children.append(w.HTML("<small>No GPU in this session: the explorer shows recorded "
                               "values; on a GPU a <i>measure live</i> button appears.</small>"))
    redraw()
    return w.VBox([*children, status, out])


def pick(result, *, controls: dict, show, description: str = ""):
    """A general explorer: ``show(**selection)`` draws whatever it likes for the selection."""
    w = _ipywidgets()
    out = w.Output()
    sliders = {name: w.SelectionSlider(options=list(v), value=list(v)[0], description=name,
                                       continuous_update=False,
                                       style={"description_width": "initial"})
               for name, v in controls.items()}

    def redraw(*_):
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
    """Sliders for a pure function (a model or a diagram): ``fn(**values)`` draws a figure."""
    w = _ipywidgets()
    out = w.Output()
    sliders = {}
    for name, spec in controls.items():
        if isinstance(spec, (list, tuple)) and not (len(spec) == 3 and all(
                isinstance(v, (int, float)) for v in spec)):
            sliders[name] = w.SelectionSlider(options=list(spec), description=name,
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
