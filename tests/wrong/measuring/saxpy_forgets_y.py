"""Computes a * x and forgets y."""
from numba import cuda

CHECKER = "check_saxpy"
MODULE = "gpuperf.kernels.gridstride"


@cuda.jit
def kernel(a, x, y, out):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < x.size:
        out[i] = a * x[i]
        i += stride
