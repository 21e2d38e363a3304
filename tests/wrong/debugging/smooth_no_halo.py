"""Wrong: no halo; the block's edge threads read their neighbours from tile slots nobody wrote
(the tile is only the block's own elements, clamped at the block's edges instead of the array's)."""
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
    tile[t] = x[min(i, n - 1)]
    cuda.syncthreads()
    if i < n:
        out[i] = (tile[max(t - 1, 0)] + tile[t] + tile[min(t + 1, BLOCK - 1)]) / float32(3.0)
