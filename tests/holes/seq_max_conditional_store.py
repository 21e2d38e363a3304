"""Correct: sequential addressing that stores only when the partner's value is larger. The
checker's record of who stores which shared slot sees threads that are not 0..s-1 (only those
whose partner was larger store) and calls it interleaved addressing: it should look at who
reads slot t + s (the loads), not at who stores."""
import math

from numba import cuda, float32

CHECKER, MODULE = "check_sequential_max", "gpuperf.kernels.reduce"
EXPECT = "accept"  # what a right checker does
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


student = my_sequential_max
