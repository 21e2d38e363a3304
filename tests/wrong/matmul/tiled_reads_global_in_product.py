"""Wrong: loads both tiles into shared memory with both barriers, but the inner product reads A
and B from global memory (sA/sB are never read): a naive matmul in disguise, no reuse at
all."""
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
            ka, kb = t * tile + tx, t * tile + ty
            sA[ty, tx] = A[row, ka] if row < M and ka < K else float32(0.0)
            sB[ty, tx] = B[kb, col] if kb < K and col < N else float32(0.0)
            cuda.syncthreads()
            if row < M and col < N:
                for n in range(min(tile, K - t * tile)):
                    acc += A[row, t * tile + n] * B[t * tile + n, col]
            cuda.syncthreads()
        if row < M and col < N:
            C[row, col] = acc

    return k
