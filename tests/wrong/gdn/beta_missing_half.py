"""dbeta that forgets the factor -1/2 from the derivative of the -1/2 power."""
import numpy as np
from numba import cuda

CHECKER = "check_beta_grad"


@cuda.jit
def kernel(delta, w, d, dbeta):
    partial = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    k = cuda.blockIdx.x
    acc = np.float32(0.0)
    for s in range(t, w.shape[1], cuda.blockDim.x):
        dk = d[k, s]
        acc += delta[k, s] * w[k, s] * dk * dk * dk
    partial[t] = acc
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if t < stride:
            partial[t] += partial[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        dbeta[k] = partial[0]
