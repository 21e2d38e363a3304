"""Wrong for this exercise (issue 63, structure): the block-stride loop is right and the partial
sums meet in shared memory, but thread 0 adds them up in a loop while the rest of the block
idles: no tree. Right values; the emulator's record shows one thread reading shared memory at
the only step."""
import numpy as np
from numba import cuda

CHECKER = "check_beta_grad"


@cuda.jit
def kernel(delta, w, d, dbeta):
    sums = cuda.shared.array(64, np.float32)
    t, k = cuda.threadIdx.x, cuda.blockIdx.x
    total = np.float32(0.0)
    for s in range(t, w.shape[1], cuda.blockDim.x):
        total += delta[k, s] * w[k, s] * d[k, s] ** 3
    sums[t] = total
    cuda.syncthreads()
    if t == 0:
        acc = np.float32(0.0)
        for i in range(cuda.blockDim.x):
            acc += sums[i]
        dbeta[k] = np.float32(-0.5) * acc
