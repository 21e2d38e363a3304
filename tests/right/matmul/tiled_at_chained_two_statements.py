# ruff: noqa: E702  (several statements on one line is what this answer is about)
"""Correct: the tiled product with A given transposed, several statements on one line,
chained indexing of the shared tiles, and a comment that says return before a barrier."""
from numba import cuda, float32

NOTEBOOK, LABEL = "04_tiling", "ex-tiling-tiled"


def make_my_tiled_at(tile):
    padded, shape = (tile, tile + 32 // tile), (tile, tile)

    @cuda.jit
    def k(At, B, C):
        sA = cuda.shared.array(padded, float32); sB = cuda.shared.array(shape, float32)
        tx = cuda.threadIdx.x; ty = cuda.threadIdx.y
        K, M = At.shape
        N = B.shape[1]
        row, col = cuda.blockIdx.y * tile + ty, cuda.blockIdx.x * tile + tx
        acc = float32(0.0)
        # no early return here: every thread reaches every barrier
        for t in range((K + tile - 1) // tile):
            kk, r = t * tile + ty, cuda.blockIdx.y * tile + tx
            sA[tx][ty] = At[kk, r] if kk < K and r < M else float32(0.0)
            sB[ty][tx] = B[kk, col] if kk < K and col < N else float32(0.0)
            cuda.syncthreads()
            for n in range(tile):
                acc += sA[ty][n] * sB[n][tx]
            cuda.syncthreads()
        if row < M and col < N:
            C[row, col] = acc

    return k
