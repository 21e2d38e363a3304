"""Wrong for this exercise (no reuse of B): the tile of B is loaded again for each of the
`factor` tiles of A, inside the c loop, with the barriers it needs: right values, but B is read
factor times per step, which is what coarsening along the rows is meant to avoid. The checker
counts one block's global loads in the emulator. (Found by a reviewer playing a student, when
check_coarsened counted no loads.)"""
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
        acc = cuda.local.array(factor, float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        col = cuda.blockIdx.x * tile + tx
        row_start = cuda.blockIdx.y * tile * factor + ty
        M, K = A.shape
        N = B.shape[1]
        for c in range(factor):
            acc[c] = float32(0.0)
        for t in range((K + tile - 1) // tile):
            for c in range(factor):
                kb = t * tile + ty
                sB[ty, tx] = B[kb, col] if kb < K and col < N else float32(0.0)
                row = row_start + c * tile
                ka = t * tile + tx
                sA[ty, tx] = A[row, ka] if row < M and ka < K else float32(0.0)
                cuda.syncthreads()
                for n in range(tile):
                    acc[c] += sA[ty, n] * sB[n, tx]
                cuda.syncthreads()
        for c in range(factor):
            row = row_start + c * tile
            if row < M and col < N:
                C[row, col] = acc[c]

    return k
