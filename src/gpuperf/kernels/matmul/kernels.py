"""Chapter "Shared-memory tiling": the kernels, from a naive matmul to shared tiles.

``C = A @ B`` with ``A`` of shape (M, K), ``B`` of shape (K, N), all float32, row-major.

``naive_row_x``: one thread per output, ``row`` taken from ``threadIdx.x`` (the Numba
article's mapping): the 32 threads of a warp walk down a column of ``A`` and of ``C``, so their
loads and stores are 4*K and 4*N bytes apart and cannot be coalesced.
``naive_col_x``: the same arithmetic with ``col`` from ``threadIdx.x``: a warp reads one
element of ``A`` (a broadcast) and 32 consecutive elements of ``B`` (one transaction).
``make_tiled_article(tile)``: the Numba article's shared-memory kernel, kept with its three
bugs for the chapter to take apart (``and`` where ``or`` is needed, a ``return`` before
the barrier, unguarded tile loads).
``make_tiled_early_return(tile)``: bounds fixed, early return kept: the threads that
left never load their part of the tile.
``make_tiled(tile)``: the correct tiled kernel, ``tile`` a compile-time constant.

Then the host side every version shares, also with ``gpuperf.kernels.coarsening``: launch
descriptions (``Variant``, ``variant``), operand checks and ``matmul``. The 16-byte vector load
and store ``load4``/``store4`` (``gpuperf.vector``) are re-exported here for chapter 5.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from numba import cuda, float32  # noqa: E402,I001  (after gpuperf: the mode is chosen first)

from gpuperf import validate
from gpuperf.vector import load4, store4  # noqa: F401  (16-byte access; shown in the chapter)

# --------------------------------------------------------------------------- naive kernels


@cuda.jit
def naive_row_x(A, B, C):
    # The Numba article's mapping: x (the fastest-varying thread index, the one a warp spans)
    # picks the row. Neighbouring threads read A[row, k] and write C[row, col] one row
    # apart: one sector for every row the warp spans, instead of a few for all of them.
    row = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    col = cuda.threadIdx.y + cuda.blockIdx.y * cuda.blockDim.y
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)  # not `0.`: a float64 sum (a T4 adds float64 at 1/32 the float32 rate)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@cuda.jit
def naive_col_x(A, B, C):
    # x picks the column: each row of a warp's threads reads one A[row, k] (a broadcast)
    # and consecutive B[k, col], and writes consecutive C[row, col].
    col = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    row = cuda.threadIdx.y + cuda.blockIdx.y * cuda.blockDim.y
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


# --------------------------------------------------------------------------- tiled kernels

TILES = (8, 16, 32)


def check_tile(tile: int) -> int:
    """``tile`` as an int from 1 to 32, or a ValueError that says so."""
    tile = validate.positive_int(tile, "tile", minimum=1, maximum=32)
    # tile x tile threads per block: 32 x 32 = 1024 is CUDA's limit.
    return tile


@functools.lru_cache(maxsize=None, typed=True)
def make_tiled_article(tile: int = 16):
    """The Numba article's shared-memory kernel, bugs included (do not use it)."""
    tile = check_tile(tile)
    shape = (tile, tile)

    @cuda.jit
    def tiled_article(A, B, C):
        sA = cuda.shared.array(shape, float32)
        sB = cuda.shared.array(shape, float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        row = cuda.threadIdx.x + cuda.blockDim.x * cuda.blockIdx.x
        col = cuda.threadIdx.y + cuda.blockDim.y * cuda.blockIdx.y
        if row >= C.shape[0] and col >= C.shape[1]:  # BUG 1: `and` must be `or`
            return  # BUG 2: leaves before the barriers below; its tile elements never load
        tmp = float32(0.0)
        for m in range(math.ceil(A.shape[1] / tile)):
            sA[tx, ty] = A[row, ty + m * tile]  # BUG 3: no test that the column is < K
            sB[tx, ty] = B[tx + m * tile, col]  # ... nor that the row is < K
            cuda.syncthreads()
            for n in range(tile):
                tmp += sA[tx, n] * sB[n, ty]
            cuda.syncthreads()
        C[row, col] = tmp

    return tiled_article


@functools.lru_cache(maxsize=None, typed=True)
def make_tiled_early_return(tile: int = 16):
    """Loads guarded and ``or`` fixed, but threads outside C still return early."""
    tile = check_tile(tile)
    shape = (tile, tile)

    @cuda.jit
    def tiled_early_return(A, B, C):
        sA = cuda.shared.array(shape, float32)
        sB = cuda.shared.array(shape, float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col = cuda.blockIdx.x * tile + tx
        M, K = A.shape
        N = B.shape[1]
        if row >= M or col >= N:
            return  # BUG: this thread was also due to load sA[ty, tx] and sB[ty, tx]
        acc = float32(0.0)
        for t in range((K + tile - 1) // tile):
            k = t * tile + tx
            sA[ty, tx] = A[row, k] if k < K else float32(0.0)
            k = t * tile + ty
            sB[ty, tx] = B[k, col] if k < K else float32(0.0)
            cuda.syncthreads()
            for n in range(tile):
                acc += sA[ty, n] * sB[n, tx]
            cuda.syncthreads()
        C[row, col] = acc

    return tiled_early_return


@functools.lru_cache(maxsize=None, typed=True)
def make_tiled(tile: int = 32):
    """The shared-memory tiled kernel: a tile x tile block computes a tile x tile piece of C.

    Every thread loads one element of each input tile (zero outside the matrices),
    all threads reach both barriers, and only the store is guarded.
    """
    tile = check_tile(tile)
    shape = (tile, tile)  # computed here, outside the kernel: a compile-time constant

    @cuda.jit
    def tiled(A, B, C):
        sA = cuda.shared.array(shape, float32)
        sB = cuda.shared.array(shape, float32)
        tx = cuda.threadIdx.x  # x varies fastest within a warp: it picks the column
        ty = cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col = cuda.blockIdx.x * tile + tx
        M, K = A.shape
        N = B.shape[1]
        acc = float32(0.0)
        for t in range((K + tile - 1) // tile):
            # Coalesced loads: consecutive tx read consecutive columns of A and of B.
            k = t * tile + tx
            sA[ty, tx] = A[row, k] if row < M and k < K else float32(0.0)
            k = t * tile + ty
            sB[ty, tx] = B[k, col] if k < K and col < N else float32(0.0)
            cuda.syncthreads()  # the whole tile is loaded before anyone reads it
            for n in range(tile):
                acc += sA[ty, n] * sB[n, tx]
            cuda.syncthreads()  # everyone is done with this tile before it is overwritten
        if row < M and col < N:
            C[row, col] = acc

    return tiled

# --------------------------------------------------------------------------- launching


@dataclass(frozen=True)
class Variant:
    """One kernel with its launch shape: how every version is run, timed and checked.

    ``grid(M, N)`` returns the grid for an M x N output; ``block`` the block shape.
    ``model`` names the traffic model (see ``traffic_bytes``); ``params`` its parameters.
    """

    name: str
    kernel: object
    block: tuple
    grid: object
    model: str
    params: tuple = ()
    launcher: object = None  # a call launcher(A, B, C) that does the launches instead

    def __post_init__(self):
        validate.string(self.name, "name")
        validate.kernel(self.kernel, "kernel")
        if not (isinstance(self.block, tuple) and 1 <= len(self.block) <= 3):
            raise TypeError(f"block must be a tuple of 1 to 3 ints, not {self.block!r}.")
        validate.block_size(math.prod(self.block), name="threads per block")
        validate.function(self.grid, "grid", what="a function grid(M, N) -> grid tuple")
        validate.choice(self.model, "model", ("naive", "tiled", "coarsened", "block"))
        if not isinstance(self.params, tuple):
            raise TypeError(f"params must be a tuple, not {type(self.params).__name__}.")
        if self.launcher is not None:
            validate.function(self.launcher, "launcher", what="a function launcher(A, B, C)")

    def launch(self, A, B, C) -> None:
        if len(getattr(C, "shape", ())) != 2:  # cheap: this runs inside timed loops
            raise TypeError(f"C must be a 2-D float32 array (the M x N output), not "
                            f"{type(C).__name__}.")
        if self.launcher is not None:
            self.launcher(A, B, C)
            return
        M, N = C.shape
        self.kernel[self.grid(M, N), self.block](A, B, C)

    @property
    def threads(self) -> int:
        return math.prod(self.block)


def check_variant(v, name="v"):
    """``v`` if it is a ``Variant``, else a TypeError that says what to pass."""
    if not isinstance(v, Variant):
        raise TypeError(f"{name} must be a Variant (gp.matmul.variant('tiled') or one of "
                        f"gp.coarsening's), not {type(v).__name__} ({v!r:.60}).")
    return v


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


VERSIONS = ("naive_row_x", "naive_col_x", "tiled", "tiled_article", "tiled_early_return")


def variant(version: str = "tiled", *, tile: int = 32) -> Variant:
    """The ``Variant`` of one of this chapter's kernels (``VERSIONS``)."""
    validate.choice(version, "version", VERSIONS)
    if version == "naive_row_x":
        return Variant("naive (row from x)", naive_row_x, (16, 16),
                       lambda M, N: (_cdiv(M, 16), _cdiv(N, 16)), "naive")
    if version == "naive_col_x":
        return Variant("naive (col from x)", naive_col_x, (16, 16),
                       lambda M, N: (_cdiv(N, 16), _cdiv(M, 16)), "naive")
    tile = check_tile(tile)
    if version == "tiled_article":  # the Numba article's mapping: x picks the row
        return Variant(f"article's tiled {tile}", make_tiled_article(tile), (tile, tile),
                       lambda M, N: (_cdiv(M, tile), _cdiv(N, tile)), "tiled", (tile,))
    factory = make_tiled if version == "tiled" else make_tiled_early_return
    return Variant(f"tiled {tile}" if version == "tiled" else f"early return {tile}",
                   factory(tile), (tile, tile), lambda M, N: (_cdiv(N, tile), _cdiv(M, tile)),
                   "tiled", (tile,))


def check_operands(A, B, out=None):
    """Validate ``A`` (M, K), ``B`` (K, N) and ``out`` (M, N): float32, 2-D, C-contiguous."""
    A = validate.array(A, name="A", ndim=2)
    B = validate.array(B, name="B", ndim=2)
    if A.shape[1] != B.shape[0]:
        raise ValueError(
            f"A is {A.shape[0]} x {A.shape[1]} and B is {B.shape[0]} x {B.shape[1]}: the columns "
            f"of A ({A.shape[1]}) must equal the rows of B ({B.shape[0]}) for A @ B.")
    if out is not None:
        out = validate.array(out, name="out", ndim=2, writes=True)
        if tuple(out.shape) != (A.shape[0], B.shape[1]):
            raise ValueError(f"out must have shape {(A.shape[0], B.shape[1])} (rows of A, "
                             f"columns of B), not {tuple(out.shape)}.")
    return A, B, out


def run_variant(v: Variant, A, B, out=None):
    """Compute ``A @ B`` with variant ``v``; NumPy in, NumPy out; device arrays stay on device."""
    check_variant(v)
    A, B, out = check_operands(A, B, out)
    on_host = isinstance(A, np.ndarray) and isinstance(B, np.ndarray)
    dA = cuda.to_device(A) if isinstance(A, np.ndarray) else A
    dB = cuda.to_device(B) if isinstance(B, np.ndarray) else B
    shape = (A.shape[0], B.shape[1])
    if out is None:
        dC = cuda.device_array(shape, dtype=np.float32)
    else:
        dC = cuda.to_device(out) if isinstance(out, np.ndarray) else out
    v.launch(dA, dB, dC)
    if on_host or isinstance(out, np.ndarray):
        host = dC.copy_to_host()
        if isinstance(out, np.ndarray):
            out[...] = host
            return out
        return host
    return dC


def matmul(A, B, out=None, *, version: str = "tiled", tile: int = 32):
    """``A @ B`` in float32 with one of this chapter's kernels (``VERSIONS``).

    NumPy arrays in give a NumPy array back; device arrays stay on the device.
    """
    return run_variant(variant(version, tile=tile), A, B, out)
