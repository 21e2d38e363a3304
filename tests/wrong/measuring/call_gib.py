"""Reads GB/s as 2**30 bytes per second."""

CHECKER = "check_call_time"
MODULE = "gpuperf.kernels.gridstride"


def kernel(n, launch_us, gbps):
    return launch_us + 8 * n / (gbps * 2**30) * 1e6
