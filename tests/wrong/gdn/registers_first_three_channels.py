"""Right only while N <= 3 (every shape the checker once used): channels j >= 3 of raw are never written."""
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
        for j in range(min(n_ch, 3)):
            raw[k * n_ch + j, s] = common * w[j, s] * w[j, s]
