"""Takes the larger of the launch and the transfer, as if they overlapped."""

CHECKER = "check_call_time"
MODULE = "gpuperf.kernels.gridstride"


def kernel(n, launch_us, gbps):
    return max(launch_us, 8 * n / (gbps * 1e3))
