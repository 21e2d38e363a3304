"""Wrong for this exercise (a reviewer playing a student): a shared tile made and never used,
the three values read from global memory."""
import numpy as np  # noqa: F401
from numba import cuda, float32

from gpuperf.kernels import debugging as dbg

CHECKER = "check_smooth"
TILE = dbg.SMOOTH_TILE


@cuda.jit
def kernel(x, out):
    tile = cuda.shared.array(TILE, float32)  # noqa: F841 - kept to please a checker
    i = cuda.grid(1)
    n = x.size
    cuda.syncthreads()
    if i < n:
        out[i] = (x[max(i - 1, 0)] + x[i] + x[min(i + 1, n - 1)]) / float32(3.0)
