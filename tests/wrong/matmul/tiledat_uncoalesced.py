"""Right, but reads At down its columns: each warp's load touches 16 rows (uncoalesced)."""
from numba import cuda, float32

CHECKER = "check_tiled"
KWARGS = {"tile": 4, "a_transposed": True}


def make_kernel(tile):
    shape = (tile, tile)

    @cuda.jit
    def k(At, B, C):
        sA = cuda.shared.array(shape, float32)
        sB = cuda.shared.array(shape, float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col = cuda.blockIdx.x * tile + tx
        K, M = At.shape
        N = B.shape[1]
        acc = float32(0.0)
        for t in range((K + tile - 1) // tile):
            kk = t * tile + tx
            sA[ty, tx] = At[kk, row] if kk < K and row < M else float32(0.0)
            kk = t * tile + ty
            sB[ty, tx] = B[kk, col] if kk < K and col < N else float32(0.0)
            cuda.syncthreads()
            for n in range(tile):
                acc += sA[ty, n] * sB[n, tx]
            cuda.syncthreads()
        if row < M and col < N:
            C[row, col] = acc

    return k
