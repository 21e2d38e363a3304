"""Warp 0 reads all 32 warp slots, though a block of 256 threads fills only 8."""
from numba import cuda, float32

FULL = 0xFFFFFFFF


@cuda.jit(device=True)
def warp_sum(v):
    for offset in (16, 8, 4, 2, 1):
        v += cuda.shfl_down_sync(FULL, v, offset)
    return v


@cuda.jit
def kernel(x, partial, n):
    warp_sums = cuda.shared.array(32, float32)
    tid = cuda.threadIdx.x
    lane, wid = tid % 32, tid // 32
    total = float32(0.0)
    i = cuda.grid(1)
    while i < n:
        total += x[i]
        i += cuda.gridsize(1)
    total = warp_sum(total)
    if lane == 0:
        warp_sums[wid] = total
    cuda.syncthreads()
    if wid == 0:
        total = warp_sum(warp_sums[lane])  # slots 8..31 were never written
        if lane == 0:
            partial[cuda.blockIdx.x] = total
