"""Correct (issue 63): the block's partial sums reduced with warp shuffles, then the warps'
sums in shared memory by the first warp: a tree, not through shared memory at every step."""
import numpy as np
from numba import cuda

NOTEBOOK, LABEL = "08_gdn_case_study", "ex-gdn-beta"


@cuda.jit(device=True)
def warp_sum(v):
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
        off //= 2
    return v


@cuda.jit
def beta_grad(delta, w, d, dbeta):
    sums = cuda.shared.array(32, np.float32)
    t, k = cuda.threadIdx.x, cuda.blockIdx.x
    total = np.float32(0.0)
    for s in range(t, w.shape[1], cuda.blockDim.x):
        total += delta[k, s] * w[k, s] * d[k, s] ** 3
    total = warp_sum(total)
    if t % 32 == 0:
        sums[t // 32] = total
    cuda.syncthreads()
    if t < 32:
        v = sums[t] if t < cuda.blockDim.x // 32 else np.float32(0.0)
        v = warp_sum(v)
        if t == 0:
            dbeta[k] = np.float32(-0.5) * v
