"""Each thread counts its bytes in its own local array of 256 counters, then adds them to the
shared copy: right counts, but not one atomic per byte into shared memory (256 counters per
thread live in local memory on a GPU, and each thread makes up to 256 more atomics)."""
import numpy as np
from numba import cuda, int32

CHECKER = "check_private_histogram"


@cuda.jit
def kernel(data, hist):
    private = cuda.shared.array(256, np.int32)
    mine = cuda.local.array(256, int32)
    t = cuda.threadIdx.x
    for b in range(256):
        mine[b] = 0
    for b in range(t, 256, cuda.blockDim.x):
        private[b] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    while i < data.size:
        mine[data[i]] += 1
        i += cuda.gridsize(1)
    for b in range(256):
        if mine[b] != 0:
            cuda.atomic.add(private, b, mine[b])
    cuda.syncthreads()
    for b in range(t, 256, cuda.blockDim.x):
        if private[b] != 0:
            cuda.atomic.add(hist, b, private[b])
