"""Correct: numpy ceilings, the pair returned as a list of numpy floats."""
import numpy as np

NOTEBOOK, LABEL = "04_tiling", "ex-tiling-intensity"


def intensity_and_bound(M, N, K, tile, bw_gbps, peak_tflops):
    a_loads = M * K * np.ceil(N / tile)
    b_loads = K * N * np.ceil(M / tile)
    ai = np.float64(2.0 * M * N * K) / (4.0 * (a_loads + b_loads + M * N))
    return [ai, np.minimum(peak_tflops, ai * bw_gbps * 1e9 / 1e12)]
