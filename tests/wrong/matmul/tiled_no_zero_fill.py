"""Out-of-range tile elements are skipped instead of set to zero: stale shared memory."""
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
        acc = float32(0.0)
        for t in range((K + tile - 1) // tile):
            if row < M and t * tile + tx < K:
                sA[ty, tx] = A[row, t * tile + tx]
            if t * tile + ty < K and col < N:
                sB[ty, tx] = B[t * tile + ty, col]
            cuda.syncthreads()
            for n in range(tile):
                acc += sA[ty, n] * sB[n, tx]
            cuda.syncthreads()
        if row < M and col < N:
            C[row, col] = acc

    return k
