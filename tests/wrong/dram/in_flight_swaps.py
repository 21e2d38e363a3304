"""Stores each batch in reverse order: dst[i + k * stride] gets src[i + (3 - k) * stride]."""
from numba import cuda, float32

CHECKER = "check_copy_in_flight"


@cuda.jit
def student(src, dst):
    stride = cuda.gridsize(1)
    i = cuda.grid(1)
    vals = cuda.local.array(4, float32)
    while i + 3 * stride < src.size:
        for k in range(4):
            vals[k] = src[i + k * stride]
        for k in range(4):
            dst[i + k * stride] = vals[3 - k]
        i += 4 * stride
    while i < src.size:
        dst[i] = src[i]
        i += stride
