"""Counts x and out but not y."""


def kernel(n, ms):
    return 2 * 4 * n / (ms * 1e-3) / 1e9
