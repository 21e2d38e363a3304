"""Wrong: threads past the end load x[n - 1] instead of -inf, the identity of max; with a grid
larger than ceil(n/256) (the exercise asks for any number of blocks) an empty block reports
x[n - 1] instead of -inf."""

from numba import cuda, float32

CHECKER = "check_sequential_max"

BLOCK = 256


@cuda.jit
def kernel(x, partial, n):
    sdata = cuda.shared.array(BLOCK, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK + tid
    sdata[tid] = x[min(i, n - 1)]
    cuda.syncthreads()
    s = BLOCK // 2
    while s > 0:
        if tid < s:
            sdata[tid] = max(sdata[tid], sdata[tid + s])
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = sdata[0]
