"""Sequential addressing without a barrier between the steps of the tree.

A thread starts step s/2 while its partner may still be in step s, so it compares a
value that is not yet the partial max it should be.
"""
import math

from numba import cuda, float32

CHECKER = "check_sequential_max"

BLOCK = 256


@cuda.jit
def kernel(x, partial, n):
    sdata = cuda.shared.array(BLOCK, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK + tid
    sdata[tid] = x[i] if i < n else float32(-math.inf)
    cuda.syncthreads()
    s = BLOCK // 2
    while s > 0:
        if tid < s:
            sdata[tid] = max(sdata[tid], sdata[tid + s])
        s //= 2  # no cuda.syncthreads() here
    if tid == 0:
        partial[cuda.blockIdx.x] = sdata[0]
