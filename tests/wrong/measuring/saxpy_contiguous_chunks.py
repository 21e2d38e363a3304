"""Wrong for this exercise (issue 63, access pattern): right values under every launch, but each
thread walks its own contiguous chunk of ceil(n / threads) elements, so a warp's 32 loads fall
in 32 different sectors. Without a GPU no speed is measured; the emulator counts the sectors."""
from numba import cuda

CHECKER = "check_saxpy"
MODULE = "gpuperf.kernels.gridstride"


@cuda.jit
def kernel(a, x, y, out):
    n = x.shape[0]
    threads = cuda.gridsize(1)
    chunk = (n + threads - 1) // threads
    start = cuda.grid(1) * chunk
    for i in range(start, min(start + chunk, n)):
        out[i] = a * x[i] + y[i]
