"""Compares the intensity with a fixed ridge of 10 FLOP/B instead of the GPU's own."""

CHECKER = "check_attainable"


def kernel(intensity, peak_tflops, bandwidth_gbps):
    memory = intensity * bandwidth_gbps / 1e3
    return min(peak_tflops, memory), "memory" if intensity < 10 else "compute"
