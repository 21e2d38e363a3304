"""The Numba article's bounds test: `and` where `or` is needed, and a return before the barrier."""
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
        if row >= C.shape[0] and col >= C.shape[1]:
            return
        acc = float32(0.0)
        for t in range((A.shape[1] + tile - 1) // tile):
            sA[ty, tx] = A[row, t * tile + tx]
            sB[ty, tx] = B[t * tile + ty, col]
            cuda.syncthreads()
            for n in range(tile):
                acc += sA[ty, n] * sB[n, tx]
            cuda.syncthreads()
        C[row, col] = acc

    return k
