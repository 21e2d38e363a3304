"""Chapter 8's kernels: the backward pass of GDN, in the order the notebook shows them.

The GDN article's four algorithms build the raw contributions ``raw[k*N + j, s]``:
``make_replicate`` then ``make_multiply`` (1), ``make_per_channel`` (2), ``make_shared`` (3) and
``make_registers`` (4, an exercise's answer). ``make_row_sum`` sums the rows of ``raw`` and
``make_beta_grad`` gives dL/dbeta (another exercise's answer). ``make_fused`` never writes
``raw``; ``make_fused_tiled`` (launched with ``tiled_launch``) is the same gradient as a tiled
matrix product; ``make_input_grad`` is dL/dw. Every array is ``(N, S)`` float32, one channel
of the whole batch per row. The host wrappers that launch them are in ``host.py``.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import cuda  # safe: importing gpuperf.kernels.* runs gpuperf/__init__ (the mode) first

from gpuperf import device
from gpuperf import validate as v
from gpuperf.mode import SIMULATOR
from gpuperf.simwarp import MAX_GRID_DIM

MAX_GRID_Y = MAX_GRID_DIM[1]  # one block per channel along the grid's y dimension
DEFAULT_BLOCK = 256  # threads per block, unless a wrapper is given another
FULL_MASK = 0xFFFFFFFF  # every lane of the warp takes part in the shuffles

# float32 constants: with a Python float the kernels' arithmetic would be float64
_MINUS_HALF = np.float32(-0.5)
_ONE = np.float32(1.0)
_ZERO = np.float32(0.0)


# Algorithm 1: replicate, then multiply index-free. Flat 1D views throughout.


@functools.lru_cache(maxsize=None, typed=True)
def make_replicate(block: int = DEFAULT_BLOCK):
    """Two replication kernels over a flat ``N*N*S`` output.

    ``rows``: ``out[k*N + j, s] = src[k, s]`` (each row repeated N times, vertically);
    ``cols``: ``out[k*N + j, s] = src[j, s]`` (the whole matrix tiled N times).
    """
    v.block_size(block)

    @cuda.jit
    def replicate_rows(src, n_ch, n_s, out):
        t = cuda.blockIdx.x * block + cuda.threadIdx.x
        if t < out.size:
            row = t // n_s
            out[t] = src[(row // n_ch) * n_s + (t - row * n_s)]

    @cuda.jit
    def replicate_cols(src, n_ch, n_s, out):
        t = cuda.blockIdx.x * block + cuda.threadIdx.x
        if t < out.size:
            row = t // n_s
            out[t] = src[(row % n_ch) * n_s + (t - row * n_s)]

    return replicate_rows, replicate_cols


@functools.lru_cache(maxsize=None, typed=True)
def make_multiply(block: int = DEFAULT_BLOCK):
    """Index-free elementwise product of the four replicated matrices."""
    v.block_size(block)

    @cuda.jit
    def multiply4(delta_r, wk_r, d_r, wj_r, raw):
        t = cuda.blockIdx.x * block + cuda.threadIdx.x
        if t < raw.size:
            dk = d_r[t]
            wj = wj_r[t]
            raw[t] = _MINUS_HALF * delta_r[t] * wk_r[t] * dk * dk * dk * wj * wj

    return multiply4


@functools.lru_cache(maxsize=None, typed=True)
def make_per_channel(block: int = DEFAULT_BLOCK):
    """Algorithm 2: one launch per row ``k`` of gamma, ``N * S`` threads, 1D."""
    v.block_size(block)

    @cuda.jit
    def per_channel(delta, w, d, k, raw):
        n_ch, n_s = w.shape
        t = cuda.blockIdx.x * block + cuda.threadIdx.x
        if t < n_ch * n_s:
            j = t // n_s
            s = t - j * n_s  # the GDN article's "thread id % imageSize"
            dk = d[k, s]
            wj = w[j, s]
            raw[k * n_ch + j, s] = _MINUS_HALF * delta[k, s] * w[k, s] * dk * dk * dk * wj * wj

    return per_channel


@functools.lru_cache(maxsize=None, typed=True)
def make_shared(block: int = DEFAULT_BLOCK):
    """Algorithm 3: grid ``(ceil(S/block), N)``; row k's delta, w, D staged in shared memory."""
    v.block_size(block)

    @cuda.jit
    def row_shared(delta, w, d, raw):
        # One shared array holds the three staged rows: staged[0] = delta_k,
        # staged[1] = w_k, staged[2] = D_k, each `block` samples of this block.
        staged = cuda.shared.array((3, block), np.float32)
        n_ch, n_s = w.shape
        t = cuda.threadIdx.x
        s = cuda.blockIdx.x * block + t
        k = cuda.blockIdx.y
        if s < n_s:
            staged[0, t] = delta[k, s]
            staged[1, t] = w[k, s]
            staged[2, t] = d[k, s]
        cuda.syncthreads()  # reached by every thread, tail threads included
        if s < n_s:
            dk = staged[2, t]
            common = _MINUS_HALF * staged[0, t] * staged[1, t] * dk * dk * dk
            for j in range(n_ch):
                wj = w[j, s]
                raw[k * n_ch + j, s] = common * wj * wj

    return row_shared


@functools.lru_cache(maxsize=None, typed=True)
def make_registers(block: int = DEFAULT_BLOCK):
    """Algorithm 4: as algorithm 3, with row k's three values in registers: no barrier."""
    v.block_size(block)

    @cuda.jit
    def row_registers(delta, w, d, raw):
        n_ch, n_s = w.shape
        s = cuda.blockIdx.x * block + cuda.threadIdx.x
        k = cuda.blockIdx.y
        if s < n_s:
            dk = d[k, s]
            common = _MINUS_HALF * delta[k, s] * w[k, s] * dk * dk * dk
            for j in range(n_ch):
                wj = w[j, s]
                raw[k * n_ch + j, s] = common * wj * wj

    return row_registers


@functools.lru_cache(maxsize=None, typed=True)
def make_row_sum(block: int = DEFAULT_BLOCK):
    """Sum every row of a ``(R, S)`` matrix: one block per row, block-stride loop, tree.

    The batched reduction of the raw contributions: one launch for all ``R = N*N`` rows.
    ``block`` must be a power of two (the tree halves it each step).
    """
    v.block_size(block, power_of_two=True)

    @cuda.jit
    def row_sum(mat, out):
        partial = cuda.shared.array(block, np.float32)
        t = cuda.threadIdx.x
        row = cuda.blockIdx.x
        acc = _ZERO
        for s in range(t, mat.shape[1], block):
            acc += mat[row, s]
        partial[t] = acc
        cuda.syncthreads()
        stride = block // 2
        while stride > 0:
            if t < stride:
                partial[t] += partial[t + stride]
            cuda.syncthreads()
            stride //= 2
        if t == 0:
            out[row] = partial[0]

    return row_sum


@functools.lru_cache(maxsize=None, typed=True)
def make_beta_grad(block: int = DEFAULT_BLOCK):
    """dL/dbeta: one block per channel k sums ``-1/2 delta_k w_k D_k^3`` over all samples."""
    v.block_size(block, power_of_two=True)

    @cuda.jit
    def beta_grad(delta, w, d, dbeta):
        partial = cuda.shared.array(block, np.float32)
        t = cuda.threadIdx.x
        k = cuda.blockIdx.x
        acc = _ZERO
        for s in range(t, w.shape[1], block):
            dk = d[k, s]
            acc += delta[k, s] * w[k, s] * dk * dk * dk
        partial[t] = acc
        cuda.syncthreads()
        stride = block // 2
        while stride > 0:
            if t < stride:
                partial[t] += partial[t + stride]
            cuda.syncthreads()
            stride //= 2
        if t == 0:
            dbeta[k] = _MINUS_HALF * partial[0]

    return beta_grad


@functools.lru_cache(maxsize=None, typed=True)
def make_fused(block: int = DEFAULT_BLOCK, coarsen: int = 8):
    """Beyond the GDN article: dgamma and dbeta without ever writing the raw contributions.

    Grid ``(ceil(S / (block*coarsen)), N)``. Each thread keeps ``coarsen`` factors
    ``F_k[s]`` in registers (samples ``block`` apart, so loads stay coalesced), then for
    every channel j sums ``F_k[s] * w_j[s]^2`` over them, reduces across the warp with
    shuffles, and lane 0 adds the warp's sum to ``dgamma[k, j]`` atomically. Outputs must
    be zeroed before the launch. Every thread runs every shuffle (tail threads add zeros).
    """
    v.block_size(block, power_of_two=True)
    v.positive_int(coarsen, "coarsen", maximum=64)
    chunk = block * coarsen

    @cuda.jit
    def fused(delta, w, d, dgamma, dbeta):
        factors = cuda.local.array(coarsen, np.float32)
        n_ch, n_s = w.shape
        t = cuda.threadIdx.x
        lane = t % 32
        k = cuda.blockIdx.y
        base = cuda.blockIdx.x * chunk + t
        acc = _ZERO
        for c in range(coarsen):
            s = base + c * block
            f = _ZERO
            if s < n_s:
                dk = d[k, s]
                f = _MINUS_HALF * delta[k, s] * w[k, s] * dk * dk * dk
            factors[c] = f
            acc += f
        for off in (16, 8, 4, 2, 1):
            acc += cuda.shfl_down_sync(FULL_MASK, acc, off)
        if lane == 0:
            cuda.atomic.add(dbeta, k, acc)
        for j in range(n_ch):
            acc = _ZERO
            for c in range(coarsen):
                s = base + c * block
                if s < n_s:
                    wj = w[j, s]
                    acc += factors[c] * wj * wj
            for off in (16, 8, 4, 2, 1):
                acc += cuda.shfl_down_sync(FULL_MASK, acc, off)
            if lane == 0:
                cuda.atomic.add(dgamma, (k, j), acc)

    return fused


@functools.lru_cache(maxsize=None, typed=True)
def make_fused_tiled(tile: int = 16, depth: int = 16):
    """The fused kernel as chapter 4's tiled matrix product: ``dgamma = F (w*w)^T``.

    Block ``(tile, tile)``; grid ``(ceil(N / tile), ceil(N / tile), splits)``. Block
    ``(x, y, z)`` owns the ``tile x tile`` square of ``dgamma`` at rows ``y*tile``, columns
    ``x*tile``, over the samples ``[z*span, (z+1)*span)``: the tiles vary fastest, so the
    blocks that run together read the same samples and can share them in the L2. Each step
    stages ``depth`` samples: thread ``(ty, tx)`` computes ``F_k[s]`` for row
    ``k = y*tile + ty`` and squares ``w_j[s]`` for row ``j = x*tile + ty`` (consecutive ``tx``
    on consecutive samples: coalesced), so each loaded value serves ``tile`` products instead
    of one. Then thread ``(ty, tx)`` adds ``F_k[s] w_j[s]^2`` over the step for its
    ``(k, j) = (y*tile + ty, x*tile + tx)``. Both tiles' rows are padded to an odd number of
    words, so the different rows that a warp reads at one column fall in different banks. At
    the end each thread adds its sum to ``dgamma[k, j]`` atomically (the samples are split
    across blocks to fill the GPU), and the blocks of the first column of tiles add ``F``'s
    row sums to ``dbeta``. Outputs must be zeroed before the launch.
    """
    tile = v.choice(tile, "tile", (8, 16, 32))
    depth = v.positive_int(depth, "depth", maximum=64)
    T, D = tile, depth
    # Both tiles' rows padded to an odd number of words: rows a warp reads at one column then
    # fall in different banks, whatever the depth (a Python int here, so the shared arrays'
    # shapes are compile-time constants).
    PADDED = depth | 1
    # 32 x 32 threads fit on an SM only at 64 registers each or fewer (65,536 per SM).
    # (The simulator takes no register cap.)
    options = {"max_registers": 65536 // (T * T)} if T * T > 256 and not SIMULATOR else {}

    @cuda.jit(**options)
    def fused_tiled(delta, w, d, dgamma, dbeta, span):
        fs = cuda.shared.array((T, PADDED), np.float32)
        ws = cuda.shared.array((T, PADDED), np.float32)
        n_ch, n_s = w.shape
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        k = cuda.blockIdx.y * T + ty          # the row of F this thread stages and sums
        j_load = cuda.blockIdx.x * T + ty     # the row of w it stages
        j = cuda.blockIdx.x * T + tx          # the column of dgamma it sums
        first_column = cuda.blockIdx.x == 0
        start = cuda.blockIdx.z * span
        stop = min(start + span, n_s)
        acc = _ZERO
        beta_acc = _ZERO
        for s0 in range(start, stop, D):
            for c in range(tx, D, T):
                s = s0 + c
                f = _ZERO
                ww = _ZERO
                if s < stop:
                    if k < n_ch:
                        dk = d[k, s]
                        f = _MINUS_HALF * delta[k, s] * w[k, s] * dk * dk * dk
                    if j_load < n_ch:
                        wj = w[j_load, s]
                        ww = wj * wj
                fs[ty, c] = f
                ws[ty, c] = ww
            cuda.syncthreads()
            for c in range(D):
                acc += fs[ty, c] * ws[tx, c]
            if first_column and tx == 0:
                for c in range(D):
                    beta_acc += fs[ty, c]
            cuda.syncthreads()  # before the next step overwrites the tiles
        if k < n_ch and j < n_ch:
            cuda.atomic.add(dgamma, (k, j), acc)
        if first_column and tx == 0 and k < n_ch:
            cuda.atomic.add(dbeta, k, beta_acc)

    return fused_tiled


def tiled_launch(n_ch: int, n_samples: int, *, tile: int = 16, depth: int = 16,
                 blocks_per_sm: int = 4) -> tuple[tuple[int, int, int], tuple[int, int], int]:
    """``(grid, block, span)`` for :func:`make_fused_tiled`: enough sample splits for about
    ``blocks_per_sm`` blocks per SM (fewer fit at once when the blocks are large: then the
    grid runs in several waves), each split a whole number of ``depth`` steps, at least one
    step long."""
    n_ch = v.positive_int(n_ch, "n_ch", maximum=MAX_GRID_Y)
    n_samples = v.positive_int(n_samples, "n_samples")
    tile = v.choice(tile, "tile", (8, 16, 32))
    depth = v.positive_int(depth, "depth", maximum=64)
    blocks_per_sm = v.positive_int(blocks_per_sm, "blocks_per_sm", maximum=64)
    tiles = math.ceil(n_ch / tile)
    steps = math.ceil(n_samples / depth)
    splits = min(steps, MAX_GRID_DIM[2],
                 max(1, math.ceil(blocks_per_sm * device.sm_count(default=2) / tiles ** 2)))
    span = depth * math.ceil(steps / splits)
    return (tiles, tiles, math.ceil(n_samples / span)), (tile, tile), span


@functools.lru_cache(maxsize=None, typed=True)
def make_input_grad(block: int = DEFAULT_BLOCK):
    """The error passed to the previous layer, ``dL/dw``; grid ``(ceil(S/block), N)``.

    ``dw[j, s] = delta_j D_j + 2 w_j sum_k gamma[k, j] F[k, s]`` with ``F`` the factor
    ``-1/2 delta w D^3`` (computed first, by :func:`make_factor`). The sum over ``k`` is a
    matrix product, ``gamma.T @ F``: each thread reads a column of ``gamma`` (the same
    address across the warp: a broadcast) and a column of ``F`` (consecutive samples
    across the warp: coalesced).
    """
    v.block_size(block, power_of_two=True)

    @cuda.jit
    def input_grad(delta, w, d, gamma, f, dw):
        s = cuda.blockIdx.x * block + cuda.threadIdx.x
        j = cuda.blockIdx.y
        n_ch, n_s = w.shape
        if s < n_s:
            acc = _ZERO
            for k in range(n_ch):
                acc += gamma[k, j] * f[k, s]
            wj = w[j, s]
            dw[j, s] = delta[j, s] * d[j, s] + np.float32(2.0) * wj * acc

    return input_grad
