"""Takes the larger of the launch and the transfer, as if they overlapped."""


def kernel(n, launch_us, gbps):
    return max(launch_us, 8 * n / (gbps * 1e3))
