"""v1's strided index (index = 2 * s * tid) for the max: right, but not the exercise."""
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
        index = 2 * s * tid
        if index < BLOCK:
            sdata[index] = max(sdata[index], sdata[index + s])
        cuda.syncthreads()
        s *= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = sdata[0]
