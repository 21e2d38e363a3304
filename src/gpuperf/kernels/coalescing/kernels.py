"""Chapter 2's kernels, in the order the notebooks show them.

``02_coalescing``: ``transpose_naive``; ``matmul_naive`` against ``matmul_naive_bcol`` (B read
along a row, or down a column of B stored column-major); ``make_sum_fields`` (an array of
structures against a structure of arrays); ``scale_rows_uncoalesced`` (the remap exercise's
starting point). ``02_transpose``: ``make_matmul_bcol`` (corner turning), ``make_transpose``
(the tiled transpose ladder), ``make_transpose_vec4`` (16-byte accesses), ``make_copy_vec4``
(the copy with 16-byte loads). Their host wrappers are ``host.matmul``, ``host.transpose`` and
``copies.copy``.
"""

from __future__ import annotations

import functools

from numba import cuda, float32  # safe: importing gpuperf.kernels.* runs gpuperf/__init__ (the mode) first

from gpuperf import validate
from gpuperf.vector import load4, load_float4, store4, store_float4

WARP = 32  # threads of a warp: the tiled kernels' blocks are at most one warp wide


@cuda.jit
def transpose_naive(a, out):
    """out = a.T, one element per thread: reads along a row (coalesced), writes down a
    column of ``out`` (each lane a different row: its own sector)."""
    x, y = cuda.grid(2)
    if y < a.shape[0] and x < a.shape[1]:
        out[x, y] = a[y, x]


@cuda.jit
def matmul_naive(A, B, C):
    """C = A @ B, one thread per C element, B row-major: the warp reads B[k, col]
    (element ``k * N + col``), consecutive threads, consecutive addresses."""
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@cuda.jit
def matmul_naive_bcol(A, Bt, C):
    """The same product with B stored column-major (``Bt`` is B's transpose, row-major):
    the warp reads Bt[col, k] (element ``col * K + k``), consecutive threads K elements apart."""
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * Bt[col, k]
        C[row, col] = acc


# A particle of AOS_FIELDS float32 fields is a 32-byte struct: one sector. Stored as an array
# of structures (AoS, shape (n, AOS_FIELDS)), field f of consecutive particles is AOS_FIELDS
# elements apart: a strided access. Stored as a structure of arrays (SoA, shape
# (AOS_FIELDS, n)), each field is contiguous.
AOS_FIELDS = 8
AOS_LAYOUTS = ("AoS", "SoA")


@functools.lru_cache(maxsize=None, typed=True)
def make_sum_fields(layout: str, used: int):
    """A kernel that adds up the first ``used`` fields of each particle into ``out[i]``, one
    thread per particle, for particles stored as ``layout``: "AoS" (``particles[i, f]``,
    shape (n, AOS_FIELDS)) or "SoA" (``particles[f, i]``, shape (AOS_FIELDS, n))."""
    validate.choice(layout, "layout", AOS_LAYOUTS)
    USED = validate.positive_int(used, "used", maximum=AOS_FIELDS)

    if layout == "AoS":
        @cuda.jit
        def sum_fields_aos(particles, out):
            i = cuda.grid(1)
            if i < out.shape[0] and i < particles.shape[0]:
                acc = float32(0)
                for f in range(USED):
                    acc += particles[i, f]  # lanes 32 bytes apart: one sector each
                out[i] = acc

        return sum_fields_aos

    @cuda.jit
    def sum_fields_soa(particles, out):
        i = cuda.grid(1)
        if i < out.shape[0] and i < particles.shape[1]:
            acc = float32(0)
            for f in range(USED):
                acc += particles[f, i]  # lanes 4 bytes apart: 4 sectors per warp
            out[i] = acc

    return sum_fields_soa


@cuda.jit
def scale_rows_uncoalesced(x, w, out):
    """out[r, c] = x[r, c] * w[r], one thread per element, threads numbered down the
    columns (i -> r = i % rows): consecutive threads are a whole row apart in memory."""
    i = cuda.grid(1)
    rows, cols = x.shape
    if i < rows * cols:
        r = i % rows
        c = i // rows
        out[r, c] = x[r, c] * w[r]


MATMUL_MODES = ("rowmajor", "uncoalesced", "corner")  # how make_matmul_bcol loads B's tiles


@functools.lru_cache(maxsize=None, typed=True)
def make_matmul_bcol(tile: int = 32, mode: str = "corner", pad: int = 0):
    """Tiled C = A @ B (``tile`` x ``tile`` blocks) with B's tiles loaded by ``mode``.

    ``"rowmajor"``: B given row-major (``B[k, j]``), the chapter-4 kernel, the reference.
    ``"uncoalesced"``: B given column-major as ``Bt`` (``Bt[j, k]`` is B[k, j]) and loaded
    with the chapter-4 mapping: thread (ty, tx) loads B[k0+ty, col], so consecutive tx
    read addresses K apart.
    ``"corner"``: corner turning: thread (ty, tx) loads B[k0+tx, j0+ty] = Bt[j0+ty, k0+tx],
    so consecutive tx read consecutive addresses; it stores into the tile transposed.
    ``pad`` extra columns in B's shared tile keep that transposed store free of bank conflicts.
    """
    tile = validate.positive_int(tile, "tile", maximum=32)
    validate.choice(mode, "mode", MATMUL_MODES)
    pad = validate.positive_int(pad, "pad", minimum=0, maximum=4)
    validate.shared_bytes(4 * (tile * tile + tile * (tile + pad)), what=f"tile={tile}, pad={pad}")
    TILE = tile
    A_SHAPE = (tile, tile)
    B_SHAPE = (tile, tile + pad)
    CORNER = mode == "corner"
    ROWMAJOR = mode == "rowmajor"

    @cuda.jit
    def matmul_tiled_bcol(A, B, C):
        As = cuda.shared.array(A_SHAPE, float32)
        Bs = cuda.shared.array(B_SHAPE, float32)  # Bs[kk, jj] holds B[k0 + kk, j0 + jj]
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        j0 = cuda.blockIdx.x * TILE
        row = cuda.blockIdx.y * TILE + ty
        col = j0 + tx
        M, K = A.shape
        N = C.shape[1]
        acc = float32(0.0)
        for k0 in range(0, K, TILE):
            # A's tile: consecutive tx read consecutive elements of one row of A.
            if row < M and k0 + tx < K:
                As[ty, tx] = A[row, k0 + tx]
            else:
                As[ty, tx] = 0.0
            if ROWMAJOR:
                if k0 + ty < K and col < N:
                    Bs[ty, tx] = B[k0 + ty, col]
                else:
                    Bs[ty, tx] = 0.0
            elif CORNER:
                # Swap the roles of tx and ty: tx now walks along k, down one column
                # of B, which is contiguous in column-major storage.
                if j0 + ty < N and k0 + tx < K:
                    Bs[tx, ty] = B[j0 + ty, k0 + tx]
                else:
                    Bs[tx, ty] = 0.0
            else:
                # The chapter-4 mapping on column-major B: tx walks along a row of B,
                # and B's rows are strided by K in memory.
                if k0 + ty < K and col < N:
                    Bs[ty, tx] = B[col, k0 + ty]
                else:
                    Bs[ty, tx] = 0.0
            cuda.syncthreads()
            for kk in range(TILE):
                acc += As[ty, kk] * Bs[kk, tx]
            cuda.syncthreads()
        if row < M and col < N:
            C[row, col] = acc

    return matmul_tiled_bcol


@functools.lru_cache(maxsize=None, typed=True)
def make_transpose(tile: int = 32, block_rows: int = 8, pad: int = 1, staged: bool = True,
                   swizzle: bool = False):
    """Tiled transpose: a ``tile`` x ``tile`` tile through shared memory per block.

    The block is ``(min(tile, 32), block_rows)`` threads; each thread moves
    ``tile * tile / (32 * block_rows)`` elements. Both the read of ``a`` and the write
    of ``out`` go along rows (coalesced); the turn happens in shared memory, where
    reading a column of an unpadded tile puts all 32 lanes on one bank. ``pad=1``
    shifts each row by one bank.

    ``staged=True``: in tiles away from the edges, every thread issues all its loads
    into registers before it stores any of them to shared memory (in the PTX, every
    ``ld.global`` before the first ``st.shared``). Written the plain way (``staged=False``), the
    PTX keeps each load next to its shared store, behind its own bounds test, and ptxas keeps
    that order: the recorded SASS (chapter 2's load-order experiment) issues one global load
    before each shared store, against all four of an interior tile's loads first when staged.

    ``swizzle=True`` (with ``pad=0``): element ``(r, c)`` of the tile is kept at column
    ``c ^ (r % 32)``. Along a row the XOR permutes the 32 banks; down a column each row
    flips different bits, so the 32 lanes again land on 32 banks: no conflicts, and no
    padding column.
    """
    validate.positive_int(pad, "pad", minimum=0, maximum=4)
    validate.boolean(staged, "staged")
    validate.boolean(swizzle, "swizzle")
    if swizzle and pad:
        raise ValueError(f"swizzle=True replaces the padding: pass pad=0 with it, not pad={pad}.")
    tile = validate.positive_int(tile, "tile", maximum=64)
    block_rows = validate.positive_int(block_rows, "block_rows", maximum=tile)
    if tile % block_rows or (tile > 32 and tile % 32):
        raise ValueError(f"block_rows={block_rows} must divide tile={tile}, and a tile over "
                         "32 must be a multiple of 32.")
    bx = min(tile, WARP)
    validate.block_size(bx * block_rows, name="min(tile, 32) * block_rows")
    pad = validate.positive_int(pad, "pad", minimum=0, maximum=4)
    validate.shared_bytes(4 * tile * (tile + pad), what=f"tile={tile}, pad={pad}")
    TILE, ROWS, BX = tile, block_rows, bx
    ROWS_PER, COLS_PER = tile // block_rows, tile // bx
    PER = ROWS_PER * COLS_PER
    SHAPE = (tile, tile + pad)
    STAGED = bool(staged)
    SWZ = WARP - 1 if swizzle else 0  # column c of row r lives at c ^ (r & SWZ)

    @cuda.jit
    def transpose_tiled(a, out):
        t = cuda.shared.array(SHAPE, float32)
        regs = cuda.local.array(PER, float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        rows, cols = a.shape
        r0 = cuda.blockIdx.y * TILE  # the tile's first row of a
        c0 = cuda.blockIdx.x * TILE  # and first column
        interior = r0 + TILE <= rows and c0 + TILE <= cols  # the same for the whole block
        if STAGED and interior:
            for i in range(ROWS_PER):  # all loads first, then all stores
                for j in range(COLS_PER):
                    regs[i * COLS_PER + j] = a[r0 + ty + i * ROWS, c0 + tx + j * BX]
            for i in range(ROWS_PER):
                for j in range(COLS_PER):
                    tr = ty + i * ROWS
                    t[tr, (tx + j * BX) ^ (tr & SWZ)] = regs[i * COLS_PER + j]
        else:
            for i in range(ROWS_PER):
                for j in range(COLS_PER):
                    r = r0 + ty + i * ROWS
                    c = c0 + tx + j * BX
                    if r < rows and c < cols:
                        tr = ty + i * ROWS
                        t[tr, (tx + j * BX) ^ (tr & SWZ)] = a[r, c]
        cuda.syncthreads()
        # out's tile (bx, by) is a's tile (by, bx): write it along out's rows, reading
        # a column of t (lanes TILE + pad words apart: distinct banks when that is odd).
        for i in range(ROWS_PER):
            for j in range(COLS_PER):
                orow = c0 + ty + i * ROWS  # a column of a
                ocol = r0 + tx + j * BX  # a row of a
                if orow < cols and ocol < rows:
                    tr = tx + j * BX
                    out[orow, ocol] = t[tr, (ty + i * ROWS) ^ (tr & SWZ)]

    return transpose_tiled


VEC_TILE = 64  # the 16-byte transpose's tile: 64 x 64 floats, rows of 16 vectors


@functools.lru_cache(maxsize=None, typed=True)
def make_transpose_vec4(block_rows: int = 8, flip: bool = True):
    """A 64 x 64 tiled transpose whose global loads and stores move 16 bytes each.

    The block is ``(16, block_rows)`` threads. Thread ``(tx, ty)`` reads ``a[r, 4tx:4tx+4]``
    of the tile's rows ``r = ty, ty + block_rows, ...`` (one ``load4`` each, all issued
    before any is stored), and writes ``out[c, 4tx:4tx+4]``: four neighbouring rows of the
    tile at tile column ``c``, gathered from shared memory with four 4-byte reads, in one
    ``store4``. A warp then moves two rows of 256 bytes per instruction instead of one of 128.

    The shared tile is padded to 64 x 65, and bit 1 of the column is flipped where the row's
    half (``r >= 32``) and the column's half differ. With padding alone, lanes ``tx`` and
    ``tx + 8`` of a half-warp (columns 32 apart on the way in, rows 32 apart on the way out)
    fall on one bank: a 2-way conflict on every shared access. The flip moves one of them
    two banks on. ``flip=False`` keeps the padding alone (the ablation).

    Tiles at the edges, and matrices whose row lengths are not multiples of 4 (16-byte
    accesses would be misaligned), go one element at a time with bounds tests, in the same
    layout, neighbouring lanes on neighbouring columns (coalesced 64-byte half-warp segments).
    A direct launch needs C-contiguous ``a`` and ``out`` that start 16-byte aligned (fresh
    allocations do); ``transpose()`` checks that.
    """
    validate.boolean(flip, "flip")
    block_rows = validate.positive_int(block_rows, "block_rows", minimum=2, maximum=VEC_TILE)
    if VEC_TILE % block_rows:
        raise ValueError(f"block_rows={block_rows} must divide the tile's {VEC_TILE} rows "
                         "(2, 4, 8, 16, 32 or 64).")
    R, PER = block_rows, VEC_TILE // block_rows
    SHAPE = (VEC_TILE, VEC_TILE + 1)
    FLIP = 2 if flip else 0  # the column bit flipped across halves

    @cuda.jit
    def transpose_vec4(a, out):
        t = cuda.shared.array(SHAPE, float32)
        regs = cuda.local.array((PER, 4), float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        rows, cols = a.shape
        r0 = cuda.blockIdx.y * VEC_TILE  # the tile's first row of a
        c0 = cuda.blockIdx.x * VEC_TILE  # and first column
        wide = (r0 + VEC_TILE <= rows and c0 + VEC_TILE <= cols
                and rows % 4 == 0 and cols % 4 == 0)  # the same for the whole block
        if wide:
            for i in range(PER):  # all loads first: they are in flight together
                v0, v1, v2, v3 = load4(a, r0 + ty + i * R, c0 + 4 * tx)
                regs[i, 0] = v0
                regs[i, 1] = v1
                regs[i, 2] = v2
                regs[i, 3] = v3
            for i in range(PER):
                r = ty + i * R
                for k in range(4):
                    j = 4 * tx + k
                    t[r, j ^ (((r ^ j) >> 5) & 1) * FLIP] = regs[i, k]
        else:  # one float at a time, neighbouring lanes on neighbouring columns (coalesced)
            for i in range(PER):
                r = ty + i * R
                for m in range(4):
                    j = tx + 16 * m
                    if r0 + r < rows and c0 + j < cols:
                        t[r, j ^ (((r ^ j) >> 5) & 1) * FLIP] = a[r0 + r, c0 + j]
        cuda.syncthreads()
        r = 4 * tx  # four rows of the tile: four neighbouring columns of out
        if wide:
            for i in range(PER):
                c = ty + i * R  # a column of the tile: a row of out
                store4(out, c0 + c, r0 + r,
                       t[r, c ^ (((r ^ c) >> 5) & 1) * FLIP],
                       t[r + 1, c ^ ((((r + 1) ^ c) >> 5) & 1) * FLIP],
                       t[r + 2, c ^ ((((r + 2) ^ c) >> 5) & 1) * FLIP],
                       t[r + 3, c ^ ((((r + 3) ^ c) >> 5) & 1) * FLIP])
        else:
            for i in range(PER):
                c = ty + i * R
                for m in range(4):
                    q = tx + 16 * m  # a row of the tile: a column of out, neighbours on lanes
                    if c0 + c < cols and r0 + q < rows:
                        out[c0 + c, r0 + q] = t[q, c ^ (((q ^ c) >> 5) & 1) * FLIP]

    return transpose_vec4


@functools.lru_cache(maxsize=None, typed=True)
def make_copy_vec4(ilp: int = 2):
    """Grid-stride float32 copy with 16-byte vector loads, ``ilp`` of them in flight.

    ``src`` and ``dst`` must be 16-byte aligned (fresh allocations are); the last
    ``n % 4`` elements are copied one by one.
    """
    ilp = validate.positive_int(ilp, "ilp", maximum=16)
    ILP = ilp

    @cuda.jit
    def copy_vec4(src, dst):
        n = src.size
        vectors = n // 4
        threads = cuda.gridsize(1)
        i = cuda.grid(1)
        regs = cuda.local.array((ILP, 4), float32)
        round_vectors = threads * ILP
        base = 0
        while base + round_vectors <= vectors:
            for k in range(ILP):
                v = load_float4(src, 4 * (base + k * threads + i))
                regs[k, 0] = v[0]
                regs[k, 1] = v[1]
                regs[k, 2] = v[2]
                regs[k, 3] = v[3]
            for k in range(ILP):
                store_float4(dst, 4 * (base + k * threads + i),
                             (regs[k, 0], regs[k, 1], regs[k, 2], regs[k, 3]))
            base += round_vectors
        for k in range(ILP):
            j = base + k * threads + i
            if j < vectors:
                store_float4(dst, 4 * j, load_float4(src, 4 * j))
        tail = vectors * 4 + i  # at most 3 elements that do not fill a vector
        if tail < n:
            dst[tail] = src[tail]

    return copy_vec4
