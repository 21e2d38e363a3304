"""Correct: sequential addressing that stores only when the partner's value is larger, so the
threads that store at a step are not 0..s-1; the threads that read slot t + s are."""
import math

from numba import cuda, float32

NOTEBOOK, LABEL = "06_reduce", "ex-reduce-sequential"
BLOCK = 256
STEPS = (128, 64, 32, 16, 8, 4, 2, 1)


@cuda.jit
def my_sequential_max(x, partial, n):
    slots = cuda.shared.array(BLOCK, float32)
    t = cuda.threadIdx.x
    g = cuda.blockIdx.x * cuda.blockDim.x + t
    v = float32(-math.inf)
    if g < n:
        v = x[g]
    slots[t] = v
    cuda.syncthreads()
    for s in STEPS:
        if t < s:
            other = slots[t + s]
            if other > slots[t]:
                slots[t] = other
        cuda.syncthreads()
    if t == 0:
        partial[cuda.blockIdx.x] = slots[0]

