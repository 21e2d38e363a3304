"""One pass with 8 elements per thread, no loop: right only while 8 x the grid's threads cover n."""
from numba import cuda, float32

CHECKER = "check_copy_in_flight"


@cuda.jit
def student(src, dst):
    base = cuda.grid(1)
    stride = cuda.gridsize(1)
    vals = cuda.local.array(8, float32)
    for k in range(8):
        if base + k * stride < src.size:
            vals[k] = src[base + k * stride]
    for k in range(8):
        if base + k * stride < src.size:
            dst[base + k * stride] = vals[k]
