"""dbeta without a block-stride loop: each thread takes one sample, so S > block is cut short."""
import numpy as np
from numba import cuda

CHECKER = "check_beta_grad"


@cuda.jit
def kernel(delta, w, d, dbeta):
    partial = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    k = cuda.blockIdx.x
    acc = np.float32(0.0)
    if t < w.shape[1]:
        dk = d[k, t]
        acc = delta[k, t] * w[k, t] * dk * dk * dk
    partial[t] = acc
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if t < stride:
            partial[t] += partial[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        dbeta[k] = -0.5 * partial[0]
