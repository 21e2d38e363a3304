"""Wrong for this exercise: the tile of A is turned and padded by one float, as chapter 2.1's
transpose pads it. With 16 x 16 blocks a warp covers two rows of the block, so the turned store
writes down two columns at once, and one pair of its lanes still shares a bank: a 2-way
conflict, where the exercise asks for none."""
from numba import cuda, float32

CHECKER = "check_tiled"
KWARGS = {"tile": 4, "a_transposed": True}


def make_kernel(tile):
    padded = (tile, tile + 1)
    shape = (tile, tile)

    @cuda.jit
    def k(At, B, C):
        sA = cuda.shared.array(padded, float32)
        sB = cuda.shared.array(shape, float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col = cuda.blockIdx.x * tile + tx
        K, M = At.shape
        N = B.shape[1]
        acc = float32(0.0)
        for t in range((K + tile - 1) // tile):
            kk = t * tile + ty
            r = cuda.blockIdx.y * tile + tx
            sA[tx, ty] = At[kk, r] if kk < K and r < M else float32(0.0)
            sB[ty, tx] = B[kk, col] if kk < K and col < N else float32(0.0)
            cuda.syncthreads()
            for n in range(tile):
                acc += sA[ty, n] * sB[n, tx]
            cuda.syncthreads()
        if row < M and col < N:
            C[row, col] = acc

    return k
