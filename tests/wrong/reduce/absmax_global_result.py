"""Wrong (a GPU never updates it): to keep allocations out of the timed call, the result
lives in a global NumPy array that the kernel updates with cuda.atomic.max and the host reads
back. On a GPU a global array is a read-only constant copied into the kernel, so the host's
array never changes; in the simulator it is the host array itself, so it works. The compile
check refuses a kernel that writes a global array. (Found by a reviewer playing a student.)"""
import numpy as np
from numba import cuda, float32

CHECKER = "check_absmax"

BLOCK = 256
RESULT = np.zeros(1, np.float32)


@cuda.jit(device=True)
def warp_absmax(v):
    for off in (16, 8, 4, 2, 1):
        v = max(v, cuda.shfl_down_sync(0xFFFFFFFF, v, off))
    return v


@cuda.jit
def absmax_kernel(x, n):
    best = float32(0.0)
    i = cuda.grid(1)
    while i < n:
        best = max(best, abs(x[i]))
        i += cuda.gridsize(1)
    best = warp_absmax(best)
    if cuda.threadIdx.x % 32 == 0:
        cuda.atomic.max(RESULT, 0, best)


def kernel(d_x):
    n = d_x.shape[0]
    RESULT[0] = 0.0
    grid = max(1, min(264, -(-n // BLOCK)))
    absmax_kernel[grid, BLOCK](d_x, n)
    return float(RESULT[0])
