"""Counts the bytes read only (4 per element): the copy writes as many."""

CHECKER = "check_call_time"
MODULE = "gpuperf.kernels.gridstride"


def kernel(n, launch_us, gbps):
    return launch_us + 4 * n / (gbps * 1e9) * 1e6
