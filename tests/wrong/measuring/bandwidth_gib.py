"""Divides by 2**30 (GiB/s) instead of 1e9."""

CHECKER = "check_bandwidth_formula"
MODULE = "gpuperf.kernels.gridstride"


def kernel(n, ms):
    return 3 * 4 * n / (ms * 1e-3) / 2**30
