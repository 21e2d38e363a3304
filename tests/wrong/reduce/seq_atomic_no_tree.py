"""Wrong for this exercise (no tree, no sequential addressing): thread 0 writes -inf to
partial[b], a barrier, then every thread does cuda.atomic.max(partial, b, x[i]). The right
maxima, but 256 serialized atomics on one address per block instead of v2's tree; the checker
finds no step of shared memory where half the block combines two slots. (Found by a reviewer
playing a student.)"""
import math

import numpy as np  # noqa: F401
from numba import cuda, float32

CHECKER = "check_sequential_max"

BLOCK = 256


@cuda.jit
def kernel(x, partial, n):
    tid = cuda.threadIdx.x
    b = cuda.blockIdx.x
    i = b * BLOCK + tid
    if tid == 0:
        partial[b] = float32(-math.inf)
    cuda.syncthreads()
    if i < n:
        cuda.atomic.max(partial, b, x[i])
