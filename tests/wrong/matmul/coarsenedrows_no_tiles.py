"""Wrong for this exercise (no tiles at all): a naive product whose factor sums sit in a
cuda.local.array; no shared memory; a cuda.syncthreads() at the end that orders nothing. The
checker counts one block's global loads in the emulator: every output reads its row and
column. (Found by a reviewer playing a student.)"""
from numba import cuda, float32

CHECKER = "check_coarsened"
MODULE = "gpuperf.kernels.coarsening"
KWARGS = {"tile": 4, "factor": 3, "along": "rows"}


def make_kernel(tile, factor):
    @cuda.jit
    def k(A, B, C):
        acc = cuda.local.array(factor, float32)
        col = cuda.blockIdx.x * tile + cuda.threadIdx.x
        row0 = cuda.blockIdx.y * tile * factor + cuda.threadIdx.y
        M, K = A.shape
        N = B.shape[1]
        for c in range(factor):
            acc[c] = float32(0.0)
            row = row0 + c * tile
            if row < M and col < N:
                for kk in range(K):
                    acc[c] += A[row, kk] * B[kk, col]
        cuda.syncthreads()
        for c in range(factor):
            row = row0 + c * tile
            if row < M and col < N:
                C[row, col] = acc[c]

    return k
