"""Loads guarded, but threads outside C return before the barriers."""
from numba import cuda, float32

CHECKER = "check_tiled"
KWARGS = {"tile": 4}


def make_kernel(tile):
    shape = (tile, tile)

    @cuda.jit
    def k(A, B, C):
        sA = cuda.shared.array(shape, float32)
        sB = cuda.shared.array(shape, float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col = cuda.blockIdx.x * tile + tx
        M, K = A.shape
        N = B.shape[1]
        if row >= M or col >= N:
            return
        acc = float32(0.0)
        for t in range((K + tile - 1) // tile):
            kk = t * tile + tx
            sA[ty, tx] = A[row, kk] if kk < K else float32(0.0)
            kk = t * tile + ty
            sB[ty, tx] = B[kk, col] if kk < K else float32(0.0)
            cuda.syncthreads()
            for n in range(tile):
                acc += sA[ty, n] * sB[n, tx]
            cuda.syncthreads()
        C[row, col] = acc

    return k
