"""Stores every one of the `factor` rows, even past the bottom of C."""
from numba import cuda, float32

CHECKER = "check_coarsened"
MODULE = "gpuperf.kernels.coarsening"
KWARGS = {"tile": 4, "factor": 3, "along": "rows"}


def make_kernel(tile, factor):
    shape = (tile, tile)

    @cuda.jit
    def k(A, B, C):
        sA = cuda.shared.array(shape, float32)
        sB = cuda.shared.array(shape, float32)
        acc = cuda.local.array(factor, float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        col = cuda.blockIdx.x * tile + tx
        row_start = cuda.blockIdx.y * tile * factor + ty
        M, K = A.shape
        N = B.shape[1]
        for c in range(factor):
            acc[c] = float32(0.0)
        for t in range((K + tile - 1) // tile):
            kk = t * tile + ty
            sB[ty, tx] = B[kk, col] if kk < K and col < N else float32(0.0)
            for c in range(factor):
                row = row_start + c * tile
                kk = t * tile + tx
                sA[ty, tx] = A[row, kk] if row < M and kk < K else float32(0.0)
                cuda.syncthreads()
                for n in range(tile):
                    acc[c] += sA[ty, n] * sB[n, tx]
                cuda.syncthreads()
        for c in range(factor):
            row = row_start + c * tile
            if col < N:
                C[row, col] = acc[c]

    return k
