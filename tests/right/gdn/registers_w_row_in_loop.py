"""Correct (issue 63): row k's three values read once into registers; the loop over j reads
w[j, s], which at j = k is w[k, s] once more (a second load of one element is allowed)."""
from numba import cuda

NOTEBOOK, LABEL = "08_gdn_case_study", "ex-gdn-registers"


@cuda.jit
def row_registers(delta, w, d, raw):
    n_ch, n_s = w.shape
    s = cuda.grid(1)
    k = cuda.blockIdx.y
    if s >= n_s:
        return
    dk = d[k, s]
    common = -0.5 * delta[k, s] * w[k, s] * dk * dk * dk
    for j in range(n_ch):
        wj = w[j, s]
        raw[k * n_ch + j, s] = common * wj * wj
