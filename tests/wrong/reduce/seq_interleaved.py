"""v0's interleaved addressing (tid % (2 * s)) for the max: right, but not the exercise."""
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
    s = 1
    while s < BLOCK:
        if tid % (2 * s) == 0:
            sdata[tid] = max(sdata[tid], sdata[tid + s])
        cuda.syncthreads()
        s *= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = sdata[0]
