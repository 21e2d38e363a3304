"""Padded tile, but no barrier between filling the tile and reading it."""
from numba import cuda, float32

CHECKER = "check_padded_transpose"

TILE, ROWS = 32, 8
SHAPE = (TILE, TILE + 1)


@cuda.jit
def kernel(a, out):
    t = cuda.shared.array(SHAPE, float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    rows, cols = a.shape
    x = cuda.blockIdx.x * TILE + tx
    y = cuda.blockIdx.y * TILE + ty
    for j in range(0, TILE, ROWS):
        if y + j < rows and x < cols:
            t[ty + j, tx] = a[y + j, x]
    x = cuda.blockIdx.y * TILE + tx
    y = cuda.blockIdx.x * TILE + ty
    for j in range(0, TILE, ROWS):
        if y + j < cols and x < rows:
            out[y + j, x] = t[tx, ty + j]
