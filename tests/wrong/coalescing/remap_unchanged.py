"""The starting kernel, handed in unchanged: correct, but threads walk down columns."""
from numba import cuda

CHECKER = "check_remap"


@cuda.jit
def kernel(x, w, out):
    i = cuda.grid(1)
    rows, cols = x.shape
    if i < rows * cols:
        r = i % rows
        c = i // rows
        out[r, c] = x[r, c] * w[r]
