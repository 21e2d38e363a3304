"""v8's three ingredients (load width, loads per trip, accumulators), each chosen separately:
the kernels of the ablation and the plan that times one combination."""

from __future__ import annotations

import functools

from numba import cuda, float32  # gpuperf/__init__ has already chosen the mode

from gpuperf import validate
from gpuperf.vector import load_float4

from .host import Plan, default_blocks
from .kernels import WARP, _check_block
from .warps import make_block_sum

# v8's three changes over v7's loads, each undone in turn by make_v8_ablation.
ABLATION = ("width", "unroll", "accumulators")
# The combinations timed (width, unroll, accumulators), the plain grid-stride loop first.
ABLATION_CONFIGS = ((1, 1, 1), (1, 4, 1), (1, 4, 4), (4, 1, 1), (4, 1, 4), (4, 4, 1), (4, 4, 4))


@functools.lru_cache(maxsize=None, typed=True)
def make_v8_ablation(block: int, width: int, unroll: int, accumulators: int):
    """v8's loop with each of its three ingredients chosen separately, for the ablation.

    ``width``: floats per load, 4 (one 16-byte ``load_float4``) or 1 (``x[i]``).
    ``unroll``: loads a thread issues per loop trip before it adds, 1 or 4.
    ``accumulators``: independent running sums, 4 (one per vector lane, or per unrolled
    load for ``width=1``: v8's form) or 1 (every value added into one sum, one after another).
    ``make_v8_ablation(block, 4, 4, 4)`` is v8's loop; the study notes' v8 is ``(4, 1, 1)``.
    The three are compile-time constants: each combination compiles to its own kernel.
    """
    block = _check_block("v8", block)
    validate.choice(width, "width", (1, 4))
    validate.choice(unroll, "unroll", (1, 4))
    validate.choice(accumulators, "accumulators", (1, 4))
    if width == 1 and unroll == 1 and accumulators == 4:
        raise ValueError("accumulators=4 with width=1 and unroll=1 has nothing to spread: a "
                         "thread gets one value per loop trip. Use accumulators=1, or width=4 "
                         "or unroll=4.")
    block_sum = make_block_sum(block)

    @cuda.jit
    def reduce_v8_ablation(x, partial, n, head):
        warp_sums = cuda.shared.array(WARP, float32)
        tid = cuda.threadIdx.x
        g = cuda.blockIdx.x * block + tid
        stride = cuda.gridDim.x * block
        s0 = float32(0.0)
        s1 = float32(0.0)
        s2 = float32(0.0)
        s3 = float32(0.0)
        if width == 4:
            if g < head:
                s0 = x[g]
            units = (n - head) // 4  # 16-byte vectors after the head
        else:
            units = n  # single floats from the start: no alignment needed
        v = g
        if unroll == 4:
            while v + 3 * stride < units:
                if width == 4:
                    a = load_float4(x, head + 4 * v)
                    b = load_float4(x, head + 4 * (v + stride))
                    c = load_float4(x, head + 4 * (v + 2 * stride))
                    d = load_float4(x, head + 4 * (v + 3 * stride))
                    if accumulators == 4:
                        s0 += (a[0] + b[0]) + (c[0] + d[0])
                        s1 += (a[1] + b[1]) + (c[1] + d[1])
                        s2 += (a[2] + b[2]) + (c[2] + d[2])
                        s3 += (a[3] + b[3]) + (c[3] + d[3])
                    else:
                        for w in (a, b, c, d):
                            s0 += w[0]
                            s0 += w[1]
                            s0 += w[2]
                            s0 += w[3]
                else:
                    a = x[v]
                    b = x[v + stride]
                    c = x[v + 2 * stride]
                    d = x[v + 3 * stride]
                    if accumulators == 4:
                        s0 += a
                        s1 += b
                        s2 += c
                        s3 += d
                    else:
                        s0 += a
                        s0 += b
                        s0 += c
                        s0 += d
                v += 4 * stride
        while v < units:
            if width == 4:
                a = load_float4(x, head + 4 * v)
                if accumulators == 4:
                    s0 += a[0]
                    s1 += a[1]
                    s2 += a[2]
                    s3 += a[3]
                else:
                    s0 += a[0]
                    s0 += a[1]
                    s0 += a[2]
                    s0 += a[3]
            else:
                s0 += x[v]
            v += stride
        if width == 4:
            t = head + 4 * units + g  # at most three elements left over
            if t < n:
                s1 += x[t]
        total = block_sum((s0 + s1) + (s2 + s3), warp_sums)
        if tid == 0:
            partial[cuda.blockIdx.x] = total

    return reduce_v8_ablation


def ablation_plan(n: int, width: int, unroll: int, accumulators: int, *,
                  block: int | None = None, blocks: int | None = None) -> Plan:
    """v8's :class:`Plan` (its grid and second stage) with :func:`make_v8_ablation`'s kernel
    in the place of v8's: one combination of the ablation, ready to time."""
    n = validate.positive_int(n, "n")
    block = _check_block("v8", block)
    kernel = make_v8_ablation(block, width, unroll, accumulators)
    if blocks is None:
        blocks = default_blocks("v8", n, block)
    return Plan("v8", n, block, blocks, kernel=kernel,
                name=f"v8 ablation ({width}, {unroll}, {accumulators})")
