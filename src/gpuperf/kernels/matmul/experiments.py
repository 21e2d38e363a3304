"""Chapter 4's experiments (``matmul_*``), recorded on a GPU and replayed elsewhere.

``matmul_naive_vs_tiled``: TFLOP/s against size for both naive mappings, tiles 8/16/32
and cuBLAS. ``matmul_tile_sweep``: tile size at 4096^3. ``matmul_roofline``: each
version's model intensity, bound and measured rate. ``matmul_article_bugs``: what the
Numba article's kernel does on a GPU at sizes that are and are not multiples of the tile.
Then ``measure_version`` (the explorer's live button) and ``naive_vs_tiled_summary``.
"""

from __future__ import annotations

import numpy as np
from numba import cuda  # noqa: I001

from gpuperf import bench, validate
from gpuperf import exercises as ex
from gpuperf.mode import SIMULATOR
from gpuperf.records import experiment

from .kernels import TILES, Variant, check_variant, run_variant, variant
from .measure import CUBLAS, measure_cublas, measure_variant, reference, relative_error, repeats, verify
from .models import intensity, roofline_bound, traffic_bytes

SIZES = (256, 512, 1024, 2048, 4096)
_UNITS = {"ms": "ms", "tflops": "TFLOP/s", "pct_cublas": "% of cuBLAS"}


def _chapter_variants():
    return [variant("naive_row_x"), variant("naive_col_x")] + [
        variant("tiled", tile=t) for t in TILES]


@experiment("matmul_naive_vs_tiled", chapter="tiling",
            title="Naive (both mappings) and tiled matmul against size, with cuBLAS",
            units=_UNITS)
def naive_vs_tiled_experiment(progress):
    rows = []
    for v in _chapter_variants():
        verify(v)
        for n in SIZES:
            if v.name.startswith("naive (row") and n > 2048:
                continue  # ~1 s a run at 4096: the trend is plain by 2048
            rows.append({"version": v.name, "n": n, **measure_variant(v, n, **repeats(n))})
            progress(f"{v.name} n={n}: {rows[-1]['tflops']:.2f} TFLOP/s")
    for n in SIZES:
        c = measure_cublas(n)
        if c:
            rows.append({"version": CUBLAS, "n": n, **c})
    return rows


@experiment("matmul_tile_sweep", chapter="tiling",
            title="Tile size against TFLOP/s and global traffic at 4096^3",
            units={**_UNITS, "ai": "FLOP/B", "bound_tflops": "TFLOP/s"})
def tile_sweep_experiment(progress):
    n = 4096
    ceil = bench.ceilings()
    rows = []
    for t in (4, 8, 16, 32):
        v = variant("tiled", tile=t)
        verify(v)
        ai = intensity("tiled", n, n, n, t)
        row = {"tile": t, "threads": t * t, "ai": ai,
               "bound_tflops": roofline_bound(ai, ceil["copy_gbps"], ceil.get("matmul_tflops") or 1e9),
               **measure_variant(v, n, **repeats(n))}
        rows.append(row)
        progress(f"tile {t}: {row['tflops']:.2f} TFLOP/s")
    return rows


def roofline_rows(variants, n: int, progress) -> list[dict]:
    """Model intensity, roofline bound and measured rate of each variant at n^3."""
    for _i, _v in enumerate(validate.sequence(variants, "variants")):
        check_variant(_v, f"variants[{_i}]")
    validate.positive_int(n, "n")
    validate.function(progress, "progress", what="a callable taking one status string")
    ceil = bench.ceilings()
    peak = ceil.get("matmul_tflops")
    rows = []
    for v in variants:
        ai = intensity(v.model, n, n, n, *v.params)
        bound = roofline_bound(ai, ceil["copy_gbps"], peak or float("inf"))
        m = measure_variant(v, n, **repeats(n))
        rows.append({"version": v.name, "n": n, "model": v.model,
                     "traffic_gb": traffic_bytes(v.model, n, n, n, *v.params) / 1e9,
                     "ai": ai, "bound_tflops": bound, **m,
                     "pct_of_bound": 100 * m["tflops"] / bound,
                     # what the traffic model says the kernel pulled through, per second
                     "model_gbps": traffic_bytes(v.model, n, n, n, *v.params) / (m["ms"] * 1e6)})
        progress(f"{v.name}: {m['tflops']:.2f} TFLOP/s, model bound {bound:.1f}")
    return rows


@experiment("matmul_roofline", chapter="tiling",
            title="Each version's intensity, roofline bound and measured rate at 2048^3",
            units={**_UNITS, "ai": "FLOP/B", "bound_tflops": "TFLOP/s", "traffic_gb": "GB",
                   "model_gbps": "GB/s", "pct_of_bound": "%"})
def roofline_experiment(progress):
    return roofline_rows(_chapter_variants(), 2048, progress)


@experiment("matmul_article_bugs", chapter="tiling",
            title="The Numba article's tiled kernel on a GPU: sizes that are and are not "
                  "multiples of 16",
            units={"rel_error": "", "nan": "elements"})
def article_bugs_experiment(progress):
    rows = []
    for version in ("tiled_article", "tiled_early_return", "tiled"):
        v = variant(version, tile=16)
        for (M, K, N) in ((64, 48, 32), (33, 47, 29), (100, 70, 90)):
            rows.append({"version": v.name, "M": M, "K": K, "N": N, **bug_outcome(v, M, K, N)})
            progress(f"{v.name} {M}x{K}x{N}: {rows[-1]['outcome']}")
    return rows


def _padded_device(host: np.ndarray, pad: int = 1 << 16):
    """A device copy of ``host`` at the start of a larger NaN-filled buffer.

    A kernel that reads or writes a little past the array then touches memory we own
    (NaN, so stray reads show in the output) instead of another allocation, and
    cannot fault and take the CUDA context down with it.
    """
    buf = np.full(host.size + pad, np.nan, np.float32)
    buf[: host.size] = host.ravel()
    return cuda.to_device(buf)[: host.size].reshape(host.shape)


def bug_outcome(v: Variant, M: int, K: int, N: int, seed: int = 5) -> dict:
    """Run ``v`` once on a poisoned output: NaN count, relative error, or the exception."""
    check_variant(v)
    for _d, _nm in ((M, "M"), (K, "K"), (N, "N")):
        validate.positive_int(_d, _nm, maximum=4096)
    validate.positive_int(seed, "seed", minimum=0)
    A = ex.random_array((M, K), seed)
    B = ex.random_array((K, N), seed + 1)
    out = ex.poisoned((M, N))
    try:
        if SIMULATOR:  # an out-of-range access raises IndexError here
            got = run_variant(v, A, B, out)
        else:  # on a GPU, give the buggy kernel NaN-filled room past each array to stray into
            dA, dB, dC = (_padded_device(x) for x in (A, B, out))
            v.launch(dA, dB, dC)
            got = dC.copy_to_host()
    except Exception as err:
        return {"nan": None, "rel_error": None,
                "outcome": f"raised {type(err).__name__}: {str(err).splitlines()[-1][:80]}"}
    nan = int(np.isnan(got).sum())
    ref = reference(A, B)
    ok = ~np.isnan(got)
    err = relative_error(np.where(ok, got, 0), np.where(ok, ref, 0)) if ok.any() else None
    if nan:
        outcome = f"{nan} of {got.size} outputs NaN"
    elif err is not None and err > 1e-4:
        outcome = f"wrong values (relative error {err:.1e})"
    else:
        outcome = "correct"
    return {"nan": nan, "rel_error": err, "outcome": outcome}


def outcome_text(v: Variant, M: int, K: int, N: int, seed: int = 5) -> str:
    """``bug_outcome``'s outcome for the page's table, with the simulator's exception message
    whole (``bug_outcome``, which the recorded ``matmul_article_bugs`` runs, keeps 80
    characters of it, which can cut a number in two)."""
    check_variant(v)
    for _d, _nm in ((M, "M"), (K, "K"), (N, "N")):
        validate.positive_int(_d, _nm, maximum=4096)
    validate.positive_int(seed, "seed", minimum=0)
    if SIMULATOR:
        try:
            run_variant(v, ex.random_array((M, K), seed), ex.random_array((K, N), seed + 1),
                        ex.poisoned((M, N)))
        except Exception as err:
            return f"raised {type(err).__name__}: {str(err).splitlines()[-1]}"
    return bug_outcome(v, M, K, N, seed)["outcome"]


def measure_version(version: str, n: int) -> dict:
    """Time one row of ``matmul_naive_vs_tiled`` live, by the name it has there
    (``"tiled 16"``, ``"naive (col from x)"``, ``"cuBLAS (CuPy @)"``): the chapter's
    explorer calls this from its *measure live* button."""
    names = [v.name for v in _chapter_variants()] + [CUBLAS]
    validate.choice(version, "version", names)
    validate.positive_int(n, "n", maximum=8192)
    bench.require_gpu("matmul.measure_version")
    if version == CUBLAS:
        row = measure_cublas(n)
        if row is None:
            raise RuntimeError("cuBLAS through CuPy is not available here: "
                               "`python -m pip install cupy-cuda12x`, or pick a Numba kernel.")
        return row
    v = next(v for v in _chapter_variants() if v.name == version)
    return measure_variant(v, n, **repeats(n))

# --------------------------------------------------------------------------- prose helpers


def naive_vs_tiled_summary(res, n: int = 2048, small: int = 256, tile: int = 32) -> str:
    """The chapter's reading of ``matmul_naive_vs_tiled``, printed from its rows.

    At ``n``: the coalesced naive mapping against the Numba article's, and the best tiled kernel
    against the coalesced naive one; at ``small``: the blocks of a ``tile`` x ``tile`` grid
    against the SMs of the GPU measured, and how far cuBLAS is from its rate at the largest size.
    """
    from gpuperf import device

    validate.result(res, "res")
    n = validate.integer(n, "n", minimum=1)
    small = validate.integer(small, "small", minimum=1)
    tile = validate.integer(tile, "tile", minimum=1)
    for c in ("version", "n"):
        validate.column(res, c, "res column")

    def rate(version, size):
        rows = res.select(version=version, n=size)
        return rows[0]["tflops"] if rows and rows[0].get("tflops") else None

    lines = []
    row_x, coal = rate("naive (row from x)", n), rate("naive (col from x)", n)
    if row_x and coal:
        lines.append(f"n={n}: the coalesced naive mapping runs at {coal / row_x:.2f}x the Numba "
                     f"article's ({coal:.2f} against {row_x:.2f} TFLOP/s).")
    tiled = [r for r in res.select(n=n) if r["version"].startswith("tiled") and r.get("tflops")]
    if tiled and coal:
        best = max(tiled, key=lambda r: r["tflops"])
        lines.append(f"n={n}: {best['version']} runs at {best['tflops'] / coal:.1f}x the coalesced "
                     f"naive kernel ({best['tflops']:.2f} TFLOP/s).")
    sms = device.facts(res)[0].get("sm_count")
    blocks = (-(-small // tile)) ** 2
    line = f"n={small}: a grid of {tile} x {tile} tiles has {blocks} blocks"
    line += f", for {sms} SMs." if sms else "."
    cublas = [r for r in res.rows if r["version"].startswith("cuBLAS") and r.get("tflops")]
    if cublas:
        top = max(cublas, key=lambda r: r["n"])
        low = [r for r in cublas if r["n"] == small]
        if low:
            line += (f" cuBLAS reaches {low[0]['tflops']:.2f} TFLOP/s there, "
                     f"{100 * low[0]['tflops'] / top['tflops']:.0f}% of its rate at n={top['n']}.")
    lines.append(line)
    text = "\n".join(lines)
    print(text)
    return text
