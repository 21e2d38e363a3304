"""Wrong for this exercise (no shared-memory tree): the block-stride loop as asked, then thread
0 zeroes dbeta[k], a barrier, and every thread does cuda.atomic.add(dbeta, k, -0.5 * acc): a
block's worth of atomics on one address instead of a tree. The checker counts the block's
writes of dbeta in the emulator. (Found by a reviewer playing a student.)"""
import numpy as np
from numba import cuda

CHECKER = "check_beta_grad"


@cuda.jit
def kernel(delta, w, d, dbeta):
    t = cuda.threadIdx.x
    k = cuda.blockIdx.x
    if t == 0:
        dbeta[k] = np.float32(0.0)
    acc = np.float32(0.0)
    for s in range(t, w.shape[1], cuda.blockDim.x):
        dk = d[k, s]
        acc += delta[k, s] * w[k, s] * dk * dk * dk
    cuda.syncthreads()
    cuda.atomic.add(dbeta, k, np.float32(-0.5) * acc)
