"""Chapter 1's experiments: timing one copy, the launch sweep, the size sweep, the ceilings.

``gridstride_timing``: what the wall clock, the first call and CUDA events report.
``gridstride_launch_sweep``: blocks per SM x threads per block -> GB/s (``measure_launch``
measures one point).
``gridstride_size_sweep``: array size -> GB/s, timed with the launch left out and counted
(``compare_call_model`` sets the call-time exercise's model beside it).
``gridstride_ceilings``: the two ceilings of this GPU (copy and cuBLAS).
"""

from __future__ import annotations

import math
import time

import numpy as np
from numba import cuda

from gpuperf import bench, device, validate
from gpuperf.records import experiment

from .kernels import METHODS, copy_grid_stride, copy_one_per_thread, launch_config

N_BIG = 2**28  # 1 GiB of float32: far beyond any L2, so every run goes to DRAM


def _device_vectors(n: int, count: int):
    rng = np.random.default_rng(1)
    host = (rng.random(n, dtype=np.float32) * 3 - 1).astype(np.float32)
    d = cuda.to_device(host)
    return [d] + [cuda.device_array_like(d) for _ in range(count - 1)]


@experiment("gridstride_timing", chapter="measuring",
            title="Five ways to time one copy of 2^28 float32",
            units={"ms": "ms", "gbps": "GB/s"})
def timing_experiment(progress):
    n = N_BIG
    x, out = _cached_vectors(n)
    grid, block = launch_config(n, method="grid_stride", block=256, blocks_per_sm=8)
    nbytes = 2 * 4 * n
    # A kernel object Numba has never compiled: its first call includes the JIT.
    fresh = cuda.jit(copy_grid_stride.py_func)
    cuda.synchronize()
    t = time.perf_counter()
    fresh[grid, block](x, out)
    cuda.synchronize()
    first_ms = (time.perf_counter() - t) * 1e3
    progress(f"first call, JIT included: {first_ms:.0f} ms")
    t = time.perf_counter()
    fresh[grid, block](x, out)  # returns as soon as the launch is queued
    no_sync_ms = (time.perf_counter() - t) * 1e3
    cuda.synchronize()
    reps = 20
    t = time.perf_counter()
    for _ in range(reps):
        fresh[grid, block](x, out)
    cuda.synchronize()
    sync_ms = (time.perf_counter() - t) * 1e3 / reps
    ev = bench.time_kernel(lambda: fresh[grid, block](x, out))
    counted = bench.time_kernel(lambda: fresh[grid, block](x, out), hide_launch=False)
    rows = [
        {"method": "wall clock, first call (includes compilation)", "ms": first_ms},
        {"method": "wall clock, no synchronize (launch only)", "ms": no_sync_ms},
        {"method": "wall clock around 20 calls + synchronize", "ms": sync_ms},
        {"method": "CUDA events, median of repeats", "ms": ev.median_ms},
        {"method": "CUDA events, launch inside the span", "ms": counted.median_ms},
    ]
    for r in rows:
        r["gbps"] = bench.gbps(nbytes, r["ms"])
    progress(f"events: {ev}")
    return rows


def measure_launch(method: str = "grid_stride", block: int = 256, blocks_per_sm: int | None = 8,
                   n: int = N_BIG) -> dict:
    """Time one launch configuration of the copy on ``n`` float32 (GPU only); one sweep row."""
    validate.choice(method, "method", METHODS)
    validate.block_size(block)
    if blocks_per_sm is not None:
        validate.positive_int(blocks_per_sm, "blocks_per_sm", maximum=64)
    validate.positive_int(n, "n")
    bench.require_gpu("measure_launch")
    x, out = _cached_vectors(n)
    grid, blk = launch_config(n, method=method, block=block, blocks_per_sm=blocks_per_sm or 1)
    kernel = copy_one_per_thread if method == "one_per_thread" else copy_grid_stride
    t = bench.time_kernel(lambda: kernel[grid, blk](x, out), min_time=0.1)
    return {"blocks": grid, **bench.bandwidth_row(2 * 4 * n, t)}


_vectors: dict = {}


def _cached_vectors(n: int):
    if n not in _vectors:
        _vectors.clear()  # hold one pair at a time: these are gigabytes
        _vectors[n] = _device_vectors(n, 2)
    return _vectors[n]


@experiment("gridstride_launch_sweep", chapter="measuring",
            title="Grid-stride copy of 2^28 float32: blocks per SM x threads per block",
            units={"ms": "ms", "gbps": "GB/s", "pct_copy": "% of copy", "pct_peak": "% of peak"})
def launch_sweep_experiment(progress):
    blocks = [64, 128, 256, 512, 1024]
    rows = bench.sweep(measure_launch, {"method": ["grid_stride"], "block": blocks,
                                        "blocks_per_sm": [1, 2, 4, 8, 16, 32]},
                       label="grid-stride", progress=progress)
    rows += bench.sweep(measure_launch, {"method": ["one_per_thread"], "block": blocks,
                                         "blocks_per_sm": [None]},
                        label="one-per-thread", progress=progress)
    x, out = _cached_vectors(N_BIG)
    if not np.array_equal(x.copy_to_host(), out.copy_to_host()):
        raise AssertionError("the copy kernels produced a wrong result during the sweep")
    return rows


@experiment("gridstride_size_sweep", chapter="measuring",
            title="Grid-stride copy: GB/s against array size (2^12 to 2^28 float32)",
            units={"ms": "ms", "gbps": "GB/s", "bytes": "B", "ms_launch_counted": "ms",
                   "gbps_launch_counted": "GB/s"})
def size_sweep_experiment(progress):
    big_x, big_out = _cached_vectors(N_BIG)

    def measure(log2_n):
        n = 2**log2_n
        x, out = big_x[:n], big_out[:n]
        grid, block = launch_config(n, method="grid_stride", block=256, blocks_per_sm=8)
        flush = n * 8 < 4 * (device.info().l2_bytes or 0)
        t = bench.time_kernel(lambda: copy_grid_stride[grid, block](x, out), min_time=0.05,
                              flush=flush)
        # The same call with the host's launch work inside the events: what one call costs
        # an application that waits for it.
        counted = bench.time_kernel(lambda: copy_grid_stride[grid, block](x, out),
                                    min_time=0.05, flush=flush, hide_launch=False)
        return {"n": n, "bytes": 8 * n, **bench.bandwidth_row(8 * n, t),
                "ms_launch_counted": counted.median_ms,
                "gbps_launch_counted": bench.gbps(8 * n, counted.median_ms)}

    return bench.sweep(measure, {"log2_n": list(range(12, 29, 2))}, label="size",
                       progress=progress)


@experiment("gridstride_ceilings", chapter="measuring",
            title="The ceilings: theoretical DRAM peak, device-to-device copy, cuBLAS FP32",
            units={"value": ""})
def ceilings_experiment(progress):
    c = bench.ceilings()
    d = device.info()
    progress(f"copy {c['copy_gbps']:.0f} GB/s")
    return [
        {"ceiling": "theoretical DRAM peak", "value": c["peak_gbps"], "unit": "GB/s",
         "how": f"{d.memory_clock_khz / 1e3:.0f} MHz x {d.bus_width_bits} bit x 2"},
        {"ceiling": "device-to-device copy (cudaMemcpy)", "value": c["copy_gbps"], "unit": "GB/s",
         "how": "1 GiB copied; bytes read + bytes written"},
        {"ceiling": "cuBLAS SGEMM (CuPy, FP32)", "value": c["matmul_tflops"], "unit": "TFLOP/s",
         "how": "4096 x 4096 x 4096, 2 n^3 operations"},
    ]


def compare_call_model(fn, sizes) -> list[dict]:
    """Set ``fn(n, launch_us, gbps)`` (the call-time exercise's model) beside every size of
    ``sizes`` (``gridstride_size_sweep``, timed as one call with its launch), with the two
    numbers taken from the sweep itself: the smallest size's time as ``launch_us`` and the
    largest size's bandwidth as ``gbps``. Prints one line per size and the largest miss;
    returns the rows (``n``, ``measured_us``, ``predicted_us``, ``ratio`` = measured /
    predicted)."""
    validate.function(fn, "fn", what="your model fn(n, launch_us, gbps)")
    validate.result(sizes, "sizes")
    for c in ("n", "ms_launch_counted", "gbps_launch_counted"):
        validate.column(sizes, c, "sizes column")
    ordered = sorted(sizes.rows, key=lambda r: r["n"])
    launch_us = ordered[0]["ms_launch_counted"] * 1e3
    gbps = ordered[-1]["gbps_launch_counted"]
    print(f"{sizes.gpu}: launch_us = {launch_us:.1f} (the smallest size as one call), "
          f"gbps = {gbps:,.0f} (the largest size as one call)")
    print(f"{'n':>13s} {'measured us':>12s} {'predicted us':>13s} {'measured / predicted':>21s}")
    rows = []
    for r in ordered:
        predicted = float(fn(r["n"], launch_us, gbps))
        measured = r["ms_launch_counted"] * 1e3
        rows.append({"n": r["n"], "measured_us": measured, "predicted_us": predicted,
                     "ratio": measured / predicted})
        print(f"{r['n']:13,d} {measured:12.1f} {predicted:13.1f} {measured / predicted:21.2f}")
    worst = max(rows, key=lambda q: abs(math.log(q["ratio"])))
    print(f"largest miss: n = {worst['n']:,}, measured {worst['ratio']:.2f}x the prediction")
    return rows
