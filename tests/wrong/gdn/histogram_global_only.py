"""Correct counts but no privatization: every update is a global atomic."""
from numba import cuda

CHECKER = "check_private_histogram"


@cuda.jit
def kernel(data, hist):
    i = cuda.grid(1)
    while i < data.size:
        cuda.atomic.add(hist, data[i], 1)
        i += cuda.gridsize(1)
