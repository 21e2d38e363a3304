"""Counts C as read and written, and divides without rounding partial tiles up (a reviewer's
answer playing a student; each slip is under 2%)."""

CHECKER = "check_intensity"


def intensity_and_bound(M, N, K, tile, bw_gbps, peak_tflops):
    nbytes = 4 * (M * K * N / tile + K * N * M / tile + 2 * M * N)
    ai = 2 * M * N * K / nbytes
    return ai, min(peak_tflops, bw_gbps * ai / 1e3)
