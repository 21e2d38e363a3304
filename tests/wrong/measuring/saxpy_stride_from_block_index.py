"""Wrong (issue 63, a slow wrong answer): the loop steps by blockDim.x * blockIdx.x, which is 0 in
block 0, so block 0's threads never leave the loop once the data outgrows the grid: an endless
loop. The checker's dry run in the emulator stops it after its time limit and says so, before
any real launch (on a GPU it would never finish)."""
from numba import cuda

CHECKER = "check_saxpy"
MODULE = "gpuperf.kernels.gridstride"


@cuda.jit
def kernel(a, x, y, out):
    i = cuda.grid(1)
    while i < x.shape[0]:
        out[i] = a * x[i] + y[i]
        i += cuda.blockDim.x * cuda.blockIdx.x
