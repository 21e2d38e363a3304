"""Leaves the launch out: only the transfer."""


def kernel(n, launch_us, gbps):
    return 8 * n / (gbps * 1e9) * 1e6
