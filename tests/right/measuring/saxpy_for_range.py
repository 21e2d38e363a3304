"""Correct: the grid-stride loop written as a for over range(start, n, stride)."""
from numba import cuda

NOTEBOOK, LABEL = "01_measuring", "ex-measuring-saxpy"


@cuda.jit
def my_saxpy(a, x, y, out):
    for i in range(cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x, out.shape[0],
                   cuda.blockDim.x * cuda.gridDim.x):
        out[i] = y[i] + x[i] * a
