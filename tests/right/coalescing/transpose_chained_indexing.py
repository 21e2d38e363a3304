"""Correct: the in-place tiled transpose with chained indexing of the shared tiles
(`upper[ty + j][tx]`), while loops, and the block test written as a guard around everything."""
from numba import cuda, float32

NOTEBOOK, LABEL = "02_transpose", "ex-coalescing-transpose"
TILE, ROWS = 32, 8
PADDED = (TILE, TILE + 1)


@cuda.jit
def transpose_inplace(a):
    upper = cuda.shared.array(PADDED, float32)
    lower = cuda.shared.array(PADDED, float32)
    bx, by = cuda.blockIdx.x, cuda.blockIdx.y
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    n = a.shape[0]
    if bx >= by:  # the whole block takes part or none of it does
        j = 0
        while j < TILE:
            r, c = by * TILE + ty + j, bx * TILE + tx
            if r < n and c < n:
                upper[ty + j][tx] = a[r][c]
            r, c = bx * TILE + ty + j, by * TILE + tx
            if r < n and c < n:
                lower[ty + j][tx] = a[r][c]
            j += ROWS
        cuda.syncthreads()
        j = 0
        while j < TILE:
            r, c = bx * TILE + ty + j, by * TILE + tx
            if r < n and c < n:
                a[r, c] = upper[tx][ty + j]
            r, c = by * TILE + ty + j, bx * TILE + tx
            if r < n and c < n:
                a[r, c] = lower[tx][ty + j]
            j += ROWS
