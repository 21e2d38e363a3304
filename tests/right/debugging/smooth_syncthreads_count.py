"""Right (a reviewer playing a student): the barrier is cuda.syncthreads_count, which also
counts the threads that have an element."""
import numpy as np  # noqa: F401
from numba import cuda, float32

from gpuperf.kernels import debugging as dbg

CHECKER = "check_smooth"
NOTEBOOK, LABEL = "09_profiling", "ex-profiling-race"
BLOCK, TILE = dbg.SMOOTH_BLOCK, dbg.SMOOTH_TILE

@cuda.jit
def kernel(x, out):
    tile = cuda.shared.array(TILE, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    n = x.size
    tile[t + 1] = x[min(i, n - 1)]
    if t == 0:
        tile[0] = x[max(i - 1, 0)]
    if t == BLOCK - 1:
        tile[BLOCK + 1] = x[min(i + 1, n - 1)]
    active = cuda.syncthreads_count(1 if i < n else 0)   # a barrier that also counts the threads with an element
    if t < active:
        out[i] = (tile[t] + tile[t + 1] + tile[t + 2]) / float32(3.0)


smooth_fixed = kernel  # the name the chapter's checker cell uses
