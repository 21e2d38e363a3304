"""Coarsened kernel that loads B without testing the column against N."""
from numba import cuda, float32

CHECKER = "check_coarsened"
MODULE = "gpuperf.kernels.coarsening"
KWARGS = {"tile": 4, "factor": 3}


def make_kernel(tile, factor):
    shape = (tile, tile)

    @cuda.jit
    def k(A, B, C):
        sA = cuda.shared.array(shape, float32)
        sB = cuda.shared.array(shape, float32)
        acc = cuda.local.array(factor, float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col_start = cuda.blockIdx.x * tile * factor + tx
        M, K = A.shape
        for c in range(factor):
            acc[c] = float32(0.0)
        for t in range((K + tile - 1) // tile):
            kk = t * tile + tx
            sA[ty, tx] = A[row, kk] if row < M and kk < K else float32(0.0)
            for c in range(factor):
                col = col_start + c * tile
                kk = t * tile + ty
                sB[ty, tx] = B[kk, col] if kk < K else float32(0.0)
                cuda.syncthreads()
                for n in range(tile):
                    acc[c] += sA[ty, n] * sB[n, tx]
                cuda.syncthreads()
        for c in range(factor):
            col = col_start + c * tile
            if row < M and col < C.shape[1]:
                C[row, col] = acc[c]

    return k
