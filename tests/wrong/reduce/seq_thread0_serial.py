"""Wrong for this exercise (no tree at all): thread 0 of each block loops over the block's
256 elements in global memory; the other 255 threads idle. A barrier is there, doing nothing.
The checker finds no step where half the block combines two slots of shared memory. (Found by
a reviewer playing a student.)"""
import math

import numpy as np  # noqa: F401
from numba import cuda, float32

CHECKER = "check_sequential_max"

BLOCK = 256


@cuda.jit
def kernel(x, partial, n):
    tid = cuda.threadIdx.x
    cuda.syncthreads()
    if tid == 0:
        best = float32(-math.inf)
        start = cuda.blockIdx.x * BLOCK
        for j in range(start, min(start + BLOCK, n)):
            best = max(best, x[j])
        partial[cuda.blockIdx.x] = best
