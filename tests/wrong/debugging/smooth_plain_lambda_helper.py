"""Wrong (cannot compile for a GPU): the average is a plain Python lambda, not a
@cuda.jit(device=True) function; Numba cannot call a Python function from a kernel ("Untyped
global name"). The simulator and the emulator call it as Python; the compile check refuses a
plain function a kernel calls. (Found by a reviewer playing a student, when a lambda, having
no source to write out, made the compile check skip the kernel.)"""
import numpy as np  # noqa: F401
from numba import cuda, float32

CHECKER = "check_smooth"
BLOCK, TILE = 128, 130
avg3 = lambda a, b, c: (a + b + c) / float32(3.0)  # noqa: E731


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
        out[i] = avg3(tile[t], tile[t + 1], tile[t + 2])
