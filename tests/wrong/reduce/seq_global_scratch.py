"""Wrong (cannot compile for a GPU): the tree's scratch is a global NumPy array instead of
cuda.shared.array. On a GPU a global array is a read-only constant (Numba refuses the stores);
in the simulator it is one host array that every block shares, which works only because the
simulator runs blocks one after another. The compile check sees the kernel write a global
array and refuses it. (Found by a reviewer playing a student, when the compile check still
skipped kernels that refer to a global array.)"""
import math

import numpy as np
from numba import cuda, float32

CHECKER = "check_sequential_max"

BLOCK = 256
SDATA = np.empty(BLOCK, np.float32)  # "shared" scratch, allocated once


@cuda.jit
def kernel(x, partial, n):
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK + tid
    SDATA[tid] = x[i] if i < n else float32(-math.inf)
    cuda.syncthreads()
    s = BLOCK // 2
    while s > 0:
        if tid < s:
            SDATA[tid] = max(SDATA[tid], SDATA[tid + s])
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = SDATA[0]
