"""Starts its 16-byte loads at the first aligned element and the scalar tail after them, but
never reads the elements before that boundary."""
import numpy as np
from numba import cuda, float32

import gpuperf as gp

CHECKER = "check_absmax"


@cuda.jit
def _vectors(x, out, n, head):
    g = cuda.grid(1)
    best = float32(0.0)
    nvec = (n - head) // 4
    v = g
    while v < nvec:
        a, b, c, d = gp.reduce.load_float4(x, head + 4 * v)
        best = max(best, max(max(abs(a), abs(b)), max(abs(c), abs(d))))
        v += cuda.gridsize(1)
    t = head + 4 * nvec + g
    if t < n:
        best = max(best, abs(x[t]))
    cuda.atomic.max(out, 0, best)


def kernel(d_x):
    n = d_x.shape[0]
    out = cuda.to_device(np.zeros(1, np.float32))
    _vectors[2, 64](d_x, out, n, gp.reduce.head_elements(d_x, n))
    return float(out.copy_to_host()[0])
