"""Counts x and out but not y."""

CHECKER = "check_bandwidth_formula"
MODULE = "gpuperf.kernels.gridstride"


def kernel(n, ms):
    return 2 * 4 * n / (ms * 1e-3) / 1e9
