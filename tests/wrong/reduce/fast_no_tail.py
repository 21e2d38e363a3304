"""Sums whole 4-element groups only: the last n % 4 elements are lost."""
import numpy as np
from numba import cuda, float32


@cuda.jit
def _groups(x, out, n):
    i = cuda.grid(1)
    total = float32(0.0)
    while 4 * i + 3 < n:
        total += (x[4 * i] + x[4 * i + 1]) + (x[4 * i + 2] + x[4 * i + 3])
        i += cuda.gridsize(1)
    cuda.atomic.add(out, 0, total)


def kernel(d_x):
    out = cuda.to_device(np.zeros(1, np.float32))
    _groups[2, 64](d_x, out, d_x.shape[0])
    return float(out.copy_to_host()[0])
