"""Chapter 5's experiments (``matmul_*``), recorded on a GPU and replayed elsewhere.

``matmul_coarsen_sweep``: factor x size, with blocks, waves and occupancy.
``matmul_vecadd_coarsen``: vector add against factor (little gain, none from reuse).
``matmul_regtile_sweep``: block tile and TM x TN against TFLOP/s and occupancy.
``matmul_coarsen_cap``, ``matmul_regtile_1d``, ``matmul_double_buffer``, ``matmul_unroll``,
``matmul_fast_path``: one step of the register-tiling chapters each.
``matmul_resources``: registers, shared memory, local memory and occupancy of every variant.
``matmul_ladder``: every step at 4096^3 with its % of cuBLAS.
The summaries printed from their results are in ``summaries.py``.
"""

from __future__ import annotations

import numpy as np
from numba import cuda  # noqa: E402,I001  (after gpuperf: the mode is chosen first)

from gpuperf import bench, validate
from gpuperf import exercises as ex
from gpuperf.kernels import matmul as mm
from gpuperf.kernels.matmul import Variant
from gpuperf.records import experiment

from .any_size import fast_matmul
from .kernels import _cdiv, coarsened_variant, make_vecadd_coarsened, regtile_1d_variant, vecadd, vector_add
from .ptx import _sass_ffma_counts, grid_blocks, inner_loop_mix, resources, waves
from .variants import fast_kernel_variant, fast_variant, no_edge_variant, regtile_variant

_UNITS = {"ms": "ms", "tflops": "TFLOP/s", "pct_cublas": "% of cuBLAS", "smem_bytes": "B",
          "local_bytes": "B", "occupancy": "fraction of max warps", "gbps": "GB/s"}
FACTORS = (1, 2, 4, 8, 16)


@experiment("matmul_coarsen_sweep", chapter="coarsening",
            title="Coarsening factor x size (tile 32): TFLOP/s, blocks, waves, occupancy",
            units=_UNITS)
def coarsen_sweep_experiment(progress):
    rows = []
    for tile in (16, 32):
        for f in FACTORS:
            v = mm.variant("tiled", tile=tile) if f == 1 else coarsened_variant(tile, f)
            mm.verify(v)
            res = resources(v)
            for n in (1024, 4096):
                m = mm.measure_variant(v, n, **mm.repeats(n))
                rows.append({"tile": tile, "factor": f, "n": n, **m, **res,
                             "blocks": grid_blocks(v, n, n),
                             "waves": waves(v, n, n, res["blocks_per_sm"])})
                progress(f"tile {tile} factor {f} n={n}: {m['tflops']:.2f} TFLOP/s")
    return rows


@experiment("matmul_vecadd_coarsen", chapter="coarsening",
            title="Vector add of 2^26 float32 against coarsening factor (pitfall 1)",
            units=_UNITS)
def vecadd_coarsen_experiment(progress):
    n = 2**26
    rng = np.random.default_rng(2)
    x = cuda.to_device(ex.random_array(n, rng))
    y = cuda.to_device(ex.random_array(n, rng))
    out = cuda.device_array(n, np.float32)
    rows = []
    for f in FACTORS:
        k = vecadd if f == 1 else make_vecadd_coarsened(f)
        grid = _cdiv(n, 256 * f)
        got = vector_add(x[:1000].copy_to_host(), y[:1000].copy_to_host(), factor=f)
        assert np.allclose(got, x[:1000].copy_to_host() + y[:1000].copy_to_host())
        t = bench.time_kernel(lambda k=k, grid=grid: k[grid, 256](x, y, out))
        rows.append({"factor": f, "blocks": grid, **bench.bandwidth_row(3 * 4 * n, t)})
        progress(f"factor {f}: {rows[-1]['gbps']:.0f} GB/s")
    return rows


REGTILE_CONFIGS = [  # (bm, bn, bk, tm, tn)
    (64, 64, 16, 4, 4), (128, 64, 8, 8, 4), (128, 128, 8, 8, 8), (128, 128, 16, 8, 8),
]


@experiment("matmul_regtile_sweep", chapter="coarsening",
            title="2D register tiling: block tile and TM x TN at 4096^3, with occupancy",
            units=_UNITS)
def regtile_sweep_experiment(progress):
    n = 4096
    rows = []
    for (bm, bn, bk, tm, tn) in REGTILE_CONFIGS:
        for kind in ("scalar", "vectorized", "pipelined"):
            v = regtile_variant(bm, bn, bk, tm, tn, vectorized=kind != "scalar",
                                prefetch=kind == "pipelined")
            mm.verify(v)
            res = resources(v)
            m = mm.measure_variant(v, n, **mm.repeats(n))
            rows.append({"kind": kind, "bm": bm, "bn": bn, "bk": bk, "tm": tm, "tn": tn,
                         "tile": f"{tm}x{tn}", "n": n, **m, **res})
            progress(f"{v.name}: {m['tflops']:.2f} TFLOP/s, {res['regs']} regs, "
                     f"{res['blocks_per_sm']} blocks/SM")
    return rows


CAP_FACTORS = (1, 2, 4, 8)


@experiment("matmul_coarsen_cap", chapter="coarsening",
            title="Coarsening with and without a cap of 32 registers per thread (tile 32, 4096^3)",
            units=_UNITS)
def coarsen_cap_experiment(progress):
    n = 4096
    rows = []
    for f in CAP_FACTORS:
        for cap in (None, 32):
            v = coarsened_variant(32, f, max_registers=cap)
            mm.verify(v)
            res = resources(v)
            m = mm.measure_variant(v, n, **mm.repeats(n))
            rows.append({"factor": f, "cap": cap or 0, "n": n, **m, **res})
            progress(f"{v.name}: {m['tflops']:.2f} TFLOP/s, {res['regs']} regs, "
                     f"{res['local_bytes']} B local, {res['blocks_per_sm']} blocks/SM")
    return rows


REGTILE_1D_CONFIGS = [(64, 64, 16, 4), (64, 64, 8, 8), (64, 64, 8, 16)]  # (bm, bn, bk, tm)


@experiment("matmul_regtile_1d", chapter="coarsening",
            title="1-D register blocking (64x64 block tile, TM outputs per thread) at 4096^3",
            units={**_UNITS, "fma_per_shared_load": "multiply-adds per shared load"})
def regtile_1d_experiment(progress):
    n = 4096
    rows = []
    tiled = mm.variant("tiled", tile=32)  # the baseline, in the same run
    for v, tm, bk in [(tiled, 1, 32)] + [(regtile_1d_variant(bm, bn, bk, tm), tm, bk)
                                        for (bm, bn, bk, tm) in REGTILE_1D_CONFIGS]:
        mm.verify(v)
        res = resources(v)
        m = mm.measure_variant(v, n, **mm.repeats(n))
        rows.append({"version": v.name, "tm": tm, "bk": bk, "n": n,
                     "fma_per_shared_load": tm / (tm + 1), **m, **res})
        progress(f"{v.name}: {m['tflops']:.2f} TFLOP/s, {res['regs']} regs")
    return rows


DOUBLE_CONFIGS = [(128, 128, 8, 8, 8), (128, 128, 16, 8, 8)]


@experiment("matmul_double_buffer", chapter="coarsening",
            title="Pipelined against double-buffered register tiling, with a cap of 128 registers "
                  "(4096^3)",
            units={**_UNITS, "sass_ffma": "FFMA instructions in the compiled code"})
def double_buffer_experiment(progress):
    n = 4096
    rows, variants = [], []
    for (bm, bn, bk, tm, tn) in DOUBLE_CONFIGS:
        for kind in ("pipelined", "double-buffered"):
            for cap in (None, 128):
                v = regtile_variant(bm, bn, bk, tm, tn, prefetch=True,
                                    double=kind == "double-buffered", max_registers=cap)
                mm.verify(v)
                res = resources(v)
                m = mm.measure_variant(v, n, **mm.repeats(n))
                rows.append({"kind": kind, "bm": bm, "bn": bn, "bk": bk, "tile": f"{tm}x{tn}",
                             "cap": cap or 0,
                             "n": n, **m, **res,
                             "barriers_per_tile": 1 if kind == "double-buffered" else 2})
                variants.append(v)
                progress(f"{v.name}: {m['tflops']:.2f} TFLOP/s, {res['regs']} regs, "
                         f"{res['blocks_per_sm']} blocks/SM")
    for row, count in zip(rows, _sass_ffma_counts(variants)):  # after the timings
        row["sass_ffma"] = count
    return rows


UNROLL_BKS = (8, 16)
UNROLL_WARP_TILE = (64, 32)  # 8 x 4 lanes of 8x8 thread tiles; 2 x 4 warps in a 128x128 block


UNROLL_ABLATION_CAP = 128  # the cap at which two blocks of 256 threads fit an SM's registers


def unroll_variants() -> list[tuple[dict, Variant]]:
    """The double-buffered kernel (128x128, 8x8, no cap): rows or warp tiles, 1 or 2 k steps,
    each with the row keys that name it; then the ablation: the warp-tiled kernel at BK 8 with
    two steps, capped at 128 registers (does a second block, not the layout, decide?)."""
    out = []
    for bk in UNROLL_BKS:
        for wt in (None, UNROLL_WARP_TILE):
            for ks in (1, 2):
                v = regtile_variant(128, 128, bk, 8, 8, prefetch=True, double=True, k_steps=ks,
                                    warp_tile=wt)
                out.append(({"bk": bk, "layout": "warp tiles" if wt else "block rows",
                             "k_steps": ks, "cap": 0}, v))
    v = regtile_variant(128, 128, UNROLL_BKS[0], 8, 8, prefetch=True, double=True, k_steps=2,
                        warp_tile=UNROLL_WARP_TILE, max_registers=UNROLL_ABLATION_CAP)
    out.append(({"bk": UNROLL_BKS[0], "layout": "warp tiles", "k_steps": 2,
                 "cap": UNROLL_ABLATION_CAP}, v))
    return out


@experiment("matmul_unroll", chapter="coarsening",
            title="Two k steps per loop body and warp tiles, on the double-buffered kernel (4096^3)",
            units={**_UNITS, "sass_ffma": "FFMA instructions in the compiled code"})
def unroll_experiment(progress):
    n = 4096
    rows, variants = [], []
    for keys, v in unroll_variants():
        mm.verify(v)
        res = resources(v)
        m = mm.measure_variant(v, n, **mm.repeats(n))
        rows.append({"version": v.name, **keys, "n": n, **m, **res})
        variants.append(v)
        progress(f"{v.name}: {m['tflops']:.2f} TFLOP/s, {res['regs']} regs, "
                 f"{res['blocks_per_sm']} blocks/SM")
    for row, count in zip(rows, _sass_ffma_counts(variants)):
        row["sass_ffma"] = count
    c = mm.measure_cublas(n)
    if c:  # this run's cuBLAS, for a ratio measured in one run
        rows.append({"version": mm.CUBLAS, "n": n, **c})
    return rows


def ladder_variants() -> list[Variant]:
    """Every step of the two chapters, in the order they teach them (not an order of speed)."""
    return [
        mm.variant("naive_row_x"), mm.variant("naive_col_x"), mm.variant("tiled", tile=32),
        coarsened_variant(32, 4), regtile_1d_variant(64, 64, 8, 16),
        regtile_variant(vectorized=False),
        regtile_variant(), regtile_variant(prefetch=True),
        regtile_variant(128, 128, 16, 8, 8, prefetch=True),
        regtile_variant(128, 128, 16, 8, 8, prefetch=True, double=True),
        regtile_variant(128, 128, 16, 8, 8, prefetch=True, double=True, max_registers=128),
        regtile_variant(128, 128, 8, 8, 8, prefetch=True, double=True, k_steps=2),
        regtile_variant(128, 128, 8, 8, 8, prefetch=True, double=True, k_steps=2,
                        warp_tile=UNROLL_WARP_TILE),
    ]


# Every block interior; K and N padded to 4100; then strips 4 and 8 wide.
FAST_PATH_SIZES = (4096, 4097, 4100, 4104)
FAST_PARTS_SIZES = (4100, 4104)  # where fast_parts times the call's parts
NO_EDGE = "chapter 5's kernel, no edge path"


@experiment("matmul_fast_path", chapter="coarsening",
            title="The double-buffered kernel's fast path alone, then made whole for any size",
            units={**_UNITS, "loop_inst": "instructions per pass", "loop_ffma": "FFMAs per pass",
                   "grid_blocks": "blocks", "waves": "grid blocks / (SMs x blocks per SM)"})
def fast_path_experiment(progress):
    """At 4096^3: chapter 5's best kernel (double-buffered 128x128x8, two k steps per body),
    the same kernel with only its edge path compiled out (the ablation), its fast path alone
    (``make_regtile_fast``) with int64 and with uint32 index arithmetic, and ``FastMatmul``,
    each with its registers and its inner loop's instructions and FFMAs per pass (SASS); at
    4097 (K and N padded to 4100), 4100 and 4104 (strips), ``FastMatmul`` and chapter 5's
    kernel again; at 4100 and 4104 the call's parts timed alone (``fast_parts``). cuBLAS is
    measured in the same run at each size, and ``pct_cublas`` is against it."""
    best = regtile_variant(128, 128, 8, 8, 8, prefetch=True, double=True, k_steps=2)
    cublas = {n: mm.measure_cublas(n) for n in FAST_PATH_SIZES}
    todo = [("chapter 5's kernel", best, FAST_PATH_SIZES),
            (NO_EDGE, no_edge_variant(), FAST_PATH_SIZES[:1]),
            ("fast path only, int64", fast_kernel_variant(index="int64"), FAST_PATH_SIZES[:1]),
            ("fast path only, uint32", fast_kernel_variant(), FAST_PATH_SIZES[:1]),
            ("any size", fast_variant(), FAST_PATH_SIZES)]
    rows = []
    for label, v, sizes in todo:
        if sizes == FAST_PATH_SIZES[:1]:  # whole tiles only
            mm.verify(v, 256, 256, 256)
        else:
            mm.verify(v)
            mm.verify(v, 260, 388, 132)  # a k-tail and both strips, K and N multiples of 4
            mm.verify(v, 261, 389, 131)  # K and N padded to multiples of 4
        res = {k: val for k, val in resources(v).items() if k != "threads"}
        loop = inner_loop_mix(v) or (None, None)
        for n in sizes:
            m = mm.measure_variant(v, n, **mm.repeats(n))
            c = cublas[n]
            m["pct_cublas"] = 100 * m["tflops"] / c["tflops"] if c else None
            rows.append({"version": label, "kernel": v.name, "n": n, **m, **res,
                         "loop_inst": loop[0], "loop_ffma": loop[1],
                         "grid_blocks": grid_blocks(v, n, n),
                         "waves": waves(v, n, n, res["blocks_per_sm"])})
            pct = f" = {m['pct_cublas']:.1f}% of cuBLAS" if c else ""
            progress(f"{label} at {n}: {m['tflops']:.2f} TFLOP/s{pct}, {res['regs']} regs, "
                     f"inner loop {loop[0]} instructions ({loop[1]} FFMA)")
    rows += [{"n": n, **part} for n in FAST_PARTS_SIZES for part in fast_parts(n)]
    progress("the call, the interior and the strips alone, at " + ", ".join(map(str, FAST_PARTS_SIZES)))
    for n, c in cublas.items():
        if c:
            rows.append({"version": mm.CUBLAS, "n": n, **c, "pct_cublas": 100.0})
    return rows


FAST_PARTS = ("any size: the call, again", "any size: interior alone", "any size: strips alone")


def fast_parts(n: int) -> list[dict]:
    """``fast_matmul()`` at n^3 timed again with its two parts, each alone (ms, spread): the
    whole call, the interior (fast kernel and k tail, on one stream) and the two strips (each on
    its own stream), all three with the same repeats (more than the size rows': the question is
    a fraction of a millisecond). They say how much of the strips' time the call hides behind
    the interior."""
    validate.positive_int(n, "n")
    f = fast_matmul()
    if n % 4 or n % f.bm == 0 or n < f.bm:
        raise ValueError(f"fast_parts times the call's interior and strips, so n must be a "
                         f"multiple of 4 (no padding), over {f.bm} and not a multiple of it "
                         f"(there are strips): n={n}; try {max(n // f.bm, 1) * f.bm + 4}.")
    bench.require_gpu("fast_parts")  # before the first call, which would simulate n^3
    A, B, C = mm.device_operands(n, n, n)
    f(A, B, C)  # compiles everything
    cuda.synchronize()
    runs = (lambda: f(A, B, C), lambda: f._interior(A, B, C, 0),
            lambda: f._strips_alone(A, B, C, 0))
    out = []
    for label, run in zip(FAST_PARTS, runs):
        t = bench.time_kernel(run, warmup=2, min_repeat=20, min_time=0.3)
        out.append({"version": label, "ms": t.median_ms, "spread": t.spread})
    return out


@experiment("matmul_resources", chapter="coarsening",
            title="Registers, shared memory and occupancy of every variant, from the compiled kernels",
            units=_UNITS)
def resources_experiment(progress):
    rows = []
    vs = ladder_variants() + [coarsened_variant(32, f) for f in (2, 8, 16)] + [
        regtile_variant(*cfg) for cfg in REGTILE_CONFIGS if cfg != (128, 128, 8, 8, 8)]
    for v in {v.name: v for v in vs}.values():  # the ladder and the sweep share one config
        mm.verify(v)
        rows.append({"version": v.name, **resources(v)})
        progress(f"{v.name}: {rows[-1]['regs']} regs, {rows[-1]['blocks_per_sm']} blocks/SM")
    return rows


@experiment("matmul_ladder", chapter="coarsening",
            title="Every step from naive to 2D register tiling at 4096^3, against cuBLAS",
            units={**_UNITS, "ai": "FLOP/B", "bound_tflops": "TFLOP/s"})
def ladder_experiment(progress):
    n = 4096
    # the ladder, then the fast path made whole (its own section, and not a rung of the
    # profiling chapter's tables, which launch ladder_variants() by index)
    vs = ladder_variants() + [fast_variant()]
    for v in vs:
        mm.verify(v)
    rows = mm.roofline_rows(vs, n, progress)
    for r, v in zip(rows, vs):
        r.update({k: val for k, val in resources(v).items() if k != "threads"})
    c = mm.measure_cublas(n)
    if c:
        rows.append({"version": "cuBLAS (CuPy @)", "n": n, **c})
    return rows
