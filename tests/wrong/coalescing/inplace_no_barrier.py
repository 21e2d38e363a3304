"""No barrier between reading the tiles and writing them: a thread may overwrite an element
another thread of the block has not read yet."""
from numba import cuda, float32

CHECKER = "check_inplace_transpose"

TILE, BLOCK_ROWS = 32, 8
PADDED_TILE = (TILE, TILE + 1)


@cuda.jit
def kernel(a):
    bx, by = cuda.blockIdx.x, cuda.blockIdx.y
    if bx < by:
        return
    upper = cuda.shared.array(PADDED_TILE, float32)
    lower = cuda.shared.array(PADDED_TILE, float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    n = a.shape[0]
    for j in range(0, TILE, BLOCK_ROWS):
        r, c = by * TILE + ty + j, bx * TILE + tx
        if r < n and c < n:
            upper[ty + j, tx] = a[r, c]
        r, c = bx * TILE + ty + j, by * TILE + tx
        if r < n and c < n:
            lower[ty + j, tx] = a[r, c]
    for j in range(0, TILE, BLOCK_ROWS):
        r, c = bx * TILE + ty + j, by * TILE + tx
        if r < n and c < n:
            a[r, c] = upper[tx, ty + j]
        r, c = by * TILE + ty + j, bx * TILE + tx
        if r < n and c < n:
            a[r, c] = lower[tx, ty + j]
