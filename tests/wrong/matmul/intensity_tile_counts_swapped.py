"""Wrong (issue 63, right only at the visible examples): A is read once per tile row of C and B
once per tile column (ceil(M / tile) and ceil(N / tile) swapped). It agrees with the right count
whenever M = N, or both are multiples of the tile; a wide C whose sides are no multiple of the
tile tells them apart."""
import math

CHECKER = "check_intensity"


def intensity_and_bound(M, N, K, tile, bw_gbps, peak_tflops):
    loads = M * K * math.ceil(M / tile) + K * N * math.ceil(N / tile)
    ai = 2 * M * N * K / (4 * (loads + M * N))
    return ai, min(peak_tflops, bw_gbps * ai / 1e3)
