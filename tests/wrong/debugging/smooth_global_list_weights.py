"""Wrong (cannot compile for a GPU): the weights are a global Python list, which Numba
refuses in a kernel; the simulator runs it as Python. The compile check refuses a list, a
dict or a set a kernel refers to. (Found by a reviewer playing a student, when the compile
check skipped it with a note.)"""
import numpy as np  # noqa: F401
from numba import cuda, float32

CHECKER = "check_smooth"
BLOCK, TILE = 128, 130
W = [1.0, 1.0, 1.0]


@cuda.jit
def kernel(x, out):
    tile = cuda.shared.array(TILE, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK + t
    n = x.size
    tile[t + 1] = x[min(i, n - 1)]
    if t == 0:
        tile[0] = x[max(i - 1, 0)]
    if t == BLOCK - 1:
        tile[BLOCK + 1] = x[min(i + 1, n - 1)]
    cuda.syncthreads()
    if i < n:
        out[i] = (W[0] * tile[t] + W[1] * tile[t + 1] + W[2] * tile[t + 2]) / float32(3.0)
