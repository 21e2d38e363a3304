"""Wrong: one element per thread, grid capped at 1024 blocks of 256 (no grid-stride loop), a
warp-shuffle max and one float atomic max per warp: right for every n up to 262,144 (all the
sizes the checker verifies) but never reads the rest of a larger x; and since the 2^27
bandwidth run only times it, skipping 99.8% of the vector makes it 'fast'."""
import numpy as np
from numba import cuda, float32


@cuda.jit
def _absmax(x, out):
    i = cuda.grid(1)
    v = abs(x[i]) if i < x.shape[0] else float32(0.0)
    for off in (16, 8, 4, 2, 1):
        v = max(v, cuda.shfl_down_sync(0xFFFFFFFF, v, off))
    if cuda.threadIdx.x % 32 == 0:
        cuda.atomic.max(out, 0, v)


def kernel(d_x):
    n = d_x.shape[0]
    out = cuda.to_device(np.zeros(1, np.float32))
    _absmax[min(-(-n // 256), 1024), 256](d_x, out)
    return float(out.copy_to_host()[0])
