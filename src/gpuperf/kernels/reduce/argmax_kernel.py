"""argmax in one launch: each thread's best (value, index), warp shuffles, one barrier, and
the last block to finish reduces the blocks' pairs (as ``make_single_pass`` does the sums)."""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import cuda, float32, int32, int64  # gpuperf/__init__ has already chosen the mode

from gpuperf import validate
from gpuperf.vector import load_float4

from .host import head_elements
from .kernels import DEFAULT_BLOCK, FULL_MASK, WARP, _check_block
from .single_pass import _one_launch, _one_launch_arguments

# The argmax kernel's Numba signature (for one_wave, PTX and resource queries).
_SIG_ARGMAX = ("void(float32[::1], float32[::1], int64[::1], int32[::1], int64[::1], int64, "
               "int64)")


@cuda.jit(device=True, inline=True)
def _beats(a, ia, b, ib):
    """Whether (value a, index ia) wins over (b, ib) in an argmax that agrees with NumPy's: a
    NaN beats any number, and among equal values (or two NaNs) the smaller index wins."""
    if a != a or b != b:  # a NaN on either side
        return (a != a) and (b == b or ia < ib)
    return a > b or (a == b and ia < ib)


@cuda.jit(device=True, inline=True)
def warp_argmax(v, i):
    """The winning (value, index) of a warp's 32 pairs (see ``_beats``); lane 0 gets it."""
    for offset in (16, 8, 4, 2, 1):
        ov = cuda.shfl_down_sync(FULL_MASK, v, offset)
        oi = cuda.shfl_down_sync(FULL_MASK, i, offset)
        if _beats(ov, oi, v, i):
            v = ov
            i = oi
    return v, i


@functools.lru_cache(maxsize=None, typed=True)
def make_argmax(block: int, width: int = 4):
    """The index of the largest element in one launch: a grid-stride scan keeps each
    thread's best (value, index), warp shuffles and one barrier reduce the block's pairs, and
    the last block to finish (a ticket after a memory fence, as in ``make_single_pass``)
    reduces the blocks' pairs. Ties go to the smallest index and a NaN wins, as in
    ``np.argmax``. Each block's pair is a value and an index: a reduction carries whatever
    its operator needs, not only a sum.

    ``width``: 1 reads one float per loop trip (the plain grid-stride loop); 4 reads v8's
    16-byte vectors (``head`` elements one at a time first) and keeps four (value, index)
    pairs, one per vector lane, merged at the end. Each pair sees its indices in increasing
    order, so in the loop "better" is only "larger, or the first NaN".
    """
    block = _check_block("v8", block)
    width = validate.choice(validate.positive_int(width, "width"), "width", (1, 4))
    warps = block // WARP

    @cuda.jit(device=True, inline=True)
    def block_argmax(v, i, warp_vals, warp_idx):
        lane = cuda.threadIdx.x % WARP
        wid = cuda.threadIdx.x // WARP
        v, i = warp_argmax(v, i)
        if lane == 0:
            warp_vals[wid] = v
            warp_idx[wid] = i
        cuda.syncthreads()
        if wid == 0:
            v = warp_vals[lane] if lane < warps else float32(-math.inf)
            i = warp_idx[lane] if lane < warps else warp_idx[0]
            v, i = warp_argmax(v, i)
        return v, i

    @cuda.jit(device=True, inline=True)
    def scan(x, n, head):
        """This thread's best (value, index) of its share of ``x``."""
        best = float32(-math.inf)
        at = int64(n)  # past the end: loses to any element, even -inf, on its index
        g = cuda.blockIdx.x * block + cuda.threadIdx.x
        stride = cuda.gridDim.x * block
        if width == 1:
            j = g
            while j < n:
                if _beats(x[j], j, best, at):
                    best = x[j]
                    at = j
                j += stride
            return best, at
        # Four pairs, one per lane of the vector. A pair replaces its value only by a
        # larger one or by the first NaN (best == best: no NaN kept yet): its indices only
        # grow, so ties keep the earlier index. A pair still at the sentinel takes any value.
        b0 = float32(-math.inf)
        b1 = float32(-math.inf)
        b2 = float32(-math.inf)
        b3 = float32(-math.inf)
        i0 = int64(n)
        i1 = int64(n)
        i2 = int64(n)
        i3 = int64(n)
        if g < head:
            b0 = x[g]
            i0 = g
        nvec = (n - head) // 4
        v = g
        while v < nvec:
            a = load_float4(x, head + 4 * v)
            base = head + 4 * v
            if (not a[0] <= b0 and b0 == b0) or i0 == n:
                b0 = a[0]
                i0 = base
            if (not a[1] <= b1 and b1 == b1) or i1 == n:
                b1 = a[1]
                i1 = base + 1
            if (not a[2] <= b2 and b2 == b2) or i2 == n:
                b2 = a[2]
                i2 = base + 2
            if (not a[3] <= b3 and b3 == b3) or i3 == n:
                b3 = a[3]
                i3 = base + 3
            v += stride
        t = head + 4 * nvec + g  # at most three elements left over, after every vector
        if t < n and _beats(x[t], t, b1, i1):
            b1 = x[t]
            i1 = t
        if _beats(b1, i1, b0, i0):
            b0 = b1
            i0 = i1
        if _beats(b3, i3, b2, i2):
            b2 = b3
            i2 = i3
        if _beats(b2, i2, b0, i0):
            b0 = b2
            i0 = i2
        return b0, i0

    @cuda.jit
    def argmax_kernel(x, part_vals, part_idx, ticket, out, n, head):
        warp_vals = cuda.shared.array(WARP, float32)
        warp_idx = cuda.shared.array(WARP, int64)
        is_last = cuda.shared.array(1, int32)
        tid = cuda.threadIdx.x
        best, at = scan(x, n, head)
        best, at = block_argmax(best, at, warp_vals, warp_idx)
        if tid == 0:
            part_vals[cuda.blockIdx.x] = best
            part_idx[cuda.blockIdx.x] = at
            cuda.threadfence()
            is_last[0] = int32(1) if cuda.atomic.add(ticket, 0, 1) == cuda.gridDim.x - 1 else int32(0)
        cuda.syncthreads()
        if is_last[0]:
            best = float32(-math.inf)
            at = int64(n)
            cuda.threadfence()  # the reading side's fence (see make_single_pass)
            for b in range(tid, cuda.gridDim.x, block):
                v = part_vals[b]
                i = part_idx[b]
                if _beats(v, i, best, at):
                    best = v
                    at = i
            cuda.syncthreads()  # the first block_argmax's reads of warp_vals are done
            best, at = block_argmax(best, at, warp_vals, warp_idx)
            if tid == 0:
                out[0] = at
                ticket[0] = 0

    return argmax_kernel


def _argmax_calls(d_x, n: int, grid: int, block: int, width: int = 4):
    """``(run, fetch, packed)``: one call of ``make_argmax`` on ``d_x`` (its buffers allocated
    once), the index the last call found, and whether the launch is packed."""
    part_vals = cuda.device_array(grid, dtype=np.float32)
    part_idx = cuda.device_array(grid, dtype=np.int64)
    ticket = cuda.to_device(np.zeros(1, dtype=np.int32))
    out = cuda.device_array(1, dtype=np.int64)
    run, packed = _one_launch(make_argmax(block, width), grid, block, d_x, part_vals, part_idx,
                              ticket, out, n, head_elements(d_x, n))
    return run, lambda: int(out.copy_to_host()[0]), packed


def argmax(x, *, block: int = DEFAULT_BLOCK, blocks: int | None = None, width: int = 4) -> int:
    """The index of the largest element of the float32 vector ``x`` (NumPy or device array),
    as ``np.argmax`` gives it (the first of equal maxima; the first NaN if there is one), in
    one launch of ``make_argmax``. ``block``: a multiple of 32 up to 1024; ``blocks``: the
    grid (by default one full wave: every SM gets as many blocks as it can hold); ``width``:
    floats per load, 4 (16-byte vectors) or 1."""
    width = validate.choice(validate.positive_int(width, "width"), "width", (1, 4))
    d_x, n, block, blocks = _one_launch_arguments(x, block, blocks,
                                                  lambda b: make_argmax(b, width), _SIG_ARGMAX)
    run, fetch, _ = _argmax_calls(d_x, n, blocks, block, width)
    run()
    return fetch()
