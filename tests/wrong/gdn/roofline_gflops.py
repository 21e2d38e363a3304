"""Forgets that GB/s times FLOP/B is GFLOP/s: the memory roof comes out 1000 times too high."""

CHECKER = "check_attainable"


def kernel(intensity, peak_tflops, bandwidth_gbps):
    memory = intensity * bandwidth_gbps
    return min(peak_tflops, memory), "memory" if memory < peak_tflops else "compute"
