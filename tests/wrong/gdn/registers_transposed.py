"""Algorithm 4 writing row j*N + k instead of k*N + j: dgamma would come out transposed."""
from numba import cuda

CHECKER = "check_registers"


@cuda.jit
def kernel(delta, w, d, raw):
    n_ch, n_s = w.shape
    s = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    k = cuda.blockIdx.y
    if s < n_s:
        dk = d[k, s]
        common = -0.5 * delta[k, s] * w[k, s] * dk * dk * dk
        for j in range(n_ch):
            raw[j * n_ch + k, s] = common * w[j, s] * w[j, s]
