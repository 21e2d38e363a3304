"""Divides by the wrong extent: right only for square matrices."""
from numba import cuda

CHECKER = "check_remap"


@cuda.jit
def kernel(x, w, out):
    i = cuda.grid(1)
    rows, cols = x.shape
    if i < rows * cols:
        r = i // rows
        c = i % rows
        if r < rows and c < cols:
            out[r, c] = x[r, c] * w[r]
