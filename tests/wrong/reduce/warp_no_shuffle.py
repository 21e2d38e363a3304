"""Right, but with no warp shuffle: every thread parks its max in shared memory and thread 0
scans all 256 (a comment that says cuda.shfl_down_sync does not make it one)."""
import numpy as np
from numba import cuda, float32

CHECKER = "check_block_max"

BLOCK = 256
NEG_INF = np.float32(-np.inf)


@cuda.jit
def kernel(x, partial, n):
    slots = cuda.shared.array(BLOCK, float32)
    tid = cuda.threadIdx.x
    best = NEG_INF
    i = cuda.grid(1)
    while i < n:
        best = max(best, x[i])
        i += cuda.gridsize(1)
    slots[tid] = best
    cuda.syncthreads()
    if tid == 0:  # cuda.shfl_down_sync would be faster
        for t in range(BLOCK):
            best = max(best, slots[t])
        partial[cuda.blockIdx.x] = best
