"""Leaves out the write of C that the exercise counts: at most a few percent off, except when
K is short (found by a reviewer playing a student, once inside a 2% tolerance)."""

CHECKER = "check_intensity"


def intensity_and_bound(M, N, K, tile, bw_gbps, peak_tflops):
    nbytes = 4 * (M * K * -(-N // tile) + K * N * -(-M // tile))
    ai = 2 * M * N * K / nbytes
    return ai, min(peak_tflops, bw_gbps * ai / 1e3)
