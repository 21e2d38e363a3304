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
``launch`` enqueues one of them (for timing); ``histogram`` returns the counts.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import cuda

from gpuperf import device
from gpuperf import validate as v

NBINS = 256
VERSIONS = ("global", "global_stride", "private")


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
