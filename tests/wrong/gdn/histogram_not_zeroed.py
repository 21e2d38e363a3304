"""Privatized histogram that never zeroes its shared copy (shared memory starts as garbage)."""
import numpy as np
from numba import cuda

CHECKER = "check_private_histogram"


@cuda.jit
def kernel(data, hist):
    private = cuda.shared.array(256, np.int32)
    t = cuda.threadIdx.x
    cuda.syncthreads()
    i = cuda.grid(1)
    while i < data.size:
        cuda.atomic.add(private, data[i], 1)
        i += cuda.gridsize(1)
    cuda.syncthreads()
    for b in range(t, 256, cuda.blockDim.x):
        cuda.atomic.add(hist, b, private[b])
