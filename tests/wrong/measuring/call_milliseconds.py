"""Returns milliseconds."""

CHECKER = "check_call_time"
MODULE = "gpuperf.kernels.gridstride"


def kernel(n, launch_us, gbps):
    return launch_us / 1e3 + 8 * n / (gbps * 1e9) * 1e3
