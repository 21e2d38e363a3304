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
from gpuperf.records import Result, experiment

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
                   "gbps_launch_counted": "GB/s", "ms_launch_counted_q1": "ms",
                   "ms_launch_counted_q3": "ms", "ms_launch_counted_min": "ms",
                   "ms_launch_counted_max": "ms", "spread_launch_counted": "",
                   "rounds_launch_counted": ""})
def size_sweep_experiment(progress):
    big_x, big_out = _cached_vectors(N_BIG)
    log2_sizes = list(range(12, 29, 2))

    def setup(log2_n):
        n = 2**log2_n
        x, out = big_x[:n], big_out[:n]
        grid, block = launch_config(n, method="grid_stride", block=256, blocks_per_sm=8)
        flush = n * 8 < 4 * (device.info().l2_bytes or 0)
        return n, (lambda: copy_grid_stride[grid, block](x, out)), flush

    def measure(log2_n):
        n, call, flush = setup(log2_n)
        t = bench.time_kernel(call, min_time=0.05, flush=flush)
        return {"n": n, "bytes": 8 * n, **bench.bandwidth_row(8 * n, t)}

    rows = bench.sweep(measure, {"log2_n": log2_sizes}, label="size", progress=progress)
    # The same calls with the host's launch work inside the events: what one call costs an
    # application that waits for it. The launch part varies from moment to moment, so the
    # sizes are timed in ROUNDS interleaved with each other (every round visits every size)
    # and the spread kept: a drift of the host then reaches every size alike instead of
    # landing on one of them.
    rounds = 7
    counted: dict[int, list[float]] = {k: [] for k in log2_sizes}
    for r in range(rounds):
        for k in (log2_sizes if r % 2 == 0 else log2_sizes[::-1]):
            _, call, flush = setup(k)
            counted[k] += bench.time_kernel(call, min_time=0.01, flush=flush,
                                            hide_launch=False).times_ms
        progress(f"launch counted, round {r + 1} of {rounds}")
    for row, k in zip(rows, log2_sizes):
        t = bench.Timing(counted[k])
        q1, _, q3 = np.quantile(t.times_ms, [0.25, 0.5, 0.75])
        row.update({"ms_launch_counted": t.median_ms,
                    "gbps_launch_counted": bench.gbps(8 * row["n"], t.median_ms),
                    "ms_launch_counted_q1": float(q1), "ms_launch_counted_q3": float(q3),
                    "ms_launch_counted_min": t.min_ms, "ms_launch_counted_max": t.max_ms,
                    "spread_launch_counted": t.spread, "rounds_launch_counted": rounds})
    return rows


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


def call_launch_part(sizes, share: float = 0.05) -> dict:
    """The launch part of one call of the copy, from ``sizes`` (``gridstride_size_sweep``).

    The *small* sizes are those whose bytes, at the largest size's bandwidth as one call, take
    less than ``share`` of the smallest size's call: their calls are their launch. Returns
    ``launch_us`` (the median of the small sizes' call times), ``small`` (their ``n``),
    ``lo_us`` and ``hi_us`` (the smallest and largest of those call times), ``gbps`` (the
    largest size's transfer rate: its bytes over its call time less ``launch_us``, so that the
    model ``launch_us + bytes / gbps`` meets the measured call at both ends of the sweep),
    ``gbps_call`` (the largest size's bandwidth as one call, launch included, which picks the
    small sizes) and ``has_spread`` (whether the record keeps the quartiles and range of each
    size's timed calls: ``gridstride_size_sweep`` recorded in interleaved rounds)."""
    validate.result(sizes, "sizes")
    for c in ("n", "ms_launch_counted", "gbps_launch_counted"):
        validate.column(sizes, c, "sizes column")
    validate.positive(share, "share")
    ordered = sorted(sizes.rows, key=lambda r: r["n"])
    gbps = ordered[-1]["gbps_launch_counted"]
    first_us = ordered[0]["ms_launch_counted"] * 1e3
    small = [r for r in ordered if 8 * r["n"] / (gbps * 1e3) < share * first_us] or ordered[:1]
    calls = [r["ms_launch_counted"] * 1e3 for r in small]
    launch_us = float(np.median(calls))
    top = ordered[-1]
    transfer_us = top["ms_launch_counted"] * 1e3 - launch_us
    if transfer_us <= 0:
        raise ValueError(f"the largest size's call ({top['ms_launch_counted'] * 1e3:.1f} us) is "
                         f"no longer than the small sizes' ({launch_us:.1f} us): the sweep's "
                         "largest size is too small to measure a transfer rate.")
    return {"launch_us": launch_us, "small": [r["n"] for r in small],
            "lo_us": min(calls), "hi_us": max(calls),
            "gbps": 8 * top["n"] / (transfer_us * 1e3), "gbps_call": gbps,
            "has_spread": all(r.get("ms_launch_counted_q1") is not None for r in ordered)}


def compare_call_model(fn, sizes) -> list[dict]:
    """Set ``fn(n, launch_us, gbps)`` (the call-time exercise's model) beside every size of
    ``sizes`` (``gridstride_size_sweep``, timed as one call with its launch), with the two
    numbers taken from the sweep itself (:func:`call_launch_part`): the median call time of
    the small sizes as ``launch_us`` and the largest size's transfer rate (its bytes over its
    call less ``launch_us``) as ``gbps``, so a right model meets both ends. Prints the
    largest miss, and whether the prediction lies in the middle half of the calls timed at
    that size (measurement variation) where the record keeps their quartiles; returns the rows (``n``,
    ``measured_us``, ``predicted_us``, ``ratio`` = measured / predicted, ``within_range``:
    None without the range)."""
    validate.function(fn, "fn", what="your model fn(n, launch_us, gbps)")
    part = call_launch_part(sizes)
    try:
        fn(sizes.rows[0]["n"], part["launch_us"], part["gbps"])
    except NotImplementedError:   # the student copy's placeholder: nothing to compare yet
        print(f"{getattr(fn, '__name__', 'fn')} is not implemented yet: replace "
              "`raise NotImplementedError()` with your model, then run this cell again.")
        return []
    launch_us, gbps = part["launch_us"], part["gbps"]
    ordered = sorted(sizes.rows, key=lambda r: r["n"])
    print(f"{sizes.gpu}: launch_us = {launch_us:.1f} (the median call of the "
          f"{len(part['small'])} smallest sizes), gbps = {gbps:,.0f} (the largest size's bytes over "
          "its call less launch_us)")
    rows = []
    for r in ordered:
        predicted = float(fn(r["n"], launch_us, gbps))
        measured = r["ms_launch_counted"] * 1e3
        lo, hi = r.get("ms_launch_counted_q1"), r.get("ms_launch_counted_q3")
        rows.append({"n": r["n"], "measured_us": measured, "predicted_us": predicted,
                     "ratio": measured / predicted,
                     "within_range": None if lo is None or hi is None
                     else bool(lo * 1e3 <= predicted <= hi * 1e3)})

    Result("your model against the size sweep", rows, sizes.meta, sizes.source).show(
        ["n", "measured_us", "predicted_us", "ratio"],
        headers={"n": "elements", "measured_us": "measured (µs)", "predicted_us": "your model (µs)",
                 "ratio": "measured / predicted"})
    worst = max(rows, key=lambda q: abs(math.log(q["ratio"])))
    verdict = {None: " (this record keeps no spread of the calls timed at each size: record "
                     "gridstride_size_sweep again to tell a miss from variation)",
               True: ", inside the middle half of the calls timed at that size: measurement "
                     "variation",
               False: ", outside the middle half of the calls timed at that size"}[worst["within_range"]]
    print(f"largest miss: n = {worst['n']:,}, measured {worst['ratio']:.2f}x the prediction"
          + verdict)
    return rows


@cuda.jit
def _sum_per_block(x, sums):
    """A read-only kernel for ``gridstride_flush``: a grid-stride sum of ``x``, one value per
    block in ``sums`` (blocks of ``_SUM_BLOCK`` threads)."""
    part = cuda.shared.array(256, np.float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    acc = np.float32(0.0)
    while i < x.size:
        acc += x[i]
        i += cuda.gridsize(1)
    part[tid] = acc
    cuda.syncthreads()
    s = 128
    while s > 0:
        if tid < s:
            part[tid] += part[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        sums[cuda.blockIdx.x] = part[0]


_SUM_BLOCK = 256
FLUSH_LOG2_SIZES = (22, 24, 26)  # float32 elements: 16 MiB, 64 MiB and 256 MiB per array


@experiment("gridstride_flush", chapter="measuring",
            title="Does the L2 flush bias the timing? A copy and a read-only sum after a "
                  "writing and after a read-only flush",
            units={"ms": "ms", "gbps": "GB/s", "spread": "", "bytes": "B"})
def flush_experiment(progress):
    """Each kernel (the grid-stride copy, and a read-only sum that writes one value per
    block) at each of ``FLUSH_LOG2_SIZES``, timed by ``time_kernel(..., flush=True)`` with
    the writing flush (``flush_kind="write"``: the L2 left full of dirty lines) and with the
    read-only one (``"read"``: clean lines), alternating the two three times so that a drift
    of the GPU's clocks shows as a spread, not as a difference. ``ms`` is the median of the
    three medians; ``spread`` the largest relative distance of one of them from it."""
    big_x, big_out = _cached_vectors(N_BIG)
    blocks = 8 * device.sm_count(default=2)
    sums = cuda.device_array(blocks, np.float32)
    rows = []
    for log2_n in FLUSH_LOG2_SIZES:
        n = 2**log2_n
        x, out = big_x[:n], big_out[:n]
        grid, block = launch_config(n, method="grid_stride", block=256, blocks_per_sm=8)
        kernels = {
            "copy": (lambda g=grid, b=block, a=x, o=out: copy_grid_stride[g, b](a, o), 8 * n),
            "read-only sum": (lambda a=x: _sum_per_block[blocks, _SUM_BLOCK](a, sums), 4 * n),
        }
        for name, (fn, nbytes) in kernels.items():
            medians = {"write": [], "read": []}
            for _ in range(3):
                for kind in medians:
                    t = bench.time_kernel(fn, flush=True, flush_kind=kind, min_time=0.05)
                    medians[kind].append(t.median_ms)
            for kind, ms in medians.items():
                mid = sorted(ms)[1]
                rows.append({"kernel": name, "flush": kind, "n": n, "bytes": nbytes, "ms": mid,
                             "gbps": bench.gbps(nbytes, mid),
                             "spread": max(abs(m / mid - 1) for m in ms)})
            progress(f"{name} n=2^{log2_n}: write flush {sorted(medians['write'])[1]:.4f} ms, "
                     f"read flush {sorted(medians['read'])[1]:.4f} ms")
    ref = x.copy_to_host().astype(np.float64).sum()
    if not np.isclose(sums.copy_to_host().astype(np.float64).sum(), ref, rtol=1e-3):
        raise AssertionError("the read-only sum is wrong")
    return rows


def flush_comparison(res) -> list[dict]:
    """``gridstride_flush`` per kernel and size: the time after the writing flush over the
    time after the read-only one (``write_over_read``), with the larger of the two spreads."""
    validate.result(res, "res")
    if res.name != "gridstride_flush":
        raise ValueError(f"res: give gp.records.run(\"gridstride_flush\"), not {res.name!r}.")
    rows = []
    for kernel in res.values("kernel"):
        for n in res.values("n"):
            w, r = res.one(kernel=kernel, n=n, flush="write"), res.one(kernel=kernel, n=n, flush="read")
            rows.append({"kernel": kernel, "n": n, "mib": w["bytes"] / 2**20,
                         "write_us": 1e3 * w["ms"], "read_us": 1e3 * r["ms"],
                         "write_over_read": w["ms"] / r["ms"],
                         "spread": max(w["spread"], r["spread"])})
    return rows
