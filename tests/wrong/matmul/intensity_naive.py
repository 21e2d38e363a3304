"""Uses the naive kernel's traffic: no reuse from the tile."""

CHECKER = "check_intensity"


def intensity_and_bound(M, N, K, tile, bw_gbps, peak_tflops):
    ai = 2 * M * N * K / (4 * (2 * M * N * K + M * N))
    return ai, min(peak_tflops, bw_gbps * ai / 1e3)
