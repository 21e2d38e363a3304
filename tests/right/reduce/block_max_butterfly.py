"""Correct: a butterfly (shfl_xor_sync) warp max, so every lane ends with the warp's max, and
the first warp reading the warp maxima it needs."""
import math

from numba import cuda, float32

NOTEBOOK, LABEL = "06_reduce_warps", "ex-reduce-block"
FULL = 0xFFFFFFFF


@cuda.jit(device=True)
def butterfly_max(v):
    mask = 16
    while mask > 0:
        v = max(v, cuda.shfl_xor_sync(FULL, v, mask))
        mask //= 2
    return v


@cuda.jit
def my_block_max(x, partial, n):
    per_warp = cuda.shared.array(32, float32)
    lane, warp = cuda.threadIdx.x & 31, cuda.threadIdx.x >> 5
    v = float32(-math.inf)
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        v = max(v, x[i])
    v = butterfly_max(v)
    if lane == 0:
        per_warp[warp] = v
    cuda.syncthreads()
    if warp == 0:
        warps = (cuda.blockDim.x + 31) // 32
        v = per_warp[lane] if lane < warps else float32(-math.inf)
        v = butterfly_max(v)
        if lane == 0:
            partial[cuda.blockIdx.x] = v
