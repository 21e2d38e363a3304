"""Copies 4 elements a grid's width apart per trip, but moves on by 8 grid widths: half of the
elements are never copied."""
from numba import cuda

CHECKER = "check_copy_in_flight"


@cuda.jit
def student(src, dst):
    stride = cuda.gridsize(1)
    i = cuda.grid(1)
    while i < src.size:
        for k in range(4):
            j = i + k * stride
            if j < src.size:
                dst[j] = src[j]
        i += 8 * stride
