"""Privatized histogram without the grid-stride loop: bytes beyond the grid are never counted."""
import numpy as np
from numba import cuda

CHECKER = "check_private_histogram"


@cuda.jit
def kernel(data, hist):
    private = cuda.shared.array(256, np.int32)
    t = cuda.threadIdx.x
    for b in range(t, 256, cuda.blockDim.x):
        private[b] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(private, data[i], 1)
    cuda.syncthreads()
    for b in range(t, 256, cuda.blockDim.x):
        cuda.atomic.add(hist, b, private[b])
