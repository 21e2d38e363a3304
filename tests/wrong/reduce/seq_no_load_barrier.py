"""Sequential addressing that starts comparing before every thread has stored its element."""
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
    # missing: cuda.syncthreads()
    s = BLOCK // 2
    while s > 0:
        if tid < s:
            sdata[tid] = max(sdata[tid], sdata[tid + s])
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = sdata[0]
