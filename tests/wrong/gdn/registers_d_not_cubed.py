"""Algorithm 4 using D instead of D**3 (D is the -1/2 power; the derivative brings the -3/2)."""
from numba import cuda

CHECKER = "check_registers"


@cuda.jit
def kernel(delta, w, d, raw):
    n_ch, n_s = w.shape
    s = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    k = cuda.blockIdx.y
    if s < n_s:
        common = -0.5 * delta[k, s] * w[k, s] * d[k, s]
        for j in range(n_ch):
            raw[k * n_ch + j, s] = common * w[j, s] * w[j, s]
