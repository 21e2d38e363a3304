"""Sequential addressing with the loop's barrier inside `if tid < s`: threads that skip the
branch never reach it. On a GPU that hangs or reads half-updated slots."""
import numpy as np
from numba import cuda, float32

CHECKER = "check_sequential_max"


@cuda.jit
def kernel(x, partial, n):
    s_data = cuda.shared.array(256, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tid
    s_data[tid] = x[i] if i < n else float32(-np.inf)
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if tid < s:
            s_data[tid] = max(s_data[tid], s_data[tid + s])
            cuda.syncthreads()
        s //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = s_data[0]
