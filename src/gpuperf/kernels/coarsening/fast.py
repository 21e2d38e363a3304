"""The double-buffered kernel's fast path alone (``make_regtile_fast``), and the small
kernels that compute the edges in launches of their own (``any_size.FastMatmul`` launches them all)."""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda, float32  # noqa: E402,I001  (after gpuperf: the mode is chosen first)

from gpuperf import validate
from gpuperf.vector import load4, store4

from .kernels import _check_regtile, _jit
from .regtile import _check_k_steps


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
