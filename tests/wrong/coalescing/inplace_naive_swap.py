"""Each thread above the diagonal swaps a[r, c] and a[c, r] straight in global memory: right,
but one of the two accesses of every swap walks a column (uncoalesced), and there is no tile."""
from numba import cuda

CHECKER = "check_inplace_transpose"

TILE, BLOCK_ROWS = 32, 8


@cuda.jit
def kernel(a):
    n = a.shape[0]
    c = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    for j in range(0, TILE, BLOCK_ROWS):
        r = cuda.blockIdx.y * TILE + cuda.threadIdx.y + j
        if r < c < n:
            a[r, c], a[c, r] = a[c, r], a[r, c]
    cuda.syncthreads()
