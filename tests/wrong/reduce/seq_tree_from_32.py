"""Wrong for this exercise (issue 63, structure): threads 0..31 first fold the block's slots
t + 32, t + 64, ... into slot t one by one, then a sequential-addressing tree runs over the 32
slots: right maxima, but the tree starts at 32 threads, not half the block (128). The emulator's
record shows the widest step."""
import math

from numba import cuda, float32

CHECKER = "check_sequential_max"
BLOCK = 256


@cuda.jit
def kernel(x, partial, n):
    s_max = cuda.shared.array(BLOCK, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK + tid
    s_max[tid] = x[i] if i < n else float32(-math.inf)
    cuda.syncthreads()
    if tid < 32:
        best = s_max[tid]
        for j in range(tid + 32, BLOCK, 32):
            best = max(best, s_max[j])
        s_max[tid] = best
    cuda.syncthreads()
    s = 16
    while s > 0:
        if tid < s:
            s_max[tid] = max(s_max[tid], s_max[tid + s])
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = s_max[0]
