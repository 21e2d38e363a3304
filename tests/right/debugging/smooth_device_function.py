"""Right (a reviewer playing a student): the tile, its barrier and the average all in a device
function the kernel calls."""
import numpy as np  # noqa: F401
from numba import cuda, float32

from gpuperf.kernels import debugging as dbg

CHECKER = "check_smooth"
NOTEBOOK, LABEL = "09_profiling", "ex-profiling-race"
BLOCK, TILE = dbg.SMOOTH_BLOCK, dbg.SMOOTH_TILE

@cuda.jit(device=True)
def smooth_block(x, out, t, i, n):
    tile = cuda.shared.array(TILE, float32)
    tile[t + 1] = x[min(i, n - 1)]
    if t == 0:
        tile[0] = x[max(i - 1, 0)]
    if t == BLOCK - 1:
        tile[BLOCK + 1] = x[min(i + 1, n - 1)]
    cuda.syncthreads()
    if i < n:
        out[i] = (tile[t] + tile[t + 1] + tile[t + 2]) / float32(3.0)

@cuda.jit
def kernel(x, out):
    smooth_block(x, out, cuda.threadIdx.x, cuda.grid(1), x.size)


smooth_fixed = kernel  # the name the chapter's checker cell uses
