"""Whole trips of 4 loads only: the elements left over after the last whole trip are never copied."""
from numba import cuda

CHECKER = "check_copy_in_flight"


@cuda.jit
def student(src, dst):
    stride = cuda.gridsize(1)
    i = cuda.grid(1)
    while i + 3 * stride < src.size:
        a, b, c, d = src[i], src[i + stride], src[i + 2 * stride], src[i + 3 * stride]
        dst[i], dst[i + stride], dst[i + 2 * stride], dst[i + 3 * stride] = a, b, c, d
        i += 4 * stride
