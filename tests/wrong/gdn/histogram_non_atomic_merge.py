"""A private histogram per block, built with shared atomics, but merged into the global one
with a plain `+=`: blocks running at once lose each other's counts. The simulator runs blocks
one after another, so the counts come out right there."""
import numpy as np
from numba import cuda

CHECKER = "check_private_histogram"


@cuda.jit
def kernel(data, hist):
    private = cuda.shared.array(256, np.int32)
    b = cuda.threadIdx.x
    while b < 256:
        private[b] = 0
        b += cuda.blockDim.x
    cuda.syncthreads()
    i = cuda.grid(1)
    while i < data.size:
        cuda.atomic.add(private, data[i], 1)
        i += cuda.gridsize(1)
    cuda.syncthreads()
    b = cuda.threadIdx.x
    while b < 256:
        hist[b] += private[b]
        b += cuda.blockDim.x
