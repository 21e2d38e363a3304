"""Correct: the tiled traffic with math.ceil and the roofline in TFLOP/s first."""
import math

NOTEBOOK, LABEL = "04_tiling", "ex-tiling-intensity"


def intensity_and_bound(M, N, K, tile, bw_gbps, peak_tflops):
    a_loads = M * K * math.ceil(N / tile)   # every column of tiles reads all of A
    b_loads = K * N * math.ceil(M / tile)   # every row of tiles reads all of B
    flop = 2.0 * M * N * K
    intensity = flop / (4.0 * (a_loads + b_loads + M * N))
    memory_bound_tflops = bw_gbps * 1e9 * intensity / 1e12
    return intensity, min(memory_bound_tflops, peak_tflops)
