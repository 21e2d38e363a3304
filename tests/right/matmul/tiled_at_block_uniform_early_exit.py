"""Correct: a defensive early exit that the whole block takes together (the block lies outside
C: every thread of it returns before any barrier, so no barrier is split), then the usual
guarded, coalesced loads of At's tile, stored turned into a tile padded so that the turned
store has no bank conflicts, and two barriers per tile."""
from numba import cuda, float32

NOTEBOOK, LABEL = "04_tiling", "ex-tiling-tiled"


def make_my_tiled_at(tile):
    shape = (tile, tile)
    # padded: the turn writes down columns (32 // tile of them per warp), one bank each otherwise
    turned = (tile, tile + 32 // tile)

    @cuda.jit
    def k(At, B, C):
        K, M = At.shape
        N = B.shape[1]
        if cuda.blockIdx.y * tile >= M or cuda.blockIdx.x * tile >= N:
            return  # the whole block is past the edge of C: uniform, no thread waits
        sA = cuda.shared.array(turned, float32)
        sB = cuda.shared.array(shape, float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col = cuda.blockIdx.x * tile + tx
        turned_row = cuda.blockIdx.y * tile + tx  # the row of A this thread loads
        acc = float32(0.0)
        for t in range((K + tile - 1) // tile):
            ka, kb = t * tile + ty, t * tile + ty
            sA[tx, ty] = At[ka, turned_row] if ka < K and turned_row < M else float32(0.0)
            sB[ty, tx] = B[kb, col] if kb < K and col < N else float32(0.0)
            cuda.syncthreads()
            for n in range(tile):
                acc += sA[ty, n] * sB[n, tx]
            cuda.syncthreads()
        if row < M and col < N:
            C[row, col] = acc

    return k
