"""Timing GPU work honestly: CUDA events, warm-up, repeats, medians and ceilings.

The protocol (DESIGN.md):

* Events, never the wall clock: a launch returns before the kernel runs.
* Warm up first: the first call of a Numba kernel compiles it (about a second).
* Repeat (at least ``min_repeat`` runs and ``min_time`` seconds); report the median,
  keep the minimum and the spread.
* Optionally scribble over a buffer twice the L2's size between runs, so that a
  working set that fits in L2 is not served from it.
* Bandwidth counts the fewest bytes the operation must move (each input read once,
  each output written once), in GB/s = 1e9 B/s, against two ceilings: the
  theoretical peak and the measured device-to-device copy.
"""

from __future__ import annotations

import functools
import itertools
import statistics
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from . import validate as v
from .mode import SIMULATOR


class NeedsGPU(RuntimeError):
    """Timing was asked for where there is no GPU to time."""


def require_gpu(what: str) -> None:
    """Raise ``NeedsGPU`` at once, saying what to do instead, unless a real GPU runs kernels
    here: anything that measures calls it first (a simulated launch at a measuring size can
    take minutes before any timing would fail)."""
    from .mode import MODE

    v.string(what, "what")

    if MODE == "compile":
        raise NeedsGPU(
            f"{what} measures a real GPU, and there is none in this session (GPUPERF_MODE="
            "compile, or numba.cuda was imported before gpuperf on a machine without a GPU): "
            "kernels compile but cannot run. Use gp.records.run(<experiment>) for the recorded "
            "results, or run on a GPU."
        )
    if SIMULATOR:
        raise NeedsGPU(
            f"{what} measures a real GPU, and this session runs on Numba's CUDA simulator, "
            "whose timings mean nothing. Use gp.records.run(<experiment>) to see the results "
            "recorded on the reference GPU, or run on a GPU (on Colab: Runtime > Change "
            "runtime type > T4 GPU)."
        )


@dataclass
class Timing:
    """Times of repeated runs of one piece of GPU work, in milliseconds."""

    times_ms: list[float] = field(repr=False)

    def __post_init__(self):
        times = v.sequence(self.times_ms, "times_ms")
        for i, t in enumerate(times):
            v.nonnegative(t, f"times_ms[{i}]")
        self.times_ms = times

    @property
    def n(self) -> int:
        return len(self.times_ms)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times_ms)

    @property
    def min_ms(self) -> float:
        return min(self.times_ms)

    @property
    def max_ms(self) -> float:
        return max(self.times_ms)

    @property
    def spread(self) -> float:
        """Interquartile range over the median: 0.02 means the middle half is within 2%."""
        if self.n < 4:
            return (self.max_ms - self.min_ms) / self.median_ms if self.median_ms else 0.0
        q = statistics.quantiles(self.times_ms, n=4)
        return (q[2] - q[0]) / self.median_ms if self.median_ms else 0.0

    def __repr__(self) -> str:
        return (f"Timing(median={self.median_ms:.4g} ms, min={self.min_ms:.4g} ms, "
                f"spread={self.spread:.1%}, n={self.n})")


@functools.lru_cache(maxsize=1, typed=True)
def _flush_buffer():
    from numba import cuda

    from . import device

    nbytes = 2 * (device.info().l2_bytes or 64 * 2**20)
    return cuda.device_array(nbytes // 4, dtype=np.float32)


# The writing flush's kernel, by the name CUPTI and Nsight see it under (to leave it out).
FLUSH_WRITE_KERNEL_NAME = "scribble"


@functools.lru_cache(maxsize=1, typed=True)
def _scribble_kernel():
    from numba import cuda

    @cuda.jit
    def scribble(buf, value):
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        while i < buf.size:
            buf[i] = value
            i += stride

    return scribble


# The read-only flush's kernel, by the name CUPTI and Nsight see it under.
FLUSH_READ_KERNEL_NAME = "skim"
FLUSH_KINDS = ("write", "read")
# The flush every timing uses unless told otherwise. Chapter 1's ``gridstride_flush`` found that
# after the writing flush a short kernel is charged with the write-back of its dirty lines
# (a 32 MiB copy took 1.33 times as long on the H200); the read-only flush leaves clean lines.
# Records carry the kind they were made with (``records.provenance()["l2_flush"]``).
DEFAULT_FLUSH = "read"
# Every flush kernel's name, to leave flushes out of a profile or a CUPTI trace.
FLUSH_KERNEL_NAMES = ("scribble", "skim")
_SKIM_BLOCK = 256


@functools.lru_cache(maxsize=1, typed=True)
def _skim_kernel():
    from numba import cuda, float32

    never = float32(-1.2345e-38)  # a sum no buffer of flush_l2's gives

    @cuda.jit
    def skim(buf, sums):
        # Read every element (a grid-stride sum); write one value per block (thread 0's, or
        # any thread's whose sum is `never`, so that no thread's loads are dead code): the L2
        # ends up holding clean lines of buf, which it can drop later without a write-back.
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        acc = float32(0.0)
        while i < buf.size:
            acc += buf[i]
            i += stride
        if cuda.threadIdx.x == 0 or acc == never:
            sums[cuda.blockIdx.x] = acc

    return skim


@functools.lru_cache(maxsize=1, typed=True)
def _skim_sums():
    from numba import cuda

    return cuda.device_array(1024, dtype=np.float32)


@v.checks(kind=v.OneOf(FLUSH_KINDS))
def flush_l2(kind: str = DEFAULT_FLUSH) -> None:
    """Evict whatever the last run left in the L2, with a buffer twice the L2's size.

    ``kind="read"`` (the default) reads the buffer (a sum that writes one value per block): the
    lines it leaves are clean, and the next kernel pays nothing for them. ``kind="write"``
    overwrites the buffer: the L2 is left full of dirty lines, which are written back to DRAM
    while the next, timed kernel runs (chapter 1's ``gridstride_flush`` measures the bias)."""
    require_gpu("flush_l2")
    buf = _flush_buffer()
    if kind == "read":
        _skim_kernel()[1024, _SKIM_BLOCK](buf, _skim_sums())
    else:
        _scribble_kernel()[1024, 256](buf, np.float32(1.0))


@functools.lru_cache(maxsize=1, typed=True)
def _hold_kernel():
    from numba import cuda

    @cuda.jit
    def hold(cell, steps):
        # One thread, a chain of dependent multiply-adds: a fixed time, no memory traffic.
        if cuda.grid(1) == 0:
            z = cell[0]
            for _ in range(steps):
                z = z * np.float32(0.5) + np.float32(0.5)
            cell[0] = z

    return hold


@functools.lru_cache(maxsize=1, typed=True)
def _hold_rate():
    """(the hold kernel's buffer, its steps per microsecond on this GPU)."""
    from numba import cuda

    cell = cuda.to_device(np.ones(1, np.float32))
    hold = _hold_kernel()
    steps = 1 << 20
    hold[1, 1](cell, steps)  # compiles
    cuda.synchronize()
    start, end = cuda.event(), cuda.event()
    start.record()
    hold[1, 1](cell, steps)
    end.record()
    end.synchronize()
    return cell, steps / (start.elapsed_time(end) * 1e3)


def hold_gpu(us: float) -> None:
    """Enqueue, on the default stream, a one-thread kernel that keeps the GPU busy for about
    ``us`` microseconds. An event recorded after it completes only when it ends, so work
    the host issues meanwhile is already queued when the event's clock starts."""
    v.positive(us, "us")
    require_gpu("hold_gpu")
    cell, rate = _hold_rate()
    _hold_kernel()[1, 1](cell, max(1, int(us * rate)))


HOLD_MAX_US = 10_000.0  # a hold longer than this would only slow the measurement down


@v.checks(fn=v.Fn("a callable that launches the GPU work, e.g. lambda: kern[g, b](x)"),
          warmup=v.Int(0), min_repeat=v.Int(1), min_time=v.Num(0), max_repeat=v.Int(1),
          flush=v.Bool(), hide_launch=v.Bool(), flush_kind=v.OneOf(FLUSH_KINDS))
def time_kernel(fn, *, warmup: int = 2, min_repeat: int = 10, min_time: float = 0.2,
                max_repeat: int = 1000, flush: bool = False,
                hide_launch: bool = True, flush_kind: str = DEFAULT_FLUSH) -> Timing:
    """Time ``fn()``, a callable that enqueues GPU work on the default stream.

    Each run is bracketed by CUDA events; the function returns once at least
    ``min_repeat`` runs and ``min_time`` seconds of measured GPU time are collected
    (or ``max_repeat`` runs). ``flush=True`` evicts L2 before each run, with
    ``flush_l2(flush_kind)`` (``"read"``, the default, or ``"write"``).

    On an idle GPU the start event completes at once, and the kernel starts only when the
    host has finished launching it, so a plain event span holds the host's launch work (tens
    of microseconds in Numba): enough to make a kernel shorter than a millisecond or so read
    slow. By default (``hide_launch=True``) that is left out: before each start event this
    enqueues :func:`hold_gpu` for twice the host time that ``fn()`` took in the last warm-up
    call plus 20 us (at most ``HOLD_MAX_US``), so the event's clock starts when the work is
    already queued, and the time is the GPU's. Count the launch (``hide_launch=False``) to
    time what an application that issues one call and waits for it sees, or a sequence of
    launches each shorter than its launch, where the host, not the GPU, sets the pace.
    With ``flush=True`` and the launch counted, the flush is waited for before the start event:
    a flush still running would hide the launch (in part or whole, as the two race).
    """
    require_gpu("time_kernel")
    from numba import cuda

    host_s = 0.0
    for _ in range(max(warmup, 1)):
        t = time.perf_counter()
        fn()
        host_s = time.perf_counter() - t  # the last call's: the first may have compiled
    cuda.synchronize()
    hold_us = min(2e6 * host_s + 20.0, HOLD_MAX_US)
    times: list[float] = []
    total = 0.0
    start, end = cuda.event(), cuda.event()
    while len(times) < max_repeat and (len(times) < min_repeat or total < min_time * 1e3):
        if flush:
            flush_l2(flush_kind)
            if not hide_launch:
                # The flush would otherwise still be running while the host launches, and
                # hide part or all of the launch that this timing means to count.
                cuda.synchronize()
        if hide_launch:
            hold_gpu(hold_us)
        start.record()
        fn()
        end.record()
        end.synchronize()
        ms = start.elapsed_time(end)
        times.append(ms)
        total += ms
    return Timing(times)


@v.checks(nbytes=v.Num(0), ms=v.Pos())
def gbps(nbytes: float, ms: float) -> float:
    """Bytes moved in ``ms`` milliseconds, in GB/s (1 GB = 1e9 bytes)."""
    return nbytes / (ms * 1e-3) / 1e9


@v.checks(flops=v.Num(0), ms=v.Pos())
def tflops(flops: float, ms: float) -> float:
    """Floating-point operations in ``ms`` milliseconds, in TFLOP/s."""
    return flops / (ms * 1e-3) / 1e12


def bandwidth_row(nbytes: float, timing: Timing) -> dict:
    """The standard columns for a memory-bound measurement: time, GB/s, % of both ceilings."""
    v.positive(nbytes, "nbytes")
    if not isinstance(timing, Timing):
        raise TypeError(f"timing must be a Timing from bench.time_kernel(...), not "
                        f"{type(timing).__name__}.")
    c = ceilings()
    bw = gbps(nbytes, timing.median_ms)
    return {
        "ms": timing.median_ms,
        "ms_min": timing.min_ms,
        "spread": timing.spread,
        "gbps": bw,
        "pct_copy": 100 * bw / c["copy_gbps"],
        "pct_peak": 100 * bw / c["peak_gbps"] if c.get("peak_gbps") else None,
    }


@v.checks(nbytes=v.Int(4))
def measure_copy(nbytes: int = 2**30) -> Timing:
    """Time a device-to-device ``cudaMemcpyAsync`` of ``nbytes``: the practical ceiling.

    Through CuPy's runtime binding when CuPy is installed, else through Numba's driver
    binding on a stream. Numba's synchronous ``copy_to_device`` is not used: on an H200
    it measured 2970 GB/s at 1 GiB where the asynchronous copy measured 4192 GB/s (one
    run, 2026-11-21), because the synchronous call adds a fixed host-side delay.
    """
    require_gpu("measure_copy")
    from numba import cuda

    n = nbytes // 4
    src = cuda.to_device(np.random.default_rng(0).random(n, dtype=np.float32))
    dst = cuda.device_array_like(src)
    try:
        import cupy as cp

        a, b = cp.asarray(src), cp.asarray(dst)
        kind = cp.cuda.runtime.memcpyDeviceToDevice
        return time_kernel(lambda: cp.cuda.runtime.memcpyAsync(b.data.ptr, a.data.ptr, nbytes,
                                                                kind, 0))
    except ImportError:
        stream = cuda.stream()  # a blocking stream: events on stream 0 bracket its work
        return time_kernel(lambda: dst.copy_to_device(src, stream=stream))


@v.checks(n=v.Int(1))
def measure_cublas_sgemm(n: int = 4096):
    """Time CuPy's float32 matrix product (cuBLAS SGEMM, no TF32); None without CuPy."""
    require_gpu("measure_cublas_sgemm")
    try:
        import cupy as cp
    except ImportError:
        return None
    rng = cp.random.default_rng(0)
    a = rng.random((n, n), dtype=cp.float32) - 0.5
    b = rng.random((n, n), dtype=cp.float32) - 0.5
    c = cp.empty((n, n), dtype=cp.float32)

    def run():  # on CuPy's current stream, the legacy default stream that time_kernel uses
        cp.matmul(a, b, out=c)

    # time_kernel, as every kernel it is compared with: the launch left out (it dominated
    # below n = 1024, where one product takes tens of microseconds).
    return time_kernel(run, warmup=3, min_repeat=10, min_time=0.05)


@functools.lru_cache(maxsize=1, typed=True)
def ceilings() -> dict:
    """The two ceilings every chapter compares against, measured once per process.

    ``copy_gbps``: device-to-device copy of 1 GiB (bytes read + bytes written).
    ``peak_gbps``: memory clock x bus width x 2. ``matmul_tflops``: cuBLAS FP32 at
    4096^3 through CuPy, or None without CuPy.
    """
    require_gpu("ceilings")
    from . import device

    nbytes = 2**30
    copy = measure_copy(nbytes)
    sgemm = measure_cublas_sgemm(4096)
    return {
        "copy_gbps": gbps(2 * nbytes, copy.median_ms),
        "copy_bytes": nbytes,
        "peak_gbps": device.info().peak_gbps,
        "matmul_tflops": None if sgemm is None else tflops(2 * 4096**3, sgemm.median_ms),
        "matmul_n": 4096,
    }


def _default_progress(message: str) -> None:
    print(message, file=sys.stdout, flush=True)


def sweep(measure, grid: dict, *, label: str = "", progress=None) -> list[dict]:
    """Call ``measure(**params)`` for every combination in ``grid``; return tidy rows.

    ``grid`` maps parameter names to lists of values. Each row is the parameters
    merged with the dict ``measure`` returns. Progress is reported as
    ``[3/12] label block=256 ...  2803 GB/s`` through ``progress`` (print by default;
    pass ``False`` for silence).
    """
    v.function(measure, "measure", what="a function measure(**params) -> dict")
    v.string(label, "label", empty=True)
    if progress is not None and progress is not False:
        v.function(progress, "progress", what="a callable taking one status string, or False")
    if not isinstance(grid, dict) or not grid:
        raise ValueError("grid must be a non-empty dict mapping parameter names to lists of "
                         "values, e.g. {'block': [128, 256], 'blocks_per_sm': [1, 2, 4]}.")
    for key, values in grid.items():
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise TypeError(f"grid[{key!r}] must be a list of values, not {values!r}.")
        if not list(values):
            raise ValueError(f"grid[{key!r}] is empty, so the sweep would measure nothing; "
                             f"give at least one value, e.g. grid[{key!r}] = [256].")
    report = _default_progress if progress is None else (progress or (lambda _m: None))
    names = list(grid)
    combos = list(itertools.product(*(list(grid[k]) for k in names)))
    rows = []
    t0 = time.perf_counter()
    for i, values in enumerate(combos, 1):
        params = dict(zip(names, values))
        result = measure(**params)
        if not isinstance(result, dict):
            raise TypeError(f"measure(**{params}) returned {type(result).__name__}; it must "
                            "return a dict of measurements, e.g. {'ms': ..., 'gbps': ...}.")
        row = {**params, **result}
        rows.append(row)
        shown = " ".join(f"{k}={v}" for k, v in params.items())
        extra = f"  {row['gbps']:.0f} GB/s" if isinstance(row.get("gbps"), float) else ""
        if isinstance(row.get("tflops"), float):
            extra += f"  {row['tflops']:.2f} TFLOP/s"
        report(f"[{i}/{len(combos)}] {label} {shown}{extra}  ({time.perf_counter() - t0:.0f} s)")
    return rows
