"""Wrong for this exercise (not v7's block reduce): warp maxima by shuffles as asked, but then
each warp's lane 0 does cuda.atomic.max on partial[b] (initialised to -inf by thread 0 before
the barrier) instead of the 32-slot shared array and warp 0's second shuffle round. The
checker counts the block's writes of partial[b] in the emulator. (Found by a reviewer playing
a student; once a hole of issue 14.)"""
import numpy as np
from numba import cuda

CHECKER = "check_block_max"

NEG_INF = np.float32(-np.inf)


@cuda.jit(device=True)
def warp_max(v):
    for offset in (16, 8, 4, 2, 1):
        v = max(v, cuda.shfl_down_sync(0xFFFFFFFF, v, offset))
    return v


@cuda.jit
def kernel(x, partial, n):
    if cuda.threadIdx.x == 0:
        partial[cuda.blockIdx.x] = NEG_INF
    best = NEG_INF
    i = cuda.grid(1)
    while i < n:
        best = max(best, x[i])
        i += cuda.gridsize(1)
    best = warp_max(best)
    cuda.syncthreads()
    if cuda.threadIdx.x % 32 == 0:
        cuda.atomic.max(partial, cuda.blockIdx.x, best)
