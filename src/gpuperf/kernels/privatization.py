"""Privatization: a histogram with per-block private copies.

Many threads updating a few shared counters serialize on them: every atomic update
of the same address waits for the one before it. Privatization gives each block its
own copy of the output in shared memory, lets the block's threads update that copy
(atomics on shared memory, contended only within the block, and fast), and merges
the private copies into the global one once per block at the end.

Kernels (input: ``uint8`` bytes, 256 bins, ``int32`` counts)
-----------------------------------------------------------
``histogram_global``: one thread per byte, one global atomic per byte.
``histogram_global_stride``: the same global atomics from a grid-stride loop over a grid
sized to the GPU, the loop ``make_private`` uses: between it and ``make_private`` only the
privatization changes.
``make_private(block)``: grid-stride loop (a grid sized to the GPU, so each block
sees many bytes: privatization pays off only with coarsening), a shared 256-bin
copy zeroed first, and one global atomic per non-empty bin per block at the end.

Experiments
-----------
``privatization_histogram``: both kernels (and ``cupy.bincount`` when present) on
64 MiB of uniform bytes and of skewed bytes (90% the same value, the worst case for
contention), in GB/s against the copy ceiling.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import cuda

from .. import bench, device
from .. import exercises as ex
from .. import validate as v
from ..records import experiment

NBINS = 256
VERSIONS = ("global", "global_stride", "private")
DISTRIBUTIONS = ("uniform", "skewed")


def reference(data) -> np.ndarray:
    """Counts of each byte value, int64 (the ground truth)."""
    data = v.array(data, name="data", dtype=np.uint8, ndim=None, min_size=0, contiguous=False)
    if hasattr(data, "copy_to_host"):
        data = data.copy_to_host()
    return np.bincount(np.asarray(data).ravel(), minlength=NBINS)


def random_bytes(n: int, distribution: str = "uniform", seed: int = 0) -> np.ndarray:
    """``n`` random bytes: ``uniform`` over 0..255, or ``skewed`` (90% one random value)."""
    v.positive_int(n, "n", minimum=0)
    v.positive_int(seed, "seed", minimum=0)
    v.choice(distribution, "distribution", DISTRIBUTIONS)
    rng = np.random.default_rng(seed)
    data = rng.integers(0, NBINS, n, dtype=np.uint8)
    if distribution == "skewed":
        hot = np.uint8(rng.integers(0, NBINS))
        data[rng.random(n) < 0.9] = hot
    return data


@cuda.jit
def histogram_global(data, hist):
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(hist, data[i], 1)


@cuda.jit
def histogram_global_stride(data, hist):
    i = cuda.grid(1)
    while i < data.size:
        cuda.atomic.add(hist, data[i], 1)
        i += cuda.gridsize(1)


@functools.lru_cache(maxsize=None, typed=True)
def make_private(block: int = 256):
    """Privatized histogram: each block counts into its own shared copy, then merges it."""
    v.block_size(block, multiple_of=32)

    @cuda.jit
    def histogram_private(data, hist):
        private = cuda.shared.array(NBINS, np.int32)
        t = cuda.threadIdx.x
        for b in range(t, NBINS, block):  # shared memory starts as garbage: zero it
            private[b] = 0
        cuda.syncthreads()
        i = cuda.blockIdx.x * block + t
        stride = cuda.gridDim.x * block
        while i < data.size:
            cuda.atomic.add(private, data[i], 1)
            i += stride
        cuda.syncthreads()  # every update of this block is in before the merge
        for b in range(t, NBINS, block):
            count = private[b]
            if count != 0:
                cuda.atomic.add(hist, b, count)

    return histogram_private


PTX_TARGETS = [
    (histogram_global, "void(uint8[::1], int32[::1])"),
    (histogram_global_stride, "void(uint8[::1], int32[::1])"),
    (make_private(256), "void(uint8[::1], int32[::1])"),
]


def launch(version: str, d_data, d_hist, *, block: int = 256, blocks_per_sm: int = 4):
    """Enqueue one histogram (no checks, no zeroing): for timing. ``d_hist`` accumulates."""
    v.choice(version, "version", VERSIONS)
    # Cheap checks only: timed loops call this.
    if getattr(d_data, "dtype", None) != np.uint8 or getattr(d_hist, "dtype", None) != np.int32:
        raise TypeError("d_data must be a uint8 device array and d_hist an int32 device array of "
                        f"{NBINS} counts; got {getattr(d_data, 'dtype', type(d_data).__name__)} "
                        f"and {getattr(d_hist, 'dtype', type(d_hist).__name__)}.")
    block = v.integer(block, "block", minimum=32, maximum=1024)
    v.integer(blocks_per_sm, "blocks_per_sm", minimum=1, maximum=64)
    n = d_data.size
    if version == "global":
        histogram_global[math.ceil(n / block), block](d_data, d_hist)
        return
    grid = min(math.ceil(n / block), blocks_per_sm * device.sm_count(default=2))
    if version == "global_stride":
        histogram_global_stride[grid, block](d_data, d_hist)
    else:
        make_private(block)[grid, block](d_data, d_hist)


def histogram(data, version: str = "private", *, block: int = 256, blocks_per_sm: int = 4):
    """Counts of the 256 byte values of ``data`` (uint8, 1-D), as a NumPy int32 array."""
    v.choice(version, "version", VERSIONS)
    data = v.array(data, name="data", dtype=np.uint8, ndim=1)
    block = v.block_size(block, multiple_of=32)
    v.positive_int(blocks_per_sm, "blocks_per_sm", maximum=64)
    d_data = cuda.to_device(data) if isinstance(data, np.ndarray) else data
    d_hist = cuda.to_device(np.zeros(NBINS, np.int32))
    launch(version, d_data, d_hist, block=block, blocks_per_sm=blocks_per_sm)
    return d_hist.copy_to_host()


# --------------------------------------------------------------------------- experiments

N_BYTES = 64 * 2**20


@functools.lru_cache(maxsize=1, typed=True)
def _zero_kernel():
    @cuda.jit
    def zero(hist):
        i = cuda.grid(1)
        if i < hist.size:
            hist[i] = 0

    return zero


PTX_TARGETS.append((_zero_kernel(), "void(int32[::1])"))


def _cupy():
    try:
        import cupy
    except Exception:
        return None
    return cupy


@experiment("privatization_histogram", chapter="checklist",
            title="Histogram of 64 MiB of bytes: global atomics against per-block private "
                  "copies, uniform and skewed data",
            units={"ms": "ms", "gbps": "GB/s", "pct_copy": "% of copy", "pct_peak": "% of peak",
                   "speedup": "x"})
def histogram_experiment(progress):
    cp = _cupy()
    rows = []
    d_hist = cuda.device_array(NBINS, np.int32)
    zero = _zero_kernel()
    for dist in DISTRIBUTIONS:
        data = random_bytes(N_BYTES, dist, seed=5)
        ref = reference(data)
        d_data = cuda.to_device(data)
        base_ms = None
        for version in VERSIONS:
            def run(version=version, d_data=d_data):
                zero[1, NBINS](d_hist)
                launch(version, d_data, d_hist)

            t = bench.time_kernel(run, min_repeat=5, min_time=0.1)
            run()
            if not np.array_equal(d_hist.copy_to_host(), ref):
                raise AssertionError(f"histogram {version} is wrong on {dist} data")
            row = {"distribution": dist, "version": version,
                   **bench.bandwidth_row(N_BYTES, t)}
            base_ms = base_ms or t.median_ms
            row["speedup"] = base_ms / t.median_ms
            rows.append(row)
            progress(f"{dist:8s} {version:8s} {t.median_ms:8.3f} ms  {row['gbps']:.0f} GB/s")
        if cp is not None:
            c_data = cp.asarray(d_data)
            t = bench.time_kernel(lambda c_data=c_data: cp.bincount(c_data, minlength=NBINS),
                                  min_repeat=5, min_time=0.1)
            got = cp.asnumpy(cp.bincount(c_data, minlength=NBINS))
            if not np.array_equal(got, ref):
                raise AssertionError(f"cupy.bincount disagrees on {dist} data")
            rows.append({"distribution": dist, "version": "cupy.bincount",
                         **bench.bandwidth_row(N_BYTES, t), "speedup": base_ms / t.median_ms})
            progress(f"{dist:8s} cupy     {t.median_ms:8.3f} ms")
    return rows


# --------------------------------------------------------------------------- exercises


def _check_counts_in_shared(chk, kernel, n: int = 2000, block: int = 64) -> None:
    """In the emulator's record of one block counting ``n`` bytes: the block updates the
    global histogram at most once per bin (the merge); every byte's count goes to shared
    memory. A kernel that counts into the global copy makes one global atomic per byte."""
    from .. import emulator

    with chk.case(f"where one block counts {n:,} bytes, recorded in the emulator"):
        run = emulator.launch(kernel, 1, block, random_bytes(n, DISTRIBUTIONS[0], seed=3),
                              np.zeros(NBINS, np.int32))
        updates = sum(1 for e in run.events
                      if e.space == "global" and e.kind in ("atomic", "store"))
        if updates > NBINS:
            chk.fail(f"the block updated global memory {updates:,} times for {n:,} bytes: "
                     f"privatization counts every byte into the block's copy in shared "
                     f"memory and touches the global histogram at most once per bin "
                     f"({NBINS}), when merging. Is the counting loop adding to hist instead "
                     "of the private copy?")


@ex.refuses_stubs
def check_private_histogram(kernel) -> ex.Report:
    """Check a privatized histogram ``kernel(data, hist)``: uint8 data, 256 int32 bins.

    ``hist`` starts at zero and the kernel adds its counts to it. The checker launches
    several grids, some far smaller than the data (so a grid-stride loop is needed).
    """
    chk = ex.Checker("privatized histogram", race_note=True)
    if not chk.is_kernel(kernel):
        return chk.report()
    chk.calls(kernel, "numba.cuda:shared.array",
              why="privatization keeps each block's copy of the histogram in shared memory "
                  "(cuda.shared.array).")
    chk.calls(kernel, "numba.cuda:atomic.add",
              why="threads of a block update the same private bins concurrently: use "
                  "cuda.atomic.add, on the shared copy and when merging into the global one.")
    chk.calls(kernel, "numba.cuda:syncthreads",
              why="the private copy must be zeroed before any thread counts into it, and "
                  "complete before it is merged: two cuda.syncthreads().")
    if not ex.preflight(chk, kernel, 3, 64, random_bytes(257, DISTRIBUTIONS[0], seed=2),
                        np.zeros(NBINS, np.int32)):
        return chk.report()
    _check_counts_in_shared(chk, kernel)
    launches = ((1, 32), (3, 64), (2, 256), (5, 32))
    for seed in ex.seeds():
        for dist in DISTRIBUTIONS:
            for n in (1, 31, 33, 257, 2000, *ex.hidden_sizes(2, 4000)):
                grid, block = launches[(n + seed) % len(launches)]
                with chk.case(f"{dist}, n={n}, launch [{grid}, {block}]", seed=seed):
                    data = random_bytes(n, dist, seed=seed * 1000 + n)
                    hist = np.zeros(NBINS, np.int32)
                    kernel[grid, block](data, hist)
                    ref = reference(data)
                    if int(hist.sum()) != n:
                        chk.fail(f"the counts add up to {int(hist.sum())}, not {n}: every byte "
                                 "must be counted exactly once (grid-stride loop, and a zeroed "
                                 "private copy merged exactly once).")
                    else:
                        chk.compare(hist, ref, rtol=0, atol=0, what="histogram")
    return chk.report()
