"""The right rate, but the roofs named the wrong way round (below the ridge is memory-bound)."""

CHECKER = "check_attainable"


def kernel(intensity, peak_tflops, bandwidth_gbps):
    memory = intensity * bandwidth_gbps / 1e3
    return min(peak_tflops, memory), "compute" if memory < peak_tflops else "memory"
