"""Chapter 1, "Measuring GPU performance": copies, the grid-stride loop, and timing.

Kernels
-------
``copy_one_per_thread``: one element per thread; the grid must cover the array.
``copy_grid_stride``: each thread walks the array in steps of the whole grid, so any
grid (even ``[1, 1]``, handy for debugging) covers any size, and the grid can be
sized to the GPU (blocks per SM) instead of to the data.
``saxpy_grid_stride``: ``out = a * x + y``, the chapter's exercise.
``read_passes`` and the on-chip reads (``shared_read4``, ``shared_read16``, ``l1_read4``,
``l1_read16``, ``mixed_read16``): the L2's, shared memory's and the L1's read roofs for chapter 4's roofline
(experiments ``profiling_l2_bandwidth`` and ``profiling_onchip_roofs``).

Experiments
-----------
``gridstride_timing``: what the wall clock, the first call and CUDA events report.
``gridstride_launch_sweep``: blocks per SM x threads per block -> GB/s.
``gridstride_size_sweep``: array size -> GB/s, timed with the launch left out and counted.
``gridstride_ceilings``: the two ceilings of this GPU (copy and cuBLAS).
"""

from __future__ import annotations

import math
import time

import numpy as np
from numba import cuda, float32  # gpuperf/__init__ has already chosen the mode

from .. import bench, device, validate
from .. import exercises as ex
from ..mode import SIMULATOR
from ..records import experiment
from ..vector import load4, load_float4


@cuda.jit
def copy_one_per_thread(x, out):
    i = cuda.grid(1)
    if i < x.size:  # the last block hangs over the end of the array
        out[i] = x[i]


@cuda.jit
def copy_grid_stride(x, out):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)  # threads in the whole grid
    while i < x.size:
        out[i] = x[i]
        i += stride


@cuda.jit
def saxpy_grid_stride(a, x, y, out):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < x.size:
        out[i] = a * x[i] + y[i]
        i += stride


_COPY_SIG = "void(float32[::1], float32[::1])"
PTX_TARGETS = [
    (copy_one_per_thread, _COPY_SIG),
    (copy_grid_stride, _COPY_SIG),
    (saxpy_grid_stride, "void(float32, float32[::1], float32[::1], float32[::1])"),
]

METHODS = ("one_per_thread", "grid_stride")


def launch_config(n: int, *, method: str = "grid_stride", block: int = 256,
                  blocks_per_sm: int = 8) -> tuple[int, int]:
    """Blocks and threads for ``n`` elements.

    One element per thread needs ``ceil(n / block)`` blocks. A grid-stride kernel
    gets a grid sized to the GPU: ``blocks_per_sm`` blocks on every SM (never more
    blocks than the data needs).
    """
    validate.positive_int(blocks_per_sm, "blocks_per_sm", maximum=64)
    n = validate.positive_int(n, "n")
    validate.choice(method, "method", METHODS)
    block = validate.block_size(block)
    blocks_needed = (n + block - 1) // block
    if method == "one_per_thread":
        return blocks_needed, block
    blocks_per_sm = validate.positive_int(blocks_per_sm, "blocks_per_sm", maximum=64)
    return min(blocks_needed, blocks_per_sm * device.sm_count(default=2)), block


def copy(x, out=None, *, method: str = "grid_stride", block: int = 256,
         blocks_per_sm: int = 8, blocks: int | None = None):
    """Copy the float32 vector ``x`` into ``out`` (allocated if None) with one of the kernels.

    ``blocks`` overrides the grid (grid-stride only; ``blocks=1, block=1`` runs the
    whole copy on one thread, the debugging configuration).
    """
    validate.choice(method, "method", METHODS)
    validate.block_size(block)
    validate.positive_int(blocks_per_sm, "blocks_per_sm", maximum=64)
    x = validate.array(x, name="x")
    if out is None:
        out = cuda.device_array_like(x) if not isinstance(x, np.ndarray) else np.empty_like(x)
    out = validate.array(out, name="out")
    validate.same_shape(x, out, ("x", "out"))
    if blocks is not None:
        if method != "grid_stride":
            raise ValueError("blocks= only applies to method='grid_stride': a one-per-thread "
                             "kernel needs exactly ceil(n / block) blocks.")
        grid = validate.positive_int(blocks, "blocks")
        block = validate.block_size(block)
    else:
        grid, block = launch_config(x.size, method=method, block=block,
                                    blocks_per_sm=blocks_per_sm)
    kernel = copy_one_per_thread if method == "one_per_thread" else copy_grid_stride
    kernel[grid, block](x, out)
    return out


# --------------------------------------------------------------------------- experiments

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
    bench._require_gpu("measure_launch")
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


@cuda.jit
def read_passes(x, passes, step, out):
    """Read ``x`` (float32, a multiple of 4 elements) ``passes`` times with 16-byte loads and
    write each thread's sum to ``out[thread]``, so that no load can be dropped. The L2's read
    bandwidth (``profiling_l2_bandwidth``): a buffer that fits in the L2, read again and again.

    Pass ``p`` moves every thread's grid-stride share ``p * step`` quads along (mod the buffer):
    without it each SM would read the same addresses in every pass, and its L1, not the L2,
    would serve them. Four passes go together, so four loads are in flight even when a pass
    gives a thread one quad."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    quads = x.size // 4
    acc = float32(0.0)
    shift = 0   # p * step mod quads, for the group's first pass
    for _ in range(passes // 4):
        s1 = shift + step
        if s1 >= quads:
            s1 -= quads
        s2 = s1 + step
        if s2 >= quads:
            s2 -= quads
        s3 = s2 + step
        if s3 >= quads:
            s3 -= quads
        k = start
        while k < quads:
            q0, q1, q2, q3 = k + shift, k + s1, k + s2, k + s3
            q0 = q0 - quads if q0 >= quads else q0
            q1 = q1 - quads if q1 >= quads else q1
            q2 = q2 - quads if q2 >= quads else q2
            q3 = q3 - quads if q3 >= quads else q3
            a = load_float4(x, 4 * q0)
            b = load_float4(x, 4 * q1)
            c = load_float4(x, 4 * q2)
            d = load_float4(x, 4 * q3)
            acc += ((a[0] + a[1] + a[2] + a[3]) + (b[0] + b[1] + b[2] + b[3])
                    + (c[0] + c[1] + c[2] + c[3]) + (d[0] + d[1] + d[2] + d[3]))
            k += stride
        shift = s3 + step
        if shift >= quads:
            shift -= quads
    for _ in range(passes % 4):
        k = start
        while k < quads:
            q = k + shift
            q = q - quads if q >= quads else q
            a = load_float4(x, 4 * q)
            acc += a[0] + a[1] + a[2] + a[3]
            k += stride
        shift += step
        if shift >= quads:
            shift -= quads
    if start < out.size:
        out[start] = acc


def read_step(quads: int) -> int:
    """``read_passes``'s shift between passes for a buffer of ``quads`` 16-byte quads: about
    0.618 of the buffer (successive passes land far from each other), a multiple of 32 quads
    (a warp's loads stay 512-byte aligned), less than ``quads``."""
    quads = validate.positive_int(quads, "quads")
    return int(quads * 0.6180339887) // 32 * 32 % quads


PTX_TARGETS.append((read_passes, "void(float32[::1], int64, int64, float32[::1])"))


# The SMs' own roofs: how fast shared memory and the L1 cache deliver bytes (the roofs inside
# the SM on chapter 4's roofline). Every thread of every block reads a 16 KiB buffer again and
# again, a warp's 32 lanes on 32 consecutive slots (one 128-byte wavefront per 4-byte load,
# four per 16-byte load: no bank conflict), from shared memory or from a global buffer, which
# after its first touch stays in each SM's L1 (global loads are cached there by default).
# Each read's address moves with the loop counter by a runtime step, so the compiler cannot
# hoist a load out of the loop, and every thread adds what it reads and stores the sum.
ONCHIP_WORDS = 4096              # 16 KiB of float32
ONCHIP_QUADS = ONCHIP_WORDS // 4
ONCHIP_UNROLL = 8
# The unrolled reads of one trip must land on ONCHIP_UNROLL distinct slots: the compiler loads
# equal addresses once (with one stride for both widths, the 16-byte kernels' reads k and k + 2
# coincided, a quarter of the loads were executed, and the rate read four times too high).
_WORD_STRIDE = ONCHIP_WORDS // ONCHIP_UNROLL
_QUAD_STRIDE = ONCHIP_QUADS // ONCHIP_UNROLL


@cuda.jit
def shared_read4(src, reads, step, out):
    """Copy ``src`` (ONCHIP_WORDS floats) into shared memory, then read it ``reads`` times per
    thread, 4 bytes a load."""
    sh = cuda.shared.array(ONCHIP_WORDS, float32)
    t = cuda.threadIdx.x
    for i in range(t, ONCHIP_WORDS, cuda.blockDim.x):
        sh[i] = src[i]
    cuda.syncthreads()
    acc = float32(0.0)
    r = 0
    while r < reads:
        base = t + r * step
        for k in range(ONCHIP_UNROLL):
            acc += sh[(base + k * _WORD_STRIDE) & (ONCHIP_WORDS - 1)]
        r += ONCHIP_UNROLL
    out[cuda.grid(1)] = acc


@cuda.jit
def shared_read16(src, reads, step, out):
    """``shared_read4`` with 16-byte loads (``load4``: one LDS.128, four floats)."""
    sh = cuda.shared.array((ONCHIP_QUADS, 4), float32)
    t = cuda.threadIdx.x
    for i in range(t, ONCHIP_WORDS, cuda.blockDim.x):
        sh[i // 4, i % 4] = src[i]
    cuda.syncthreads()
    acc = float32(0.0)
    r = 0
    while r < reads:
        base = t + r * step
        for k in range(ONCHIP_UNROLL):
            a, b, c, d = load4(sh, (base + k * _QUAD_STRIDE) & (ONCHIP_QUADS - 1), 0)
            acc += (a + b) + (c + d)
        r += ONCHIP_UNROLL
    out[cuda.grid(1)] = acc


@cuda.jit
def l1_read4(src, reads, step, out):
    """Read the global buffer ``src`` ``reads`` times per thread, 4 bytes a load: after the
    first touch every SM's L1 holds all of it."""
    t = cuda.threadIdx.x
    acc = float32(0.0)
    r = 0
    while r < reads:
        base = t + r * step
        for k in range(ONCHIP_UNROLL):
            acc += src[(base + k * _WORD_STRIDE) & (ONCHIP_WORDS - 1)]
        r += ONCHIP_UNROLL
    out[cuda.grid(1)] = acc


@cuda.jit
def l1_read16(src, reads, step, out):
    """``l1_read4`` with 16-byte loads."""
    t = cuda.threadIdx.x
    acc = float32(0.0)
    r = 0
    while r < reads:
        base = t + r * step
        for k in range(ONCHIP_UNROLL):
            a, b, c, d = load_float4(src, 4 * ((base + k * _QUAD_STRIDE) & (ONCHIP_QUADS - 1)))
            acc += (a + b) + (c + d)
        r += ONCHIP_UNROLL
    out[cuda.grid(1)] = acc


@cuda.jit
def mixed_read16(src, reads, step, out):
    """Half of ``shared_read16``'s loads and half of ``l1_read16``'s, alternating: if shared
    memory and the L1 had a data pipe each, this kernel could read faster than either alone;
    with one pipe between them it cannot."""
    sh = cuda.shared.array((ONCHIP_QUADS, 4), float32)
    t = cuda.threadIdx.x
    for i in range(t, ONCHIP_WORDS, cuda.blockDim.x):
        sh[i // 4, i % 4] = src[i]
    cuda.syncthreads()
    acc = float32(0.0)
    r = 0
    while r < reads:
        base = t + r * step
        for k in range(0, ONCHIP_UNROLL, 2):
            a, b, c, d = load4(sh, (base + k * _QUAD_STRIDE) & (ONCHIP_QUADS - 1), 0)
            e, f, g, h = load_float4(
                src, 4 * ((base + (k + 1) * _QUAD_STRIDE) & (ONCHIP_QUADS - 1)))
            acc += ((a + b) + (c + d)) + ((e + f) + (g + h))
        r += ONCHIP_UNROLL
    out[cuda.grid(1)] = acc


# name: (kernel, where the bytes come from, bytes per load, slots in the buffer)
ONCHIP_READS = {"shared4": (shared_read4, "shared", 4, ONCHIP_WORDS),
                "shared16": (shared_read16, "shared", 16, ONCHIP_QUADS),
                "l1_4": (l1_read4, "L1", 4, ONCHIP_WORDS),
                "l1_16": (l1_read16, "L1", 16, ONCHIP_QUADS),
                "mixed16": (mixed_read16, "shared+L1", 16, ONCHIP_QUADS)}
ONCHIP_STEP = 32 * 3   # a runtime step that keeps a warp on 32 consecutive slots


def onchip_values() -> np.ndarray:
    """The buffer the on-chip read kernels read: small whole numbers, whose float32 sums are
    exact below 2^24."""
    return (np.arange(ONCHIP_WORDS) % 7 + 1).astype(np.float32)


def onchip_expected(name: str, reads: int, block: int, blocks: int,
                    step: int = ONCHIP_STEP) -> np.ndarray:
    """Every thread's sum from ``ONCHIP_READS[name]``'s kernel, computed in NumPy from the
    same addresses (float64; equal to the kernel's float32 sums while they stay below 2^24)."""
    if name not in ONCHIP_READS:
        raise ValueError(f"name must be one of {sorted(ONCHIP_READS)}, not {name!r}.")
    for value, what in ((reads, "reads"), (block, "block"), (blocks, "blocks")):
        validate.positive_int(value, what)
    validate.integer(step, "step", minimum=0)
    if reads % ONCHIP_UNROLL:
        raise ValueError(f"reads must be a multiple of {ONCHIP_UNROLL} (the kernels read "
                         f"{ONCHIP_UNROLL} slots a trip), not {reads}.")
    _, _, width, slots = ONCHIP_READS[name]
    v = onchip_values().astype(np.float64)
    per_slot = v.reshape(-1, 4).sum(1) if width == 16 else v
    t = np.arange(block)[:, None]
    stride = slots // ONCHIP_UNROLL
    idx = np.concatenate([(t + r * step + k * stride) & (slots - 1)
                          for r in range(0, reads, ONCHIP_UNROLL)
                          for k in range(ONCHIP_UNROLL)], axis=1)
    return np.tile(per_slot[idx].sum(1), blocks)


for _kernel, *_ in ONCHIP_READS.values():
    PTX_TARGETS.append((_kernel, "void(float32[::1], int64, int64, float32[::1])"))


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


def plot_size_sweep(result):
    """``gridstride_size_sweep``: GB/s against bytes moved, timed two ways (the GPU's time,
    launch left out; one call as an application waits for it, launch counted), with the
    copy ceilings."""
    validate.result(result, "result")
    for c in ("bytes", "gbps", "gbps_launch_counted"):
        validate.column(result, c, "result column")
    from .. import plots

    fig = plots.lines(result, x="bytes", y="gbps", ceilings=plots.copy_ceilings(result),
                      logx=True, xlabel="bytes moved (read + written)", ylabel="GB/s",
                      title=f"grid-stride copy: bandwidth against size ({result.gpu})")
    ax = fig.axes[0]
    ax.lines[0].set_label("GPU time (launch left out)")
    pts = sorted((r["bytes"], r["gbps_launch_counted"]) for r in result.rows)
    ax.plot(*zip(*pts), marker="s", linestyle="--", color=plots.COLORS[1],
            label="one call, launch counted")
    plots.legend_if_labelled(ax, fontsize=8, loc="upper left")
    return fig


# --------------------------------------------------------------------------- diagrams


def draw_grid_stride(n: int = 20, blocks: int = 2, threads: int = 4, ax=None):
    """Which thread handles which element: a grid of ``blocks`` x ``threads`` over ``n`` elements.

    Each row of boxes is one pass of the grid-stride loop; the color is the thread's
    global index. With ``blocks * threads >= n`` it is the one-element-per-thread picture.
    """
    validate.positive_int(threads, "threads", maximum=64)
    if ax is not None and not hasattr(ax, "figure"):
        raise TypeError(f"ax must be a matplotlib Axes or None, not {type(ax).__name__}.")
    import matplotlib.pyplot as plt

    from .. import plots

    n = validate.positive_int(n, "n", maximum=512)
    blocks = validate.positive_int(blocks, "blocks", maximum=64)
    threads = validate.block_size(threads)
    total = blocks * threads
    passes = (n + total - 1) // total
    if ax is None:
        _, ax = plt.subplots(figsize=(min(plots.COLUMN_INCHES, 0.45 * total + 2), 0.6 * passes + 1.6))
    cmap = plt.get_cmap("tab20" if total <= 20 else "viridis")
    for i in range(n):
        tid, step = i % total, i // total
        color = cmap(tid / max(total - 1, 1)) if total > 20 else cmap(tid % 20)
        ax.add_patch(plt.Rectangle((tid, -step), 0.95, 0.9, color=color))
        ax.text(tid + 0.47, -step + 0.45, str(i), ha="center", va="center", fontsize=7)
    for b in range(1, blocks):
        ax.axvline(b * threads - 0.025, color="black", linewidth=1)
    ax.set_xlim(-0.2, total + 0.2)
    ax.set_ylim(-passes + 0.8, 1.1)
    ax.set_xticks([t + 0.47 for t in range(total)],
                  [f"b{t // threads}\nt{t % threads}" for t in range(total)], fontsize=7)
    ax.set_yticks([-p + 0.45 for p in range(passes)], [f"pass {p}" for p in range(passes)])
    ax.set_title(f"{n} elements, grid [{blocks}, {threads}]: element i is handled by thread "
                 f"i % {total} (stride = {blocks} x {threads} = {total})", fontsize=9)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    return ax.figure


# --------------------------------------------------------------------------- exercises


def _launch_configs(n: int):
    """Grids that expose a kernel which only works when the grid covers the data."""
    return [(1, 1), (2, 4), (1, 32), (3, 64), ((n + 127) // 128, 128)]


# The SAXPY exercise's speed bar on a GPU: this share of the device-to-device copy measured in
# the same check, on 2^26 elements (768 MiB moved: beyond any L2). On an H100 the chapter's
# solution read 92% of the copy, and a correct kernel whose threads each walk a contiguous
# chunk 4% (one run, 2026-11-26); the grid-stride copy at the same launch reads 72-81% of
# the copy (gridstride_launch_sweep, H200 and H100).
SAXPY_SPEED_N = 2**26
SAXPY_SPEED_TARGET = 0.6


def _saxpy_speed(chk, kernel) -> None:
    n = SAXPY_SPEED_N
    x, y, out = _device_vectors(n, 3)
    y.copy_to_device(x)  # any finite numbers do
    grid, block = launch_config(n)
    a = np.float32(2.0)
    ex.speed_against_copy(
        chk, lambda: kernel[grid, block](a, x, y, out), 12 * n, target=SAXPY_SPEED_TARGET,
        what=f"your SAXPY (n = 2^{n.bit_length() - 1}, launch [{grid}, {block}])",
        advice="in every pass of the loop, consecutive threads must touch consecutive "
               "elements (i = cuda.grid(1), then i += cuda.gridsize(1)), so that each warp's "
               "loads coalesce; a thread that walks its own contiguous chunk does not.")


@ex.refuses_stubs
def check_saxpy(kernel) -> ex.Report:
    """Check a grid-stride SAXPY kernel ``kernel(a, x, y, out)``: out = a * x + y.

    Correct under many launch configurations (``[1, 1]`` and grids much smaller than the
    data) at awkward sizes; on a GPU also at least ``SAXPY_SPEED_TARGET`` of the
    device-to-device copy's bandwidth, measured in the same check, at 2^26 elements."""
    chk = ex.Checker("grid-stride SAXPY")
    if not chk.is_kernel(kernel):
        return chk.report()
    # A grid smaller than the data and one larger: out-of-bounds indexing shows in either.
    if not ex.preflight(chk, kernel, 3, 32, np.float32(2.0), ex.random_array(100, 5),
                        ex.random_array(100, 6), ex.poisoned(100)):
        return chk.report()
    if not ex.preflight(chk, kernel, 4, 32, np.float32(2.0), ex.random_array(33, 5),
                        ex.random_array(33, 6), ex.poisoned(33),
                        what="a dry run with more threads than elements"):
        return chk.report()
    for seed in ex.seeds():
        for n in (1, 31, 32, 33, 100, 257, 1000, *ex.hidden_sizes(2, 3000)):
            for grid, block in _launch_configs(n)[: (5 if seed == 0 else 2)]:
                with chk.case(f"n={n}, launch [{grid}, {block}]", seed=seed):
                    rng = np.random.default_rng(seed * 1000 + n)
                    a = np.float32(rng.uniform(-3, 3))
                    x, y = ex.random_array(n, rng), ex.random_array(n, rng)
                    out = ex.poisoned(n)
                    kernel[grid, block](a, x, y, out)
                    ref = a * x.astype(np.float64) + y.astype(np.float64)
                    chk.compare(out, ref, rtol=1e-5, atol=1e-5)
    if not SIMULATOR and chk.report_.ok:
        _saxpy_speed(chk, kernel)
    elif SIMULATOR:
        ex.speed_not_measured(chk, f"{SAXPY_SPEED_TARGET:.0%} of the device-to-device copy's "
                                   f"bandwidth at 2^{SAXPY_SPEED_N.bit_length() - 1} elements")
    return chk.report()


@ex.refuses_stubs
def check_bandwidth_formula(fn) -> ex.Report:
    """Check ``fn(n, ms)``: effective GB/s of SAXPY on ``n`` float32 taking ``ms`` milliseconds."""
    chk = ex.Checker("effective bandwidth of SAXPY")
    rng = ex.case_rng(7)
    for n, ms in [(2**20, 0.01), (2**28, 1.05), (1000, 0.003),
                  (int(rng.integers(1e5, 1e9)), float(rng.uniform(0.01, 5)))]:
        with chk.case(f"n={n}, {ms:.4g} ms"):
            got = fn(n, ms)
            want = bench.gbps(3 * 4 * n, ms)  # read x and y, write out: 12 bytes per element
            if not isinstance(got, (int, float, np.floating)):
                chk.fail(f"returned {type(got).__name__}; return the bandwidth as a number in GB/s.")
                continue
            ratio = got / want
            hints = {2 / 3: "you counted two arrays; SAXPY reads x and y and writes out",
                     1 / 3: "you counted one array; count every array read or written",
                     1e9 / 2**30: "you divided by 2**30; GB/s here means 1e9 bytes per second",
                     1e-3: "milliseconds must become seconds: multiply ms by 1e-3",
                     1e3: "milliseconds must become seconds: multiply ms by 1e-3"}
            if abs(ratio - 1) > 1e-6:
                hint = next((h for r, h in hints.items() if abs(ratio / r - 1) < 1e-3), None)
                chk.fail(f"got {got:.6g} GB/s, expected {want:.6g}"
                         + (f": {hint}." if hint else "."))
    return chk.report()


def _call_us(n, launch_us: float, gbps: float) -> float:
    """The model of ``ex-measuring-call-time``: one call of the copy of ``n`` float32 costs
    the launch, then its 8n bytes (read and written) at ``gbps``."""
    return launch_us + 8 * n / (gbps * 1e3)  # bytes / (GB/s) = ns; / 1e3 = us


# Mistakes the call-time exercise names, each as the answer it gives.
_CALL_MISTAKES = {
    "the copy also writes: count 8 bytes per element (4 read, 4 written)":
        lambda n, L, B: L + 4 * n / (B * 1e3),
    "the launch and the transfer follow each other: add them, do not take the larger":
        lambda n, L, B: max(L, 8 * n / (B * 1e3)),
    "GB/s here means 1e9 bytes per second, not 2**30":
        lambda n, L, B: L + 8 * n / (B * 2**30 / 1e6),
    "return microseconds: the launch is given in microseconds, and bytes / (GB/s) is in "
    "nanoseconds": lambda n, L, B: L + 8 * n / B,
    "return microseconds, not milliseconds": lambda n, L, B: (L + 8 * n / (B * 1e3)) / 1e3,
    "a call costs its launch too: add launch_us": lambda n, L, B: 8 * n / (B * 1e3),
}


@ex.refuses_stubs
def check_call_time(fn) -> ex.Report:
    """Check ``fn(n, launch_us, gbps)``: microseconds for one call of the copy of ``n`` float32."""
    chk = ex.Checker("the time of one call, predicted")
    if not callable(fn):
        chk.fail(f"expected a function fn(n, launch_us, gbps), got {type(fn).__name__}.")
        return chk.report()
    rng = ex.case_rng(11)
    cases = [(2**12, 9.5, 2500.0), (2**20, 9.5, 2500.0), (2**28, 9.5, 2500.0),
             (10**6, 20.0, 300.0), (1, 5.0, 1000.0), (3 * 10**7, 12.0, 700.0),
             (int(rng.integers(10**3, 10**9)), float(rng.uniform(2, 40)),
              float(rng.uniform(100, 5000)))]
    for n, launch_us, gbps in cases:
        with chk.case(f"n={n:,}, launch {launch_us:.4g} us, {gbps:.4g} GB/s"):
            got = fn(n, launch_us, gbps)
            want = _call_us(n, launch_us, gbps)
            if isinstance(got, bool) or not isinstance(got, (int, float, np.integer, np.floating)):
                chk.fail(f"returned {type(got).__name__}; return the time as a number of "
                         "microseconds.")
                continue
            if abs(got / want - 1) > 1e-6:
                # A mistake is named only where it alone gives this answer (at n = 1 several
                # mistakes differ from each other by less than a part in a million).
                named = [h for h, f in _CALL_MISTAKES.items()
                         if abs(got / f(n, launch_us, gbps) - 1) < 1e-9]
                hint = named[0] if len(named) == 1 else None
                chk.fail(f"got {got:.6g} us, expected {want:.6g}" + (f": {hint}." if hint else "."))
    return chk.report()


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


__all__ = [
    "copy_one_per_thread", "copy_grid_stride", "saxpy_grid_stride", "copy", "launch_config",
    "check_saxpy", "check_bandwidth_formula", "check_call_time", "compare_call_model",
    "plot_size_sweep", "read_passes", "read_step", "shared_read4", "shared_read16", "l1_read4",
    "l1_read16", "mixed_read16", "ONCHIP_READS", "onchip_values", "onchip_expected", "SIMULATOR",
]
