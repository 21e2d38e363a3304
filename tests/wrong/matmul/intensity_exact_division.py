"""Counts N / tile tile columns and M / tile tile rows, fractions, where a partial tile still
loads its rows and columns."""

CHECKER = "check_intensity"


def intensity_and_bound(M, N, K, tile, bw_gbps, peak_tflops):
    nbytes = 4 * (M * K * N / tile + K * N * M / tile + M * N)
    ai = 2 * M * N * K / nbytes
    return ai, min(peak_tflops, bw_gbps * ai / 1e3)
