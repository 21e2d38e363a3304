"""Counts elements instead of bytes."""

CHECKER = "check_intensity"


def intensity_and_bound(M, N, K, tile, bw_gbps, peak_tflops):
    elements = M * K * -(-N // tile) + K * N * -(-M // tile) + M * N
    ai = 2 * M * N * K / elements
    return ai, min(peak_tflops, bw_gbps * ai / 1e3)
