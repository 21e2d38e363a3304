"""Wrong: sets up the private copy (zeroed, barriers, merge) but the counting loop adds to the
global hist instead of private (a one-word typo): every byte is a contended global atomic,
no privatization at all; the merge adds zeros."""
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
    for i in range(cuda.grid(1), data.size, cuda.gridsize(1)):
        cuda.atomic.add(hist, data[i], 1)
    cuda.syncthreads()
    for b in range(t, 256, cuda.blockDim.x):
        if private[b] != 0:
            cuda.atomic.add(hist, b, private[b])
