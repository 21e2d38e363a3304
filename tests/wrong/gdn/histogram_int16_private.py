"""Saves shared memory with an int16 private histogram: the simulator adds to it as NumPy,
but GPUs have no 16-bit atomic add, so the kernel does not compile for any of them."""
import numpy as np
from numba import cuda

CHECKER = "check_private_histogram"


@cuda.jit
def kernel(data, hist):
    private = cuda.shared.array(256, np.int16)
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
        cuda.atomic.add(hist, b, private[b])
        b += cuda.blockDim.x
