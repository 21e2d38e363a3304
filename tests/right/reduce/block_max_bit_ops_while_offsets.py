"""Correct: a for-range grid-stride loop, lane and warp by bit operations, warp_max with a while
loop over the offsets."""
import numpy as np
from numba import cuda, float32

NOTEBOOK, LABEL = "06_reduce_warps", "ex-reduce-block"
WARPS = 256 // 32
FULL_MASK = 0xFFFFFFFF
NEG_INF = np.float32(-np.inf)


@cuda.jit(device=True)


def warp_max(v):
    off = 16
    while off > 0:
        v = max(v, cuda.shfl_down_sync(FULL_MASK, v, off))
        off //= 2
    return v


@cuda.jit


def my_block_max(x, partial, n):
    slots = cuda.shared.array(32, float32)
    lane = cuda.threadIdx.x & 31
    wid = cuda.threadIdx.x >> 5
    best = NEG_INF
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        best = max(best, x[i])
    best = warp_max(best)
    if lane == 0:
        slots[wid] = best
    cuda.syncthreads()
    if wid == 0:
        v = slots[lane] if lane < WARPS else NEG_INF
        v = warp_max(v)
        if lane == 0:
            partial[cuda.blockIdx.x] = v
