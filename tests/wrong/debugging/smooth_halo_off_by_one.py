"""Wrong: the right halo loads x[i + 2] (one too far)."""
import numpy as np  # noqa: F401
from numba import cuda, float32

from gpuperf.kernels import debugging as dbg

CHECKER = "check_smooth"
BLOCK, TILE = dbg.SMOOTH_BLOCK, dbg.SMOOTH_TILE


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
        tile[BLOCK + 1] = x[min(i + 2, n - 1)]
    cuda.syncthreads()
    if i < n:
        out[i] = (tile[t] + tile[t + 1] + tile[t + 2]) / float32(3.0)
