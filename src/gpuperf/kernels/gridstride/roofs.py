"""Read kernels for the roofs of chapter 4's roofline: how fast the L2, shared memory and the
L1 deliver bytes (experiments ``profiling_l2_bandwidth`` and ``profiling_onchip_roofs``).

``read_passes`` (with ``read_step``): a buffer that fits in the L2, read again and again.
The on-chip reads (``shared_read4``, ``shared_read16``, ``l1_read4``, ``l1_read16``,
``mixed_read16``, listed in ``ONCHIP_READS``), with ``onchip_values`` and
``onchip_expected``, their input and every thread's expected sum.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, float32  # gpuperf/__init__ has already chosen the mode

from gpuperf import validate
from gpuperf.vector import load4, load_float4


@cuda.jit
def read_passes(x, passes, step, out):
    """Read ``x`` (float32, a multiple of 4 elements) ``passes`` times with 16-byte loads and
    write each thread's sum to ``out[thread]``, so that no load can be dropped. The L2's read
    bandwidth (``profiling_l2_bandwidth``): a buffer that fits in the L2, read again and again.

    Pass ``p`` moves every thread's grid-stride share ``p * step`` quads along (mod the buffer):
    without it each SM would read the same addresses in every pass, and its L1, not the L2,
    would serve them. Four passes go together, so four loads are in flight even when a pass
    gives a thread one quad."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    quads = x.size // 4
    acc = float32(0.0)
    shift = 0   # p * step mod quads, for the group's first pass
    for _ in range(passes // 4):
        s1 = shift + step
        if s1 >= quads:
            s1 -= quads
        s2 = s1 + step
        if s2 >= quads:
            s2 -= quads
        s3 = s2 + step
        if s3 >= quads:
            s3 -= quads
        k = start
        while k < quads:
            q0, q1, q2, q3 = k + shift, k + s1, k + s2, k + s3
            q0 = q0 - quads if q0 >= quads else q0
            q1 = q1 - quads if q1 >= quads else q1
            q2 = q2 - quads if q2 >= quads else q2
            q3 = q3 - quads if q3 >= quads else q3
            a = load_float4(x, 4 * q0)
            b = load_float4(x, 4 * q1)
            c = load_float4(x, 4 * q2)
            d = load_float4(x, 4 * q3)
            acc += ((a[0] + a[1] + a[2] + a[3]) + (b[0] + b[1] + b[2] + b[3])
                    + (c[0] + c[1] + c[2] + c[3]) + (d[0] + d[1] + d[2] + d[3]))
            k += stride
        shift = s3 + step
        if shift >= quads:
            shift -= quads
    for _ in range(passes % 4):
        k = start
        while k < quads:
            q = k + shift
            q = q - quads if q >= quads else q
            a = load_float4(x, 4 * q)
            acc += a[0] + a[1] + a[2] + a[3]
            k += stride
        shift += step
        if shift >= quads:
            shift -= quads
    if start < out.size:
        out[start] = acc


def read_step(quads: int) -> int:
    """``read_passes``'s shift between passes for a buffer of ``quads`` 16-byte quads: about
    0.618 of the buffer (successive passes land far from each other), a multiple of 32 quads
    (a warp's loads stay 512-byte aligned), less than ``quads``."""
    quads = validate.positive_int(quads, "quads")
    return int(quads * 0.6180339887) // 32 * 32 % quads


# The SMs' own roofs: how fast shared memory and the L1 cache deliver bytes (the roofs inside
# the SM on chapter 4's roofline). Every thread of every block reads a 16 KiB buffer again and
# again, a warp's 32 lanes on 32 consecutive slots (one 128-byte wavefront per 4-byte load,
# four per 16-byte load: no bank conflict), from shared memory or from a global buffer, which
# after its first touch stays in each SM's L1 (global loads are cached there by default).
# Each read's address moves with the loop counter by a runtime step, so the compiler cannot
# hoist a load out of the loop, and every thread adds what it reads and stores the sum.
ONCHIP_WORDS = 4096              # 16 KiB of float32
ONCHIP_QUADS = ONCHIP_WORDS // 4
ONCHIP_UNROLL = 8
# The unrolled reads of one trip must land on ONCHIP_UNROLL distinct slots: the compiler loads
# equal addresses once (with one stride for both widths, the 16-byte kernels' reads k and k + 2
# coincided, a quarter of the loads were executed, and the rate read four times too high).
_WORD_STRIDE = ONCHIP_WORDS // ONCHIP_UNROLL
_QUAD_STRIDE = ONCHIP_QUADS // ONCHIP_UNROLL


@cuda.jit
def shared_read4(src, reads, step, out):
    """Copy ``src`` (ONCHIP_WORDS floats) into shared memory, then read it ``reads`` times per
    thread, 4 bytes a load."""
    sh = cuda.shared.array(ONCHIP_WORDS, float32)
    t = cuda.threadIdx.x
    for i in range(t, ONCHIP_WORDS, cuda.blockDim.x):
        sh[i] = src[i]
    cuda.syncthreads()
    acc = float32(0.0)
    r = 0
    while r < reads:
        base = t + r * step
        for k in range(ONCHIP_UNROLL):
            acc += sh[(base + k * _WORD_STRIDE) & (ONCHIP_WORDS - 1)]
        r += ONCHIP_UNROLL
    out[cuda.grid(1)] = acc


@cuda.jit
def shared_read16(src, reads, step, out):
    """``shared_read4`` with 16-byte loads (``load4``: one LDS.128, four floats)."""
    sh = cuda.shared.array((ONCHIP_QUADS, 4), float32)
    t = cuda.threadIdx.x
    for i in range(t, ONCHIP_WORDS, cuda.blockDim.x):
        sh[i // 4, i % 4] = src[i]
    cuda.syncthreads()
    acc = float32(0.0)
    r = 0
    while r < reads:
        base = t + r * step
        for k in range(ONCHIP_UNROLL):
            a, b, c, d = load4(sh, (base + k * _QUAD_STRIDE) & (ONCHIP_QUADS - 1), 0)
            acc += (a + b) + (c + d)
        r += ONCHIP_UNROLL
    out[cuda.grid(1)] = acc


@cuda.jit
def l1_read4(src, reads, step, out):
    """Read the global buffer ``src`` ``reads`` times per thread, 4 bytes a load: after the
    first touch every SM's L1 holds all of it."""
    t = cuda.threadIdx.x
    acc = float32(0.0)
    r = 0
    while r < reads:
        base = t + r * step
        for k in range(ONCHIP_UNROLL):
            acc += src[(base + k * _WORD_STRIDE) & (ONCHIP_WORDS - 1)]
        r += ONCHIP_UNROLL
    out[cuda.grid(1)] = acc


@cuda.jit
def l1_read16(src, reads, step, out):
    """``l1_read4`` with 16-byte loads."""
    t = cuda.threadIdx.x
    acc = float32(0.0)
    r = 0
    while r < reads:
        base = t + r * step
        for k in range(ONCHIP_UNROLL):
            a, b, c, d = load_float4(src, 4 * ((base + k * _QUAD_STRIDE) & (ONCHIP_QUADS - 1)))
            acc += (a + b) + (c + d)
        r += ONCHIP_UNROLL
    out[cuda.grid(1)] = acc


@cuda.jit
def mixed_read16(src, reads, step, out):
    """Half of ``shared_read16``'s loads and half of ``l1_read16``'s, alternating: if shared
    memory and the L1 had a data pipe each, this kernel could read faster than either alone;
    with one pipe between them it cannot."""
    sh = cuda.shared.array((ONCHIP_QUADS, 4), float32)
    t = cuda.threadIdx.x
    for i in range(t, ONCHIP_WORDS, cuda.blockDim.x):
        sh[i // 4, i % 4] = src[i]
    cuda.syncthreads()
    acc = float32(0.0)
    r = 0
    while r < reads:
        base = t + r * step
        for k in range(0, ONCHIP_UNROLL, 2):
            a, b, c, d = load4(sh, (base + k * _QUAD_STRIDE) & (ONCHIP_QUADS - 1), 0)
            e, f, g, h = load_float4(
                src, 4 * ((base + (k + 1) * _QUAD_STRIDE) & (ONCHIP_QUADS - 1)))
            acc += ((a + b) + (c + d)) + ((e + f) + (g + h))
        r += ONCHIP_UNROLL
    out[cuda.grid(1)] = acc


# name: (kernel, where the bytes come from, bytes per load, slots in the buffer)
ONCHIP_READS = {"shared4": (shared_read4, "shared", 4, ONCHIP_WORDS),
                "shared16": (shared_read16, "shared", 16, ONCHIP_QUADS),
                "l1_4": (l1_read4, "L1", 4, ONCHIP_WORDS),
                "l1_16": (l1_read16, "L1", 16, ONCHIP_QUADS),
                "mixed16": (mixed_read16, "shared+L1", 16, ONCHIP_QUADS)}
ONCHIP_STEP = 32 * 3   # a runtime step that keeps a warp on 32 consecutive slots


def onchip_values() -> np.ndarray:
    """The buffer the on-chip read kernels read: small whole numbers, whose float32 sums are
    exact below 2^24."""
    return (np.arange(ONCHIP_WORDS) % 7 + 1).astype(np.float32)


def onchip_expected(name: str, reads: int, block: int, blocks: int,
                    step: int = ONCHIP_STEP) -> np.ndarray:
    """Every thread's sum from ``ONCHIP_READS[name]``'s kernel, computed in NumPy from the
    same addresses (float64; equal to the kernel's float32 sums while they stay below 2^24)."""
    if name not in ONCHIP_READS:
        raise ValueError(f"name must be one of {sorted(ONCHIP_READS)}, not {name!r}.")
    for value, what in ((reads, "reads"), (block, "block"), (blocks, "blocks")):
        validate.positive_int(value, what)
    validate.integer(step, "step", minimum=0)
    if reads % ONCHIP_UNROLL:
        raise ValueError(f"reads must be a multiple of {ONCHIP_UNROLL} (the kernels read "
                         f"{ONCHIP_UNROLL} slots a trip), not {reads}.")
    _, _, width, slots = ONCHIP_READS[name]
    v = onchip_values().astype(np.float64)
    per_slot = v.reshape(-1, 4).sum(1) if width == 16 else v
    t = np.arange(block)[:, None]
    stride = slots // ONCHIP_UNROLL
    idx = np.concatenate([(t + r * step + k * stride) & (slots - 1)
                          for r in range(0, reads, ONCHIP_UNROLL)
                          for k in range(ONCHIP_UNROLL)], axis=1)
    return np.tile(per_slot[idx].sum(1), blocks)
