"""Correct: algorithm 4 with row views of the inputs (w[j][s]) and the common factor built
step by step in registers."""
import numpy as np
from numba import cuda

NOTEBOOK, LABEL = "08_gdn_case_study", "ex-gdn-registers"


@cuda.jit
def row_registers(delta, w, d, raw):
    s = cuda.grid(1)
    k = cuda.blockIdx.y
    n_ch = w.shape[0]
    if s >= w.shape[1]:
        return
    wk, dk = w[k][s], d[k][s]
    factor = np.float32(-0.5) * delta[k][s]
    factor *= wk
    factor *= dk * dk * dk
    for j in range(n_ch):
        raw[k * n_ch + j][s] = factor * w[j][s] * w[j][s]
