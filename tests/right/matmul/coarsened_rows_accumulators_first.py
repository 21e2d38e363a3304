"""Correct: coarsening along rows with one shared tile of A per factor step, kept in a 3-D
shared array, and the running sums in a local array."""
from numba import cuda, float32

NOTEBOOK, LABEL = "05_coarsening", "ex-coarsening-coarsen"


def make_my_coarsened_rows(tile, factor):
    a_tiles, b_tile = (factor, tile, tile), (tile, tile)

    @cuda.jit
    def k(A, B, C):
        sA = cuda.shared.array(a_tiles, float32)
        sB = cuda.shared.array(b_tile, float32)
        sums = cuda.local.array(factor, float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        M, K = A.shape
        N = B.shape[1]
        col = cuda.blockIdx.x * tile + tx
        first_row = cuda.blockIdx.y * tile * factor + ty
        for c in range(factor):
            sums[c] = 0
        for t in range((K + tile - 1) // tile):
            kb, ka = t * tile + ty, t * tile + tx
            sB[ty, tx] = B[kb, col] if kb < K and col < N else float32(0.0)
            for c in range(factor):
                row = first_row + c * tile
                sA[c, ty, tx] = A[row, ka] if row < M and ka < K else float32(0.0)
            cuda.syncthreads()
            for c in range(factor):
                for n in range(tile):
                    sums[c] += sA[c, ty, n] * sB[n, tx]
            cuda.syncthreads()
        for c in range(factor):
            if first_row + c * tile < M and col < N:
                C[first_row + c * tile, col] = sums[c]

    return k
