"""Wrong (cannot compile for a GPU): the tile's shape is computed inside the kernel
(cuda.blockDim.x + 2), which no GPU compiler accepts. The kernel also reads a global NumPy
array of weights (legal on a GPU: a constant), which the compile check now writes out as a
constant, so the kernel is compiled and refused. (Found by a reviewer playing a student, when
a global array made the compile check skip the kernel.)"""
import numpy as np
from numba import cuda, float32

CHECKER = "check_smooth"
W = np.array([1.0, 1.0, 1.0], dtype=np.float32)


@cuda.jit
def kernel(x, out):
    b = cuda.blockDim.x
    tile = cuda.shared.array(b + 2, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * b + t
    n = x.size
    tile[t + 1] = x[min(i, n - 1)]
    if t == 0:
        tile[0] = x[max(i - 1, 0)]
    if t == b - 1:
        tile[b + 1] = x[min(i + 1, n - 1)]
    cuda.syncthreads()
    if i < n:
        out[i] = (W[0] * tile[t] + W[1] * tile[t + 1] + W[2] * tile[t + 2]) / float32(3.0)
