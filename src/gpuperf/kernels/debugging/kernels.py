"""Chapter 9's kernels, with their planted bugs: ``smooth_racy`` (a three-point average
through a shared tile, its barrier missing), ``smooth`` (the same, fixed) and
``copy_unguarded`` (no bounds test); ``smooth_grid`` sizes the smoothing kernels' grid."""

from __future__ import annotations

from numba import cuda, float32

from gpuperf import validate as v

SMOOTH_BLOCK = 128  # threads per block of the smoothing kernels
SMOOTH_TILE = SMOOTH_BLOCK + 2  # the block's elements and a halo of one on each side


@cuda.jit
def smooth_racy(x, out):
    tile = cuda.shared.array(SMOOTH_TILE, float32)  # a shape must be a constant
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * SMOOTH_BLOCK + t
    n = x.size
    tile[t + 1] = x[min(i, n - 1)]  # past the end: the last element again (a clamped edge)
    if t == 0:
        tile[0] = x[max(i - 1, 0)]
    if t == SMOOTH_BLOCK - 1:
        tile[SMOOTH_BLOCK + 1] = x[min(i + 1, n - 1)]
    # BUG: no cuda.syncthreads() here. tile[t] and tile[t + 2] are written by other threads,
    # which may not have run yet.
    if i < n:
        out[i] = (tile[t] + tile[t + 1] + tile[t + 2]) / float32(3.0)


@cuda.jit
def smooth(x, out):
    tile = cuda.shared.array(SMOOTH_TILE, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * SMOOTH_BLOCK + t
    n = x.size
    tile[t + 1] = x[min(i, n - 1)]
    if t == 0:
        tile[0] = x[max(i - 1, 0)]
    if t == SMOOTH_BLOCK - 1:
        tile[SMOOTH_BLOCK + 1] = x[min(i + 1, n - 1)]
    cuda.syncthreads()  # every slot of the tile is written before any thread reads one
    if i < n:
        out[i] = (tile[t] + tile[t + 1] + tile[t + 2]) / float32(3.0)


@cuda.jit
def copy_unguarded(x, out):
    i = cuda.grid(1)
    out[i] = x[i]  # BUG: no `if i < x.size`: the last block's extra threads go out of bounds


def smooth_grid(n: int) -> int:
    """Blocks of ``SMOOTH_BLOCK`` threads for ``n`` elements: one thread per element."""
    n = v.positive_int(n, "n")
    return -(-n // SMOOTH_BLOCK)
