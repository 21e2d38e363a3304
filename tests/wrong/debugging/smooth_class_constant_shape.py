"""Wrong: the shared array's shape is a class attribute, which no GPU compiler accepts (Numba:
"Untyped global name 'Cfg'"). The simulator runs it as Python; the checker's compile for sm_75
and sm_90 sees that Numba cannot type the class and rejects it, as a GPU's launch would. (Once a
hole of issue 14, found by a reviewer playing a student.)"""
import numpy as np  # noqa: F401
from numba import cuda, float32

from gpuperf.kernels import debugging as dbg

CHECKER = "check_smooth"
BLOCK = dbg.SMOOTH_BLOCK


class Cfg:
    TILE = dbg.SMOOTH_TILE


@cuda.jit
def kernel(x, out):
    tile = cuda.shared.array(Cfg.TILE, float32)
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
        out[i] = (tile[t] + tile[t + 1] + tile[t + 2]) / float32(3.0)
