"""Leaves the launch out: only the transfer."""

CHECKER = "check_call_time"
MODULE = "gpuperf.kernels.gridstride"


def kernel(n, launch_us, gbps):
    return 8 * n / (gbps * 1e9) * 1e6
