"""Correct: privatization with the zeroing and the merge as while loops, and the merge
adding every bin (zeros included) atomically."""
import numpy as np
from numba import cuda

NOTEBOOK, LABEL = "10_checklist", "ex-checklist-privatize"


@cuda.jit
def private_histogram(data, hist):
    counts = cuda.shared.array(256, np.int32)
    b = cuda.threadIdx.x
    while b < 256:
        counts[b] = 0
        b += cuda.blockDim.x
    cuda.syncthreads()
    for i in range(cuda.grid(1), data.shape[0], cuda.gridsize(1)):
        cuda.atomic.add(counts, int(data[i]), 1)
    cuda.syncthreads()
    b = cuda.threadIdx.x
    while b < 256:
        cuda.atomic.add(hist, b, counts[b])
        b += cuda.blockDim.x
