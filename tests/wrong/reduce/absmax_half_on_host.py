"""Wrong: one GPU pass takes max |x| of each pair, then the ceil(n/2) pair maxima come back and
NumPy finishes on the host: half the vector crosses PCIe."""
import numpy as np
from numba import cuda

CHECKER = "check_absmax"


@cuda.jit
def _pairs(x, y):
    i = cuda.grid(1)
    if i < y.shape[0]:
        v = abs(x[2 * i])
        if 2 * i + 1 < x.shape[0]:
            v = max(v, abs(x[2 * i + 1]))
        y[i] = v


def kernel(d_x):
    n = d_x.shape[0]
    y = cuda.device_array((n + 1) // 2, np.float32)
    _pairs[-(-y.shape[0] // 128), 128](d_x, y)
    return float(y.copy_to_host().max())
