"""Correct: every step loads the `factor` tiles of A into one (tile * factor) x tile shared
array and B's tile once, one barrier pair per step; sums start from int 0."""
from numba import cuda, float32

NOTEBOOK, LABEL = "05_coarsening", "ex-coarsening-coarsen"


def make_my_coarsened_rows(tile, factor):
    a_shape = (tile * factor, tile)
    b_shape = (tile, tile)
    @cuda.jit
    def k(A, B, C):
        sA = cuda.shared.array(a_shape, float32)
        sB = cuda.shared.array(b_shape, float32)
        acc = cuda.local.array(factor, float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        M, K = A.shape
        N = B.shape[1]
        col = cuda.blockIdx.x * tile + tx
        base = cuda.blockIdx.y * tile * factor
        for c in range(factor):
            acc[c] = 0
        for t0 in range(0, K, tile):
            kb = t0 + ty
            sB[ty, tx] = B[kb, col] if kb < K and col < N else 0
            for c in range(factor):
                r = base + c * tile + ty
                ka = t0 + tx
                sA[c * tile + ty, tx] = A[r, ka] if r < M and ka < K else 0
            cuda.syncthreads()
            for c in range(factor):
                s = float32(0)
                for q in range(tile):
                    s += sA[c * tile + ty, q] * sB[q, tx]
                acc[c] += s
            cuda.syncthreads()
        for c in range(factor):
            r = base + c * tile + ty
            if r < M and col < N:
                C[r, col] = acc[c]
    return k
