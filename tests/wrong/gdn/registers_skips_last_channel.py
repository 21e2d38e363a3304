"""The GDN article's own loop bound, `for (i = 0; i < N-1; i++)`: the last channel j is never written."""
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
        for j in range(n_ch - 1):
            raw[k * n_ch + j, s] = common * w[j, s] * w[j, s]
