"""Chapter "Thread coarsening": the kernels, from the textbook's coarsening to register tiles.

``make_coarsened(tile, factor)``: the textbook's coarsened tiled matmul. A block of
tile x tile threads computes a tile x (tile * factor) piece of C: it loads each tile of
A once and reuses it for ``factor`` tiles of B, where the plain tiled kernel has
``factor`` blocks load the same A tile.
``vecadd`` and ``make_vecadd_coarsened(factor)``: coarsening where parallelism costs
nothing (pitfall 1), launched by ``vector_add``.
``make_regtile_scalar(bm, bn, bk, tm, tn)``: 2D register tiling, first form. A block
computes bm x bn of C; each thread a tm x tn block of it, held in registers, so each
value read from shared memory feeds tm or tn multiply-adds instead of one.
``make_regtile_1d(bm, bn, bk, tm)``: 1-D register blocking, a column of ``tm`` outputs per
thread.

The vectorized and pipelined register tiles are in ``regtile.py``, the fast path and its
edge kernels in ``fast.py``, the any-size call that launches them in ``any_size.py``.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda, float32  # noqa: E402,I001  (after gpuperf: the mode is chosen first)

from gpuperf import validate
from gpuperf.kernels import matmul as mm
from gpuperf.kernels.matmul import Variant
from gpuperf.mode import SIMULATOR


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


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
    tile = mm.check_tile(tile)
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


def coarsened_variant(tile: int = 32, factor: int = 4, *,
                      max_registers: int | None = None) -> Variant:
    mm.check_tile(tile)
    validate.positive_int(factor, "factor", maximum=64)
    if max_registers is not None:
        validate.positive_int(max_registers, "max_registers", minimum=16, maximum=255)
    k = make_coarsened(tile, factor, max_registers)
    cap = f" cap{max_registers}" if max_registers else ""
    return Variant(f"coarsened {tile}x{factor}{cap}", k, (tile, tile),
                   lambda M, N: (_cdiv(N, tile * factor), _cdiv(M, tile)),
                   "coarsened", (tile, factor))


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


def vector_add(x, y, out=None, *, factor: int = 1, block: int = 256):
    """``x + y`` with the plain (factor 1) or coarsened vector-add kernel."""
    if out is not None:
        out = validate.array(out, name="out", dtype=np.float32, writes=True)
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


def regtile_1d_variant(bm: int = 64, bn: int = 64, bk: int = 8, tm: int = 8, *,
                       max_registers: int | None = None) -> Variant:
    """The 1-D register-blocked kernel as a ``Variant`` (block of ``bm/tm x bn`` threads)."""
    k = make_regtile_1d(bm, bn, bk, tm, max_registers)
    cap = f" cap{max_registers}" if max_registers else ""
    return Variant(f"regtile 1d {bm}x{bn}x{bk} {tm}x1{cap}", k, ((bm // tm) * bn,),
                   lambda M, N: (_cdiv(N, bn), _cdiv(M, bm)), "block", (bm, bn))
