"""The host wrappers of ``kernels.py``'s matmul and transpose kernels: they check the
arguments, choose the kernel and the launch, and accept NumPy or device arrays."""

from __future__ import annotations

import numpy as np
from numba import cuda

from gpuperf import validate
from gpuperf.simwarp import MAX_GRID_DIM

from .kernels import (
    VEC_TILE,
    WARP,
    make_matmul_bcol,
    make_transpose,
    make_transpose_vec4,
    matmul_naive,
    matmul_naive_bcol,
    transpose_naive,
)


def matmul(A, B, *, layout: str = "col", version: str = "corner", tile: int = 32,
           pad: int = 1):
    """C = A @ B for float32 matrices, with B stored column-major (``layout="col"``).

    With ``layout="col"``, pass B as its transpose ``Bt`` (shape N x K, C-contiguous):
    ``Bt[j, k]`` is B's element (k, j), i.e. B in column-major order. ``version``:
    ``"naive"`` or the tiled ``"uncoalesced"`` / ``"corner"``. With ``layout="row"``,
    B is K x N row-major and ``version`` is ``"naive"`` or ``"rowmajor"``.
    """
    validate.positive_int(tile, "tile", maximum=32)
    validate.positive_int(pad, "pad", minimum=0, maximum=4)
    validate.choice(layout, "layout", ("row", "col"))
    allowed = ("naive", "rowmajor") if layout == "row" else ("naive", "uncoalesced", "corner")
    validate.choice(version, "version", allowed)
    A = validate.array(A, name="A", ndim=2)
    B = validate.array(B, name="Bt" if layout == "col" else "B", ndim=2)
    M, K = A.shape
    if layout == "col":
        N, Kb = B.shape
    else:
        Kb, N = B.shape
    if Kb != K:
        raise ValueError(
            f"A is {M} x {K}, so B must have {K} rows; with layout={layout!r} pass "
            + ("Bt of shape (N, K), B's transpose stored row-major." if layout == "col"
               else "B of shape (K, N)."))
    if isinstance(A, np.ndarray) and isinstance(B, np.ndarray):
        C = np.empty((M, N), np.float32)
    else:
        C = cuda.device_array((M, N), np.float32)
    if version == "naive":
        block = (16, 16)
        grid = (-(-N // 16), -(-M // 16))
        kernel = matmul_naive if layout == "row" else matmul_naive_bcol
    else:
        grid = (-(-N // tile), -(-M // tile))
        block = (tile, tile)
        kernel = make_matmul_bcol(tile, version, pad if version == "corner" else 0)
    kernel[grid, block](A, B, C)
    return C


TRANSPOSE_VERSIONS = {
    # name: (tile, block_rows, pad); None is the naive kernel, "vec4" make_transpose_vec4()
    "naive": None,
    "tiled": (32, 32, 0),
    "tiled_padded": (32, 32, 1),
    "tiled_padded_4x": (32, 8, 1),
    "tiled_padded_64": (64, 4, 1),  # 64 x 64 tiles: 32 per thread, 256-byte row segments
    "vec4_64": "vec4",  # make_transpose_vec4(8): the same tiles moved with 16-byte accesses
}


MAX_GRID_Y = MAX_GRID_DIM[1]  # blocks in a grid's y dimension, on every CUDA GPU


def transpose(a, out=None, *, version: str = "vec4_64"):
    """``a.T`` as a new C-contiguous float32 matrix, with one of ``TRANSPOSE_VERSIONS``.

    ``"vec4_64"`` (the default) moves whole tiles with 16-byte accesses where both of a's
    dimensions are multiples of 4, and otherwise runs ``"tiled_padded_64"`` (no row of a or of
    out would then start on a 16-byte boundary)."""
    validate.choice(version, "version", TRANSPOSE_VERSIONS)
    a = validate.array(a, name="a", ndim=2)
    rows, cols = a.shape
    params = TRANSPOSE_VERSIONS[version]
    wide = params == "vec4" and rows % 4 == 0 and cols % 4 == 0  # 16-byte accesses fit
    rows_per_block = 8 if params is None else 64 if params == "vec4" else params[0]
    if -(-rows // rows_per_block) > MAX_GRID_Y:  # before allocating anything
        raise ValueError(
            f"a has {rows} rows: version {version!r} launches one block per {rows_per_block} "
            f"rows in the grid's y dimension, which allows at most {MAX_GRID_Y} blocks "
            f"({MAX_GRID_Y * rows_per_block} rows). Transpose it in slabs of rows, or give "
            f"a wide matrix ({cols} column{'s' if cols != 1 else ''} go in x, which has no "
            "such limit).")
    if out is None:
        out = np.empty((cols, rows), np.float32) if isinstance(a, np.ndarray) else \
            cuda.device_array((cols, rows), np.float32)
    out = validate.array(out, name="out", ndim=2, writes=True)
    if tuple(out.shape) != (cols, rows):
        raise ValueError(f"out must have shape {(cols, rows)} (a's shape reversed), "
                         f"not {tuple(out.shape)}.")
    validate.disjoint(out, "out", a=a)
    if wide:
        for name, arr in (("a", a), ("out", out)):
            validate.aligned16(arr, name, f"version {version!r} needs them; use "
                               "version='tiled_padded_64', or a fresh allocation.")
    if params is None:
        transpose_naive[(-(-cols // 32), -(-rows // 8)), (32, 8)](a, out)
    elif wide:
        make_transpose_vec4()[(-(-cols // VEC_TILE), -(-rows // VEC_TILE)), (16, 8)](a, out)
    elif params == "vec4":  # no 16-byte access fits: the staged 4-byte kernel, same tiles
        make_transpose(64, 4, 1)[(-(-cols // 64), -(-rows // 64)), (32, 4)](a, out)
    else:
        tile, block_rows, pad = params
        make_transpose(tile, block_rows, pad)[(-(-cols // tile), -(-rows // tile)),
                                              (min(tile, WARP), block_rows)](a, out)
    return out
