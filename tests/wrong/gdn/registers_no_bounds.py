"""Algorithm 4 without the tail test: threads past the last sample read and write out of bounds."""
from numba import cuda

CHECKER = "check_registers"


@cuda.jit
def kernel(delta, w, d, raw):
    n_ch = w.shape[0]
    s = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    k = cuda.blockIdx.y
    dk = d[k, s]
    common = -0.5 * delta[k, s] * w[k, s] * dk * dk * dk
    for j in range(n_ch):
        raw[k * n_ch + j, s] = common * w[j, s] * w[j, s]
