"""Wrong (issue 63, memory read before it is written): the first warp reads all 32 slots of the
warp maxima, though only blockDim.x // 32 = 8 were written; slots 8..31 hold whatever shared
memory held. On a GPU that is often 0 and then the max is wrong only for all-negative data...
or, as here, the unwritten slots are skipped only when they hold NaN (max(v, NaN) keeps v in
this kernel's comparison), so the answer is right when shared memory is poisoned and wrong
when it reads 0."""
import math

from numba import cuda, float32

CHECKER = "check_block_max"
FULL = 0xFFFFFFFF


@cuda.jit(device=True)
def warp_max(v):
    off = 16
    while off > 0:
        other = cuda.shfl_down_sync(FULL, v, off)
        if other > v:  # a NaN never wins this comparison
            v = other
        off //= 2
    return v


@cuda.jit
def kernel(x, partial, n):
    maxima = cuda.shared.array(32, float32)
    tid = cuda.threadIdx.x
    lane, wid = tid % 32, tid // 32
    best = float32(-math.inf)
    i = cuda.grid(1)
    while i < n:
        if x[i] > best:
            best = x[i]
        i += cuda.gridsize(1)
    best = warp_max(best)
    if lane == 0:
        maxima[wid] = best
    cuda.syncthreads()
    if wid == 0:
        v = maxima[lane]  # lanes 8..31 read slots no warp wrote
        v = warp_max(v)
        if lane == 0:
            partial[cuda.blockIdx.x] = v
