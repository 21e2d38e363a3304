"""Wrong for this exercise (issue 63, structure): right values, no shared memory, no barrier,
but delta[k, s], w[k, s] and d[k, s] are read from global memory again in every pass of the
loop over j instead of once into registers. The emulator's record counts each thread's loads
of one element: N of them here."""
from numba import cuda

CHECKER = "check_registers"


@cuda.jit
def kernel(delta, w, d, raw):
    n_ch, n_s = w.shape
    s = cuda.grid(1)
    k = cuda.blockIdx.y
    if s < n_s:
        for j in range(n_ch):
            raw[k * n_ch + j, s] = (-0.5 * delta[k, s] * w[k, s] * d[k, s] * d[k, s] * d[k, s]
                                    * w[j, s] * w[j, s])
