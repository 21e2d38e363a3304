"""Chapter 5's register tiles with 16-byte loads: ``make_regtile`` and ``make_regtile_double``.

``make_regtile(bm, bn, bk, tm, tn, prefetch=...)``: the A tile stored transposed, 16-byte
loads from global and shared memory (``matmul.load4``), each thread's outputs split in 4-wide
groups so that a warp's shared loads hit 32 distinct banks, no bounds tests for tiles inside
the matrices (but correct tails), and with ``prefetch=True`` the next tile's global loads
issued before the current tile's math. ``make_regtile_double``: the same pipeline with two
shared-memory buffers, one barrier per k-tile (``k_steps`` and ``warp_tile`` its unrolling
and warp-tiling options).
"""

from __future__ import annotations

import functools

from numba import cuda, float32  # noqa: E402,I001  (after gpuperf: the mode is chosen first)

from gpuperf import validate
from gpuperf.vector import load4, store4

from .kernels import _cdiv, _check_regtile, _jit

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
