"""Forgets that the roofline is capped by the compute peak."""

CHECKER = "check_intensity"


def intensity_and_bound(M, N, K, tile, bw_gbps, peak_tflops):
    ai = 2 * M * N * K / (4 * (M * K * -(-N // tile) + K * N * -(-M // tile) + M * N))
    return ai, bw_gbps * ai / 1e3
