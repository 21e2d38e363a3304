"""Starts at threadIdx.x, forgetting the block: every block does block 0's elements."""
from numba import cuda

CHECKER = "check_saxpy"
MODULE = "gpuperf.kernels.gridstride"


@cuda.jit
def kernel(a, x, y, out):
    i = cuda.threadIdx.x
    stride = cuda.gridsize(1)
    while i < x.size:
        out[i] = a * x[i] + y[i]
        i += stride
