"""Correct values, but it is algorithm 3 (shared memory and a barrier), not algorithm 4."""
import numpy as np
from numba import cuda

CHECKER = "check_registers"


@cuda.jit
def kernel(delta, w, d, raw):
    staged = cuda.shared.array((3, 64), np.float32)
    n_ch, n_s = w.shape
    t = cuda.threadIdx.x
    s = cuda.blockIdx.x * cuda.blockDim.x + t
    k = cuda.blockIdx.y
    if s < n_s:
        staged[0, t] = delta[k, s]
        staged[1, t] = w[k, s]
        staged[2, t] = d[k, s]
    cuda.syncthreads()
    if s < n_s:
        dk = staged[2, t]
        common = -0.5 * staged[0, t] * staged[1, t] * dk * dk * dk
        for j in range(n_ch):
            raw[k * n_ch + j, s] = common * w[j, s] * w[j, s]
