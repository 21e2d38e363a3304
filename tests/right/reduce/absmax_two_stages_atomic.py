"""Correct: max |x| with one grid-stride kernel whose blocks combine their warp maxima in
shared memory and then with one atomic max on a device scalar (|x| >= 0, so the maximum of
float32 values is well defined for cuda.atomic.max); only that scalar comes back. Right in
every case; on a GPU the checker also times it against v8, which plain 4-byte loads may not
reach."""
import math

import numpy as np
from numba import cuda, float32

NOTEBOOK, LABEL = "06_reduce_measured", "ex-reduce-absmax"
BELOW_SPEED_BAR = ("right outputs; plain 4-byte loads reached 56% of v8 on the H200 (judge.py, "
                   "2026-12-04), under the exercise's bar")
FULL = 0xFFFFFFFF


@cuda.jit
def absmax_kernel(x, result):
    per_warp = cuda.shared.array(32, float32)
    lane, warp = cuda.threadIdx.x % 32, cuda.threadIdx.x // 32
    v = float32(0.0)
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        v = max(v, abs(x[i]))
    for offset in (16, 8, 4, 2, 1):
        v = max(v, cuda.shfl_down_sync(FULL, v, offset))
    if lane == 0:
        per_warp[warp] = v
    cuda.syncthreads()
    if warp == 0:
        v = per_warp[lane] if lane < cuda.blockDim.x // 32 else float32(0.0)
        for offset in (16, 8, 4, 2, 1):
            v = max(v, cuda.shfl_down_sync(FULL, v, offset))
        if lane == 0:
            cuda.atomic.max(result, 0, v)


def my_absmax(d_x):
    result = cuda.to_device(np.zeros(1, dtype=np.float32))
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    blocks = max(1, min(8 * sms, math.ceil(d_x.size / 256)))
    absmax_kernel[blocks, 256](d_x, result)
    return float(result.copy_to_host()[0])
