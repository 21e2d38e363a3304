"""Takes the higher of the two roofs: a kernel cannot run faster than either."""

CHECKER = "check_attainable"


def kernel(intensity, peak_tflops, bandwidth_gbps):
    memory = intensity * bandwidth_gbps / 1e3
    return max(peak_tflops, memory), "memory" if memory < peak_tflops else "compute"
