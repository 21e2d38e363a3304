"""Chapter 2's ablation kernels: variants that change one thing of a rung the book shows.

``make_transpose_unchecked``: the tiled transpose of rung 4 ("4 per thread, loads one at a
time"), with the per-element bounds tests left out in the tiles away from the edges, as the
staged rung 5 leaves them out, but without staging: each load is still followed by its
shared store. Between rungs 4 and 5 two things change (staging, and the bounds tests of
interior tiles); this kernel sits between them and changes one thing from each.
"""

from __future__ import annotations

import functools

from numba import cuda, float32  # safe: importing gpuperf.kernels.* runs gpuperf/__init__ (the mode) first

from gpuperf import validate

from .kernels import WARP


@functools.lru_cache(maxsize=None, typed=True)
def make_transpose_unchecked(tile: int = 32, block_rows: int = 8, pad: int = 1):
    """Tiled transpose, ``make_transpose(tile, block_rows, pad, staged=False)`` except that in
    interior tiles each thread loads and stores its elements one after the other *without*
    a bounds test per element (edge tiles keep the tests)."""
    tile = validate.positive_int(tile, "tile", maximum=64)
    block_rows = validate.positive_int(block_rows, "block_rows", maximum=tile)
    pad = validate.positive_int(pad, "pad", minimum=0, maximum=4)
    if tile % block_rows or (tile > 32 and tile % 32):
        raise ValueError(f"block_rows={block_rows} must divide tile={tile}, and a tile over "
                         "32 must be a multiple of 32.")
    bx = min(tile, WARP)
    validate.block_size(bx * block_rows, name="min(tile, 32) * block_rows")
    validate.shared_bytes(4 * tile * (tile + pad), what=f"tile={tile}, pad={pad}")
    TILE, ROWS, BX = tile, block_rows, bx
    ROWS_PER, COLS_PER = tile // block_rows, tile // bx
    SHAPE = (tile, tile + pad)

    @cuda.jit
    def transpose_unchecked(a, out):
        t = cuda.shared.array(SHAPE, float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        rows, cols = a.shape
        r0 = cuda.blockIdx.y * TILE
        c0 = cuda.blockIdx.x * TILE
        if r0 + TILE <= rows and c0 + TILE <= cols:
            for i in range(ROWS_PER):  # load, store, load, store: no test between them
                for j in range(COLS_PER):
                    t[ty + i * ROWS, tx + j * BX] = a[r0 + ty + i * ROWS, c0 + tx + j * BX]
        else:
            for i in range(ROWS_PER):
                for j in range(COLS_PER):
                    r = r0 + ty + i * ROWS
                    c = c0 + tx + j * BX
                    if r < rows and c < cols:
                        t[ty + i * ROWS, tx + j * BX] = a[r, c]
        cuda.syncthreads()
        for i in range(ROWS_PER):
            for j in range(COLS_PER):
                orow = c0 + ty + i * ROWS
                ocol = r0 + tx + j * BX
                if orow < cols and ocol < rows:
                    out[orow, ocol] = t[tx + j * BX, ty + i * ROWS]

    return transpose_unchecked
