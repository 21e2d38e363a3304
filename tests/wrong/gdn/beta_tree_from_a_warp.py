"""Wrong for this exercise (issue 63, structure): the first 16 threads each add up their share
of the block's slots one by one (blockDim.x / 16 of them), and only then a tree runs over those
16: right values, but the tree starts at 16 threads, not half the block. The emulator's record
shows the widest step."""
import numpy as np
from numba import cuda

CHECKER = "check_beta_grad"


@cuda.jit
def kernel(delta, w, d, dbeta):
    sums = cuda.shared.array(64, np.float32)
    t, k = cuda.threadIdx.x, cuda.blockIdx.x
    total = np.float32(0.0)
    for s in range(t, w.shape[1], cuda.blockDim.x):
        total += np.float32(-0.5) * delta[k, s] * w[k, s] * d[k, s] ** 3
    sums[t] = total
    cuda.syncthreads()
    if t < 16:
        acc = np.float32(0.0)
        for i in range(t + 16, cuda.blockDim.x, 16):
            acc += sums[i]
        sums[t] += acc
    cuda.syncthreads()
    half = 8
    while half > 0:
        if t < half:
            sums[t] += sums[t + half]
        cuda.syncthreads()
        half //= 2
    if t == 0:
        dbeta[k] = sums[0]
