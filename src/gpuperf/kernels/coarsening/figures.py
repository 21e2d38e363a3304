"""Chapter 5's figures and explorers: TFLOP/s against the coarsening factor, the sliders
over the coarsening and register-tiling sweeps, and the live points they measure on a GPU."""

from __future__ import annotations

from gpuperf import validate
from gpuperf.kernels import matmul as mm
from gpuperf.mode import SIMULATOR

from .kernels import coarsened_variant
from .ptx import resources
from .variants import regtile_variant


def measure_point(tile: int = 32, factor: int = 1, n: int = 4096) -> dict:
    """One live point for the explorer: TFLOP/s and occupancy of a tile/factor pair."""
    mm.check_tile(tile)
    validate.positive_int(factor, "factor", maximum=64)
    validate.positive_int(n, "n")
    v = mm.variant("tiled", tile=tile) if factor == 1 else coarsened_variant(tile, factor)
    mm.verify(v)
    return {**mm.measure_variant(v, n, **mm.repeats(n)), **resources(v)}


_BLOCK_TILE = {"4x4": (64, 64), "8x4": (128, 64), "8x8": (128, 128)}


def measure_regtile_point(tile: str = "8x8", kind: str = "pipelined", bk: int = 8,
                          n: int = 4096) -> dict:
    """One live point for the register-tiling explorer (``tile`` is "TMxTN")."""
    import re as _re

    if not (isinstance(tile, str) and _re.fullmatch(r"\d+x\d+", tile)):
        raise ValueError(f"tile={tile!r} must be a thread tile 'TMxTN' such as '8x8' or '8x4'.")
    validate.choice(kind, "kind", ("scalar", "vectorized", "pipelined"))
    validate.positive_int(bk, "bk", maximum=64)
    validate.positive_int(n, "n")
    tm, tn = (int(v) for v in tile.split("x"))
    bm, bn = _BLOCK_TILE.get(tile, (16 * tm, 16 * tn))
    v = regtile_variant(bm, bn, bk, tm, tn, vectorized=kind != "scalar",
                        prefetch=kind == "pipelined")
    mm.verify(v)
    return {**mm.measure_variant(v, n, **mm.repeats(n)), **resources(v)}


def plot_factor_sweep(sweep, sizes=(1024, 4096)):
    """TFLOP/s against the coarsening factor, one line per tile, one panel per size."""
    validate.result(sweep, "sweep")
    import matplotlib.pyplot as plt

    from gpuperf import plots

    fig, axes = plt.subplots(len(sizes), 1, figsize=(plots.COLUMN_INCHES, 3.3 * len(sizes)),
                             sharex=True, squeeze=False)
    for ax, n in zip(axes.flat, sizes):
        validate.choice(n, "sizes[...]", sweep.values("n"))
        plots.lines(sweep, x="factor", y="tflops", series="tile", rows=sweep.select(n=n),
                    logx=True, ax=ax, xlabel="coarsening factor (tiles of C per block)",
                    ylabel="TFLOP/s",
                    title=f"Coarsened tiled matmul, {n} × {n} times {n} × {n}, on {sweep.gpu}")
        ax.legend([f"tile {t} × {t}" for t in sorted(sweep.values("tile"))], fontsize=8)
        # The factors as plain numbers on every panel (sharex hides the upper panels' labels).
        factors = sorted({r["factor"] for r in sweep.select(n=n)})
        ax.set_xticks(factors, [str(f) for f in factors])
        ax.xaxis.set_minor_locator(plt.NullLocator())
        ax.tick_params(labelbottom=True)
    fig.tight_layout()
    return fig


def explore_coarsening(res=None, y: str = "tflops"):
    """Sliders over tile and size, ``y`` (tflops or occupancy) against factor; live on a GPU."""
    if res is not None:
        validate.result(res, "res")
        for _c in ("factor", "tile", "n"):
            validate.column(res, _c, "res column")
        validate.column(res, y, "y")
    else:
        validate.choice(y, "y", ("tflops", "occupancy", "ms", "regs", "blocks_per_sm"))
    from gpuperf import records, widgets  # lazily: a GPU box may lack ipywidgets

    res = res or records.run("matmul_coarsen_sweep")
    shown = {"tflops": "TFLOP/s", "regs": "registers per thread", "blocks_per_sm": "blocks per SM",
             "ms": "time"}
    return widgets.explore(res, x="factor", y=y,
                           controls={"tile": res.values("tile"), "n": res.values("n")},
                           names={"n": "size n"},  # the side of an n x n x n product
                           # the experiment's title names one tile; the figure shows the picked one
                           title=f"Coarsening factor against {shown.get(y, y.replace('_', ' '))}",
                           live=None if SIMULATOR else measure_point)


def _tile_words(tile: str) -> str:
    """A thread tile "TMxTN" with its block tile, as the explorer's x axis says it: "128×128, 8×8"."""
    bm, bn = _BLOCK_TILE.get(tile, tuple(16 * int(t) for t in tile.split("x")))
    return f"{bm}×{bn}, {tile.replace('x', '×')}"


def _with_tile_words(res):
    """``res`` with a "tiles" column (block tile and thread tile in words) beside "tile"."""
    import dataclasses

    return dataclasses.replace(res, rows=[{**r, "tiles": _tile_words(r["tile"])} for r in res.rows])


def explore_regtile(res=None, y: str = "tflops"):
    """Block tile and TMxTN against ``y`` (tflops or occupancy) per kernel kind and BK; live on a GPU."""
    if res is not None:
        validate.result(res, "res")
        for _c in ("tile", "kind", "bk"):
            validate.column(res, _c, "res column")
        validate.column(res, y, "y")
    else:
        validate.choice(y, "y", ("tflops", "occupancy", "ms", "regs", "blocks_per_sm"))
    from gpuperf import records, widgets

    res = _with_tile_words(res or records.run("matmul_regtile_sweep"))
    words = {r["tiles"]: r["tile"] for r in res.rows}

    def live(tiles, **params):
        return measure_regtile_point(tile=words.get(tiles, tiles.split(", ")[-1].replace("×", "x")), **params)

    shown = {"tflops": "TFLOP/s", "occupancy": "occupancy"}
    return widgets.explore(res, x="tiles", y=y, controls={"kind": res.values("kind"),
                                                                 "bk": res.values("bk")},
                           names={"kind": "form", "bk": "BK"},  # as the page's tables say
                           xlabel="block tile, thread tile", keep=_with_tile_words,
                           # the experiment's title also promises occupancy; the figure shows y
                           title=f"2D register tiling: block tile and thread tile against "
                                 f"{shown.get(y, y.replace('_', ' '))} at 4096^3",
                           live=None if SIMULATOR else live)
