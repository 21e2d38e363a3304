"""16-byte loads from element 0 whatever the start's alignment: on a GPU a view that starts
one element in faults (misaligned address) and the CUDA context is lost."""
import numpy as np
from numba import cuda, float32

import gpuperf as gp

CHECKER = "check_absmax"


@cuda.jit
def _vectors(x, out, n):
    g = cuda.grid(1)
    best = float32(0.0)
    nvec = n // 4
    v = g
    while v < nvec:
        a, b, c, d = gp.reduce.load_float4(x, 4 * v)
        best = max(best, max(max(abs(a), abs(b)), max(abs(c), abs(d))))
        v += cuda.gridsize(1)
    t = 4 * nvec + g
    if t < n:
        best = max(best, abs(x[t]))
    cuda.atomic.max(out, 0, best)


def kernel(d_x):
    out = cuda.to_device(np.zeros(1, np.float32))
    _vectors[2, 64](d_x, out, d_x.shape[0])
    return float(out.copy_to_host()[0])
