"""Wrong (issue 63, memory read before it is written): the running sums live in a local array
that is never set to zero. On a GPU a fresh local array (registers) often happens to hold 0,
so the product can come out right there; the emulator's run with unwritten memory reading NaN
differs from its run with it reading 0, in every mode."""
from numba import cuda, float32

CHECKER = "check_coarsened"
MODULE = "gpuperf.kernels.coarsening"
KWARGS = {"tile": 4, "factor": 3, "along": "rows"}


def make_kernel(tile, factor):
    a_tiles, b_tile = (factor, tile, tile), (tile, tile)

    @cuda.jit
    def k(A, B, C):
        sA = cuda.shared.array(a_tiles, float32)
        sB = cuda.shared.array(b_tile, float32)
        sums = cuda.local.array(factor, float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        M, K = A.shape
        N = B.shape[1]
        col = cuda.blockIdx.x * tile + tx
        first_row = cuda.blockIdx.y * tile * factor + ty
        for t in range((K + tile - 1) // tile):
            kb, ka = t * tile + ty, t * tile + tx
            sB[ty, tx] = B[kb, col] if kb < K and col < N else float32(0.0)
            for c in range(factor):
                row = first_row + c * tile
                sA[c, ty, tx] = A[row, ka] if row < M and ka < K else float32(0.0)
            cuda.syncthreads()
            for c in range(factor):
                for n in range(tile):
                    sums[c] += sA[c, ty, n] * sB[n, tx]
            cuda.syncthreads()
        for c in range(factor):
            if first_row + c * tile < M and col < N:
                C[first_row + c * tile, col] = sums[c]

    return k
