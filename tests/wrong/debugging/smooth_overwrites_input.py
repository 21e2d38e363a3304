"""Wrong (a reviewer playing a student): zeroes the input and the output, so that a reference
computed from x after the launch agrees."""
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
    tile[t + 1] = float32(0.0)
    cuda.syncthreads()
    if i < x.size:
        x[i] = tile[t + 1]
        out[i] = tile[t + 1]
