"""Tests only the first element of a trip against n: the last trip reads and writes past the end."""
from numba import cuda

CHECKER = "check_copy_in_flight"


@cuda.jit
def student(src, dst):
    stride = cuda.gridsize(1)
    i = cuda.grid(1)
    while i < src.size:
        a, b = src[i], src[i + stride]
        dst[i] = a
        dst[i + stride] = b
        i += 2 * stride
