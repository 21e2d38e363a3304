"""Chapter "Thread coarsening": more work per thread, from the textbook kernel to SGEMM.

Kernels
-------
``make_coarsened(tile, factor)``: the textbook's coarsened tiled matmul. A block of
tile x tile threads computes a tile x (tile * factor) piece of C: it loads each tile of
A once and reuses it for ``factor`` tiles of B, where the plain tiled kernel has
``factor`` blocks load the same A tile.
``vecadd`` and ``make_vecadd_coarsened(factor)``: coarsening where parallelism costs
nothing (pitfall 1).
``make_regtile_scalar(bm, bn, bk, tm, tn)``: 2D register tiling, first form. A block
computes bm x bn of C; each thread a tm x tn block of it, held in registers, so each
value read from shared memory feeds tm or tn multiply-adds instead of one.
``make_regtile(bm, bn, bk, tm, tn, prefetch=...)``: the same with the A tile stored
transposed, 16-byte loads from global and shared memory (``matmul.load4``), each
thread's outputs split in 4-wide groups so that a warp's shared loads hit 32 distinct
banks, no bounds tests for tiles inside the matrices (but correct tails), and with
``prefetch=True`` the next tile's global loads issued before the current tile's math.

Experiments (``matmul_*``)
--------------------------
``matmul_coarsen_sweep``: factor x size, with blocks, waves and occupancy.
``matmul_vecadd_coarsen``: vector add against factor (little gain, none from reuse).
``matmul_regtile_sweep``: block tile and TM x TN against TFLOP/s and occupancy.
``matmul_resources``: registers, shared memory, local memory and occupancy of every variant.
``matmul_ladder``: every step at 4096^3 with its % of cuBLAS.
"""

from __future__ import annotations

import functools
import math
import numbers
import threading

import numpy as np
from numba import cuda, float32  # noqa: E402,I001  (after gpuperf: the mode is chosen first)

from .. import bench, device, validate
from .. import exercises as ex
from ..mode import SIMULATOR
from ..records import experiment
from . import matmul as mm
from .matmul import Variant, _cdiv, load4, store4


def _jit(max_registers: int | None):
    """``cuda.jit`` with a register cap where the target supports one (not the simulator)."""
    if max_registers and not SIMULATOR:
        return cuda.jit(max_registers=max_registers)
    return cuda.jit


# --------------------------------------------------------------------------- textbook coarsening


@functools.lru_cache(maxsize=None, typed=True)
def make_coarsened(tile: int = 32, factor: int = 4, max_registers: int | None = None):
    """Coarsened tiled matmul: each thread computes ``factor`` outputs, ``tile`` columns apart.

    ``max_registers`` caps the registers per thread (ptxas spills what does not fit), so
    that more blocks fit on an SM.
    """
    tile = mm._check_tile(tile)
    factor = validate.positive_int(factor, "factor", maximum=64)
    if max_registers is not None:
        validate.positive_int(max_registers, "max_registers", minimum=16, maximum=255)
    shape = (tile, tile)

    @_jit(max_registers)
    def coarsened(A, B, C):
        sA = cuda.shared.array(shape, float32)
        sB = cuda.shared.array(shape, float32)
        acc = cuda.local.array(factor, float32)  # one running sum per output
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col_start = cuda.blockIdx.x * tile * factor + tx
        M, K = A.shape
        N = B.shape[1]
        for c in range(factor):
            acc[c] = float32(0.0)
        for t in range((K + tile - 1) // tile):
            k = t * tile + tx
            sA[ty, tx] = A[row, k] if row < M and k < K else float32(0.0)  # loaded once...
            for c in range(factor):  # ...and used for `factor` tiles of B (the coarsening loop)
                col = col_start + c * tile
                k = t * tile + ty
                sB[ty, tx] = B[k, col] if k < K and col < N else float32(0.0)
                cuda.syncthreads()
                for n in range(tile):
                    acc[c] += sA[ty, n] * sB[n, tx]
                cuda.syncthreads()
        for c in range(factor):
            col = col_start + c * tile
            if row < M and col < N:
                C[row, col] = acc[c]

    return coarsened


# --------------------------------------------------------------------------- vector add


@cuda.jit
def vecadd(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]


@functools.lru_cache(maxsize=None, typed=True)
def make_vecadd_coarsened(factor: int = 4):
    """Each thread adds ``factor`` elements, a block's width apart (stays coalesced)."""
    factor = validate.positive_int(factor, "factor", maximum=64)

    @cuda.jit
    def vecadd_coarsened(x, y, out):
        base = cuda.blockIdx.x * cuda.blockDim.x * factor + cuda.threadIdx.x
        for c in range(factor):
            i = base + c * cuda.blockDim.x
            if i < out.size:
                out[i] = x[i] + y[i]

    return vecadd_coarsened


# --------------------------------------------------------------------------- register tiling


def _check_regtile(bm, bn, bk, tm, tn, vector: bool):
    for name, v in (("bm", bm), ("bn", bn), ("bk", bk), ("tm", tm), ("tn", tn)):
        validate.positive_int(v, name, maximum=256)
    if bm % tm or bn % tn:
        raise ValueError(f"the block tile {bm}x{bn} must divide into thread tiles {tm}x{tn}.")
    threads = (bm // tm) * (bn // tn)
    validate.block_size(threads, name=f"threads per block ({bm}/{tm} x {bn}/{tn})")
    if (bm * bk) % threads or (bk * bn) % threads:
        raise ValueError(f"{threads} threads cannot share the loads of a {bm}x{bk} and a "
                         f"{bk}x{bn} tile evenly; choose tiles whose sizes are multiples of "
                         "the thread count.")
    if vector and (tm % 4 or tn % 4 or bk % 4):
        raise ValueError("the vectorized kernel needs tm, tn and bk multiples of 4 (it moves "
                         "4 floats per load).")
    validate.shared_bytes(4 * bk * (bm + bn), what=f"a {bm}x{bk} and a {bk}x{bn} tile")
    return threads


# Steps of k in one loop body that the compiler really unrolls: with 8x8 thread tiles, two
# (the FFMA count doubles in the fast loop); at four it split the body into two one-step
# bodies, at eight it left the loop rolled (SASS for sm_90, numba-cuda 0.30.4), so larger
# values would name an unrolling that the compiled code does not have.
K_STEPS = (1, 2)


def _check_k_steps(k_steps, bk: int) -> int:
    validate.choice(k_steps, "k_steps", K_STEPS)
    if bk % k_steps:
        raise ValueError(f"k_steps={k_steps} must divide bk={bk} (each pass of the inner loop "
                         f"takes k_steps steps of the k-tile); use k_steps=1.")
    return k_steps


def _check_warp_tile(warp_tile, bm: int, bn: int, tm: int, tn: int) -> tuple[int, int]:
    import operator

    try:
        if not isinstance(warp_tile, tuple) or len(warp_tile) != 2 or any(
                isinstance(v, bool) for v in warp_tile):
            raise TypeError
        wm, wn = (operator.index(v) for v in warp_tile)  # ints, numpy ints included
    except TypeError:
        raise TypeError(f"warp_tile={warp_tile!r} must be None or a pair of ints (wm, wn), "
                        "e.g. (64, 32).") from None
    if wm <= 0 or wn <= 0 or bm % wm or bn % wn or wm % tm or wn % tn:
        raise ValueError(f"warp_tile={warp_tile!r}: wm and wn must divide the block tile "
                         f"{bm}x{bn} and be multiples of the thread tile {tm}x{tn}.")
    if (wm // tm) * (wn // tn) != 32:
        raise ValueError(f"warp_tile={warp_tile!r} holds {wm // tm}x{wn // tn} = "
                         f"{(wm // tm) * (wn // tn)} thread tiles of {tm}x{tn}; a warp is 32 "
                         f"threads, so (wm/tm)*(wn/tn) must be 32, e.g. ({8 * tm}, {4 * tn}).")
    return wm, wn


@functools.lru_cache(maxsize=None, typed=True)
def make_regtile_scalar(bm: int = 128, bn: int = 128, bk: int = 8, tm: int = 8, tn: int = 8,
                        max_registers: int | None = None):
    """2D register tiling, first form: scalar loads, each thread a contiguous tm x tn block."""
    if max_registers is not None:
        validate.positive_int(max_registers, "max_registers", minimum=16, maximum=255)
    threads = _check_regtile(bm, bn, bk, tm, tn, vector=False)
    cols_t = bn // tn  # threads across the block tile
    a_shape, b_shape = (bm, bk), (bk, bn)
    a_per_thread, b_per_thread = bm * bk // threads, bk * bn // threads
    n_acc = tm * tn

    @_jit(max_registers)
    def regtile_scalar(A, B, C):
        As = cuda.shared.array(a_shape, float32)
        Bs = cuda.shared.array(b_shape, float32)
        acc = cuda.local.array(n_acc, float32)  # constant indices only: lives in registers
        ra = cuda.local.array(tm, float32)
        rb = cuda.local.array(tn, float32)
        tid = cuda.threadIdx.x
        trow = tid // cols_t
        tcol = tid % cols_t
        row0 = cuda.blockIdx.y * bm
        col0 = cuda.blockIdx.x * bn
        M, K = A.shape
        N = B.shape[1]
        for i in range(n_acc):
            acc[i] = float32(0.0)
        for k0 in range(0, K, bk):
            for l in range(a_per_thread):
                idx = tid + l * threads
                r = idx // bk
                c = idx % bk
                As[r, c] = A[row0 + r, k0 + c] if row0 + r < M and k0 + c < K else float32(0.0)
            for l in range(b_per_thread):
                idx = tid + l * threads
                r = idx // bn
                c = idx % bn
                Bs[r, c] = B[k0 + r, col0 + c] if k0 + r < K and col0 + c < N else float32(0.0)
            cuda.syncthreads()
            for kk in range(bk):
                for i in range(tm):
                    ra[i] = As[trow * tm + i, kk]
                for j in range(tn):
                    rb[j] = Bs[kk, tcol * tn + j]
                for i in range(tm):  # tm x tn multiply-adds from tm + tn shared loads
                    for j in range(tn):
                        acc[i * tn + j] += ra[i] * rb[j]
            cuda.syncthreads()
        for i in range(tm):
            r = row0 + trow * tm + i
            for j in range(tn):
                c = col0 + tcol * tn + j
                if r < M and c < N:
                    C[r, c] = acc[i * tn + j]

    return regtile_scalar


@functools.lru_cache(maxsize=None, typed=True)
def make_regtile_1d(bm: int = 64, bn: int = 64, bk: int = 8, tm: int = 8,
                    max_registers: int | None = None):
    """1-D register blocking: each thread computes a column of ``tm`` outputs.

    At each step of k a thread loads one value of B from shared memory into a register
    and reuses it for its ``tm`` values of A: ``tm`` multiply-adds for ``tm + 1`` shared
    loads, against one for two in the tiled kernel. The ``bm/tm x bn`` threads of a block
    load the A and B tiles with scalar loads (``bm*bk`` and ``bk*bn`` must be multiples of
    the thread count); a warp's threads share ``trow`` (A's reads are broadcasts) and
    read 32 consecutive values of B.
    """
    if max_registers is not None:
        validate.positive_int(max_registers, "max_registers", minimum=16, maximum=255)
    threads = _check_regtile(bm, bn, bk, tm, 1, vector=False)
    a_per_thread, b_per_thread = bm * bk // threads, bk * bn // threads

    @_jit(max_registers)
    def regtile_1d(A, B, C):
        As = cuda.shared.array((bm, bk), float32)
        Bs = cuda.shared.array((bk, bn), float32)
        acc = cuda.local.array(tm, float32)
        tid = cuda.threadIdx.x
        trow = tid // bn
        tcol = tid % bn
        row0 = cuda.blockIdx.y * bm
        col0 = cuda.blockIdx.x * bn
        M, K = A.shape
        N = B.shape[1]
        for i in range(tm):
            acc[i] = float32(0.0)
        for k0 in range(0, K, bk):
            for l in range(a_per_thread):
                idx = tid + l * threads
                r = idx // bk
                c = idx % bk
                As[r, c] = A[row0 + r, k0 + c] if row0 + r < M and k0 + c < K else float32(0.0)
            for l in range(b_per_thread):
                idx = tid + l * threads
                r = idx // bn
                c = idx % bn
                Bs[r, c] = B[k0 + r, col0 + c] if k0 + r < K and col0 + c < N else float32(0.0)
            cuda.syncthreads()
            for kk in range(bk):
                b = Bs[kk, tcol]  # one shared load, reused tm times
                for i in range(tm):
                    acc[i] += As[trow * tm + i, kk] * b
            cuda.syncthreads()
        c = col0 + tcol
        for i in range(tm):
            r = row0 + trow * tm + i
            if r < M and c < N:
                C[r, c] = acc[i]

    return regtile_1d


@functools.lru_cache(maxsize=None, typed=True)
def make_regtile(bm: int = 128, bn: int = 128, bk: int = 8, tm: int = 8, tn: int = 8,
                 prefetch: bool = False, max_registers: int | None = None):
    """2D register tiling with 16-byte loads, transposed A tile and conflict-free layout.

    Thread (trow, tcol) owns rows ``g * bm/(tm/4) + 4 * trow + (0..3)`` and columns
    ``h * bn/(tn/4) + 4 * tcol + (0..3)``: groups of 4 spread across the block tile,
    so the 8 threads of each quarter-warp read 128 consecutive bytes of shared memory.
    Blocks wholly inside C (and K, N multiples of 4) take the fast path: vector loads
    with no bounds tests; the others, and the last partial tile along K, load scalars
    with bounds tests. All threads reach every barrier in both.
    """
    validate.boolean(prefetch, "prefetch")
    if max_registers is not None:
        validate.positive_int(max_registers, "max_registers", minimum=16, maximum=255)
    threads = _check_regtile(bm, bn, bk, tm, tn, vector=True)
    cols_t = bn // tn
    row_groups, col_groups = tm // 4, tn // 4
    row_stride, col_stride = bm // row_groups, bn // col_groups
    a_shape, b_shape = (bk, bm), (bk, bn)  # A stored transposed: As[k, m]
    a_vec_row, b_vec_row = bk // 4, bn // 4  # float4s per row of the A and B tiles
    a_total, b_total = bm * bk // 4, bk * bn // 4  # float4s in each tile
    # float4 loads per thread; a guard skips the extra ones when a tile has fewer
    # float4s than threads x loads (e.g. a 64x8 tile, 128 float4s, for 256 threads)
    a_vecs, b_vecs = _cdiv(a_total, threads), _cdiv(b_total, threads)
    a_scalars, b_scalars = bm * bk // threads, bk * bn // threads
    n_acc = tm * tn
    pa_size, pb_size = 4 * a_vecs, 4 * b_vecs

    @_jit(max_registers)
    def regtile(A, B, C):
        As = cuda.shared.array(a_shape, float32)
        Bs = cuda.shared.array(b_shape, float32)
        acc = cuda.local.array(n_acc, float32)
        ra = cuda.local.array(tm, float32)
        rb = cuda.local.array(tn, float32)
        pa = cuda.local.array(pa_size, float32)  # the next tile, in flight (prefetch)
        pb = cuda.local.array(pb_size, float32)
        tid = cuda.threadIdx.x
        trow = tid // cols_t
        tcol = tid % cols_t
        row0 = cuda.blockIdx.y * bm
        col0 = cuda.blockIdx.x * bn
        M, K = A.shape
        N = B.shape[1]
        for i in range(n_acc):
            acc[i] = float32(0.0)
        interior = row0 + bm <= M and col0 + bn <= N and K % 4 == 0 and N % 4 == 0
        n_fast = K // bk if interior else 0  # k-tiles taken with vector loads, unguarded
        n_tiles = (K + bk - 1) // bk
        if prefetch and n_fast > 0:
            for l in range(a_vecs):
                idx = tid + l * threads
                if idx < a_total:
                    v0, v1, v2, v3 = load4(A, row0 + idx // a_vec_row, (idx % a_vec_row) * 4)
                    pa[4 * l] = v0
                    pa[4 * l + 1] = v1
                    pa[4 * l + 2] = v2
                    pa[4 * l + 3] = v3
            for l in range(b_vecs):
                idx = tid + l * threads
                if idx < b_total:
                    v0, v1, v2, v3 = load4(B, idx // b_vec_row, col0 + (idx % b_vec_row) * 4)
                    pb[4 * l] = v0
                    pb[4 * l + 1] = v1
                    pb[4 * l + 2] = v2
                    pb[4 * l + 3] = v3
        for t in range(n_tiles):
            k0 = t * bk
            if t < n_fast:
                for l in range(a_vecs):
                    idx = tid + l * threads
                    if idx < a_total:
                        r = idx // a_vec_row
                        c = (idx % a_vec_row) * 4
                        if not prefetch:
                            v0, v1, v2, v3 = load4(A, row0 + r, k0 + c)
                            pa[4 * l] = v0
                            pa[4 * l + 1] = v1
                            pa[4 * l + 2] = v2
                            pa[4 * l + 3] = v3
                        for q in range(4):  # transposed store: As[k, m]
                            As[c + q, r] = pa[4 * l + q]
                for l in range(b_vecs):
                    idx = tid + l * threads
                    if idx < b_total:
                        r = idx // b_vec_row
                        c = (idx % b_vec_row) * 4
                        if not prefetch:
                            v0, v1, v2, v3 = load4(B, k0 + r, col0 + c)
                            pb[4 * l] = v0
                            pb[4 * l + 1] = v1
                            pb[4 * l + 2] = v2
                            pb[4 * l + 3] = v3
                        store4(Bs, r, c, pb[4 * l], pb[4 * l + 1], pb[4 * l + 2], pb[4 * l + 3])
            else:  # edge blocks and the last partial k-tile: scalar loads, zero outside
                for l in range(a_scalars):
                    idx = tid + l * threads
                    r = idx // bk
                    c = idx % bk
                    As[c, r] = A[row0 + r, k0 + c] if row0 + r < M and k0 + c < K else float32(0.0)
                for l in range(b_scalars):
                    idx = tid + l * threads
                    r = idx // bn
                    c = idx % bn
                    Bs[r, c] = B[k0 + r, col0 + c] if k0 + r < K and col0 + c < N else float32(0.0)
            cuda.syncthreads()
            if prefetch and t + 1 < n_fast:  # issue the next tile's loads; they land during the math
                k1 = k0 + bk
                for l in range(a_vecs):
                    idx = tid + l * threads
                    if idx < a_total:
                        v0, v1, v2, v3 = load4(A, row0 + idx // a_vec_row, k1 + (idx % a_vec_row) * 4)
                        pa[4 * l] = v0
                        pa[4 * l + 1] = v1
                        pa[4 * l + 2] = v2
                        pa[4 * l + 3] = v3
                for l in range(b_vecs):
                    idx = tid + l * threads
                    if idx < b_total:
                        v0, v1, v2, v3 = load4(B, k1 + idx // b_vec_row, col0 + (idx % b_vec_row) * 4)
                        pb[4 * l] = v0
                        pb[4 * l + 1] = v1
                        pb[4 * l + 2] = v2
                        pb[4 * l + 3] = v3
            for kk in range(bk):
                for g in range(row_groups):  # 16-byte shared loads, 4 values each
                    a0, a1, a2, a3 = load4(As, kk, g * row_stride + trow * 4)
                    ra[4 * g] = a0
                    ra[4 * g + 1] = a1
                    ra[4 * g + 2] = a2
                    ra[4 * g + 3] = a3
                for h in range(col_groups):
                    b0, b1, b2, b3 = load4(Bs, kk, h * col_stride + tcol * 4)
                    rb[4 * h] = b0
                    rb[4 * h + 1] = b1
                    rb[4 * h + 2] = b2
                    rb[4 * h + 3] = b3
                for i in range(tm):
                    for j in range(tn):
                        acc[i * tn + j] += ra[i] * rb[j]
            cuda.syncthreads()
        for i in range(tm):
            r = row0 + (i // 4) * row_stride + trow * 4 + i % 4
            for h in range(col_groups):
                c = col0 + h * col_stride + tcol * 4
                base = i * tn + 4 * h
                if interior:
                    store4(C, r, c, acc[base], acc[base + 1], acc[base + 2], acc[base + 3])
                else:
                    for q in range(4):
                        if r < M and c + q < N:
                            C[r, c + q] = acc[base + q]

    return regtile


@functools.lru_cache(maxsize=None, typed=True)
def make_regtile_double(bm: int = 128, bn: int = 128, bk: int = 8, tm: int = 8, tn: int = 8,
                        max_registers: int | None = None, k_steps: int = 1,
                        warp_tile: tuple[int, int] | None = None, edge: bool = True):
    """The pipelined kernel with two shared-memory buffers: one barrier per k-tile.

    While the threads multiply out of one buffer, the next tile's global loads are in
    flight (as in ``make_regtile(prefetch=True)``); they are then stored into the *other*
    buffer, so nothing has to wait for every thread to finish reading before the store:
    one ``syncthreads`` per tile instead of two. Same thread layout and edge handling as
    ``make_regtile``: tiles of interior blocks take this path, the rest (edge blocks,
    the last partial k-tile) the guarded scalar loads with two barriers.

    ``k_steps``: steps of k written into one pass of the inner loop, 1 or 2 (``K_STEPS``).
    The compiler does not unroll the k loop by itself and Numba has no ``#pragma unroll``;
    with two steps in one body it can schedule one step's shared loads under the other
    step's multiply-adds, and the loop control is paid once for two steps.
    ``warp_tile=(wm, wn)``: each warp owns a ``wm x wn`` piece of the
    block tile, its 32 lanes a (wm/tm) x (wn/tn) grid in it, instead of rows of bn/tn
    threads across the whole block tile. Both change only which outputs a thread owns and
    how the loop is written; the loads, buffers and barriers are the same.
    ``edge=False``: an ablation, right only where every block is interior and BK divides K.
    It compiles out the edge path (the interior test, the guarded tiles, the guarded store)
    and nothing else: the load guards, the ``% 2`` and the ``range`` loop stay, so that it
    differs from ``make_regtile_fast`` in those and from the kernel with ``edge=True`` in the
    edge path alone.
    """
    if max_registers is not None:
        validate.positive_int(max_registers, "max_registers", minimum=16, maximum=255)
    validate.boolean(edge, "edge")
    threads = _check_regtile(bm, bn, bk, tm, tn, vector=True)
    validate.shared_bytes(2 * 4 * bk * (bm + bn), what=f"two {bm}x{bk} and two {bk}x{bn} tiles")
    _check_k_steps(k_steps, bk)
    warped = warp_tile is not None
    cols_t = bn // tn
    row_groups, col_groups = tm // 4, tn // 4
    if warped:  # lanes of a warp: lanes_m x lanes_n threads, each tm x tn, in a wm x wn tile
        wm, wn = _check_warp_tile(warp_tile, bm, bn, tm, tn)
        lanes_m, lanes_n = wm // tm, wn // tn
        warps_n = bn // wn
        row_stride, col_stride = 4 * lanes_m, 4 * lanes_n  # between a thread's 4-wide groups
    else:
        wm = wn = lanes_m = lanes_n = warps_n = 1  # unused
        row_stride, col_stride = bm // row_groups, bn // col_groups
    a_shape, b_shape = (2 * bk, bm), (2 * bk, bn)  # buffer s holds rows s*bk .. s*bk+bk-1
    a_vec_row, b_vec_row = bk // 4, bn // 4
    a_total, b_total = bm * bk // 4, bk * bn // 4
    a_vecs, b_vecs = _cdiv(a_total, threads), _cdiv(b_total, threads)
    a_scalars, b_scalars = bm * bk // threads, bk * bn // threads
    n_acc = tm * tn
    pa_size, pb_size = 4 * a_vecs, 4 * b_vecs

    @_jit(max_registers)
    def regtile_double(A, B, C):
        As = cuda.shared.array(a_shape, float32)
        Bs = cuda.shared.array(b_shape, float32)
        acc = cuda.local.array(n_acc, float32)
        ra = cuda.local.array(tm, float32)
        rb = cuda.local.array(tn, float32)
        pa = cuda.local.array(pa_size, float32)
        pb = cuda.local.array(pb_size, float32)
        tid = cuda.threadIdx.x
        if warped:  # the warp's piece of the block tile, then the lane's place in it
            warp, lane = tid // 32, tid % 32
            row_t = (warp // warps_n) * wm + (lane // lanes_n) * 4
            col_t = (warp % warps_n) * wn + (lane % lanes_n) * 4
        else:  # rows of cols_t threads across the block tile
            row_t = (tid // cols_t) * 4
            col_t = (tid % cols_t) * 4
        row0 = cuda.blockIdx.y * bm
        col0 = cuda.blockIdx.x * bn
        M, K = A.shape
        N = B.shape[1]
        for i in range(n_acc):
            acc[i] = float32(0.0)
        if edge:
            interior = row0 + bm <= M and col0 + bn <= N and K % 4 == 0 and N % 4 == 0
        else:  # a constant: the compiler drops the edge path below
            interior = True
        n_fast = K // bk if interior else 0
        n_tiles = (K + bk - 1) // bk
        for t in range(n_fast + 1):  # load tile t (if any), store it, multiply tile t - 1
            if t < n_fast:  # global loads of tile t: in flight during tile t-1's math
                k1 = t * bk
                for l in range(a_vecs):
                    idx = tid + l * threads
                    if idx < a_total:
                        v0, v1, v2, v3 = load4(A, row0 + idx // a_vec_row,
                                               k1 + (idx % a_vec_row) * 4)
                        pa[4 * l] = v0
                        pa[4 * l + 1] = v1
                        pa[4 * l + 2] = v2
                        pa[4 * l + 3] = v3
                for l in range(b_vecs):
                    idx = tid + l * threads
                    if idx < b_total:
                        v0, v1, v2, v3 = load4(B, k1 + idx // b_vec_row,
                                               col0 + (idx % b_vec_row) * 4)
                        pb[4 * l] = v0
                        pb[4 * l + 1] = v1
                        pb[4 * l + 2] = v2
                        pb[4 * l + 3] = v3
            if t > 0:  # multiply tile t-1 out of buffer (t-1) % 2
                base = ((t - 1) % 2) * bk
                for k0 in range(0, bk, k_steps):
                    for s in range(k_steps):  # k_steps steps of k in one loop body
                        kk = base + k0 + s
                        for g in range(row_groups):
                            a0, a1, a2, a3 = load4(As, kk, g * row_stride + row_t)
                            ra[4 * g] = a0
                            ra[4 * g + 1] = a1
                            ra[4 * g + 2] = a2
                            ra[4 * g + 3] = a3
                        for h in range(col_groups):
                            b0, b1, b2, b3 = load4(Bs, kk, h * col_stride + col_t)
                            rb[4 * h] = b0
                            rb[4 * h + 1] = b1
                            rb[4 * h + 2] = b2
                            rb[4 * h + 3] = b3
                        for i in range(tm):
                            for j in range(tn):
                                acc[i * tn + j] += ra[i] * rb[j]
            if t < n_fast:  # store tile t into buffer t % 2, which nobody reads now
                base = (t % 2) * bk
                for l in range(a_vecs):
                    idx = tid + l * threads
                    if idx < a_total:
                        r = idx // a_vec_row
                        c = (idx % a_vec_row) * 4
                        for q in range(4):
                            As[base + c + q, r] = pa[4 * l + q]
                for l in range(b_vecs):
                    idx = tid + l * threads
                    if idx < b_total:
                        store4(Bs, base + idx // b_vec_row, (idx % b_vec_row) * 4,
                               pb[4 * l], pb[4 * l + 1], pb[4 * l + 2], pb[4 * l + 3])
                cuda.syncthreads()  # tile t visible; and every read of buffer t%2 (tile
                # t-2, multiplied in step t-1) finished before this step's stores began
        for t in range(n_fast, n_tiles if edge else n_fast):  # edge blocks, a partial k-tile
            k0 = t * bk
            cuda.syncthreads()  # nobody still reads buffer 0 from the last fast tile
            for l in range(a_scalars):
                idx = tid + l * threads
                r = idx // bk
                c = idx % bk
                As[c, r] = A[row0 + r, k0 + c] if row0 + r < M and k0 + c < K else float32(0.0)
            for l in range(b_scalars):
                idx = tid + l * threads
                r = idx // bn
                c = idx % bn
                Bs[r, c] = B[k0 + r, col0 + c] if k0 + r < K and col0 + c < N else float32(0.0)
            cuda.syncthreads()
            for kk in range(bk):
                for g in range(row_groups):
                    a0, a1, a2, a3 = load4(As, kk, g * row_stride + row_t)
                    ra[4 * g] = a0
                    ra[4 * g + 1] = a1
                    ra[4 * g + 2] = a2
                    ra[4 * g + 3] = a3
                for h in range(col_groups):
                    b0, b1, b2, b3 = load4(Bs, kk, h * col_stride + col_t)
                    rb[4 * h] = b0
                    rb[4 * h + 1] = b1
                    rb[4 * h + 2] = b2
                    rb[4 * h + 3] = b3
                for i in range(tm):
                    for j in range(tn):
                        acc[i * tn + j] += ra[i] * rb[j]
        for i in range(tm):
            r = row0 + (i // 4) * row_stride + row_t + i % 4
            for h in range(col_groups):
                c = col0 + h * col_stride + col_t
                base = i * tn + 4 * h
                if interior:
                    store4(C, r, c, acc[base], acc[base + 1], acc[base + 2], acc[base + 3])
                else:
                    for q in range(4):
                        if r < M and c + q < N:
                            C[r, c + q] = acc[base + q]

    return regtile_double


# --------------------------------------------------------------------------- the fast path alone


@functools.lru_cache(maxsize=None, typed=True)
def make_regtile_fast(bm: int = 128, bn: int = 128, bk: int = 8, tm: int = 8, tn: int = 8,
                      k_steps: int = 2, max_registers: int | None = None,
                      index: str = "uint32"):
    """The double-buffered kernel's fast path with nothing else in the kernel.

    ``make_regtile_double`` carries its edge path (the interior test, guarded scalar tiles,
    a guarded store) in every block, taken or not; with it compiled in, the fast path's inner
    loop computes its shared-memory addresses in more instructions. This kernel has only the
    fast path: every block must be an interior block (M and N multiples of ``bm`` and ``bn``,
    K of ``bk``; K and N multiples of 4 for the 16-byte loads and stores). ``FastMatmul``
    launches it on the interior of any shape and computes the edges with other launches.
    ``index``: the integer type of its index arithmetic, ``"uint32"`` (unsigned: ``//`` and
    ``%`` need no sign fix-ups) or ``"int64"`` (what Numba uses for Python ints, as in
    ``make_regtile_double``), so that the two changes can be measured one at a time.
    """
    U = {"uint32": np.uint32, "int64": np.int64}[validate.choice(index, "index",
                                                                 ("uint32", "int64"))]
    if max_registers is not None:
        validate.positive_int(max_registers, "max_registers", minimum=16, maximum=255)
    threads = _check_regtile(bm, bn, bk, tm, tn, vector=True)
    validate.shared_bytes(2 * 4 * bk * (bm + bn), what=f"two {bm}x{bk} and two {bk}x{bn} tiles")
    _check_k_steps(k_steps, bk)
    a_total, b_total = bm * bk // 4, bk * bn // 4  # 16-byte vectors per tile
    if a_total % threads or b_total % threads:
        raise ValueError(f"a {bm}x{bk} and a {bk}x{bn} tile are {a_total} and {b_total} "
                         f"16-byte vectors, not whole multiples of the {threads} threads: the "
                         "fast kernel has no guard for a thread without a vector. Choose "
                         "tiles whose vector counts are multiples of (bm/tm)*(bn/tn).")
    a_vecs, b_vecs = a_total // threads, b_total // threads
    pa_size, pb_size = 4 * a_vecs, 4 * b_vecs  # sizes of local arrays: constants, not expressions
    row_groups, col_groups = tm // 4, tn // 4
    n_acc = tm * tn
    COLS, AVR, BVR = U(bn // tn), U(bk // 4), U(bn // 4)
    THR, BM, BN, BK, FOUR = U(threads), U(bm), U(bn), U(bk), U(4)
    RS, CS = U(bm // row_groups), U(bn // col_groups)
    a_shape, b_shape = (2 * bk, bm), (2 * bk, bn)

    @_jit(max_registers)
    def regtile_fast(A, B, C):
        As = cuda.shared.array(a_shape, float32)
        Bs = cuda.shared.array(b_shape, float32)
        acc = cuda.local.array(n_acc, float32)
        ra = cuda.local.array(tm, float32)
        rb = cuda.local.array(tn, float32)
        pa = cuda.local.array(pa_size, float32)
        pb = cuda.local.array(pb_size, float32)
        tid = U(cuda.threadIdx.x)
        row_t = (tid // COLS) * FOUR
        col_t = (tid % COLS) * FOUR
        row0 = U(cuda.blockIdx.y) * BM
        col0 = U(cuda.blockIdx.x) * BN
        for i in range(n_acc):
            acc[i] = float32(0.0)
        n_tiles = U(A.shape[1]) // BK
        t = U(0)
        while t <= n_tiles:  # load tile t (if any), multiply tile t - 1, store tile t
            if t < n_tiles:
                k1 = t * BK
                for l in range(a_vecs):
                    idx = tid + U(l) * THR
                    v0, v1, v2, v3 = load4(A, row0 + idx // AVR, k1 + (idx % AVR) * FOUR)
                    pa[4 * l] = v0
                    pa[4 * l + 1] = v1
                    pa[4 * l + 2] = v2
                    pa[4 * l + 3] = v3
                for l in range(b_vecs):
                    idx = tid + U(l) * THR
                    v0, v1, v2, v3 = load4(B, k1 + idx // BVR, col0 + (idx % BVR) * FOUR)
                    pb[4 * l] = v0
                    pb[4 * l + 1] = v1
                    pb[4 * l + 2] = v2
                    pb[4 * l + 3] = v3
            if t > U(0):
                base = ((t - U(1)) & U(1)) * BK
                for k0 in range(0, bk, k_steps):
                    for s in range(k_steps):
                        kk = base + U(k0 + s)
                        for g in range(row_groups):
                            a0, a1, a2, a3 = load4(As, kk, U(g) * RS + row_t)
                            ra[4 * g] = a0
                            ra[4 * g + 1] = a1
                            ra[4 * g + 2] = a2
                            ra[4 * g + 3] = a3
                        for h in range(col_groups):
                            b0, b1, b2, b3 = load4(Bs, kk, U(h) * CS + col_t)
                            rb[4 * h] = b0
                            rb[4 * h + 1] = b1
                            rb[4 * h + 2] = b2
                            rb[4 * h + 3] = b3
                        for i in range(tm):
                            for j in range(tn):
                                acc[i * tn + j] += ra[i] * rb[j]
            if t < n_tiles:
                base = (t & U(1)) * BK
                for l in range(a_vecs):
                    idx = tid + U(l) * THR
                    r = idx // AVR
                    c = (idx % AVR) * FOUR
                    for q in range(4):
                        As[base + c + U(q), r] = pa[4 * l + q]
                for l in range(b_vecs):
                    idx = tid + U(l) * THR
                    store4(Bs, base + idx // BVR, (idx % BVR) * FOUR,
                           pb[4 * l], pb[4 * l + 1], pb[4 * l + 2], pb[4 * l + 3])
                cuda.syncthreads()
            t += U(1)
        for i in range(tm):
            r = row0 + U(i // 4) * RS + row_t + U(i % 4)
            for h in range(col_groups):
                c = col0 + U(h) * CS + col_t
                b = i * tn + 4 * h
                store4(C, r, c, acc[b], acc[b + 1], acc[b + 2], acc[b + 3])

    return regtile_fast


@cuda.jit
def _add_k_tail(A, B, C, rows, cols, k0):
    """C[r, c] += the products A[r, k] * B[k, c] for k from k0 on, for r < rows, c < cols.

    ``cols`` and B's and C's widths are multiples of 4: a thread owns four neighbouring
    outputs of a row and reads B and reads and writes C 16 bytes at a time (the tail is a pass
    over C, so its speed is C's traffic). Grid: x over groups of four columns, y over rows with
    a grid-stride loop (no grid dimension limits the rows, and no thread divides an index)."""
    c = 4 * (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x)
    if c < cols:
        for r in range(cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y, rows,
                       cuda.gridDim.y * cuda.blockDim.y):
            s0 = s1 = s2 = s3 = float32(0.0)
            for k in range(k0, A.shape[1]):
                a = A[r, k]
                b0, b1, b2, b3 = load4(B, k, c)
                s0 += a * b0
                s1 += a * b1
                s2 += a * b2
                s3 += a * b3
            c0, c1, c2, c3 = load4(C, r, c)
            store4(C, r, c, c0 + s0, c1 + s1, c2 + s2, c3 + s3)


@cuda.jit
def _strip_partials(A, B, P, r0, c0, chunk):
    """P[z, r, c] = the products A[r0 + r, k] * B[k, c0 + c] over k in chunk z: one output
    and one chunk of K per thread (a strip is thin: little work, but all of K). Grid: x over
    the strip's outputs, y over the chunks."""
    i, z = cuda.grid(2)
    cols = P.shape[2]
    r, c = i // cols, i % cols
    if r < P.shape[1] and z < P.shape[0]:
        acc = float32(0.0)
        for k in range(z * chunk, min((z + 1) * chunk, A.shape[1])):
            acc += A[r0 + r, k] * B[k, c0 + c]
        P[z, r, c] = acc


@cuda.jit
def _strip_direct(A, B, C, r0, c0, rows, cols):
    """C[r0 + r, c0 + c] = the products over all of K, one output per thread, for r < rows and
    c < cols: a strip with so many outputs that splitting K would not pay (or not fit)."""
    i = cuda.grid(1)
    r, c = i // cols, i % cols
    if r < rows:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[r0 + r, k] * B[k, c0 + c]
        C[r0 + r, c0 + c] = acc


@cuda.jit
def _pad_copy(src, dst):
    """dst = src in its top-left corner, zeros where src has no element (one element per
    thread): pads a larger dst, crops a smaller one."""
    i = cuda.grid(1)
    cols = dst.shape[1]
    r, c = i // cols, i % cols
    if r < dst.shape[0]:
        dst[r, c] = src[r, c] if r < src.shape[0] and c < src.shape[1] else float32(0.0)


@cuda.jit
def _sum_partials(P, C, r0, c0):
    """C[r0 + r, c0 + c] = the sum of P[:, r, c], in order (the same result every call)."""
    i = cuda.grid(1)
    cols = P.shape[2]
    r, c = i // cols, i % cols
    if r < P.shape[1]:
        acc = float32(0.0)
        for z in range(P.shape[0]):
            acc += P[z, r, c]
        C[r0 + r, c0 + c] = acc


def _numba_stream(stream):
    """``stream`` as what Numba launches on: 0, a Numba stream, or another library's stream
    (CuPy's, PyTorch's, or any with ``__cuda_stream__``) wrapped with ``cuda.external_stream``;
    a TypeError for anything else, before Numba would raise one from inside a launch."""
    if type(stream) is int and stream == 0:
        return 0
    numba_stream = cuda.stream if isinstance(cuda.stream, type) else None  # the simulator's
    if numba_stream is None:
        from numba.cuda.cudadrv.driver import Stream as numba_stream
    if isinstance(stream, numba_stream):
        return stream
    if not SIMULATOR:
        if hasattr(stream, "__cuda_stream__"):  # the CUDA stream protocol: (version, handle)
            return cuda.external_stream(int(stream.__cuda_stream__()[1]))
        for handle in ("ptr", "cuda_stream"):  # CuPy's, PyTorch's
            if isinstance(getattr(stream, handle, None), int):
                return cuda.external_stream(getattr(stream, handle))
    raise TypeError(f"stream must be 0 (the default stream), a Numba stream (cuda.stream()) or a "
                    f"CuPy or PyTorch stream, not {stream!r}.")


class FastMatmul:
    """``C = A @ B`` for any shape, with ``make_regtile_fast`` on the largest interior it can
    take and the edges computed beside it, so that no edge code sits in the fast kernel:

    * the interior, ``M // bm * bm`` x ``N // bn * bn`` over ``K // bk * bk``: the fast kernel;
    * K's last ``K % bk`` products for the interior: a small kernel that adds them;
    * the right strip (all rows) and the bottom strip (the interior's columns): K split
      ``splits`` ways, one partial per thread, then the partials added in order.

    The interior (fast kernel and k tail) and each strip are queued on three streams of the
    object's own, so that no launch on the legacy default stream sits between them: Numba's
    streams are blocking streams, which wait for earlier work on the legacy default stream, so
    strips queued there after the fast kernel would start only when it ends. A shape with no
    strips and no k tail is one launch of the fast kernel on the caller's stream.

    Where K or N is not a multiple of 4 (the fast kernel's 16-byte loads need whole vectors),
    A and B are first copied into buffers padded with zeros to the next multiple of 4 in K and
    N (products with zeros add nothing), and C is copied out of a padded one after: O(n^2)
    copies beside O(n^3) work. Where the matrix is smaller than one tile there is no interior,
    and ``make_regtile_double`` does the whole product.

    A call takes the stream to queue on (default: the default stream); the three streams wait
    for what was queued on it before the call, and it waits for them after (events), so that
    the call orders like one launch on that stream, with the legacy default stream or the
    per-thread one. Calls queued on different streams of the caller's still run one after
    the other on the object's streams, and one object belongs to one host thread.
    The padded buffers are filled, used and read on the object's interior stream, so that a
    call queued on another stream cannot refill them while an earlier call still reads them.
    The strips' partial sums and the padded buffers stay allocated for the latest shape only:
    a strip splits K into at most ``splits`` chunks of at least 8 products, and fewer where its
    partial sums would pass ``PARTIALS_BUDGET`` floats; a strip that cannot be split within it
    is computed in one pass over K, straight into C.
    """

    PARTIALS_BUDGET = 1 << 24  # floats of partial sums per strip (64 MiB)

    def __init__(self, bm: int = 128, bn: int = 128, bk: int = 8, tm: int = 8, tn: int = 8,
                 k_steps: int = 2, splits: int = 16):
        self.fast = make_regtile_fast(bm, bn, bk, tm, tn, k_steps, None, "uint32")  # the
        # same arguments as fast_kernel_variant's, so that lru_cache compiles it once
        self.general = make_regtile_double(bm, bn, bk, tm, tn, None, k_steps)
        self.splits = validate.positive_int(splits, "splits", maximum=256)
        self.bm, self.bn, self.bk = bm, bn, bk
        self.threads = (bm // tm) * (bn // tn)
        self._streams = None  # (interior, right strip, bottom strip), made on the first call
        self._events = None
        self._pad_events = None  # (begin, end) of a padded call, made with the streams
        self._partials = {}
        self._padded = None  # (A, B, C) padded to multiples of 4 in K and N, latest shape
        # fast_matmul() hands one object to every host thread: one call at a time orders its
        # events, streams and buffers (a wait captures the event when it is queued)
        self._lock = threading.Lock()

    def _general(self, A, B, C, stream=0):
        M, N = C.shape
        self.general[(_cdiv(N, self.bn), _cdiv(M, self.bm)), self.threads, stream](A, B, C)

    def strip_splits(self, K: int, rows: int, cols: int) -> int:
        """How many chunks of K a ``rows`` x ``cols`` strip is split into: ``splits``, fewer
        where chunks would hold under 8 products or the partial sums pass the budget."""
        for value, name in ((K, "K"), (rows, "rows"), (cols, "cols")):
            validate.positive_int(value, name)
        chunk = _cdiv(K, max(1, min(self.splits, K // 8, self.PARTIALS_BUDGET // (rows * cols))))
        return _cdiv(K, chunk)  # no empty chunk

    def _strip(self, A, B, C, r0, c0, rows, cols, stream):
        side = "right" if c0 else "bottom"  # each strip its own partials: they run at once
        K = A.shape[1]
        splits = self.strip_splits(K, rows, cols)
        blocks = _cdiv(rows * cols, 256)
        if splits == 1:
            self._partials.pop(side, None)
            _strip_direct[blocks, 256, stream](A, B, C, r0, c0, rows, cols)
            return
        if getattr(self._partials.get(side), "shape", None) != (splits, rows, cols):
            self._partials[side] = cuda.device_array((splits, rows, cols), np.float32)
        P = self._partials[side]
        _strip_partials[(blocks, splits), (256, 1), stream](A, B, P, r0, c0, _cdiv(K, splits))
        _sum_partials[blocks, 256, stream](P, C, r0, c0)

    def _split(self, A, B):
        (M, K), N = A.shape, B.shape[1]
        return M, N, K, M // self.bm * self.bm, N // self.bn * self.bn, K // self.bk * self.bk

    def _interior(self, A, B, C, stream):
        """The fast kernel on the interior, and the k tail where K has one."""
        M, N, K, mi, ni, ki = self._split(A, B)
        self.fast[(ni // self.bn, mi // self.bm), self.threads, stream](A, B, C)
        if ki < K:
            blocks = (_cdiv(ni // 4, 64), min(_cdiv(mi, 4), 65535))
            _add_k_tail[blocks, (64, 4), stream](A, B, C, mi, ni, ki)

    def _strips(self, A, B, C, right, bottom):
        """The right strip on ``right``, the bottom strip on ``bottom`` (where there are any)."""
        M, N, K, mi, ni, ki = self._split(A, B)
        if ni < N:
            self._strip(A, B, C, 0, ni, M, N - ni, right)
        if mi < M:
            self._strip(A, B, C, mi, 0, M - mi, ni, bottom)

    @staticmethod
    def _operand(x, name):
        """``x`` as a Numba device array (CuPy's and others' through their CUDA array
        interface), or a TypeError that says what to pass."""
        if not isinstance(x, np.ndarray) and not validate._is_device_array(x) \
                and hasattr(x, "__cuda_array_interface__") and not SIMULATOR:
            x = cuda.as_cuda_array(x)
        if isinstance(x, np.ndarray) or not validate._is_device_array(x):
            raise TypeError(f"{name} must be a device array: pass cuda.to_device({name}), or "
                            "use gp.matmul.run_variant(gp.coarsening.fast_variant(), A, B) "
                            "for NumPy arrays.")
        return x

    def __call__(self, A, B, C, stream=0) -> None:
        """Enqueue ``C = A @ B`` on ``stream`` (device arrays, float32, C-contiguous): work
        queued on ``stream`` after the call sees the whole product."""
        shapes = [getattr(x, "shape", ()) for x in (A, B, C)]
        if any(len(sh) != 2 for sh in shapes):
            raise TypeError("A, B and C must be 2-D float32 arrays (M x K, K x N and the M x N "
                            f"output); their shapes are {shapes[0]}, {shapes[1]}, {shapes[2]}.")
        A, B, C = (self._operand(x, name) for x, name in ((A, "A"), (B, "B"), (C, "C")))
        for x, name in ((A, "A"), (B, "B"), (C, "C")):
            validate.array(x, name=name, ndim=2)  # float32 and C-contiguous
            # both kernels load and store 16 bytes at a time
            validate.aligned16(x, name, f"copy it into a fresh allocation first "
                               f"({name}.copy_to_host(), then cuda.to_device).")
        validate.disjoint(C, "C", A=A, B=B)  # blocks write C while others still read A and B
        stream = _numba_stream(stream)
        M, K = A.shape
        N = B.shape[1]
        if B.shape[0] != K:
            raise ValueError(f"A is {M}x{K} and B {B.shape[0]}x{N}: A's columns and B's rows "
                             f"must match (B needs {K} rows).")
        if C.shape != (M, N):
            raise ValueError(f"C must have the shape ({M}, {N}) of A @ B, not {C.shape}.")
        if _cdiv(M, self.bm) > 65535:
            raise ValueError(f"M={M} needs {_cdiv(M, self.bm)} block rows, over the grid's limit "
                             "of 65535 in y: split A into row blocks of at most "
                             f"{65535 * self.bm} rows and call once per block.")
        *_, mi, ni, ki = self._split(A, B)
        with self._lock:
            self._dispatch(A, B, C, stream, mi and ni and ki)

    def _dispatch(self, A, B, C, stream, interior: bool):
        """The whole product of checked operands, on the path their shape allows."""
        (M, K), N = A.shape, B.shape[1]
        if not interior:  # smaller than one tile: no interior
            self._general(A, B, C, stream)
        elif K % 4 or N % 4:  # the fast kernel's vectors need K and N in multiples of 4
            K4, N4 = _cdiv(K, 4) * 4, _cdiv(N, 4) * 4
            shapes = [(M, K4), (K4, N4), (M, N4)]
            if self._padded is None or [x.shape for x in self._padded] != shapes:
                self._padded = [cuda.device_array(sh, np.float32) for sh in shapes]
            A4, B4, C4 = self._padded
            # All on the object's interior stream, after the caller's earlier work: a call
            # queued on another stream of the caller's must not refill the padded buffers
            # while an earlier call still reads them.
            interior = self.streams()[0]
            begin, end = self._pad_events
            begin.record(stream)
            begin.wait(interior)
            for src, dst in ((A, A4), (B, B4)):
                _pad_copy[_cdiv(dst.size, 256), 256, interior](src, dst)
            self._run(A4, B4, C4, interior)
            _pad_copy[_cdiv(C.size, 256), 256, interior](C4, C)  # crops
            end.record(interior)
            end.wait(stream)
        else:
            self._run(A, B, C, stream)

    def streams(self):
        """The object's three streams (interior, right strip, bottom strip), made on first use."""
        if self._streams is None:
            self._streams = (cuda.stream(), cuda.stream(), cuda.stream())
            # the events only order work; without timing they cost less to record
            events = [cuda.event() if SIMULATOR else cuda.event(timing=False) for _ in range(6)]
            self._events, self._pad_events = events[:4], events[4:]
        return self._streams

    def _strips_alone(self, A, B, C, stream=0):
        """The two strips alone, forked from ``stream`` and joined back to it (what
        ``fast_parts`` times): with the per-thread default stream too, ``stream`` waits for them."""
        interior, right, bottom = self.streams()
        start, _, *done = self._events
        start.record(stream)
        for s in (right, bottom):
            start.wait(s)
        self._strips(A, B, C, right, bottom)
        for event, s in zip(done, (right, bottom)):
            event.record(s)
            event.wait(stream)

    def _run(self, A, B, C, stream):
        """The product of checked operands whose K and N are multiples of 4."""
        M, N, K, mi, ni, ki = self._split(A, B)
        if (mi, ni, ki) == (M, N, K):  # the interior is everything: one launch
            self.fast[(ni // self.bn, mi // self.bm), self.threads, stream](A, B, C)
            return
        interior, right, bottom = self.streams()
        start, *done = self._events
        # fork: the three streams start after what was queued on ``stream`` before the call
        start.record(stream)
        for s in self._streams:
            start.wait(s)
        self._interior(A, B, C, interior)
        self._strips(A, B, C, right, bottom)
        for event, s in zip(done, self._streams):  # join: ``stream`` waits for all three
            event.record(s)
            event.wait(stream)


def fast_matmul(bm: int = 128, bn: int = 128, bk: int = 8, tm: int = 8, tn: int = 8,
                k_steps: int = 2, splits: int = 16) -> FastMatmul:
    """The ``FastMatmul`` of this configuration (one per configuration: it keeps its streams
    and its strips' partial sums between calls)."""
    # One cache key per configuration however it is spelled (fast_matmul(), fast_matmul(128),
    # fast_matmul(bm=128), NumPy integers); anything else reaches FastMatmul's checks as given.
    args = tuple(int(x) if isinstance(x, numbers.Integral) and not isinstance(x, bool) else x
                 for x in (bm, bn, bk, tm, tn, k_steps, splits))
    return _fast_matmul(*args)


@functools.lru_cache(maxsize=None, typed=True)
def _fast_matmul(*args) -> FastMatmul:
    return FastMatmul(*args)


def fast_variant(bm: int = 128, bn: int = 128, bk: int = 8, tm: int = 8, tn: int = 8,
                 k_steps: int = 2) -> Variant:
    """``fast_matmul`` as a ``Variant``: its kernel is the fast kernel (for its registers and
    SASS), its launch the whole any-size call."""
    f = fast_matmul(bm, bn, bk, tm, tn, k_steps)
    steps = f" unroll{k_steps}" if k_steps > 1 else ""
    # The grid is the fast kernel's, over the interior only (the strips are other launches;
    # N padded to a multiple of 4 where it is not one). Where there is no interior the call
    # runs chapter 5's kernel instead, over all of C.
    def grid(M, N):
        if M < bm or N < bn:
            return (_cdiv(N, bn), _cdiv(M, bm))
        return (_cdiv(N, 4) * 4 // bn, M // bm)

    return Variant(f"regtile fast {bm}x{bn}x{bk} {tm}x{tn}{steps}", f.fast, (f.threads,),
                   grid, "block", (bm, bn), launcher=f)


def fast_kernel_variant(bm: int = 128, bn: int = 128, bk: int = 8, tm: int = 8, tn: int = 8,
                        k_steps: int = 2, index: str = "uint32") -> Variant:
    """``make_regtile_fast`` alone, one launch, for shapes whose every block is interior (the
    ablation's rows; ``fast_variant`` is the kernel made whole for any shape)."""
    k = make_regtile_fast(bm, bn, bk, tm, tn, k_steps, None, index)
    steps = f" unroll{k_steps}" if k_steps > 1 else ""
    return _whole_tiles_variant(f"regtile fast path only {bm}x{bn}x{bk} {tm}x{tn}{steps} {index}",
                                k, bm, bn, bk, tm, tn, "the fast path alone")


def no_edge_variant(bm: int = 128, bn: int = 128, bk: int = 8, tm: int = 8, tn: int = 8,
                    k_steps: int = 2) -> Variant:
    """Chapter 5's double-buffered kernel with its edge path compiled out and nothing else
    changed (``make_regtile_double(..., edge=False)``): the ablation that separates the edge
    path from the other differences between chapter 5's kernel and the fast path alone."""
    k = make_regtile_double(bm, bn, bk, tm, tn, None, k_steps, None, False)
    steps = f" unroll{k_steps}" if k_steps > 1 else ""
    return _whole_tiles_variant(f"regtile double-buffered {bm}x{bn}x{bk} {tm}x{tn}{steps} no edge",
                                k, bm, bn, bk, tm, tn, "chapter 5's kernel without its edge path")


def _whole_tiles_variant(name, k, bm, bn, bk, tm, tn, what) -> Variant:
    """A ``Variant`` of a kernel right only for whole tiles: its launch refuses other shapes."""
    threads = (bm // tm) * (bn // tn)

    def launch(A, B, C):
        (M, K), N = A.shape, B.shape[1]
        if M % bm or N % bn or K % bk:
            raise ValueError(f"{what} computes only whole tiles: M={M}, N={N} and K={K} must be "
                             f"multiples of {bm}, {bn} and {bk}. For any shape use fast_variant() "
                             "(the fast path made whole).")
        k[(N // bn, M // bm), threads](A, B, C)

    return Variant(name, k, (threads,), lambda M, N: (N // bn, M // bm), "block", (bm, bn),
                   launcher=launch)


_SIG = mm._SIG
_VEC_SIG = "void(float32[::1], float32[::1], float32[::1])"
PTX_TARGETS = [
    (make_coarsened(32, 4), _SIG),
    (make_coarsened(16, 2), _SIG),
    (vecadd, _VEC_SIG),
    (make_vecadd_coarsened(4), _VEC_SIG),
    (make_regtile_scalar(), _SIG),
    (make_regtile_scalar(64, 64, 8, 4, 4), _SIG),
    (make_regtile(), _SIG),
    (make_regtile(prefetch=True), _SIG),
    (make_regtile(64, 64, 8, 4, 4), _SIG),
    (make_regtile_double(), _SIG),
    (make_regtile_1d(), _SIG),
    (make_regtile_double(128, 128, 16, 8, 8), _SIG),
    (make_regtile_double(128, 128, 8, 8, 8, None, 2, (64, 32)), _SIG),
    (make_regtile_fast(), _SIG),
    (make_regtile_double(128, 128, 8, 8, 8, None, 2, None, False), _SIG),
    (_strip_direct, "void(float32[:, ::1], float32[:, ::1], float32[:, ::1], int64, int64, int64, "
                    "int64)"),
    (_pad_copy, "void(float32[:, ::1], float32[:, ::1])"),
    (_add_k_tail, "void(float32[:, ::1], float32[:, ::1], float32[:, ::1], int64, int64, int64)"),
    (_strip_partials, "void(float32[:, ::1], float32[:, ::1], float32[:, :, ::1], int64, int64, "
                      "int64)"),
    (_sum_partials, "void(float32[:, :, ::1], float32[:, ::1], int64, int64)"),
]


# --------------------------------------------------------------------------- variants


def coarsened_variant(tile: int = 32, factor: int = 4, *,
                      max_registers: int | None = None) -> Variant:
    mm._check_tile(tile)
    validate.positive_int(factor, "factor", maximum=64)
    if max_registers is not None:
        validate.positive_int(max_registers, "max_registers", minimum=16, maximum=255)
    k = make_coarsened(tile, factor, max_registers)
    cap = f" cap{max_registers}" if max_registers else ""
    return Variant(f"coarsened {tile}x{factor}{cap}", k, (tile, tile),
                   lambda M, N: (_cdiv(N, tile * factor), _cdiv(M, tile)),
                   "coarsened", (tile, factor))


def regtile_variant(bm=128, bn=128, bk=8, tm=8, tn=8, *, vectorized: bool = True,
                    prefetch: bool = False, double: bool = False,
                    max_registers: int | None = None, k_steps: int = 1,
                    warp_tile: tuple[int, int] | None = None) -> Variant:
    validate.boolean(vectorized, "vectorized")
    validate.boolean(prefetch, "prefetch")
    validate.boolean(double, "double")
    if double and not (vectorized and prefetch):
        raise ValueError("double=True (two shared buffers) builds on the pipelined kernel; "
                         "pass vectorized=True and prefetch=True with it.")
    if not double and (k_steps != 1 or warp_tile is not None):
        raise ValueError(f"k_steps={k_steps!r} and warp_tile={warp_tile!r} are options of the "
                         "double-buffered kernel; pass double=True (with prefetch=True), or "
                         "leave them at 1 and None.")
    if prefetch and not vectorized:
        raise ValueError("prefetch=True needs vectorized=True (the pipelined kernel is the "
                         "vectorized one); pass vectorized=True or prefetch=False.")
    _check_regtile(bm, bn, bk, tm, tn, vector=vectorized)
    if max_registers is not None:
        validate.positive_int(max_registers, "max_registers", minimum=16, maximum=255)
    if double:
        _check_k_steps(k_steps, bk)
        if warp_tile is not None:
            _check_warp_tile(warp_tile, bm, bn, tm, tn)
        k = make_regtile_double(bm, bn, bk, tm, tn, max_registers, k_steps, warp_tile)
        kind = "double-buffered"
    elif vectorized:
        k = make_regtile(bm, bn, bk, tm, tn, prefetch, max_registers)
        kind = "pipelined" if prefetch else "vectorized"
    else:
        if prefetch:
            raise ValueError("prefetch=True needs vectorized=True (it reuses the vector loads).")
        k = make_regtile_scalar(bm, bn, bk, tm, tn, max_registers)
        kind = "scalar"
    cap = f" cap{max_registers}" if max_registers else ""
    if k_steps > 1:
        cap = f" unroll{k_steps}" + cap
    if warp_tile is not None:
        cap = f" warp{warp_tile[0]}x{warp_tile[1]}" + cap
    threads = (bm // tm) * (bn // tn)
    return Variant(f"regtile {kind} {bm}x{bn}x{bk} {tm}x{tn}{cap}", k, (threads,),
                   lambda M, N: (_cdiv(N, bn), _cdiv(M, bm)), "block", (bm, bn))


def regtile_1d_variant(bm: int = 64, bn: int = 64, bk: int = 8, tm: int = 8, *,
                       max_registers: int | None = None) -> Variant:
    """The 1-D register-blocked kernel as a ``Variant`` (block of ``bm/tm x bn`` threads)."""
    k = make_regtile_1d(bm, bn, bk, tm, max_registers)
    cap = f" cap{max_registers}" if max_registers else ""
    return Variant(f"regtile 1d {bm}x{bn}x{bk} {tm}x1{cap}", k, ((bm // tm) * bn,),
                   lambda M, N: (_cdiv(N, bn), _cdiv(M, bm)), "block", (bm, bn))


VERSIONS = ("coarsened", "regtile_scalar", "regtile", "regtile_pipelined", "regtile_double")


def variant(version: str = "regtile_pipelined", **params) -> Variant:
    """A ``Variant`` of this chapter's kernels: ``coarsened`` (tile, factor) or a register tile."""
    validate.choice(version, "version", VERSIONS)
    _allowed = {"coarsened": ("tile", "factor", "max_registers"),
                "regtile_double": ("bm", "bn", "bk", "tm", "tn", "max_registers", "k_steps",
                                   "warp_tile")}.get(
        version, ("bm", "bn", "bk", "tm", "tn", "max_registers"))
    for _k in params:
        validate.choice(_k, f"{version} parameter", _allowed)
    validate.choice(version, "version", VERSIONS)
    if version == "coarsened":
        return coarsened_variant(**params)
    if version == "regtile_scalar":
        return regtile_variant(vectorized=False, **params)
    if version == "regtile_double":
        return regtile_variant(prefetch=True, double=True, **params)
    return regtile_variant(prefetch=version == "regtile_pipelined", **params)


def matmul(A, B, out=None, *, version: str = "regtile_pipelined", **params):
    """``A @ B`` in float32 with one of this chapter's kernels (``VERSIONS``)."""
    return mm.run_variant(variant(version, **params), A, B, out)


def vector_add(x, y, out=None, *, factor: int = 1, block: int = 256):
    """``x + y`` with the plain (factor 1) or coarsened vector-add kernel."""
    if out is not None:
        out = validate.array(out, name="out", dtype=np.float32)
        validate.same_shape(x, out, ("x", "out"))
    x = validate.array(x, name="x")
    y = validate.array(y, name="y")
    validate.same_shape(x, y, ("x", "y"))
    block = validate.block_size(block, multiple_of=32)
    factor = validate.positive_int(factor, "factor", maximum=64)
    host = isinstance(x, np.ndarray)
    dx = cuda.to_device(x) if host else x
    dy = cuda.to_device(y) if isinstance(y, np.ndarray) else y
    dout = cuda.device_array(x.shape, np.float32) if out is None else (
        cuda.to_device(out) if isinstance(out, np.ndarray) else out)
    k = vecadd if factor == 1 else make_vecadd_coarsened(factor)
    k[_cdiv(x.size, block * factor), block](dx, dy, dout)
    if isinstance(out, np.ndarray):
        out[...] = dout.copy_to_host()
        return out
    return dout.copy_to_host() if host else dout


# --------------------------------------------------------------------------- resources


def resources(v: Variant) -> dict:
    """Registers/thread, shared and local memory, and occupancy of ``v``'s compiled kernel.

    Read from the compiled kernel (compile it first, e.g. with ``mm.verify(v)``) and the
    driver's occupancy calculator. GPU only.
    """
    mm._check_variant(v)
    bench._require_gpu("resources")
    k = v.kernel
    if not k.overloads:
        raise RuntimeError(f"{v.name} is not compiled yet; run it once (e.g. mm.verify(v)).")
    compiled = next(iter(k.overloads.values()))
    cufunc = compiled._codelibrary.get_cufunc()
    blocks_per_sm = int(cuda.current_context().get_active_blocks_per_multiprocessor(
        cufunc, v.threads, 0))
    info = device.info()
    max_warps = info.max_warps_per_sm or 64
    warps = blocks_per_sm * _cdiv(v.threads, 32)
    return {"threads": v.threads, "regs": int(compiled.regs_per_thread),
            "smem_bytes": int(compiled.shared_mem_per_block),
            "local_bytes": int(compiled.local_mem_per_thread),
            "blocks_per_sm": blocks_per_sm, "occupancy": warps / max_warps}


def waves(v: Variant, M: int, N: int, blocks_per_sm: int) -> float:
    """Blocks in the grid over blocks the GPU holds at once (SMs x blocks per SM)."""
    mm._check_variant(v)
    validate.positive_int(M, "M")
    validate.positive_int(N, "N")
    validate.positive_int(blocks_per_sm, "blocks_per_sm")
    g = v.grid(M, N)
    blocks = g[0] * (g[1] if len(g) > 1 else 1)
    return blocks / (device.sm_count() * max(blocks_per_sm, 1))


def grid_blocks(v: Variant, M: int, N: int) -> int:
    mm._check_variant(v)
    validate.positive_int(M, "M")
    validate.positive_int(N, "N")
    g = v.grid(M, N)
    return int(g[0] * (g[1] if len(g) > 1 else 1))


# --------------------------------------------------------------------------- experiments

_UNITS = {"ms": "ms", "tflops": "TFLOP/s", "pct_cublas": "% of cuBLAS", "smem_bytes": "B",
          "local_bytes": "B", "occupancy": "fraction of max warps", "gbps": "GB/s"}
FACTORS = (1, 2, 4, 8, 16)


@experiment("matmul_coarsen_sweep", chapter="coarsening",
            title="Coarsening factor x size (tile 32): TFLOP/s, blocks, waves, occupancy",
            units=_UNITS)
def coarsen_sweep_experiment(progress):
    rows = []
    for tile in (16, 32):
        for f in FACTORS:
            v = mm.variant("tiled", tile=tile) if f == 1 else coarsened_variant(tile, f)
            mm.verify(v)
            res = resources(v)
            for n in (1024, 4096):
                m = mm.measure_variant(v, n, **mm._repeats(n))
                rows.append({"tile": tile, "factor": f, "n": n, **m, **res,
                             "blocks": grid_blocks(v, n, n),
                             "waves": waves(v, n, n, res["blocks_per_sm"])})
                progress(f"tile {tile} factor {f} n={n}: {m['tflops']:.2f} TFLOP/s")
    return rows


@experiment("matmul_vecadd_coarsen", chapter="coarsening",
            title="Vector add of 2^26 float32 against coarsening factor (pitfall 1)",
            units=_UNITS)
def vecadd_coarsen_experiment(progress):
    n = 2**26
    rng = np.random.default_rng(2)
    x = cuda.to_device(ex.random_array(n, rng))
    y = cuda.to_device(ex.random_array(n, rng))
    out = cuda.device_array(n, np.float32)
    rows = []
    for f in FACTORS:
        k = vecadd if f == 1 else make_vecadd_coarsened(f)
        grid = _cdiv(n, 256 * f)
        got = vector_add(x[:1000].copy_to_host(), y[:1000].copy_to_host(), factor=f)
        assert np.allclose(got, x[:1000].copy_to_host() + y[:1000].copy_to_host())
        t = bench.time_kernel(lambda k=k, grid=grid: k[grid, 256](x, y, out))
        rows.append({"factor": f, "blocks": grid, **bench.bandwidth_row(3 * 4 * n, t)})
        progress(f"factor {f}: {rows[-1]['gbps']:.0f} GB/s")
    return rows


REGTILE_CONFIGS = [  # (bm, bn, bk, tm, tn)
    (64, 64, 16, 4, 4), (128, 64, 8, 8, 4), (128, 128, 8, 8, 8), (128, 128, 16, 8, 8),
]


@experiment("matmul_regtile_sweep", chapter="coarsening",
            title="2D register tiling: block tile and TM x TN at 4096^3, with occupancy",
            units=_UNITS)
def regtile_sweep_experiment(progress):
    n = 4096
    rows = []
    for (bm, bn, bk, tm, tn) in REGTILE_CONFIGS:
        for kind in ("scalar", "vectorized", "pipelined"):
            v = regtile_variant(bm, bn, bk, tm, tn, vectorized=kind != "scalar",
                                prefetch=kind == "pipelined")
            mm.verify(v)
            res = resources(v)
            m = mm.measure_variant(v, n, **mm._repeats(n))
            rows.append({"kind": kind, "bm": bm, "bn": bn, "bk": bk, "tm": tm, "tn": tn,
                         "tile": f"{tm}x{tn}", "n": n, **m, **res})
            progress(f"{v.name}: {m['tflops']:.2f} TFLOP/s, {res['regs']} regs, "
                     f"{res['blocks_per_sm']} blocks/SM")
    return rows


CAP_FACTORS = (1, 2, 4, 8)


@experiment("matmul_coarsen_cap", chapter="coarsening",
            title="Coarsening with and without a cap of 32 registers per thread (tile 32, 4096^3)",
            units=_UNITS)
def coarsen_cap_experiment(progress):
    n = 4096
    rows = []
    for f in CAP_FACTORS:
        for cap in (None, 32):
            v = coarsened_variant(32, f, max_registers=cap)
            mm.verify(v)
            res = resources(v)
            m = mm.measure_variant(v, n, **mm._repeats(n))
            rows.append({"factor": f, "cap": cap or 0, "n": n, **m, **res})
            progress(f"{v.name}: {m['tflops']:.2f} TFLOP/s, {res['regs']} regs, "
                     f"{res['local_bytes']} B local, {res['blocks_per_sm']} blocks/SM")
    return rows


REGTILE_1D_CONFIGS = [(64, 64, 16, 4), (64, 64, 8, 8), (64, 64, 8, 16)]  # (bm, bn, bk, tm)


@experiment("matmul_regtile_1d", chapter="coarsening",
            title="1-D register blocking (64x64 block tile, TM outputs per thread) at 4096^3",
            units={**_UNITS, "fma_per_shared_load": "multiply-adds per shared load"})
def regtile_1d_experiment(progress):
    n = 4096
    rows = []
    tiled = mm.variant("tiled", tile=32)  # the baseline, in the same run
    for v, tm, bk in [(tiled, 1, 32)] + [(regtile_1d_variant(bm, bn, bk, tm), tm, bk)
                                        for (bm, bn, bk, tm) in REGTILE_1D_CONFIGS]:
        mm.verify(v)
        res = resources(v)
        m = mm.measure_variant(v, n, **mm._repeats(n))
        rows.append({"version": v.name, "tm": tm, "bk": bk, "n": n,
                     "fma_per_shared_load": tm / (tm + 1), **m, **res})
        progress(f"{v.name}: {m['tflops']:.2f} TFLOP/s, {res['regs']} regs")
    return rows


def _sass_ffma_counts(variants) -> list[int | None]:
    """``sass_count`` of each variant. nvdisasm is a process of its own per kernel (about half
    a second each), so the disassemblies run side by side instead of one after another."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=max(1, len(variants))) as pool:
        return list(pool.map(sass_count, variants))


def sass_count(v: Variant, opcode: str = "FFMA") -> int | None:
    """How many ``opcode`` instructions the compiled SASS of ``v`` holds (None without nvdisasm).

    A loop the compiler unrolled holds one copy of its body per iteration; one it left
    rolled, a single copy: with a 8 x 8 thread tile, 64 FFMAs per copy of the k loop.
    """
    mm._check_variant(v)
    validate.string(opcode, "opcode")
    bench._require_gpu("sass_count")
    import re as _re

    try:
        sass = v.kernel.inspect_sass()
    except Exception:  # noqa: BLE001 - no nvdisasm: say so with None, do not guess
        return None
    text = "\n".join(map(str, sass.values())) if isinstance(sass, dict) else str(sass)
    return len(_re.findall(rf"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?{_re.escape(opcode)}\b",
                           text, _re.M))


DOUBLE_CONFIGS = [(128, 128, 8, 8, 8), (128, 128, 16, 8, 8)]


@experiment("matmul_double_buffer", chapter="coarsening",
            title="Pipelined against double-buffered register tiling, with a cap of 128 registers "
                  "(4096^3)",
            units={**_UNITS, "sass_ffma": "FFMA instructions in the compiled code"})
def double_buffer_experiment(progress):
    n = 4096
    rows, variants = [], []
    for (bm, bn, bk, tm, tn) in DOUBLE_CONFIGS:
        for kind in ("pipelined", "double-buffered"):
            for cap in (None, 128):
                v = regtile_variant(bm, bn, bk, tm, tn, prefetch=True,
                                    double=kind == "double-buffered", max_registers=cap)
                mm.verify(v)
                res = resources(v)
                m = mm.measure_variant(v, n, **mm._repeats(n))
                rows.append({"kind": kind, "bm": bm, "bn": bn, "bk": bk, "tile": f"{tm}x{tn}",
                             "cap": cap or 0,
                             "n": n, **m, **res,
                             "barriers_per_tile": 1 if kind == "double-buffered" else 2})
                variants.append(v)
                progress(f"{v.name}: {m['tflops']:.2f} TFLOP/s, {res['regs']} regs, "
                         f"{res['blocks_per_sm']} blocks/SM")
    for row, count in zip(rows, _sass_ffma_counts(variants)):  # after the timings
        row["sass_ffma"] = count
    return rows


UNROLL_BKS = (8, 16)
UNROLL_WARP_TILE = (64, 32)  # 8 x 4 lanes of 8x8 thread tiles; 2 x 4 warps in a 128x128 block


UNROLL_ABLATION_CAP = 128  # the cap at which two blocks of 256 threads fit an SM's registers


def unroll_variants() -> list[tuple[dict, Variant]]:
    """The double-buffered kernel (128x128, 8x8, no cap): rows or warp tiles, 1 or 2 k steps,
    each with the row keys that name it; then the ablation: the warp-tiled kernel at BK 8 with
    two steps, capped at 128 registers (does a second block, not the layout, decide?)."""
    out = []
    for bk in UNROLL_BKS:
        for wt in (None, UNROLL_WARP_TILE):
            for ks in (1, 2):
                v = regtile_variant(128, 128, bk, 8, 8, prefetch=True, double=True, k_steps=ks,
                                    warp_tile=wt)
                out.append(({"bk": bk, "layout": "warp tiles" if wt else "block rows",
                             "k_steps": ks, "cap": 0}, v))
    v = regtile_variant(128, 128, UNROLL_BKS[0], 8, 8, prefetch=True, double=True, k_steps=2,
                        warp_tile=UNROLL_WARP_TILE, max_registers=UNROLL_ABLATION_CAP)
    out.append(({"bk": UNROLL_BKS[0], "layout": "warp tiles", "k_steps": 2,
                 "cap": UNROLL_ABLATION_CAP}, v))
    return out


@experiment("matmul_unroll", chapter="coarsening",
            title="Two k steps per loop body and warp tiles, on the double-buffered kernel (4096^3)",
            units={**_UNITS, "sass_ffma": "FFMA instructions in the compiled code"})
def unroll_experiment(progress):
    n = 4096
    rows, variants = [], []
    for keys, v in unroll_variants():
        mm.verify(v)
        res = resources(v)
        m = mm.measure_variant(v, n, **mm._repeats(n))
        rows.append({"version": v.name, **keys, "n": n, **m, **res})
        variants.append(v)
        progress(f"{v.name}: {m['tflops']:.2f} TFLOP/s, {res['regs']} regs, "
                 f"{res['blocks_per_sm']} blocks/SM")
    for row, count in zip(rows, _sass_ffma_counts(variants)):
        row["sass_ffma"] = count
    c = mm.measure_cublas(n)
    if c:  # this run's cuBLAS, for a ratio measured in one run
        rows.append({"version": mm.CUBLAS, "n": n, **c})
    return rows


def _share_recovered(capped: dict, rows: dict, warp: dict) -> str:
    # what the cap won back, as a share of what the uncapped warp tiles lost to block rows
    lost = rows["tflops"] - warp["tflops"]
    if lost <= 0:
        return ""
    return f" (recovers {100 * (capped['tflops'] - warp['tflops']) / lost:.0f}% of the gap)"


def unroll_summary(res) -> str:
    """What two k steps per loop body and warp tiles each change, per k-tile depth."""
    validate.result(res, "res")
    for c in ("version", "bk", "layout", "k_steps", "tflops", "spread", "regs", "blocks_per_sm"):
        validate.column(res, c, "res column")
    rows = [r for r in res.rows if r.get("layout") and r.get("tflops")]
    if not rows:
        raise ValueError(f"res ({res.label}) has no rows of the double-buffered kernel; pass "
                         "records.run('matmul_unroll').")
    by = {(r["bk"], r["layout"], r["k_steps"]): r for r in rows if not r.get("cap")}
    lines = []
    for bk in sorted({r["bk"] for r in rows}):
        for layout in ("block rows", "warp tiles"):
            one, two = by.get((bk, layout, 1)), by.get((bk, layout, 2))
            if one and two:
                lines.append(
                    f"BK = {bk}, {layout}: one k step per loop body {one['tflops']:.1f} TFLOP/s "
                    f"({one['regs']} regs, {one.get('sass_ffma') or '?'} FFMA), two steps "
                    f"{two['tflops']:.1f} ({two['regs']} regs, {two.get('sass_ffma') or '?'} "
                    f"FFMA): {100 * (two['tflops'] / one['tflops'] - 1):+.1f}%")
        for ks in (1, 2):
            rr, ww = by.get((bk, "block rows", ks)), by.get((bk, "warp tiles", ks))
            if rr and ww:
                noise = 100 * max(rr["spread"], ww["spread"])
                lines.append(f"BK = {bk}, {ks} k step(s): warp tiles against block rows "
                             f"{100 * (ww['tflops'] / rr['tflops'] - 1):+.1f}% ({ww['regs']} "
                             f"against {rr['regs']} registers, {ww['blocks_per_sm']} against "
                             f"{rr['blocks_per_sm']} block(s)/SM; spread within the run up to "
                             f"{noise:.2f}%)")
    capped = [r for r in rows if r.get("cap")]
    for r in capped:  # the ablation: the warp-tiled kernel given its second block back
        rr, ww = by.get((r["bk"], "block rows", r["k_steps"])), by.get((r["bk"], r["layout"],
                                                                       r["k_steps"]))
        if rr and ww:
            lines.append(f"BK = {r['bk']}, {r['k_steps']} k step(s), {r['layout']} capped at "
                         f"{r['cap']} registers: {r['tflops']:.1f} TFLOP/s ({r['regs']} regs, "
                         f"{r['blocks_per_sm']} block(s)/SM, {r.get('local_bytes', '?')} B "
                         f"local): {100 * (r['tflops'] / rr['tflops'] - 1):+.1f}% against block "
                         f"rows, {100 * (r['tflops'] / ww['tflops'] - 1):+.1f}% against the "
                         f"uncapped warp tiles{_share_recovered(r, rr, ww)}; spread within the "
                         f"run up to {100 * max(r['spread'], rr['spread']):.2f}%")
    if not capped:
        lines.append("(this record has no warp-tiled kernel with a register cap: the ablation "
                     "that gives it its second block back)")
    best = max(rows, key=lambda r: r["tflops"])
    cub = next((r for r in res.rows if r.get("version") == mm.CUBLAS and r.get("tflops")), None)
    share = (f" = {100 * best['tflops'] / cub['tflops']:.0f}% of cuBLAS in the same run "
             f"({cub['tflops']:.1f} TFLOP/s)" if cub else "")
    lines.append(f"fastest: {best['version']}: {best['tflops']:.1f} TFLOP/s{share}, "
                 f"{best['blocks_per_sm']} block(s)/SM")
    lines.append(f"({res.label})")
    text = "\n".join(lines)
    print(text)
    return text


def ladder_variants() -> list[Variant]:
    """Every step of the two chapters, in the order they teach them (not an order of speed)."""
    return [
        mm.variant("naive_row_x"), mm.variant("naive_col_x"), mm.variant("tiled", tile=32),
        coarsened_variant(32, 4), regtile_1d_variant(64, 64, 8, 16),
        regtile_variant(vectorized=False),
        regtile_variant(), regtile_variant(prefetch=True),
        regtile_variant(128, 128, 16, 8, 8, prefetch=True),
        regtile_variant(128, 128, 16, 8, 8, prefetch=True, double=True),
        regtile_variant(128, 128, 16, 8, 8, prefetch=True, double=True, max_registers=128),
        regtile_variant(128, 128, 8, 8, 8, prefetch=True, double=True, k_steps=2),
        regtile_variant(128, 128, 8, 8, 8, prefetch=True, double=True, k_steps=2,
                        warp_tile=UNROLL_WARP_TILE),
    ]


# Every block interior; K and N padded to 4100; then strips 4 and 8 wide.
FAST_PATH_SIZES = (4096, 4097, 4100, 4104)
FAST_PARTS_SIZES = (4100, 4104)  # where fast_parts times the call's parts
NO_EDGE = "chapter 5's kernel, no edge path"


def inner_loop_mix(v: Variant) -> tuple[int, int] | None:
    """(instructions, FFMAs) of the loop in ``v``'s SASS that holds the most FFMAs (from its
    label to the branch back to it): the inner loop over a k-tile. None where the SASS cannot
    be read (no ``nvdisasm``, or the simulator). Compile ``v`` first (``mm.verify(v)``)."""
    import re

    mm._check_variant(v)
    if SIMULATOR:
        return None
    if not v.kernel.overloads:
        raise RuntimeError(f"{v.name} is not compiled yet; run it once (e.g. mm.verify(v)).")
    try:
        sass = next(iter(v.kernel.overloads.values())).inspect_sass()
    except Exception:  # nvdisasm missing
        return None
    lines = sass.splitlines()
    labels = {m.group(1): i for i, line in enumerate(lines)
              for m in [re.match(r"\s*(\.L_x_\d+):", line)] if m}
    best = None
    for i, line in enumerate(lines):
        m = re.search(r"\bBRA\b.*?(\.L_x_\d+)", line)
        if m and labels.get(m.group(1), i + 1) < i:  # a branch back: the end of a loop
            ops = [o.group(1) for b in lines[labels[m.group(1)]:i + 1]
                   for o in [re.search(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", b)]
                   if o]
            found = (len(ops), ops.count("FFMA"))
            if best is None or found[1] > best[1]:
                best = found
    return best


@experiment("matmul_fast_path", chapter="coarsening",
            title="The double-buffered kernel's fast path alone, then made whole for any size",
            units={**_UNITS, "loop_inst": "instructions per pass", "loop_ffma": "FFMAs per pass",
                   "grid_blocks": "blocks", "waves": "grid blocks / (SMs x blocks per SM)"})
def fast_path_experiment(progress):
    """At 4096^3: chapter 5's best kernel (double-buffered 128x128x8, two k steps per body),
    the same kernel with only its edge path compiled out (the ablation), its fast path alone
    (``make_regtile_fast``) with int64 and with uint32 index arithmetic, and ``FastMatmul``,
    each with its registers and its inner loop's instructions and FFMAs per pass (SASS); at
    4097 (K and N padded to 4100), 4100 and 4104 (strips), ``FastMatmul`` and chapter 5's
    kernel again; at 4100 and 4104 the call's parts timed alone (``fast_parts``). cuBLAS is
    measured in the same run at each size, and ``pct_cublas`` is against it."""
    best = regtile_variant(128, 128, 8, 8, 8, prefetch=True, double=True, k_steps=2)
    cublas = {n: mm.measure_cublas(n) for n in FAST_PATH_SIZES}
    todo = [("chapter 5's kernel", best, FAST_PATH_SIZES),
            (NO_EDGE, no_edge_variant(), FAST_PATH_SIZES[:1]),
            ("fast path only, int64", fast_kernel_variant(index="int64"), FAST_PATH_SIZES[:1]),
            ("fast path only, uint32", fast_kernel_variant(), FAST_PATH_SIZES[:1]),
            ("any size", fast_variant(), FAST_PATH_SIZES)]
    rows = []
    for label, v, sizes in todo:
        if sizes == FAST_PATH_SIZES[:1]:  # whole tiles only
            mm.verify(v, 256, 256, 256)
        else:
            mm.verify(v)
            mm.verify(v, 260, 388, 132)  # a k-tail and both strips, K and N multiples of 4
            mm.verify(v, 261, 389, 131)  # K and N padded to multiples of 4
        res = {k: val for k, val in resources(v).items() if k != "threads"}
        loop = inner_loop_mix(v) or (None, None)
        for n in sizes:
            m = mm.measure_variant(v, n, **mm._repeats(n))
            c = cublas[n]
            m["pct_cublas"] = 100 * m["tflops"] / c["tflops"] if c else None
            rows.append({"version": label, "kernel": v.name, "n": n, **m, **res,
                         "loop_inst": loop[0], "loop_ffma": loop[1],
                         "grid_blocks": grid_blocks(v, n, n),
                         "waves": waves(v, n, n, res["blocks_per_sm"])})
            pct = f" = {m['pct_cublas']:.1f}% of cuBLAS" if c else ""
            progress(f"{label} at {n}: {m['tflops']:.2f} TFLOP/s{pct}, {res['regs']} regs, "
                     f"inner loop {loop[0]} instructions ({loop[1]} FFMA)")
    rows += [{"n": n, **part} for n in FAST_PARTS_SIZES for part in fast_parts(n)]
    progress("the call, the interior and the strips alone, at " + ", ".join(map(str, FAST_PARTS_SIZES)))
    for n, c in cublas.items():
        if c:
            rows.append({"version": mm.CUBLAS, "n": n, **c, "pct_cublas": 100.0})
    return rows


FAST_PARTS = ("any size: the call, again", "any size: interior alone", "any size: strips alone")


def fast_parts(n: int) -> list[dict]:
    """``fast_matmul()`` at n^3 timed again with its two parts, each alone (ms, spread): the
    whole call, the interior (fast kernel and k tail, on one stream) and the two strips (each on
    its own stream), all three with the same repeats (more than the size rows': the question is
    a fraction of a millisecond). They say how much of the strips' time the call hides behind
    the interior."""
    validate.positive_int(n, "n")
    f = fast_matmul()
    if n % 4 or n % f.bm == 0 or n < f.bm:
        raise ValueError(f"fast_parts times the call's interior and strips, so n must be a "
                         f"multiple of 4 (no padding), over {f.bm} and not a multiple of it "
                         f"(there are strips): n={n}; try {max(n // f.bm, 1) * f.bm + 4}.")
    A, B, C = mm.device_operands(n, n, n)
    f(A, B, C)  # compiles everything
    cuda.synchronize()
    runs = (lambda: f(A, B, C), lambda: f._interior(A, B, C, 0),
            lambda: f._strips_alone(A, B, C, 0))
    out = []
    for label, run in zip(FAST_PARTS, runs):
        t = bench.time_kernel(run, warmup=2, min_repeat=20, min_time=0.3)
        out.append({"version": label, "ms": t.median_ms, "spread": t.spread})
    return out


def fast_path_summary(res) -> str:
    """What ``matmul_fast_path`` shows: at 4096, each kernel's share of cuBLAS, registers and
    inner loop; then, per size, the any-size call against chapter 5's kernel."""
    validate.result(res, "res")
    for c in ("version", "n", "tflops"):
        validate.column(res, c, "res column")
    by = {(r["version"], r["n"]): r for r in res.rows}
    need = [("chapter 5's kernel", 4096), ("fast path only, uint32", 4096), ("any size", 4096)]
    missing = [f"{v!r} at {n}" for v, n in need if (v, n) not in by]
    if missing:
        raise ValueError(f"res has no {', '.join(missing)} row: pass the result of "
                         "gp.records.run('matmul_fast_path').")
    lines = []
    labels = ("chapter 5's kernel", NO_EDGE, "fast path only, int64", "fast path only, uint32",
              "any size")
    for label in labels:
        r = by.get((label, 4096))
        if r is None:
            continue
        pct = f" = {r['pct_cublas']:.1f}% of cuBLAS" if r.get("pct_cublas") else ""
        loop = (f"; inner loop {r['loop_inst']} instructions per pass, {r['loop_ffma']} of them "
                f"FFMAs ({100 * r['loop_ffma'] / r['loop_inst']:.0f}%)"
                if r.get("loop_inst") else "")
        lines.append(f"4096^3 {label:24s} {r['tflops']:6.2f} TFLOP/s{pct}; {r.get('regs')} "
                     f"registers{loop}")
    # Two k steps of an 8x8 thread tile: 128 FFMAs. Another count means the loop found is not
    # the inner loop (another GPU's compiler may lay it out differently).
    odd = [label for label in labels if by.get((label, 4096), {}).get("loop_ffma") not in (None, 128)]
    if odd:
        lines.append(f"the loop counted for {', '.join(odd)} does not hold the 128 FFMAs of two k steps: "
                     "this GPU's compiler laid the inner loop out differently, and its loop_inst "
                     "does not compare with the others'")
    fast, ch5 = by.get(("fast path only, int64", 4096)), by["chapter 5's kernel", 4096]
    if fast is None:
        lines.append("no 'fast path only, int64' row at 4096: no loop or ablation comparison "
                     "with chapter 5's kernel (both need its index type)")
    if fast and fast.get("loop_inst") and ch5.get("loop_inst"):  # the same index type as ch. 5's
        lines.append(f"chapter 5's inner loop has {100 * (ch5['loop_inst'] / fast['loop_inst'] - 1):.1f}% "
                     "more instructions than the fast path's; the fast path alone (int64) is "
                     f"{100 * (fast['tflops'] / ch5['tflops'] - 1):.1f}% faster")
    bare = by.get((NO_EDGE, 4096))
    if fast and bare:  # the ablation: the edge path out, nothing else
        gap = fast["tflops"] - ch5["tflops"]
        spread = max(r.get("spread") or 0 for r in (ch5, bare)) * ch5["tflops"]
        share = (f", {100 * (bare['tflops'] - ch5['tflops']) / gap:.0f}% of the fast path's gain"
                 if gap > 0 else "")
        loop = (f"; inner loop {ch5['loop_inst']} -> {bare['loop_inst']} instructions (the fast "
                f"path's: {fast['loop_inst']})" if bare.get("loop_inst") and ch5.get("loop_inst")
                and fast.get("loop_inst") else "")
        moved = abs(bare["tflops"] - ch5["tflops"]) > spread
        lines.append(f"the edge path alone compiled out of chapter 5's kernel: "
                     f"{100 * (bare['tflops'] / ch5['tflops'] - 1):+.1f}% speed{share}{loop}; "
                     + ("beyond" if moved else "within") + " the spread of the two rows "
                     f"({spread:.2f} TFLOP/s)")
    for n in sorted({r["n"] for r in res.rows if r["n"] != 4096}):
        whole, ch5 = by.get(("any size", n)), by.get(("chapter 5's kernel", n))
        if whole and ch5:
            cub = by.get((mm.CUBLAS, n))
            padded = f" (K and N padded to {-(-n // 4) * 4})" if n % 4 else ""
            lines.append(f"{n}^3: any size{padded} {whole['tflops']:.2f} TFLOP/s, chapter 5's kernel "
                         f"{ch5['tflops']:.2f}: {100 * whole['tflops'] / ch5['tflops']:.0f}% of it"
                         + (f" (cuBLAS {cub['tflops']:.2f} TFLOP/s at this size)" if cub else ""))
    for n in sorted({r["n"] for r in res.rows}):  # records made before these rows lack them
        call, inner, strips = [by.get((p, n)) for p in FAST_PARTS]
        if call and inner and strips and strips["ms"] > 0:
            margin = max(r["spread"] * r["ms"] for r in (call, inner, strips))
            verdict = ("the strips ran wholly beside the interior" if call["ms"] <= inner["ms"] + margin
                       else "the strips ran after the interior, within the spread"
                       if call["ms"] >= inner["ms"] + strips["ms"] - margin
                       else "the strips ran partly beside the interior, partly after it")
            lines.append(f"{n}^3: the call takes {call['ms']:.3f} ms, its interior alone "
                         f"{inner['ms']:.3f} and its strips alone {strips['ms']:.3f}: the call "
                         f"adds {100 * (call['ms'] - inner['ms']) / strips['ms']:.0f}% of the "
                         "strips' time to the interior's (100% would be strips after the "
                         f"interior, 0% strips wholly beside it; spread within the run up to "
                         f"{margin:.3f} ms): {verdict}")
    # records made before these columns lack them
    for label, covers in (("chapter 5's kernel", "over all of C"),
                          ("any size", "the fast kernel's, over the interior")):
        grids = [by[label, n] for n in sorted({r["n"] for r in res.rows})
                 if (label, n) in by and by[label, n].get("waves")]
        if grids:
            lines.append(f"{label}'s grid ({covers}): " + "; ".join(
                f"{r['n']}: {r['grid_blocks']} blocks, {r['waves']:.2f} waves of "
                f"{r['blocks_per_sm']} per SM ({math.ceil(r['waves'] - 1e-9)} rounds)"
                for r in grids))
    lines.append(f"({res.label})")
    text = "\n".join(lines)
    print(text)
    return text


@experiment("matmul_resources", chapter="coarsening",
            title="Registers, shared memory and occupancy of every variant, from the compiled kernels",
            units=_UNITS)
def resources_experiment(progress):
    rows = []
    vs = ladder_variants() + [coarsened_variant(32, f) for f in (2, 8, 16)] + [
        regtile_variant(*cfg) for cfg in REGTILE_CONFIGS if cfg != (128, 128, 8, 8, 8)]
    for v in {v.name: v for v in vs}.values():  # the ladder and the sweep share one config
        mm.verify(v)
        rows.append({"version": v.name, **resources(v)})
        progress(f"{v.name}: {rows[-1]['regs']} regs, {rows[-1]['blocks_per_sm']} blocks/SM")
    return rows


@experiment("matmul_ladder", chapter="coarsening",
            title="Every step from naive to 2D register tiling at 4096^3, against cuBLAS",
            units={**_UNITS, "ai": "FLOP/B", "bound_tflops": "TFLOP/s"})
def ladder_experiment(progress):
    n = 4096
    # the ladder, then the fast path made whole (its own section, and not a rung of the
    # profiling chapter's tables, which launch ladder_variants() by index)
    vs = ladder_variants() + [fast_variant()]
    for v in vs:
        mm.verify(v)
    rows = mm.roofline_rows(vs, n, progress)
    for r, v in zip(rows, vs):
        r.update({k: val for k, val in resources(v).items() if k != "threads"})
    c = mm.measure_cublas(n)
    if c:
        rows.append({"version": "cuBLAS (CuPy @)", "n": n, **c})
    return rows


# --------------------------------------------------------------------------- widgets


def measure_point(tile: int = 32, factor: int = 1, n: int = 4096) -> dict:
    """One live point for the explorer: TFLOP/s and occupancy of a tile/factor pair."""
    mm._check_tile(tile)
    validate.positive_int(factor, "factor", maximum=64)
    validate.positive_int(n, "n")
    v = mm.variant("tiled", tile=tile) if factor == 1 else coarsened_variant(tile, factor)
    mm.verify(v)
    return {**mm.measure_variant(v, n, **mm._repeats(n)), **resources(v)}


_BLOCK_TILE = {"4x4": (64, 64), "8x4": (128, 64), "8x8": (128, 128)}


def measure_regtile_point(tile: str = "8x8", kind: str = "pipelined", bk: int = 8,
                          n: int = 4096) -> dict:
    """One live point for the register-tiling explorer (``tile`` is "TMxTN")."""
    import re as _re

    if not (isinstance(tile, str) and _re.fullmatch(r"\d+x\d+", tile)):
        raise ValueError(f"tile={tile!r} must be a thread tile 'TMxTN' such as '8x8' or '8x4'.")
    validate.choice(kind, "kind", ("scalar", "vectorized", "pipelined"))
    validate.positive_int(bk, "bk", maximum=64)
    validate.positive_int(n, "n")
    tm, tn = (int(v) for v in tile.split("x"))
    bm, bn = _BLOCK_TILE.get(tile, (16 * tm, 16 * tn))
    v = regtile_variant(bm, bn, bk, tm, tn, vectorized=kind != "scalar",
                        prefetch=kind == "pipelined")
    mm.verify(v)
    return {**mm.measure_variant(v, n, **mm._repeats(n)), **resources(v)}


def plot_factor_sweep(sweep, sizes=(1024, 4096)):
    """TFLOP/s against the coarsening factor, one line per tile, one panel per size."""
    validate.result(sweep, "sweep")
    import matplotlib.pyplot as plt

    from .. import plots

    fig, axes = plt.subplots(len(sizes), 1, figsize=(plots.COLUMN_INCHES, 3.3 * len(sizes)),
                             sharex=True, squeeze=False)
    for ax, n in zip(axes.flat, sizes):
        validate.choice(n, "sizes[...]", sweep.values("n"))
        plots.lines(sweep, x="factor", y="tflops", series="tile", rows=sweep.select(n=n),
                    logx=True, ax=ax, title=f"coarsened tiled matmul, n={n}")
    fig.tight_layout()
    return fig


def explore_coarsening(res=None, y: str = "tflops"):
    """Sliders over tile and size, ``y`` (tflops or occupancy) against factor; live on a GPU."""
    if res is not None:
        validate.result(res, "res")
        for _c in ("factor", "tile", "n"):
            validate.column(res, _c, "res column")
        validate.column(res, y, "y")
    else:
        validate.choice(y, "y", ("tflops", "occupancy", "ms", "regs", "blocks_per_sm"))
    from .. import records, widgets  # lazily: a GPU box may lack ipywidgets

    res = res or records.run("matmul_coarsen_sweep")
    return widgets.explore(res, x="factor", y=y,
                           controls={"tile": res.values("tile"), "n": res.values("n")},
                           live=None if SIMULATOR else measure_point)


def explore_regtile(res=None, y: str = "tflops"):
    """TMxTN against ``y`` (tflops or occupancy) per kernel kind and BK; live on a GPU."""
    if res is not None:
        validate.result(res, "res")
        for _c in ("tile", "kind", "bk"):
            validate.column(res, _c, "res column")
        validate.column(res, y, "y")
    else:
        validate.choice(y, "y", ("tflops", "occupancy", "ms", "regs", "blocks_per_sm"))
    from .. import records, widgets

    res = res or records.run("matmul_regtile_sweep")
    return widgets.explore(res, x="tile", y=y, controls={"kind": res.values("kind"),
                                                                "bk": res.values("bk")},
                           live=None if SIMULATOR else measure_regtile_point)


# --------------------------------------------------------------------------- exercises


@ex.refuses_stubs(solved_by=("make_coarsened", "coarsened_variant", "variant", "matmul"))
def check_coarsened(make_kernel, tile: int = 8, factor: int = 3, *,
                    along: str = "columns") -> ex.Report:
    """Check ``make_kernel(tile, factor)``: a coarsened tiled kernel ``k(A, B, C)``.

    Launched with (tile, tile) threads per block. ``along="columns"``: a grid of
    (ceil(N / (tile * factor)), ceil(M / tile)) blocks, each thread computing ``factor``
    outputs of one row, ``tile`` columns apart. ``along="rows"``: a grid of
    (ceil(N / tile), ceil(M / (tile * factor))) blocks, each thread computing ``factor``
    outputs of one column, ``tile`` rows apart. On a GPU, ``make_kernel(SPEED_TILE,
    SPEED_FACTOR)`` must also pass ``matmul._speed_bar``: a share of cuBLAS measured in the
    same check.
    """
    validate.function(make_kernel, "make_kernel", what="a function make_kernel(tile, factor)")
    mm._check_tile(tile)
    validate.positive_int(factor, "factor", maximum=64)
    validate.choice(along, "along", ("columns", "rows"))

    def make_launch():
        k = make_kernel(tile, factor)
        if not (hasattr(k, "__getitem__") and callable(k)):
            raise TypeError(f"make_kernel({tile}, {factor}) returned {type(k).__name__}, not a "
                            "@cuda.jit kernel.")

        def launch(A, B, C):
            M, N = C.shape
            if along == "columns":
                grid = (_cdiv(N, tile * factor), _cdiv(M, tile))
            else:
                grid = (_cdiv(N, tile), _cdiv(M, tile * factor))
            k[grid, (tile, tile)](A, B, C)

        return launch

    sizes = [(1, 1, 1), (9, 11, 25), (8, 8, 24), (17, 13, 50), (5, 20, 7)]
    if along == "rows":  # rows are what the coarsening spans here: tall sizes
        sizes = [(1, 1, 1), (25, 11, 9), (24, 8, 8), (50, 13, 17), (7, 20, 5)]
    chk = mm.check_matmul_kernel(
        make_launch, f"coarsened tiled matmul along {along} (tile {tile}, factor {factor})",
        sizes=sizes)
    if not mm.source_checks_apply(chk):
        return chk.report()
    chk.calls(make_kernel, "numba.cuda:syncthreads",
              why="the tiles in shared memory need cuda.syncthreads() between loading and "
                  "using them, and before they are overwritten.")
    chk.calls(make_kernel, "numba.cuda:local.array",
              why="keep the factor running sums in a cuda.local.array (registers).")
    _check_coarsened_reuse(chk, make_kernel, tile, factor, along)
    if SIMULATOR:
        ex.speed_not_measured(chk, f"{mm.TILED_SPEED_TARGET:.0%} of cuBLAS at "
                                   f"{mm.TILED_SPEED_N}^3 with tile {SPEED_TILE}, factor "
                                   f"{SPEED_FACTOR}")
    elif chk.report_.ok:
        n, t, f = mm.TILED_SPEED_N, SPEED_TILE, SPEED_FACTOR
        grid = ((_cdiv(n, t * f), _cdiv(n, t)) if along == "columns"
                else (_cdiv(n, t), _cdiv(n, t * f)))
        mm._speed_bar(chk, make_kernel(t, f), grid, (t, t),
                     f"your kernel (along {along}, tile {t}, factor {f})")
    return chk.report()


# The coarsening exercise's speed bar on a GPU (mm._speed_bar): with these, the chapter's
# kernels read 15-16% of cuBLAS at 1024 and 4096 (matmul_coarsen_sweep, H200 and H100).
SPEED_TILE, SPEED_FACTOR = 16, 2


def _check_coarsened_reuse(chk, make_kernel, tile: int, factor: int, along: str) -> None:
    """Count, in the emulator, one block's global loads of A and B over two tiles of K. The
    block covers ``tile`` x ``tile * factor`` of C (``factor`` tiles along ``along``): it loads
    the shared operand's tile once per step of K and each of the ``factor`` other tiles once,
    ``tile * K * (1 + factor)`` loads in all. Reloading the shared tile for every output tile
    (no reuse across the factor), or reading A and B in the inner product, loads more."""
    from .. import emulator

    if tile < 2:
        return
    K = 2 * tile
    M, N = (tile, tile * factor) if along == "columns" else (tile * factor, tile)
    with chk.case(f"global loads of A and B, one block of {M} x {N} outputs over K={K} "
                  "(emulator)"):
        k = make_kernel(tile, factor)
        a, b = emulator._param_names(k, 2)[:2]
        run = emulator.launch(k, (1, 1), (tile, tile), ex.random_array((M, K), 5),
                              ex.random_array((K, N), 6), np.zeros((M, N), np.float32))
        got = {name: sum(1 for e in run.events
                         if e.space == "global" and e.kind == "load" and e.array == name)
               for name in (a, b)}
        want = {a: M * K, b: K * N}  # every element of A's rows and B's columns, once
        extra = [name for name in (a, b) if got[name] > want[name] * 1.1]
        if extra:
            name = extra[0]
            chk.fail(f"the block made {got[name]:,} global loads of {name} for its {M} x {N} "
                     f"outputs over K={K}, where each element it needs loaded once is "
                     f"{want[name]:,}: "
                     + ("the inner product reads global memory instead of the shared tiles."
                        if got[name] >= M * N * K else  # each output reading K of them
                        f"a tile of {name} is loaded again for each of the {factor} output tiles; "
                        "load the shared operand's tile once per step of K and reuse it."))


def _tile_reuse(bm: int, bn: int, tm: int, tn: int) -> tuple[int, float, float]:
    return (bm // tm) * (bn // tn), bm * bn / (2 * (bm + bn)), tm * tn / (tm + tn)


TILE_REUSE_CASES = [(128, 128, 8, 8), (64, 64, 4, 4), (128, 64, 8, 4), (64, 32, 4, 2),
                    (256, 128, 8, 8), (32, 32, 2, 2)]


@ex.refuses_stubs(solved_by=("gpuperf.kernels.matmul:intensity",
                             "gpuperf.kernels.matmul:traffic_bytes"))
def check_tile_reuse(fn) -> ex.Report:
    """Check ``fn(bm, bn, tm, tn) -> (threads, flop_per_byte, fma_per_shared_load)`` for a
    block tile ``bm x bn`` of C and a thread tile ``tm x tn``: threads per block, FLOP per
    byte of global traffic for large matrices (C's write left out), and multiply-adds per
    shared-memory load at one step of the inner loop."""
    chk = ex.Checker("register tile reuse")
    if not callable(fn):
        chk.fail(f"expected a function, got {type(fn).__name__}.")
        return chk.report()
    cases = list(TILE_REUSE_CASES)
    if ex.grading():  # a tile the student never saw: powers of two, the thread tile inside
        rng = ex.case_rng(11)
        tm, tn = (int(2 ** rng.integers(1, 4)) for _ in range(2))
        cases.append((tm * int(2 ** rng.integers(2, 5)), tn * int(2 ** rng.integers(2, 5)), tm, tn))
    for bm, bn, tm, tn in cases:
        with chk.case(f"block tile {bm} x {bn}, thread tile {tm} x {tn}"):
            got = fn(bm, bn, tm, tn)
            if not (isinstance(got, (tuple, list)) and len(got) == 3):
                chk.fail(f"returned {got!r}; return a tuple (threads, flop_per_byte, "
                         "fma_per_shared_load).")
                continue
            threads, ai, reuse = _tile_reuse(bm, bn, tm, tn)
            g_threads, g_ai, g_reuse = got
            if g_threads != threads:
                why = (f"{bm} x {bn} outputs is {bm * bn} threads only at one output each; "
                       f"each thread computes {tm} x {tn}." if g_threads == bm * bn
                       else f"each thread computes {tm} x {tn} outputs of the {bm} x {bn} tile.")
                chk.fail(f"threads: got {g_threads!r}, expected {threads}: {why}")
            if not _close(g_ai, ai):
                if _close(g_ai, 2 * ai):
                    why = ("that counts 4-byte floats as 2 bytes, or each load twice over: per "
                           "step of k a block loads bm + bn floats of 4 bytes.")
                elif _close(g_ai, ai / 2):
                    why = "a multiply-add is 2 FLOP."
                elif _close(g_ai, 4 * ai):
                    why = "that is FLOP per float; a float is 4 bytes."
                else:
                    why = (f"per step of k a block loads {bm} + {bn} floats and does "
                           f"{bm} x {bn} multiply-adds.")
                chk.fail(f"FLOP per byte: got {g_ai!r}, expected {ai:.4g}: {why}")
            if not _close(g_reuse, reuse):
                why = ("a thread loads tm values of A and tn of B from shared memory per step and "
                       "does tm x tn multiply-adds with them.")
                chk.fail(f"multiply-adds per shared load: got {g_reuse!r}, expected "
                         f"{reuse:.4g}: {why}")
    return chk.report()


def _close(got, want) -> bool:
    return (isinstance(got, (int, float, np.integer, np.floating)) and not isinstance(got, bool)
            and abs(float(got) - want) <= 1e-6 * max(1.0, abs(want)))


def check_best_factor(answer: dict, res=None) -> ex.Report:
    """Check the best-factor analysis ``answer`` against the sweep ``res``.

    ``answer`` keys: ``best_factor`` (the fastest at n=4096 for tile 32), ``blocks_per_sm``
    and ``occupancy`` of that variant, and ``blocks_at_1024`` (grid blocks at n=1024 with
    factor 16).
    """
    if res is not None:
        validate.result(res, "res")
        for _c in ("tile", "n", "factor", "tflops", "blocks_per_sm", "occupancy", "blocks"):
            validate.column(res, _c, "res column")
    from .. import records

    chk = ex.Checker("best coarsening factor, explained")
    res = res or records.run("matmul_coarsen_sweep")
    rows = res.select(tile=32, n=4096)
    best = max(rows, key=lambda r: r["tflops"])
    if not isinstance(answer, dict):
        chk.fail("answer must be a dict with keys best_factor, blocks_per_sm, occupancy, "
                 "blocks_at_1024.")
        return chk.report()
    if answer and all(val is None for val in answer.values()):
        return ex.not_implemented("best coarsening factor, explained", "answer",
                                  "fill in every value of answer from the sweep.")
    with chk.case("best factor at 4096"):
        chk.expect(answer.get("best_factor") == best["factor"],
                   f"the fastest factor in this sweep is {best['factor']} "
                   f"({best['tflops']:.2f} TFLOP/s), not {answer.get('best_factor')}; read the "
                   "table for tile 32, n=4096.")
    with chk.case("occupancy of the best factor"):
        chk.expect(answer.get("blocks_per_sm") == best["blocks_per_sm"],
                   f"blocks_per_sm of factor {best['factor']} is {best['blocks_per_sm']} in the "
                   "sweep (column blocks_per_sm).")
        occ = answer.get("occupancy")
        chk.expect(isinstance(occ, (int, float)) and abs(occ - best["occupancy"]) < 0.02,
                   f"occupancy of factor {best['factor']} is {best['occupancy']:.3f} (active "
                   "warps over the SM's maximum).")
    with chk.case("too much coarsening at 1024"):
        r16 = res.one(tile=32, n=1024, factor=16)
        chk.expect(answer.get("blocks_at_1024") == r16["blocks"],
                   f"factor 16 at n=1024 launches ceil(1024/(32*16)) x ceil(1024/32) = "
                   f"{r16['blocks']} blocks, for a GPU with "
                   f"{res.meta.get('device', {}).get('sm_count', 'its')} SMs.")
    return chk.report()


def _tile_reuse_answer(fn, bm, bn, tm, tn) -> tuple[int, float, float]:
    """``fn(bm, bn, tm, tn)``, checked to be (a whole number of threads, two real numbers)."""
    answer = fn(bm, bn, tm, tn)
    call = f"fn({bm}, {bn}, {tm}, {tn})"
    if not isinstance(answer, (tuple, list)) or len(answer) != 3:
        raise TypeError(f"{call} returned {answer!r}: return three numbers, (threads, "
                        "FLOP per byte, multiply-adds per shared load); check it with "
                        "co.check_tile_reuse first.")

    def real(value):  # the number, or None for anything that is not a finite real number
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
            return None
        return float(value) if np.isfinite(float(value)) else None

    threads, ai, reuse = answer
    if real(threads) is None or not real(threads).is_integer():
        raise ValueError(f"{call} gave threads = {threads!r}: a block has a whole number of "
                         "threads.")
    for name, value in (("FLOP per byte", ai), ("multiply-adds per shared load", reuse)):
        if real(value) is None:
            raise ValueError(f"{call} gave {name} = {value!r}: give a finite number.")
    return int(real(threads)), real(ai), real(reuse)


def compare_tile_reuse(fn, res) -> list[dict]:
    """The predict-then-measure half of ``ex-coarsening-tile-reuse``: ``fn(bm, bn, tm, tn)``'s
    predictions for every configuration of the register-tiling sweep ``res``
    (``matmul_regtile_sweep``) beside the TFLOP/s it measured for each kernel form. Prints
    one line per configuration, then, for each form, in how many pairs of configurations with
    different multiply-adds per shared load the one with more was also faster. Returns the
    rows (the predictions and the measured TFLOP/s by form)."""
    validate.function(fn, "fn", what="your tile_reuse(bm, bn, tm, tn)")
    validate.result(res, "res")
    for c in ("kind", "bm", "bn", "tm", "tn", "tflops"):
        validate.column(res, c, "res column")
    kinds = res.values("kind")
    configs = sorted({(r["bm"], r["bn"], r["tm"], r["tn"]) for r in res.rows})
    rows = []
    for bm, bn, tm, tn in configs:
        threads, ai, reuse = _tile_reuse_answer(fn, bm, bn, tm, tn)
        measured = {k: max((r["tflops"] for r in res.select(kind=k, bm=bm, bn=bn, tm=tm, tn=tn)),
                           default=None) for k in kinds}
        rows.append({"config": f"{bm}x{bn}, {tm}x{tn}", "threads": threads,
                     "flop_per_byte": float(ai), "fma_per_shared_load": float(reuse),
                     **{f"tflops {k}": v for k, v in measured.items()}})
    head = f"{'block, thread tile':20s} {'threads':>7s} {'FLOP/B':>7s} {'FMA/load':>8s}"
    print(f"your predictions beside the TFLOP/s measured on {res.gpu} (best BK of each form):")
    print(head + "".join(f" {k:>11s}" for k in kinds))
    for r in rows:
        print(f"{r['config']:20s} {r['threads']:7d} {r['flop_per_byte']:7.1f} "
              f"{r['fma_per_shared_load']:8.2f}"
              + "".join(f" {r[f'tflops {k}']:11.1f}" if r[f"tflops {k}"] is not None
                        else f" {'-':>11s}" for k in kinds))
    for k in kinds:
        pairs = agree = 0
        for a in rows:
            for b in rows:
                ta, tb = a[f"tflops {k}"], b[f"tflops {k}"]
                if (a["fma_per_shared_load"] > b["fma_per_shared_load"] + 1e-9
                        and ta is not None and tb is not None):
                    pairs += 1
                    agree += ta > tb
        print(f"{k}: more multiply-adds per shared load was also faster in {agree} of {pairs} "
              "pairs of configurations")
    return rows


__all__ = [
    "make_coarsened", "vecadd", "make_vecadd_coarsened", "make_regtile_scalar", "make_regtile",
    "coarsened_variant", "regtile_variant", "variant", "matmul", "vector_add", "resources",
    "waves", "grid_blocks", "ladder_variants", "measure_point", "measure_regtile_point",
    "explore_coarsening", "explore_regtile", "check_coarsened", "check_best_factor",
    "check_tile_reuse", "compare_tile_reuse", "make_regtile_double", "make_regtile_1d", "regtile_1d_variant",
    "REGTILE_1D_CONFIGS", "regtile_1d_summary", "tuning_table", "show_tuning", "sass_count", "cap_summary",
    "double_buffer_summary", "VERSIONS", "FACTORS", "REGTILE_CONFIGS", "CAP_FACTORS",
    "DOUBLE_CONFIGS",
]


# --------------------------------------------------------------------------- prose helpers


def occupancy_limits(res, tile: int = 32, n: int = 4096) -> str:
    """Why coarsening can cost occupancy, printed from the sweep and the GPU's facts.

    The SM's thread and register limits (of the GPU behind ``res``), how many registers per
    thread let two ``tile`` x ``tile`` blocks fit, and, for every factor at size ``n``: the
    registers the compiler chose, the blocks per SM, the occupancy and the speed against
    factor 1.
    """
    from .. import device

    validate.result(res, "res")
    tile = validate.integer(tile, "tile", minimum=1, maximum=32)
    n = validate.integer(n, "n", minimum=1)
    for c in ("tile", "n", "factor"):
        validate.column(res, c, "res column")
    facts, where = device.facts(res)
    threads = tile * tile
    lines = []
    max_threads, regs_sm = facts.get("max_threads_per_sm"), facts.get("registers_per_sm")
    if max_threads and regs_sm:
        by_threads = max_threads // threads
        line = (f"{where[0].upper()}{where[1:]}: {max_threads} threads and {regs_sm:,} registers "
                f"per SM, so at most {by_threads} block(s) of {threads} threads fit by threads")
        if by_threads >= 2:
            line += f"; two fit only with at most {regs_sm // (2 * threads)} registers per thread."
        else:
            line += "; one block fills the SM's threads whatever its registers."
        lines.append(line)
    rows = sorted(res.select(tile=tile, n=n), key=lambda r: r["factor"])
    base = next((r for r in rows if r["factor"] == 1), None)
    for r in rows:
        gain = f", {r['tflops'] / base['tflops']:.2f}x factor 1" if base else ""
        lines.append(f"  tile {tile}, factor {r['factor']:2d}, n={n}: {r['regs']} registers, "
                     f"{r['blocks_per_sm']} block(s)/SM, occupancy {r['occupancy']:.0%}: "
                     f"{r['tflops']:.2f} TFLOP/s{gain}")
    if base and rows:
        best = max(rows, key=lambda r: r["tflops"])
        lines.append(f"best factor {best['factor']}: {100 * (best['tflops'] / base['tflops'] - 1):+.0f}% "
                     f"against no coarsening ({res.label})")
    text = "\n".join(lines)
    print(text)
    return text


def vecadd_summary(res) -> str:
    """How far apart the coarsening factors of the vector add are, and how close to the copy."""
    validate.result(res, "res")
    for c in ("factor", "gbps", "pct_copy"):
        validate.column(res, c, "res column")
    rows = [r for r in res.rows if r.get("gbps")]
    lo, hi = min(rows, key=lambda r: r["gbps"]), max(rows, key=lambda r: r["gbps"])
    text = (f"vector add: factors {', '.join(str(r['factor']) for r in rows)} span "
            f"{lo['gbps']:,.0f} to {hi['gbps']:,.0f} GB/s (the fastest {100 * (hi['gbps'] / lo['gbps'] - 1):.0f}% "
            f"above the slowest), {lo['pct_copy']:.0f}% to {hi['pct_copy']:.0f}% of the "
            f"device-to-device copy ({res.label})")
    print(text)
    return text


def regtile_summary(res) -> str:
    """The resources of the fastest register-tiled kernels, printed from the sweep."""
    validate.result(res, "res")
    for c in ("kind", "bm", "bn", "bk", "tile", "tflops"):
        validate.column(res, c, "res column")
    rows = sorted((r for r in res.rows if r.get("tflops")), key=lambda r: -r["tflops"])
    top = rows[:3]
    lines = []
    for r in top:
        tm, tn = (int(v) for v in str(r["tile"]).split("x"))
        threads = r["bm"] * r["bn"] // (tm * tn)
        lines.append(f"{r['kind']} {r['bm']}x{r['bn']}x{r['bk']} {r['tile']}: {r['tflops']:.1f} TFLOP/s, "
                     f"{r['regs']} registers per thread, {r['blocks_per_sm']} block(s) of {threads} "
                     f"threads per SM, occupancy {r['occupancy']:.1%}")
    lines.append(f"({res.label})")
    text = "\n".join(lines)
    print(text)
    return text


def cap_summary(res) -> str:
    """Each factor with and without the register cap, and the best against the tiled kernel."""
    validate.result(res, "res")
    for c in ("factor", "cap", "tflops", "regs", "blocks_per_sm", "local_bytes"):
        validate.column(res, c, "res column")
    by = {(r["factor"], r["cap"]): r for r in res.rows if r.get("tflops")}
    lines = []
    for f in sorted({f for f, _ in by}):
        free = by.get((f, 0))
        capped = [r for (ff, cap), r in sorted(by.items()) if ff == f and cap]
        if not free or not capped:
            continue
        c = capped[0]
        lines.append(f"factor {f}: {free['tflops']:.2f} -> {c['tflops']:.2f} TFLOP/s with a cap of "
                     f"{c['cap']} registers ({free['regs']} -> {c['regs']} registers, "
                     f"{free['blocks_per_sm']} -> {c['blocks_per_sm']} blocks/SM, "
                     f"{c['local_bytes']} B of local memory per thread)")
    base = by.get((1, 0))
    best = max(by.values(), key=lambda r: r["tflops"])
    if base:
        cap = f"capped at {best['cap']}" if best["cap"] else "no cap"
        lines.append(f"best: factor {best['factor']}, {cap}: {best['tflops']:.2f} TFLOP/s, "
                     f"{best['tflops'] / base['tflops'] - 1:+.0%} over the tiled kernel "
                     "(factor 1, no cap)")
    lines.append(f"({res.label})")
    text = "\n".join(lines)
    print(text)
    return text


def double_buffer_summary(res) -> str:
    """Pipelined -> double-buffered -> capped, per k-tile depth, and the k loop in the SASS."""
    validate.result(res, "res")
    for c in ("kind", "bk", "tile", "cap", "tflops", "regs", "blocks_per_sm", "local_bytes",
              "sass_ffma"):
        validate.column(res, c, "res column")
    lines = []
    for bk in sorted({r["bk"] for r in res.rows}):
        steps = []
        for kind, cap in (("pipelined", 0), ("pipelined", 128), ("double-buffered", 0),
                          ("double-buffered", 128)):
            r = next((r for r in res.rows if r["bk"] == bk and r["kind"] == kind
                      and r["cap"] == cap and r.get("tflops")), None)
            if r is None:
                continue
            name = kind + (f", cap {cap}" if cap else "")
            steps.append(f"{name} {r['tflops']:.1f} ({r['regs']} regs, {r['blocks_per_sm']} "
                         f"block(s)/SM, {r['local_bytes']} B local)")
        lines.append(f"BK = {bk}: " + "; ".join(steps))
    best = max((r for r in res.rows if r.get("tflops")), key=lambda r: r["tflops"])
    # No "% of cuBLAS" here: this experiment measures no cuBLAS of its own, and the ceiling
    # measured when the record started differs from the ladder's own cuBLAS row.
    lines.append(f"best: {best['kind']} BK = {best['bk']}"
                 + (f", cap {best['cap']}" if best["cap"] else "")
                 + f": {best['tflops']:.1f} TFLOP/s")
    for r in res.rows:
        if r["kind"] == "double-buffered" and r["cap"] == 0 and r.get("sass_ffma"):
            tm, tn = (int(v) for v in str(r["tile"]).split("x"))
            lines.append(f"BK = {r['bk']}, double-buffered: {r['sass_ffma']} FFMA instructions in "
                         f"the compiled kernel = {r['sass_ffma'] / (tm * tn):g} copies of one k "
                         f"step's {tm * tn} (the k loop runs {r['bk']} steps per tile)")
    lines.append(f"({res.label})")
    text = "\n".join(lines)
    print(text)
    return text


def regtile_1d_summary(res) -> str:
    """Each 1-D register-blocked kernel against the tiled kernel of the same run."""
    validate.result(res, "res")
    for c in ("version", "tm", "tflops", "fma_per_shared_load", "regs", "blocks_per_sm"):
        validate.column(res, c, "res column")
    rows = [r for r in res.rows if r.get("tflops")]
    base = next((r for r in rows if r["version"].startswith("tiled")), None)
    lines = []
    for r in rows:
        vs = f", {r['tflops'] / base['tflops']:.2f}x the tiled kernel" if base and r is not base else ""
        lines.append(f"{r['version']}: {r['tflops']:.2f} TFLOP/s, {r['fma_per_shared_load']:.2f} "
                     f"multiply-adds per shared load, {r['regs']} registers, "
                     f"{r['blocks_per_sm']} block(s)/SM{vs}")
    lines.append(f"({res.label})")
    text = "\n".join(lines)
    print(text)
    return text


def _config_label(r: dict) -> str:
    bm, bn = r.get("bm"), r.get("bn")
    if bm is None:  # matmul_double_buffer's rows name the depth and thread tile only
        tm, tn = (int(v) for v in str(r.get("tile", "8x8")).split("x"))
        bm, bn = next(((c[0], c[1]) for c in DOUBLE_CONFIGS
                       if (c[2], c[3], c[4]) == (r["bk"], tm, tn)), ("?", "?"))
    cap = f", cap {r['cap']}" if r.get("cap") else ""
    return f"{r['kind']} {bm}x{bn}x{r['bk']} {r.get('tile', '')}{cap}"


def tuning_table(*results) -> list[dict]:
    """Every configuration measured by the register-tiling experiments
    (``matmul_regtile_sweep``, ``matmul_double_buffer``), fastest first, with the run it
    comes from, its gap to the best and whether it ties with it: a tie when the gap is
    within the two measurements' spreads (interquartile ranges over the median) added."""
    if not results:
        raise TypeError("tuning_table needs at least one result (gp.records.run("
                        "'matmul_regtile_sweep') or 'matmul_double_buffer').")
    rows = []
    for i, res in enumerate(results):
        validate.result(res, f"results[{i}]")
        for c in ("kind", "bk", "tflops", "spread"):
            validate.column(res, c, f"results[{i}] column")
        rows += [{"config": _config_label(r), "run": res.name, "tflops": r["tflops"],
                  "spread": r["spread"], "regs": r.get("regs"),
                  "blocks_per_sm": r.get("blocks_per_sm")} for r in res.rows if r.get("tflops")]
    rows.sort(key=lambda r: -r["tflops"])
    best = rows[0]
    for rank, r in enumerate(rows, 1):
        gap = 1 - r["tflops"] / best["tflops"]
        r.update(rank=rank, gap_pct=100 * gap, tie=gap <= r["spread"] + best["spread"])
    return rows


def show_tuning(*results, top: int = 8) -> list[dict]:
    """Show the ``top`` rows of :func:`tuning_table`, how many tie with the best, and how far
    apart the configurations measured in two runs came out; return the whole table."""
    from ..records import Result

    validate.positive_int(top, "top")
    table = tuning_table(*results)
    ties = [r["config"] for r in table if r["tie"]]
    runs: dict[str, list[dict]] = {}
    for r in table:
        runs.setdefault(r["config"], []).append(r)
    twice = [(c, rs) for c, rs in runs.items() if len({r["run"] for r in rs}) > 1]
    note = (f"{len(table)} measurements; {len(ties)} within the noise of the best "
            f"({', '.join(ties)}).")
    if twice:
        worst = max(twice, key=lambda cr: max(r["tflops"] for r in cr[1]) /
                    min(r["tflops"] for r in cr[1]))
        hi, lo = max(r["tflops"] for r in worst[1]), min(r["tflops"] for r in worst[1])
        inside = max(r["spread"] for r in worst[1])
        note += (f" {len(twice)} configurations were measured in both runs; the furthest apart, "
                 f"{worst[0]}, gave {hi:.2f} and {lo:.2f} TFLOP/s ({100 * (hi / lo - 1):.1f}% "
                 f"apart, against a spread of at most {100 * inside:.1f}% within a run).")
    note += " Runs: " + "; ".join(f"{res.name}, {res.label}" for res in results) + "."
    first = results[0]
    Result("register-tiling configurations, fastest first", table[:top], first.meta,
           first.source).show(["rank", "config", "run", "tflops", "spread", "gap_pct", "tie",
                               "regs", "blocks_per_sm"], note=note)
    return table

