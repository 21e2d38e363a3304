"""Coalesced, but the last block's extra threads write past the end."""
from numba import cuda

CHECKER = "check_remap"


@cuda.jit
def kernel(x, w, out):
    i = cuda.grid(1)
    rows, cols = x.shape
    r = i // cols
    c = i % cols
    out[r, c] = x[r, c] * w[r]
