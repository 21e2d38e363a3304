"""Rows and columns of C are guarded, but not the k index of the tile loads."""
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
            sA[ty, tx] = A[row, t * tile + tx] if row < M else float32(0.0)
            sB[ty, tx] = B[t * tile + ty, col] if col < N else float32(0.0)
            cuda.syncthreads()
            for n in range(tile):
                acc += sA[ty, n] * sB[n, tx]
            cuda.syncthreads()
        if row < M and col < N:
            C[row, col] = acc

    return k
