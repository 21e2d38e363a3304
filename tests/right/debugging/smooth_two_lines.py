"""Right: the fix, with several statements on a line, a comment that says `return`, and the
sum accumulated in a local before the store."""
import numpy as np  # noqa: F401
from numba import cuda, float32

from gpuperf.kernels import debugging as dbg

CHECKER = "check_smooth"
NOTEBOOK, LABEL = "09_profiling", "ex-profiling-race"
BLOCK, TILE = dbg.SMOOTH_BLOCK, dbg.SMOOTH_TILE


@cuda.jit
def kernel(x, out):
    tile = cuda.shared.array(TILE, float32); t = cuda.threadIdx.x  # noqa: E702
    i = cuda.blockIdx.x * BLOCK + t; n = x.size  # noqa: E702
    tile[t + 1] = x[i] if i < n else x[n - 1]
    if t == 0:
        tile[0] = x[i - 1] if i > 0 else x[0]
    if t == BLOCK - 1:
        tile[BLOCK + 1] = x[i + 1] if i + 1 < n else x[n - 1]
    cuda.syncthreads()  # no thread may return before this line
    if i < n:
        acc = tile[t]
        acc += tile[t + 1]
        acc += tile[t + 2]
        out[i] = acc / float32(3.0)


smooth_fixed = kernel  # the name the chapter's checker cell uses
