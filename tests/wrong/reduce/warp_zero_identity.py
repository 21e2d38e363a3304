"""Starts each thread's max at 0 (the identity of +): a block of negative numbers reports 0."""
from numba import cuda, float32

CHECKER = "check_block_max"

BLOCK = 256
WARPS = BLOCK // 32
FULL = 0xFFFFFFFF


@cuda.jit(device=True)
def warp_max(v):
    for offset in (16, 8, 4, 2, 1):
        v = max(v, cuda.shfl_down_sync(FULL, v, offset))
    return v


@cuda.jit
def kernel(x, partial, n):
    warp_maxima = cuda.shared.array(32, float32)
    tid = cuda.threadIdx.x
    lane, wid = tid % 32, tid // 32
    best = float32(0.0)
    i = cuda.grid(1)
    while i < n:
        best = max(best, x[i])
        i += cuda.gridsize(1)
    best = warp_max(best)
    if lane == 0:
        warp_maxima[wid] = best
    cuda.syncthreads()
    if wid == 0:
        best = warp_max(warp_maxima[lane] if lane < WARPS else float32(0.0))
        if lane == 0:
            partial[cuda.blockIdx.x] = best
