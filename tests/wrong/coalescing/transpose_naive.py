"""No tile at all: correct, but every warp's store is spread over 32 lines."""
from numba import cuda

CHECKER = "check_padded_transpose"

TILE, ROWS = 32, 8


@cuda.jit
def kernel(a, out):
    rows, cols = a.shape
    x = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    for j in range(0, TILE, ROWS):
        if y + j < rows and x < cols:
            out[x, y + j] = a[y + j, x]
