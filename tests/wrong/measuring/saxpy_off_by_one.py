"""Uses <= in the loop test: reads and writes one element past the end."""
from numba import cuda

CHECKER = "check_saxpy"
MODULE = "gpuperf.kernels.gridstride"


@cuda.jit
def kernel(a, x, y, out):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i <= x.size:
        out[i] = a * x[i] + y[i]
        i += stride
