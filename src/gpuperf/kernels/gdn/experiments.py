"""The case study's experiments (all prefixed ``gdn_``), the helpers they use, the tables
computed from their results, and ``dgamma_launcher`` (one gradient launch set up for the
profiler)."""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import cuda  # safe: importing gpuperf.kernels.* runs gpuperf/__init__ (the mode) first

from gpuperf import bench, device
from gpuperf import validate as v
from gpuperf.records import experiment

from .host import launch_raw, make_factor, make_forward
from .kernels import (
    _ZERO,
    DEFAULT_BLOCK,
    MAX_GRID_Y,
    make_fused,
    make_fused_tiled,
    make_input_grad,
    make_row_sum,
    tiled_launch,
)
from .models import ALGORITHMS, METHODS, allocated_bytes, input_grad_bytes, moved_bytes, raw_bytes
from .references import random_problem, reference_factor, reference_input_grad

# The sweep the widget explores: channels x image side, batch of 4 images.
SWEEP_CHANNELS = (16, 32, 64, 128)
SWEEP_SIDES = (32, 64, 128)
BATCH = 4
# The headline configuration the case study's table uses.
HEADLINE = {"n_ch": 64, "side": 128}
# Algorithm 1 allocates five raw-sized matrices; beyond this it is skipped (and reported).
REPLICATE_LIMIT_BYTES = 8 * 2**30
# The GDN article's own configuration (GTX 1080): N = 256 channels, 128 x 128 images.
ARTICLE_CONFIG = {"n_ch": 256, "side": 128, "batch": 4}


def _cupy():
    try:
        import cupy
    except Exception:  # not installed, or installed without a usable CUDA
        return None
    return cupy


def _cublas_gradient(cp, d_delta, d_w, d_d):
    """``dgamma = F @ (w*w).T`` with CuPy: one elementwise pass for F, one for w*w, one SGEMM."""
    factor_kernel = _cupy_factor_kernel(cp)
    delta, w, d = cp.asarray(d_delta), cp.asarray(d_w), cp.asarray(d_d)

    def run():
        f = factor_kernel(delta, w, d)
        return f @ (w * w).T

    return run


@functools.lru_cache(maxsize=1, typed=True)
def _cupy_factor_kernel(cp):
    return cp.ElementwiseKernel("float32 dl, float32 w, float32 d", "float32 f",
                                "f = -0.5f * dl * w * d * d * d", "gdn_factor")


class _Problem:
    """Device arrays for one (N, S) configuration, plus the float64 reference when asked."""

    def __init__(self, n_ch: int, n_samples: int, seed: int = 0):
        w, delta, gamma, beta = random_problem(n_ch, n_samples, seed)
        self.n_ch, self.n_samples = n_ch, n_samples
        self.host = (w, delta, gamma, beta)
        self.w, self.delta = cuda.to_device(w), cuda.to_device(delta)
        self.u = cuda.device_array((n_ch, n_samples), np.float32)
        self.d = cuda.device_array((n_ch, n_samples), np.float32)
        make_forward(DEFAULT_BLOCK)[(math.ceil(n_samples / DEFAULT_BLOCK), n_ch), DEFAULT_BLOCK](
            self.w, cuda.to_device(gamma), cuda.to_device(beta), self.u, self.d)

    def reference(self):
        w, delta, _, _ = self.host
        f = reference_factor(w, delta, self.d.copy_to_host())
        return f @ (w.astype(np.float64) ** 2).T


def _rel_err(got, ref) -> float:
    return float(np.linalg.norm(np.asarray(got, np.float64) - ref) / np.linalg.norm(ref))


def _time(fn, footprint_bytes: int):
    # Launches counted: the per-channel loop issues N launches each shorter than Numba's launch
    # cost, and the host setting the pace is part of what the chapter measures.
    l2 = device.info().l2_bytes or 50 * 2**20
    return bench.time_kernel(fn, min_repeat=5, min_time=0.05, flush=footprint_bytes < 4 * l2,
                             hide_launch=False)


def _method_launcher(method, prob, raw, block, cp):
    """A zero-argument callable that enqueues ``method`` once, and a ``result()`` for dgamma.

    Returns ``(None, reason)`` when the method cannot run here.
    """
    n_ch, n_s = prob.n_ch, prob.n_samples
    if method in ALGORITHMS:
        scratch = None
        if method == "replicate":
            need = allocated_bytes(method, n_ch, n_s)
            if need > REPLICATE_LIMIT_BYTES:
                return None, f"skipped: needs {need / 2**30:.1f} GiB"
            scratch = [cuda.device_array(n_ch * n_ch * n_s, np.float32) for _ in range(4)]

        def run():
            launch_raw(method, prob.delta, prob.w, prob.d, raw, block=block, scratch=scratch)

        return run, None
    if method == "fused":
        coarsen = 8
        dgamma = cuda.device_array((n_ch, n_ch), np.float32)
        dbeta = cuda.device_array(n_ch, np.float32)
        fused = make_fused(block, coarsen)
        grid = (math.ceil(n_s / (block * coarsen)), n_ch)

        def run():
            _zero(dgamma, dbeta)  # the kernel accumulates atomically
            fused[grid, block](prob.delta, prob.w, prob.d, dgamma, dbeta)
            return dgamma

        return run, None
    if cp is None:
        return None, "skipped: CuPy not installed"
    return _cublas_gradient(cp, prob.delta, prob.w, prob.d), None


def _measure_config(n_ch, side, *, cp, copy_gbps, block, progress):
    """Every method at one (N, side): rows with time, floor, % of floor and speedups."""
    n_s = BATCH * side * side
    prob = _Problem(n_ch, n_s, seed=n_ch + side)
    check = (n_ch, side) == (HEADLINE["n_ch"], HEADLINE["side"])
    ref = prob.reference() if check else None
    raw = cuda.device_array((n_ch * n_ch, n_s), np.float32)
    sums = cuda.device_array(n_ch * n_ch, np.float32)
    row_sum = make_row_sum(block)
    footprint = raw_bytes(n_ch, n_s) + 4 * 4 * n_ch * n_s

    def reduce_raw():
        row_sum[n_ch * n_ch, block](raw, sums)

    t_reduce = _time(reduce_raw, footprint)
    rows, previous_ms = [], None
    for method in METHODS:
        row = {"n_ch": n_ch, "side": side, "batch": BATCH, "samples": n_s, "method": method,
               # fused: one launch zeroes its outputs; cublas: F, w*w, then the SGEMM
               "launches": {"replicate": 5, "per_channel": n_ch, "fused": 2,
                            "cublas": 3}.get(method, 1),
               "allocated_mb": allocated_bytes(method, n_ch, n_s) / 1e6,
               "moved_mb": moved_bytes(method, n_ch, n_s) / 1e6}
        run, why_not = _method_launcher(method, prob, raw, block, cp)
        if run is None:
            rows.append({**row, "ms": None, "note": why_not})
            progress(f"N={n_ch:4d} side={side:4d} {method:12s} {why_not}")
            continue
        t = _time(run, footprint)
        complete = method in ("fused", "cublas")
        total_ms = t.median_ms + (0.0 if complete else t_reduce.median_ms)
        floor_ms = moved_bytes(method, n_ch, n_s) / (copy_gbps * 1e9) * 1e3
        row.update({
            "ms": t.median_ms, "spread": t.spread,
            "reduce_ms": None if complete else t_reduce.median_ms,
            "total_ms": total_ms, "floor_ms": floor_ms,
            "pct_floor": 100 * floor_ms / t.median_ms,
            "gbps": bench.gbps(moved_bytes(method, n_ch, n_s), t.median_ms),
            "speedup_vs_previous": previous_ms / total_ms if previous_ms else None,
        })
        if check:
            out = run()
            if method in ALGORITHMS:
                reduce_raw()
                got = sums.copy_to_host().reshape(n_ch, n_ch)
            else:
                got = out.copy_to_host() if method == "fused" else cp.asnumpy(out)
            row["rel_err"] = _rel_err(got, ref)
            if row["rel_err"] > 1e-4:
                raise AssertionError(f"{method} is wrong at N={n_ch}, side={side}: "
                                     f"relative error {row['rel_err']:.2e}")
        previous_ms = total_ms
        rows.append(row)
        progress(f"N={n_ch:4d} side={side:4d} {method:12s} {t.median_ms:9.3f} ms "
                 f"({row['pct_floor']:.0f}% of its floor)")
    return rows


def measure_point(n_ch: int, side: int, method: str = "registers") -> dict:
    """Time one method at one (N, side) on this GPU: the widget's live button."""
    v.choice(method, "method", METHODS)
    v.positive_int(n_ch, "n_ch", maximum=MAX_GRID_Y)
    v.positive_int(side, "side")
    bench.require_gpu("gdn.measure_point")
    v.choice(method, "method", METHODS)
    rows = [r for r in _measure_config(n_ch, side, cp=_cupy(), block=DEFAULT_BLOCK,
                                       copy_gbps=bench.ceilings()["copy_gbps"],
                                       progress=lambda _m: None) if r["method"] == method]
    return rows[0]


@experiment("gdn_algorithms", chapter="gdn",
            title="GDN backward (dgamma): the GDN article's four algorithms, fused, and cuBLAS, "
                  "over channels N and image side (batch of 4)",
            units={"ms": "ms", "reduce_ms": "ms", "total_ms": "ms", "floor_ms": "ms",
                   "pct_floor": "% of floor", "gbps": "GB/s", "moved_mb": "MB",
                   "allocated_mb": "MB", "speedup_vs_previous": "x"})
def algorithms_experiment(progress):
    cp = _cupy()
    copy_gbps = bench.ceilings()["copy_gbps"]
    rows = []
    for n_ch in SWEEP_CHANNELS:
        for side in SWEEP_SIDES:
            rows += _measure_config(n_ch, side, cp=cp, copy_gbps=copy_gbps,
                                    block=DEFAULT_BLOCK, progress=progress)
    return rows


@experiment("gdn_article_size", chapter="gdn",
            title="GDN backward (dgamma) at the GDN article's size: N=256 channels, 128x128 "
                  "images, batch 4; the four algorithms, fused, and cuBLAS",
            units={"ms": "ms", "reduce_ms": "ms", "total_ms": "ms", "floor_ms": "ms",
                   "pct_floor": "% of floor", "gbps": "GB/s", "moved_mb": "MB",
                   "allocated_mb": "MB", "speedup_vs_previous": "x", "rel_err": "relative"})
def article_size_experiment(progress):
    """``gdn_algorithms``'s protocol at ``ARTICLE_CONFIG`` (the only N the article states; the
    raw matrix is 17 GB, algorithm 1's five of them are skipped as in the sweep). Then
    algorithm 4 with its reduction, and the fused kernel, are checked against the float64
    dgamma at that size (``rel_err`` on their rows)."""
    n_ch, side = ARTICLE_CONFIG["n_ch"], ARTICLE_CONFIG["side"]
    rows = _measure_config(n_ch, side, cp=_cupy(), copy_gbps=bench.ceilings()["copy_gbps"],
                           block=DEFAULT_BLOCK, progress=progress)
    n_s = BATCH * side * side
    prob = _Problem(n_ch, n_s, seed=n_ch + side)
    ref = prob.reference()
    raw = cuda.device_array((n_ch * n_ch, n_s), np.float32)
    sums = cuda.device_array(n_ch * n_ch, np.float32)
    launch_raw("registers", prob.delta, prob.w, prob.d, raw, block=DEFAULT_BLOCK)
    make_row_sum(DEFAULT_BLOCK)[n_ch * n_ch, DEFAULT_BLOCK](raw, sums)
    errors = {"registers": _rel_err(sums.copy_to_host().reshape(n_ch, n_ch), ref)}
    del raw  # 17 GB
    fused, _ = _method_launcher("fused", prob, None, DEFAULT_BLOCK, None)
    errors["fused"] = _rel_err(fused().copy_to_host(), ref)
    for r in rows:
        if r["method"] in errors:
            r["rel_err"] = errors[r["method"]]
            if r["rel_err"] > 1e-4:
                raise AssertionError(f"{r['method']} is wrong at N={n_ch}: relative error "
                                     f"{r['rel_err']:.2e}")
    return rows


def _zero(dgamma, dbeta):
    """Zero the fused kernel's two outputs in one launch (it accumulates with atomics)."""
    flat = dgamma.reshape(dgamma.size)
    _zero_kernel()[math.ceil(max(flat.size, dbeta.size) / 256), 256](flat, dbeta)


@functools.lru_cache(maxsize=1, typed=True)
def _zero_kernel():
    @cuda.jit
    def zero_two(a, b):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = _ZERO
        if i < b.size:
            b[i] = _ZERO

    return zero_two


def dgamma_launcher(method: str, n_ch: int, tile: int = 16):
    """dgamma at the headline image size (``BATCH`` images of ``HEADLINE["side"]`` squared) and
    ``n_ch`` channels, set up on the device for one launch at a time: ``(run, reference)``.

    ``run()`` zeroes the outputs, launches ``method`` once and returns the device dgamma:
    ``"fused"`` as ``gdn_algorithms`` launches it (``tile`` unused), ``"fused_tiled"`` as
    ``gdn_tiled`` does (``make_fused_tiled(tile, tile)`` on ``tiled_launch``'s grid).
    ``reference()`` is the float64 dgamma of the same inputs. For the profiler, which runs
    it under Nsight Compute.
    """
    v.choice(method, "method", ("fused", "fused_tiled"))
    n_ch = v.positive_int(n_ch, "n_ch", maximum=MAX_GRID_Y)
    if method == "fused_tiled":
        tile = v.choice(tile, "tile", (8, 16, 32))
    n_s = BATCH * HEADLINE["side"] ** 2
    prob = _Problem(n_ch, n_s, seed=n_ch + 1)
    if method == "fused":
        run, _ = _method_launcher("fused", prob, None, DEFAULT_BLOCK, None)
        return run, prob.reference
    grid, threads, span = tiled_launch(n_ch, n_s, tile=tile, depth=tile)
    kernel = make_fused_tiled(tile, tile)
    dgamma = cuda.device_array((n_ch, n_ch), np.float32)
    dbeta = cuda.device_array(n_ch, np.float32)

    def run():
        _zero(dgamma, dbeta)
        kernel[grid, threads](prob.delta, prob.w, prob.d, dgamma, dbeta, span)
        return dgamma

    return run, prob.reference


INPUT_GRAD_CHANNELS = (64, 256)  # the headline's N and the GDN article's


@experiment("gdn_input_grad", chapter="gdn",
            title="GDN input gradient dL/dw (128x128, batch 4): Numba's factor and "
                  "gamma.T @ F kernels against CuPy (cuBLAS for the product)",
            units={"ms": "ms", "gbps": "GB/s", "tflops": "TFLOP/s", "rel_err": "relative"})
def input_grad_experiment(progress):
    cp = _cupy()
    n_s = BATCH * HEADLINE["side"] ** 2
    rows = []
    for n_ch in INPUT_GRAD_CHANNELS:
        rows += _input_grad_rows(n_ch, n_s, cp, progress)
    return rows


def _input_grad_rows(n_ch, n_s, cp, progress):
    prob = _Problem(n_ch, n_s, seed=n_ch)
    w, delta, gamma, beta = prob.host
    ref = reference_input_grad(w, delta, gamma, beta)
    d_gamma = cuda.to_device(gamma)
    f = cuda.device_array((n_ch, n_s), np.float32)
    dw = cuda.device_array((n_ch, n_s), np.float32)
    grid = (math.ceil(n_s / DEFAULT_BLOCK), n_ch)
    factor, grad = make_factor(DEFAULT_BLOCK), make_input_grad(DEFAULT_BLOCK)

    def numba_run():
        factor[grid, DEFAULT_BLOCK](prob.delta, prob.w, prob.d, f)
        grad[grid, DEFAULT_BLOCK](prob.delta, prob.w, prob.d, d_gamma, f, dw)
        return dw

    runs = {"numba (factor, then gamma.T @ F in one kernel)": (numba_run, 2)}
    if cp is not None:
        fk = _cupy_factor_kernel(cp)
        c_delta, c_w, c_d = cp.asarray(prob.delta), cp.asarray(prob.w), cp.asarray(prob.d)
        c_gt = cp.asarray(d_gamma).T.copy()

        def cupy_run():
            return c_delta * c_d + 2.0 * c_w * (c_gt @ fk(c_delta, c_w, c_d))

        # the factor, the cuBLAS product, and four elementwise operations (delta * D, 2 * w,
        # that times the product, the sum)
        runs["cupy (factor, cuBLAS gamma.T @ F, elementwise)"] = (cupy_run, 6)
    moved = input_grad_bytes(n_ch, n_s)
    rows = []
    for method, (run, launches) in runs.items():
        out = run()
        got = out.copy_to_host() if hasattr(out, "copy_to_host") else cp.asnumpy(out)
        err = _rel_err(got, ref)
        if err > 1e-4:
            raise AssertionError(f"{method} is wrong at N={n_ch}: relative error {err:.2e}")
        t = _time(run, moved)
        rows.append({"n_ch": n_ch, "samples": n_s, "method": method, "launches": launches,
                     "ms": t.median_ms, "spread": t.spread,
                     "gbps": bench.gbps(moved, t.median_ms),
                     "tflops": bench.tflops(2 * n_ch * n_ch * n_s, t.median_ms),
                     "rel_err": err})
        progress(f"N={n_ch} {method}: {t.median_ms:.3f} ms, error {err:.1e}")
    return rows


TILED_CHANNELS = (16, 64, 128, 256)   # the sweep's smallest N, the headline's, and the article's
TILED_TILES = (16, 32)


@experiment("gdn_tiled", chapter="gdn",
            title="dgamma as a tiled matrix product (128x128, batch 4): the fused kernel, "
                  "its tiled version (chapter 4) and cuBLAS, over channels N",
            units={"ms": "ms", "tflops": "TFLOP/s", "rel_err": "relative",
                   "x_fused": "x", "x_cublas": "x"})
def tiled_experiment(progress):
    """At the headline image size, for each N of ``TILED_CHANNELS``: ``fused`` (one thread
    row per channel k, reading every w_j for each), ``fused_tiled`` with each tile of
    ``TILED_TILES`` (each staged value serving a tile of outputs), and cuBLAS (CuPy: F, then
    w*w, then the SGEMM) when present. Every time includes the launch that zeroes the
    outputs and the host's launch work (the sweep's protocol, ``_time``); every result is
    checked against the float64 reference. ``x_fused``, ``x_cublas``: that method's time
    over this one's, at the same N."""
    cp = _cupy()
    n_s = BATCH * HEADLINE["side"] ** 2
    rows = []
    for n_ch in TILED_CHANNELS:
        prob = _Problem(n_ch, n_s, seed=n_ch + 1)
        ref = prob.reference()
        flops = 2 * n_ch * n_ch * n_s
        dgamma = cuda.device_array((n_ch, n_ch), np.float32)
        dbeta = cuda.device_array(n_ch, np.float32)
        runs = {"fused": _method_launcher("fused", prob, None, DEFAULT_BLOCK, cp)[0]}
        for tile in TILED_TILES:
            grid, threads, span = tiled_launch(n_ch, n_s, tile=tile, depth=tile)
            kernel = make_fused_tiled(tile, tile)

            def run(kernel=kernel, grid=grid, threads=threads, span=span, prob=prob,
                    dgamma=dgamma, dbeta=dbeta):
                _zero(dgamma, dbeta)
                kernel[grid, threads](prob.delta, prob.w, prob.d, dgamma, dbeta, span)
                return dgamma

            runs[f"fused_tiled {tile}x{tile}"] = run
        if cp is not None:
            runs["cublas"] = _cublas_gradient(cp, prob.delta, prob.w, prob.d)
        here = []
        for method, run in runs.items():
            out = run()
            got = out.copy_to_host() if hasattr(out, "copy_to_host") else cp.asnumpy(out)
            err = _rel_err(got, ref)
            if err > 1e-4:
                raise AssertionError(f"{method} is wrong at N={n_ch}: relative error {err:.2e}")
            t = _time(run, 3 * 4 * n_ch * n_s)
            here.append({"n_ch": n_ch, "samples": n_s, "method": method, "ms": t.median_ms,
                         "spread": t.spread, "tflops": bench.tflops(flops, t.median_ms),
                         "rel_err": err})
            progress(f"N={n_ch:4d} {method:18s} {t.median_ms:8.3f} ms "
                     f"({here[-1]['tflops']:.2f} TFLOP/s)")
        ms = {r["method"]: r["ms"] for r in here}
        for r in here:
            r["x_fused"] = ms["fused"] / r["ms"]
            r["x_cublas"] = ms["cublas"] / r["ms"] if "cublas" in ms else None
        rows += here
    return rows


DETERMINISM_RUNS = 20


@experiment("gdn_determinism", chapter="gdn",
            title="The same dgamma computed 20 times (N=64, 128x128, batch 4): distinct results "
                  "of the fused kernel's float atomics against a fixed-order reduction",
            units={"max_rel_diff": "relative", "rel_err": "relative"})
def determinism_experiment(progress):
    n_ch, side = HEADLINE["n_ch"], HEADLINE["side"]
    n_s = BATCH * side * side
    prob = _Problem(n_ch, n_s, seed=7)
    ref = prob.reference()
    raw = cuda.device_array((n_ch * n_ch, n_s), np.float32)
    cp = _cupy()
    rows = []
    for method in ("fused", "registers", "cublas"):
        run, why_not = _method_launcher(method, prob, raw, DEFAULT_BLOCK, cp)
        if run is None:
            rows.append({"method": method, "runs": 0, "note": why_not})
            continue
        sums = cuda.device_array(n_ch * n_ch, np.float32)
        results = []
        for _ in range(DETERMINISM_RUNS):
            out = run()
            if method == "registers":
                make_row_sum(DEFAULT_BLOCK)[n_ch * n_ch, DEFAULT_BLOCK](raw, sums)
                got = sums.copy_to_host().reshape(n_ch, n_ch)
            else:
                got = out.copy_to_host() if method == "fused" else cp.asnumpy(out)
            results.append(np.array(got, np.float32))
        distinct = len({r.tobytes() for r in results})
        first = results[0].astype(np.float64)
        diff = max(float(np.abs(r.astype(np.float64) - first).max()) for r in results)
        errs = [_rel_err(r, ref) for r in results]
        rows.append({"method": method, "runs": DETERMINISM_RUNS, "distinct_results": distinct,
                     "max_rel_diff": diff / float(np.abs(first).max()),
                     "rel_err": float(np.median(errs)), "rel_err_max": max(errs)})
        progress(f"{method}: {distinct} distinct results of {DETERMINISM_RUNS}")
    return rows


REDUCTION_CHANNELS = (64, 256)  # the headline's N and the GDN article's
LADDER_MAX_CALLS = 2**13        # the reduce ladder's loop of N*N calls: at N=256, 65,536 calls


@experiment("gdn_reduction", chapter="gdn",
            title="Reducing the raw contributions (128x128, batch 4) at N=64 and at the "
                  "article's N=256: a loop of launches against one batched launch, ours and "
                  "CuPy's",
            units={"ms": "ms", "gbps": "GB/s", "pct_copy": "% of copy",
                   "floor_us_per_launch": "us", "us_per_launch": "us"})
def reduction_experiment(progress):
    """For each N of ``REDUCTION_CHANNELS``: the raw matrix of algorithm 4 (``N*N`` rows of
    ``S`` samples; 17 GB at N=256) summed row by row, by a loop of N launches (one per output
    row of dgamma) and by one batched launch, with our kernel, with cuBLAS and CuPy, and with
    the article's own pair of cuBLAS calls. Every result is checked against the float64
    dgamma. ``us_per_launch``: the time over the launches; ``floor_us_per_launch``: the bytes
    one launch reads at the copy ceiling."""
    cp = _cupy()
    copy_gbps = bench.ceilings()["copy_gbps"]
    rows = []
    for n_ch in REDUCTION_CHANNELS:
        rows += _reduction_rows(n_ch, cp, copy_gbps, progress)
    return rows


def _reduction_rows(n_ch, cp, copy_gbps, progress):
    block = DEFAULT_BLOCK
    n_s = BATCH * HEADLINE["side"] ** 2
    prob = _Problem(n_ch, n_s, seed=3)
    raw = cuda.device_array((n_ch * n_ch, n_s), np.float32)
    launch_raw("registers", prob.delta, prob.w, prob.d, raw, block=block)
    ref = prob.reference().reshape(n_ch * n_ch)  # row k*N + j of raw sums to dgamma[k, j]
    sums = cuda.device_array(n_ch * n_ch, np.float32)
    row_sum = make_row_sum(block)
    nbytes = moved_bytes("reduce", n_ch, n_s)
    rows = []

    nan_sums = np.full(n_ch * n_ch, np.nan, np.float32)
    poison = [lambda: sums.copy_to_device(nan_sums)]  # every method must write its result

    def add(method, launches, fn, result):
        for p in poison:
            p()
        t = bench.time_kernel(fn, min_repeat=5, min_time=0.1, hide_launch=False)  # see _time
        row = {"n_ch": n_ch, "samples": n_s, "method": method, "launches": launches,
               **bench.bandwidth_row(nbytes, t), "rel_err": _rel_err(result(), ref),
               "us_per_launch": 1e3 * t.median_ms / launches,
               "floor_us_per_launch": 1e6 * nbytes / launches / (copy_gbps * 1e9)}
        if row["rel_err"] > 1e-4:
            raise AssertionError(f"{method} at N={n_ch}: relative error {row['rel_err']:.2e}")
        rows.append(row)
        progress(f"N={n_ch:4d} {method:40s} {t.median_ms:8.3f} ms  {row['gbps']:.0f} GB/s")

    views = [raw[k * n_ch:(k + 1) * n_ch] for k in range(n_ch)]
    out_views = [sums[k * n_ch:(k + 1) * n_ch] for k in range(n_ch)]

    def loop():
        for k in range(n_ch):
            row_sum[n_ch, block](views[k], out_views[k])

    add("row_sum kernel, a loop of N launches", n_ch, loop, sums.copy_to_host)
    add("row_sum kernel, one batched launch", 1,
        lambda: row_sum[n_ch * n_ch, block](raw, sums), sums.copy_to_host)
    ladder = _reduce_ladder_loop(raw, n_ch * n_ch, n_s) if n_ch * n_ch <= LADDER_MAX_CALLS else None
    if ladder is None:
        rows.append({"n_ch": n_ch, "method": "reduce ladder's v8 plan, a loop of N*N calls",
                     "ms": None, "note": f"skipped: {n_ch * n_ch:,} calls (measured at N=64), "
                                         "or the reduce chapter's plan() is not available"})
    else:
        loop_rows, all_rows, per_call = ladder
        add("reduce ladder's v8 plan, a loop of N*N calls", per_call * n_ch * n_ch, loop_rows,
            all_rows)
    if cp is not None:
        craw = cp.asarray(raw)  # a view of the same memory (no copy)
        ones = cp.ones(n_s, dtype=cp.float32)
        out = cp.empty(n_ch * n_ch, dtype=cp.float32)
        poison.append(lambda: out.fill(np.nan))

        def gemv_loop():
            for k in range(n_ch):
                cp.matmul(craw[k * n_ch:(k + 1) * n_ch], ones, out=out[k * n_ch:(k + 1) * n_ch])

        add("cuBLAS gemv (raw @ ones), a loop of N calls", n_ch, gemv_loop,
            lambda: cp.asnumpy(out))
        add("cuBLAS gemv (raw @ ones), one call", 1,
            lambda: cp.matmul(craw, ones, out=out), lambda: cp.asnumpy(out))
        add("CuPy raw.sum(axis=1)", 1, lambda: cp.sum(craw, axis=1, out=out),
            lambda: cp.asnumpy(out))
        cublas, handle = _cublas_module(), cp.cuda.device.get_cublas_handle()
        # the calls below run on the handle's stream with scalars read from the host: set both
        cublas.setStream(handle, cp.cuda.get_current_stream().ptr)
        cublas.setPointerMode(handle, _POINTER_MODE_HOST)
        article = _article_cublas_calls(cublas, handle, craw, ones, out, n_ch, n_s, cp)
        for method, launches, fn in article:
            add(method, launches, fn, lambda: cp.asnumpy(out))
    else:
        rows.append({"n_ch": n_ch, "method": "CuPy (cuBLAS, CUB)", "ms": None,
                     "note": "skipped: no CuPy"})
    return rows


def reduction_rows(res, n_ch: int | None = None) -> list[dict]:
    """The rows of a ``gdn_reduction`` result at ``n_ch`` channels (an older record, made
    at the headline's N only, has no ``n_ch`` column: its rows are at ``HEADLINE["n_ch"]``)."""
    v.result(res, "res")
    n_ch = HEADLINE["n_ch"] if n_ch is None else n_ch
    return [r for r in res.rows if r.get("n_ch", HEADLINE["n_ch"]) == n_ch]


def loop_against_batch(res, n_ch: int, loop: str, batch: str) -> dict:
    """Of ``gdn_reduction`` at ``n_ch``: the first row whose method starts with ``loop`` and the
    first with ``batch``, and ``ratio``, the loop's time over the batch's."""
    rows = [r for r in reduction_rows(res, n_ch) if r.get("ms")]
    try:
        a = next(r for r in rows if r["method"].startswith(loop))
        b = next(r for r in rows if r["method"].startswith(batch))
    except StopIteration:
        raise LookupError(f"gdn_reduction has no rows {loop!r} and {batch!r} at N={n_ch}: "
                          "record it again (python -m gpuperf.record --into-package "
                          "--only gdn_reduction).") from None
    return {"loop": a, "batch": b, "ratio": a["ms"] / b["ms"]}


# cuBLAS's enums (cublas_api.h): no transpose, transpose; scalars read from host memory.
_OP_N, _OP_T = 0, 1
_POINTER_MODE_HOST = 0


def _address(a) -> int:
    """The address of ``a``'s first element: a CuPy array's device pointer, a NumPy array's
    host pointer."""
    ptr = getattr(getattr(a, "data", None), "ptr", None)
    return int(ptr) if ptr is not None else int(a.ctypes.data)


def _cublas_module():
    """CuPy's thin binding of the cuBLAS C API (one Python function per routine)."""
    from cupy_backends.cuda.libs import cublas

    return cublas


def _article_cublas_calls(cublas, handle, raw, ones, out, n_ch: int, n_s: int, xp):
    """The article's comparison of the last step, called as cuBLAS's C API is:
    ``(method, launches, run)`` for a loop of ``n_ch`` matrix-vector products (one output row
    of the gradient each), one ``cublasSgemmBatched`` over arrays of pointers (the routine
    the article names), and one ``cublasSgemmStridedBatched`` (the same batch by strides).

    ``raw`` is row-major ``(n_ch * n_ch, n_s)``: output row ``k``'s ``n_ch`` rows start at
    ``raw + k * n_ch * n_s`` and, read column-major as cuBLAS reads, form an ``n_s x n_ch``
    matrix with leading dimension ``n_s``; its transpose times ``ones`` is that row's sums.
    The article's loop called ``cublasSsbmv`` (a symmetric banded matrix-vector product),
    which cannot sum a matrix's rows; ``cublasSgemv`` is the general matrix-vector product
    that does. ``xp``: the array module that holds the pointer arrays (CuPy; NumPy in the
    test's stand-in)."""
    alpha = np.ones(1, np.float32)
    beta = np.zeros(1, np.float32)
    a, b = alpha.ctypes.data, beta.ctypes.data
    base, x, y = _address(raw), _address(ones), _address(out)
    block_bytes = n_ch * n_s * 4

    def gemv_loop():
        for k in range(n_ch):
            cublas.sgemv(handle, _OP_T, n_s, n_ch, a, base + k * block_bytes, n_s, x, 1, b,
                         y + k * n_ch * 4, 1)

    pointers = xp.asarray(np.array([[base + k * block_bytes for k in range(n_ch)],
                                    [x] * n_ch, [y + k * n_ch * 4 for k in range(n_ch)]],
                                   dtype=np.uint64))

    def batched():
        cublas.sgemmBatched(handle, _OP_T, _OP_N, n_ch, 1, n_s, a, _address(pointers[0]), n_s,
                            _address(pointers[1]), n_s, b, _address(pointers[2]), n_ch, n_ch)

    def strided():
        cublas.sgemmStridedBatched(handle, _OP_T, _OP_N, n_ch, 1, n_s, a, base, n_s,
                                   n_ch * n_s, x, n_s, 0, b, y, n_ch, n_ch, n_ch)

    for fn in (gemv_loop, batched, strided):  # cuBLAS holds only their addresses
        fn.keeps_alive = (alpha, beta, pointers)
    return [("cuBLAS sgemv, a loop of N calls (the article's loop)", n_ch, gemv_loop),
            ("cuBLAS sgemmBatched, one call (the article's batched call)", 1, batched),
            ("cuBLAS sgemmStridedBatched, one call", 1, strided)]


def _reduce_ladder_loop(raw, n_rows, n_s):
    """The reduce chapter's best rung (its ``plan("v8", n)``) called once per row of ``raw``.

    Returns ``(run, result, launches_per_call)``, or None when the reduce module lacks that
    API. ``result`` re-runs the loop, gathering every row's sum (for the correctness check).
    """
    try:
        from gpuperf.kernels import reduce as reduce_chapter

        p = reduce_chapter.plan("v8", n_s)
    except Exception:  # the chapter is missing or its API changed: report, do not crash
        return None
    rows = [raw[r] for r in range(n_rows)]

    def run():
        for row in rows:
            p(row)

    def result():
        return np.array([p(row).copy_to_host()[0] for row in rows], np.float32)

    per_call = sum(1 for _, grid, _ in getattr(p, "launches", []) if grid) or 1
    return run, result, per_call


def headline_table(res):
    """The case study's table (list of dicts) from a ``gdn_algorithms`` result."""
    v.result(res, "res")
    for _c in ("n_ch", "side", "method"):
        v.column(res, _c, "res column")
    rows = res.select(n_ch=HEADLINE["n_ch"], side=HEADLINE["side"])
    table = []
    for r in rows:
        table.append({k: r.get(k) for k in ("method", "launches", "allocated_mb", "moved_mb",
                                             "ms", "floor_ms", "pct_floor", "gbps", "reduce_ms",
                                             "total_ms", "speedup_vs_previous", "rel_err",
                                             "note")})
    return table


def launch_bound_table(res) -> list[dict]:
    """Per sweep point of ``gdn_algorithms`` where both ran: algorithm 1's and algorithm 2's
    whole gradient (``replicate_ms``, ``per_channel_ms``), algorithm 2's time per launch
    without the reduction (its ``ms`` over its launches) against its floor per launch (its
    must-move bytes at copy speed, per launch), which of
    the two was faster, the larger of their spreads over the repeats (``spread_pct``, the
    interquartile range over the median, in %) and whether that spread is at least the gap
    between their whole gradients (``uncertain``: the verdict could go either way)."""
    v.result(res, "res")
    for c in ("n_ch", "side", "method", "ms", "total_ms", "floor_ms", "launches", "moved_mb"):
        v.column(res, c, "res column")
    table = []
    for n_ch, side in sorted({(r["n_ch"], r["side"]) for r in res.rows}):
        by = {r["method"]: r for r in res.select(n_ch=n_ch, side=side)}
        one, two = by.get("replicate"), by.get("per_channel")
        if not (one and two and one.get("total_ms") and two.get("total_ms")):
            continue  # algorithm 1 did not fit, or a method was not measured here
        spread = max(one.get("spread") or 0.0, two.get("spread") or 0.0)
        gap = max(one["total_ms"], two["total_ms"]) / min(one["total_ms"], two["total_ms"]) - 1
        table.append({
            "n_ch": n_ch, "side": side, "replicate_moved_mb": one["moved_mb"],
            "replicate_ms": one["total_ms"], "per_channel_ms": two["total_ms"],
            "launches": two["launches"],
            "us_per_launch": 1e3 * two["ms"] / two["launches"],
            "floor_us_per_launch": 1e3 * two["floor_ms"] / two["launches"],
            "faster": "per_channel" if two["total_ms"] < one["total_ms"] else "replicate",
            "spread_pct": 100 * spread, "uncertain": spread >= gap})
    return table


def show_launch_bound(res) -> list[dict]:
    """Show :func:`launch_bound_table`, with a count of the points each algorithm won under
    it; return the table."""
    from gpuperf.records import Result

    table = launch_bound_table(res)
    if not table:
        raise ValueError("res has no sweep point where both replicate and per_channel ran: "
                         "pass the gdn_algorithms result.")
    slower = sum(r["faster"] == "replicate" for r in table)
    per = [r["us_per_launch"] for r in table]
    note = (f"Algorithms 1 and 2 (ms): the whole gradient, reduction included. Time and floor "
            f"per launch: algorithm 2 alone, without the reduction, over its launches. The repeat "
            f"spread is the larger of the two algorithms'. Algorithm 2 was slower than algorithm 1 at "
            f"{slower} of {len(table)} points; its "
            f"time per launch ranged from {min(per):.0f} to {max(per):.0f} us, its floor per "
            f"launch from {min(r['floor_us_per_launch'] for r in table):.1f} to "
            f"{max(r['floor_us_per_launch'] for r in table):.1f} us.")
    unsure = [f"N = {r['n_ch']}, {r['side']} x {r['side']}" for r in table if r["uncertain"]]
    if unsure:
        note += (" Uncertain: the larger spread of the two algorithms' repeats is at least the "
                 f"gap between them ({'; '.join(unsure)}); a new measurement would settle it.")
    words = {"replicate": "1 replicate", "per_channel": "2 per channel"}
    shown = [{**r, "faster": words[r["faster"]] + (" (uncertain)" if r["uncertain"] else "")}
             for r in table]
    # Short headers: ten columns must fit the page's column at 1280 px.
    headers = {"n_ch": "channels N", "side": "image side", "replicate_moved_mb":
               "algorithm 1 moves (MB)", "replicate_ms": "algorithm 1 (ms)",
               "per_channel_ms": "algorithm 2 (ms)",
               "launches": "algorithm 2's launches", "us_per_launch": "alone, per launch (µs)",
               "floor_us_per_launch": "floor per launch (µs)",
               "spread_pct": "repeat spread (%)", "faster": "faster"}
    Result("gdn_algorithms (algorithms 1 and 2 over the sweep)", shown,
           res.meta,
           res.source).show(list(headers), headers=headers, note=note)
    return table


def _check_gdn_res(res, *columns):
    v.result(res, "res")
    for c in columns:
        v.column(res, c, "res column")
    return res


def determinism_summary(res) -> dict:
    """Print, per method of ``gdn_determinism``, how many distinct results its runs gave,
    how far apart they lie and their error against float64; return the rows by method."""
    _check_gdn_res(res, "method", "runs", "distinct_results", "max_rel_diff", "rel_err")
    by = {r["method"]: r for r in res.rows if r.get("runs")}
    lines = [f"{m}: {r['distinct_results']} distinct result(s) in {r['runs']} runs on the same "
             f"input; runs differ by up to {r['max_rel_diff']:.1e} of the largest entry; "
             f"median error against float64 {r['rel_err']:.1e}" for m, r in by.items()]
    lines.append(f"({res.label})")
    print("\n".join(lines))
    return by


def input_grad_summary(res) -> dict:
    """Print, per channel count of ``gdn_input_grad``, Numba's time against CuPy's and
    Numba's bandwidth against the copy ceiling; return ``{n_ch: {method: row}}``."""
    _check_gdn_res(res, "n_ch", "method", "ms", "gbps", "tflops")
    copy = res.ceilings.get("copy_gbps")
    out = {}
    for r in res.rows:
        out.setdefault(r["n_ch"], {})[r["method"].split()[0]] = r
    lines = []
    for n_ch, m in sorted(out.items()):
        nb = m.get("numba")
        line = (f"N={n_ch}: Numba {nb['ms']:.3f} ms ({nb['gbps']:.0f} GB/s"
                + (f", {100 * nb['gbps'] / copy:.0f}% of the copy ceiling" if copy else "")
                + f"; {nb['tflops']:.2f} TFLOP/s in the product)")
        if "cupy" in m:
            line += f", CuPy {m['cupy']['ms']:.3f} ms: Numba takes {nb['ms'] / m['cupy']['ms']:.2f}x"
        lines.append(line)
    lines.append(f"({res.label})")
    print("\n".join(lines))
    return out
