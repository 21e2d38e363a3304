"""Case study: the backward pass of Generalized Divisive Normalization (GDN).

GDN (Ballé, Laparra and Simoncelli, 2016) normalizes each channel ``i`` of a
multi-channel image by a weighted energy of all channels at the same pixel::

    u_i = w_i / sqrt(beta_i + sum_j gamma_ij * w_j**2)          (elementwise over pixels)

With ``N`` channels, ``gamma`` is an ``N x N`` matrix and ``beta`` an ``N``-vector.
Call ``D_i = (beta_i + sum_j gamma_ij w_j**2) ** -1/2`` (the forward pass computes it,
the backward pass reuses it) and ``delta_i = dL/du_i`` the error arriving from the
next layer. Summed over every pixel and every image ``s`` of the batch::

    dL/dgamma_kj = sum_s  -1/2 * delta_k[s] * w_k[s] * D_k[s]**3 * w_j[s]**2
    dL/dbeta_k   = sum_s  -1/2 * delta_k[s] * w_k[s] * D_k[s]**3

Layout: every array is ``(N, S)`` float32, C-contiguous, with ``S = batch * m * n``
samples, so that one channel of the whole batch is one contiguous row (the GDN
article's "column-major" storage). ``channel_major`` converts a ``(batch, N, m, n)`` array.

The GDN article's four algorithms all first build the *raw* contributions
``raw[k*N + j, s] = -1/2 delta_k w_k D_k^3 w_j^2`` (an ``N*N x S`` matrix) and then
sum each row:

1. ``replicate``: materialize four ``N*N x S`` replicated matrices, multiply them
   elementwise, index-free (thread id = memory index).
2. ``per_channel``: no replication; for each row ``k`` of gamma, one 1D launch of
   ``N * S`` threads (``N`` launches).
3. ``shared``: one launch, a block row per row ``k`` of gamma; ``delta_k``, ``w_k``,
   ``D_k`` staged in shared memory, each thread loops over the ``N`` channels ``j``.
4. ``registers``: the same, with the three values held in registers (each thread
   only ever reads its own element, so shared memory buys nothing).

Then the reduction of ``raw`` (a loop of launches against one batched launch, and
CuPy's CUB and cuBLAS when present), and, beyond the article, the kernel that never
writes ``raw`` at all (``fused``) and the observation that the whole gradient is one
matrix product, ``dgamma = F @ (w*w).T`` with ``F = -1/2 delta w D^3``.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import cuda  # safe: importing gpuperf.kernels.* runs gpuperf/__init__ (the mode) first

from .. import bench, device
from .. import exercises as ex
from .. import validate as v
from ..mode import SIMULATOR
from ..records import experiment
from ..simwarp import MAX_GRID_DIM

MAX_GRID_Y = MAX_GRID_DIM[1]  # one block per channel along the grid's y dimension

ALGORITHMS = ("replicate", "per_channel", "shared", "registers")
# Everything the sweep measures, in the order the case study tells it.
METHODS = ALGORITHMS + ("fused", "cublas")
DEFAULT_BLOCK = 256
FULL_MASK = 0xFFFFFFFF

_MINUS_HALF = np.float32(-0.5)
_ONE = np.float32(1.0)
_ZERO = np.float32(0.0)


# --------------------------------------------------------------------------- references


def channel_major(x):
    """``(batch, N, m, n)`` (NCHW) -> ``(N, batch*m*n)`` float32, C-contiguous.

    The kernels want each channel of the whole batch in one contiguous row, so that
    consecutive threads (consecutive samples) read consecutive addresses.
    """
    if not isinstance(x, np.ndarray) and not hasattr(x, "copy_to_host"):
        raise TypeError(f"x must be a NumPy array of shape (batch, N, m, n), not "
                        f"{type(x).__name__}.")
    if hasattr(x, "copy_to_host"):
        x = x.copy_to_host()
    if x.dtype.kind not in "fiu" or x.size == 0:
        raise ValueError(f"x must be a non-empty array of numbers (shape (batch, N, m, n)); got "
                         f"dtype {x.dtype} and shape {x.shape}.")
    x = np.asarray(x)
    if x.ndim != 4:
        raise ValueError(f"channel_major expects a (batch, N, m, n) array, got shape {x.shape}.")
    batch, n_ch, m, n = x.shape
    return np.ascontiguousarray(np.transpose(x, (1, 0, 2, 3)).reshape(n_ch, batch * m * n),
                                dtype=np.float32)


def _ref_inputs(square=False, **arrays):
    """Reference inputs: 2-D arrays of finite numbers (NumPy or device), one shape."""
    shape = None
    for name, a in arrays.items():
        if hasattr(a, "copy_to_host"):
            a = a.copy_to_host()
        if not isinstance(a, np.ndarray):
            raise TypeError(f"{name} must be a 2-D NumPy array, not {type(a).__name__}.")
        if a.ndim != 2 or a.size == 0 or a.dtype.kind not in "fiu":
            raise ValueError(f"{name} must be a non-empty 2-D array of numbers, not dtype "
                             f"{a.dtype} shape {a.shape}.")
        if square and a.shape[0] != a.shape[1]:
            raise ValueError(f"{name} must be square (N x N), not {a.shape}.")
        if shape is not None and a.shape != shape:
            raise ValueError(f"{name} has shape {a.shape}, but {list(arrays)[0]} has {shape}: "
                             "they must match.")
        shape = a.shape


def _ref_vector(a, name, n):
    if hasattr(a, "copy_to_host"):
        a = a.copy_to_host()
    if not isinstance(a, np.ndarray) or a.shape != (n,):
        raise ValueError(f"{name} must be a NumPy vector of {n} numbers (one per channel), not "
                         f"{getattr(a, 'shape', type(a).__name__)}.")


def reference_forward(w, gamma, beta):
    """Float64 GDN forward: returns ``(u, D)``, both ``(N, S)``."""
    _ref_inputs(w=w)
    _ref_inputs(gamma=gamma, square=True)
    _ref_vector(beta, "beta", np.shape(w)[0])
    if np.shape(gamma)[0] != np.shape(w)[0]:
        raise ValueError(f"gamma must be N x N with N = {np.shape(w)[0]} (the rows of w), not "
                         f"{np.shape(gamma)}.")
    w = np.asarray(w, dtype=np.float64)
    energy = np.asarray(beta, np.float64)[:, None] + np.asarray(gamma, np.float64) @ (w * w)
    d = energy ** -0.5
    return w * d, d


def reference_factor(w, delta, d):
    """Float64 ``F = -1/2 delta w D^3``, the per-(k, s) factor common to both gradients."""
    _ref_inputs(w=w, delta=delta, d=d)
    w, delta, d = (np.asarray(a, dtype=np.float64) for a in (w, delta, d))
    return -0.5 * delta * w * d**3


def reference_raw(w, delta, d):
    """Float64 raw gamma contributions, ``(N*N, S)``: row ``k*N + j`` sums to dgamma[k, j]."""
    _ref_inputs(w=w, delta=delta, d=d)
    f = reference_factor(w, delta, d)
    w = np.asarray(w, dtype=np.float64)
    n_ch, n_s = w.shape
    return (f[:, None, :] * (w * w)[None, :, :]).reshape(n_ch * n_ch, n_s)


def reference_backward(w, delta, gamma, beta):
    """Float64 ``(dgamma, dbeta)`` from scratch (recomputing D): the ground truth."""
    _ref_inputs(w=w, delta=delta)
    _ref_inputs(gamma=gamma, square=True)
    _ref_vector(beta, "beta", np.shape(w)[0])
    _, d = reference_forward(w, gamma, beta)
    f = reference_factor(w, delta, d)
    w = np.asarray(w, dtype=np.float64)
    return f @ (w * w).T, f.sum(axis=1)


def reference_input_grad(w, delta, gamma, beta):
    """Float64 ``dL/dw`` (the error passed to the previous layer), for completeness.

    ``dL/dw_j = delta_j D_j + 2 w_j sum_k gamma_kj F_k`` with ``F = -1/2 delta w D^3``.
    """
    _ref_inputs(w=w, delta=delta)
    _ref_inputs(gamma=gamma, square=True)
    _ref_vector(beta, "beta", np.shape(w)[0])
    _, d = reference_forward(w, gamma, beta)
    f = reference_factor(w, delta, d)
    w64 = np.asarray(w, dtype=np.float64)
    return np.asarray(delta, np.float64) * d + 2.0 * w64 * (np.asarray(gamma, np.float64).T @ f)


def random_problem(n_ch: int, n_samples: int, seed: int = 0):
    """Fresh random float32 ``(w, delta, gamma, beta)`` with a random offset and scale.

    ``gamma`` is non-negative and ``beta`` positive, as GDN requires (the energy under
    the square root must stay positive).
    """
    v.positive_int(n_ch, "n_ch", maximum=MAX_GRID_Y)
    v.positive_int(n_samples, "n_samples")
    v.positive_int(seed, "seed", minimum=0)
    rng = np.random.default_rng(seed)
    scale, offset = rng.uniform(0.5, 2.0), rng.uniform(-0.5, 0.5)
    w = (offset + scale * rng.standard_normal((n_ch, n_samples))).astype(np.float32)
    delta = (rng.uniform(-1, 1) + rng.standard_normal((n_ch, n_samples))).astype(np.float32)
    gamma = (rng.uniform(0.01, 0.2) * rng.random((n_ch, n_ch))).astype(np.float32)
    beta = (rng.uniform(0.5, 1.5) + 0.1 * rng.random(n_ch)).astype(np.float32)
    return w, delta, gamma, beta


# --------------------------------------------------------------------------- kernels


@functools.lru_cache(maxsize=None, typed=True)
def make_forward(block: int = DEFAULT_BLOCK):
    """Forward GDN: ``u = w * D``; grid ``(ceil(S/block), N)``, one thread per (i, s)."""
    v.block_size(block, power_of_two=True)

    @cuda.jit
    def gdn_forward(w, gamma, beta, u, d):
        s = cuda.blockIdx.x * block + cuda.threadIdx.x
        i = cuda.blockIdx.y
        n_ch = w.shape[0]
        if s < w.shape[1]:
            energy = beta[i]
            for j in range(n_ch):
                x = w[j, s]
                energy += gamma[i, j] * x * x
            r = _ONE / math.sqrt(energy)
            d[i, s] = r
            u[i, s] = w[i, s] * r

    return gdn_forward


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


@functools.lru_cache(maxsize=None, typed=True)
def make_factor(block: int = DEFAULT_BLOCK):
    """``F = -1/2 delta w D^3``, elementwise over ``(N, S)``; grid ``(ceil(S/block), N)``."""
    v.block_size(block, power_of_two=True)

    @cuda.jit
    def factor(delta, w, d, f):
        s = cuda.blockIdx.x * block + cuda.threadIdx.x
        k = cuda.blockIdx.y
        if s < w.shape[1]:
            dk = d[k, s]
            f[k, s] = _MINUS_HALF * delta[k, s] * w[k, s] * dk * dk * dk

    return factor


# --------------------------------------------------------------------------- host wrappers

_SIG2 = "void(float32[:, ::1], float32[:, ::1], float32[:, ::1], float32[:, ::1])"


def _check_inputs(w, delta, d=None):
    w = v.array(w, name="w", dtype=np.float32, ndim=2)
    delta = v.array(delta, name="delta", dtype=np.float32, ndim=2)
    v.same_shape(w, delta, ("w", "delta"))
    if d is not None:
        d = v.array(d, name="d", dtype=np.float32, ndim=2)
        v.same_shape(w, d, ("w", "d"))
    n_ch, n_s = w.shape
    if n_ch > MAX_GRID_Y:
        raise ValueError(f"N={n_ch} channels is over the {MAX_GRID_Y} blocks a grid's y dimension "
                         "allows; split the channels into groups.")
    return w, delta, d


def _device(x):
    return cuda.to_device(x) if isinstance(x, np.ndarray) else x


def raw_bytes(n_ch: int, n_samples: int) -> int:
    """Size of the raw contribution matrix, ``N*N*S`` float32."""
    v.positive_int(n_ch, "n_ch")
    v.positive_int(n_samples, "n_samples")
    return 4 * n_ch * n_ch * n_samples


def forward(w, gamma, beta, *, block: int = DEFAULT_BLOCK):
    """GDN forward on the GPU (or simulator): returns NumPy ``(u, D)``."""
    v.block_size(block, power_of_two=True)
    v.array(gamma, name="gamma", dtype=np.float32, ndim=2)
    v.array(beta, name="beta", dtype=np.float32, ndim=1)
    w = v.array(w, name="w", dtype=np.float32, ndim=2)
    n_ch, n_s = w.shape
    gamma = v.array(gamma, name="gamma", dtype=np.float32, ndim=2)
    beta = v.array(beta, name="beta", dtype=np.float32, ndim=1)
    if gamma.shape != (n_ch, n_ch) or beta.shape != (n_ch,):
        raise ValueError(f"with w of shape {w.shape}, gamma must be ({n_ch}, {n_ch}) and beta "
                         f"({n_ch},); they are {gamma.shape} and {beta.shape}.")
    if isinstance(beta, np.ndarray) and isinstance(gamma, np.ndarray):
        if beta.min() <= 0 or gamma.min() < 0:
            raise ValueError("GDN needs beta > 0 and gamma >= 0 (the energy under the square "
                             "root must stay positive); clip them, e.g. np.maximum(beta, 1e-6).")
    block = v.block_size(block)
    u = cuda.device_array((n_ch, n_s), np.float32)
    d = cuda.device_array((n_ch, n_s), np.float32)
    make_forward(block)[(math.ceil(n_s / block), n_ch), block](
        _device(w), _device(gamma), _device(beta), u, d)
    return u.copy_to_host(), d.copy_to_host()


def launch_raw(algorithm: str, d_delta, d_w, d_d, d_raw, *, block: int = DEFAULT_BLOCK,
               scratch=None):
    """Enqueue one algorithm's kernels on device arrays (no checks, no copies): for timing.

    ``scratch``: for ``replicate``, a list of four flat ``N*N*S`` device arrays.
    """
    v.choice(algorithm, "algorithm", ALGORITHMS)
    block = v.integer(block, "block", minimum=1, maximum=1024)  # cheap: timed loops call this
    for _a, _nm in ((d_delta, "d_delta"), (d_w, "d_w"), (d_d, "d_d")):
        if len(getattr(_a, "shape", ())) != 2:
            raise TypeError(f"{_nm} must be a 2-D float32 device array (N, S), not "
                            f"{type(_a).__name__}.")
    if algorithm == "replicate" and (not isinstance(scratch, (list, tuple)) or len(scratch) != 4):
        raise TypeError("scratch must be a list of four flat N*N*S float32 device arrays for "
                        "algorithm='replicate'.")
    n_ch, n_s = d_w.shape
    if algorithm == "replicate":
        rows_k, cols_k = make_replicate(block)
        mult = make_multiply(block)
        total = n_ch * n_ch * n_s
        grid = math.ceil(total / block)
        rep_delta, rep_wk, rep_d, rep_wj = scratch
        fd, fw, fdd = d_delta.reshape(n_ch * n_s), d_w.reshape(n_ch * n_s), d_d.reshape(n_ch * n_s)
        rows_k[grid, block](fd, n_ch, n_s, rep_delta)
        rows_k[grid, block](fw, n_ch, n_s, rep_wk)
        rows_k[grid, block](fdd, n_ch, n_s, rep_d)
        cols_k[grid, block](fw, n_ch, n_s, rep_wj)
        mult[grid, block](rep_delta, rep_wk, rep_d, rep_wj, d_raw.reshape(total))
    elif algorithm == "per_channel":
        kern = make_per_channel(block)
        grid = math.ceil(n_ch * n_s / block)
        for k in range(n_ch):
            kern[grid, block](d_delta, d_w, d_d, k, d_raw)
    elif algorithm == "shared":
        make_shared(block)[(math.ceil(n_s / block), n_ch), block](d_delta, d_w, d_d, d_raw)
    elif algorithm == "registers":
        make_registers(block)[(math.ceil(n_s / block), n_ch), block](d_delta, d_w, d_d, d_raw)
    else:
        v.choice(algorithm, "algorithm", ALGORITHMS)


def allocated_bytes(algorithm: str, n_ch: int, n_samples: int) -> int:
    """Device memory an algorithm allocates beyond its inputs (w, delta, D) and dgamma."""
    v.choice(algorithm, "algorithm", METHODS)
    v.positive_int(n_ch, "n_ch")
    v.positive_int(n_samples, "n_samples")
    raw = raw_bytes(n_ch, n_samples)
    return {"replicate": 5 * raw, "per_channel": raw, "shared": raw, "registers": raw,
            "fused": 0, "cublas": 2 * 4 * n_ch * n_samples}[algorithm]


def moved_bytes(method: str, n_ch: int, n_samples: int) -> int:
    """The fewest DRAM bytes each method's design must move (its memory-bound floor).

    Every array a kernel reads is counted once per launch, every array it writes once.
    Algorithms 1-4 count only building ``raw``; ``fused`` and ``cublas`` produce the
    finished ``dgamma`` (and ``fused`` ``dbeta``), so their floors include everything.
    """
    v.choice(method, "method", METHODS + ("reduce",))
    v.positive_int(n_ch, "n_ch")
    v.positive_int(n_samples, "n_samples")
    plane = 4 * n_ch * n_samples           # one (N, S) float32 array
    raw = raw_bytes(n_ch, n_samples)
    small = 4 * n_ch * n_ch
    if method == "replicate":
        # 4 replications write 4 raw-sized matrices (reading a plane each), then the
        # product reads those 4 and writes raw.
        return 4 * raw + 4 * plane + 4 * raw + raw
    if method == "per_channel":
        # each of the N launches reads all of w plus rows k of delta and D, writes N*S.
        return n_ch * (plane + 2 * 4 * n_samples) + raw
    if method in ("shared", "registers"):
        return 3 * plane + raw
    if method == "fused":
        return 3 * plane + small + 4 * n_ch
    if method == "cublas":
        # F and w*w are elementwise passes (read 3 planes, write 1; read 1, write 1),
        # then the product reads both and writes N*N.
        return 4 * plane + 2 * plane + 2 * plane + small
    if method == "reduce":
        return raw + small
    raise ValueError(f"unknown method {method!r}; choose from {METHODS + ('reduce',)}.")


def raw_contributions(w, delta, d, algorithm: str = "registers", *, block: int = DEFAULT_BLOCK):
    """Build the ``(N*N, S)`` raw gamma contributions by one of the GDN article's algorithms.

    Inputs are ``(N, S)`` float32 (see :func:`channel_major`); ``d`` is the forward
    pass's ``D``. Returns a NumPy array.
    """
    v.block_size(block)
    v.choice(algorithm, "algorithm", ALGORITHMS)
    w, delta, d = _check_inputs(w, delta, d)
    block = v.block_size(block)
    n_ch, n_s = w.shape
    d_raw = cuda.device_array((n_ch * n_ch, n_s), np.float32)
    scratch = None
    if algorithm == "replicate":
        scratch = [cuda.device_array(n_ch * n_ch * n_s, np.float32) for _ in range(4)]
    launch_raw(algorithm, _device(delta), _device(w), _device(d), d_raw, block=block,
               scratch=scratch)
    return d_raw.copy_to_host()


def row_sums(mat, *, block: int = DEFAULT_BLOCK):
    """Sum each row of a ``(R, S)`` float32 matrix in one launch; returns NumPy ``(R,)``."""
    mat = v.array(mat, name="mat", dtype=np.float32, ndim=2)
    block = v.block_size(block, power_of_two=True)
    out = cuda.device_array(mat.shape[0], np.float32)
    make_row_sum(block)[mat.shape[0], block](_device(mat), out)
    return out.copy_to_host()


def backward(w, delta, d, method: str = "registers", *, block: int = DEFAULT_BLOCK):
    """``(dgamma, dbeta)`` as NumPy arrays, by one of the GDN article's algorithms, ``fused``
    or ``fused_tiled`` (:func:`make_fused_tiled` with its default tile, :func:`tiled_launch`).

    Algorithms 1-4 build the raw contributions and reduce them with the batched
    row-sum kernel; ``fused`` never writes them. ``dbeta`` comes from :func:`make_beta_grad`
    (or from ``fused`` itself).
    """
    v.block_size(block, power_of_two=True)
    v.choice(method, "method", ALGORITHMS + ("fused", "fused_tiled"))
    w, delta, d = _check_inputs(w, delta, d)
    block = v.block_size(block, power_of_two=True, minimum=32)
    n_ch, n_s = w.shape
    d_w, d_delta, d_d = _device(w), _device(delta), _device(d)
    if method == "fused_tiled":
        dgamma = cuda.to_device(np.zeros((n_ch, n_ch), np.float32))
        dbeta = cuda.to_device(np.zeros(n_ch, np.float32))
        grid, threads, span = tiled_launch(n_ch, n_s)
        make_fused_tiled()[grid, threads](d_delta, d_w, d_d, dgamma, dbeta, span)
        return dgamma.copy_to_host(), dbeta.copy_to_host()
    if method == "fused":
        coarsen = 8 if n_s >= 8 * block else 1
        dgamma = cuda.to_device(np.zeros((n_ch, n_ch), np.float32))
        dbeta = cuda.to_device(np.zeros(n_ch, np.float32))
        grid = (math.ceil(n_s / (block * coarsen)), n_ch)
        make_fused(block, coarsen)[grid, block](d_delta, d_w, d_d, dgamma, dbeta)
        return dgamma.copy_to_host(), dbeta.copy_to_host()
    d_raw = cuda.device_array((n_ch * n_ch, n_s), np.float32)
    scratch = None
    if method == "replicate":
        scratch = [cuda.device_array(n_ch * n_ch * n_s, np.float32) for _ in range(4)]
    launch_raw(method, d_delta, d_w, d_d, d_raw, block=block, scratch=scratch)
    sums = cuda.device_array(n_ch * n_ch, np.float32)
    make_row_sum(block)[n_ch * n_ch, block](d_raw, sums)
    dbeta = cuda.device_array(n_ch, np.float32)
    make_beta_grad(block)[n_ch, block](d_delta, d_w, d_d, dbeta)
    return sums.copy_to_host().reshape(n_ch, n_ch), dbeta.copy_to_host()


def input_grad(w, delta, d, gamma, *, block: int = DEFAULT_BLOCK):
    """``dL/dw`` as a NumPy ``(N, S)`` array: :func:`make_factor`, then :func:`make_input_grad`."""
    w, delta, d = _check_inputs(w, delta, d)
    block = v.block_size(block, power_of_two=True, minimum=32)
    n_ch, n_s = w.shape
    gamma = v.array(gamma, name="gamma", dtype=np.float32, ndim=2)
    if tuple(gamma.shape) != (n_ch, n_ch):
        raise ValueError(f"gamma must be N x N with N = {n_ch} (the rows of w), not "
                         f"{tuple(gamma.shape)}.")
    d_w, d_delta, d_d, d_gamma = _device(w), _device(delta), _device(d), _device(gamma)
    f = cuda.device_array((n_ch, n_s), np.float32)
    dw = cuda.device_array((n_ch, n_s), np.float32)
    grid = (math.ceil(n_s / block), n_ch)
    make_factor(block)[grid, block](d_delta, d_w, d_d, f)
    make_input_grad(block)[grid, block](d_delta, d_w, d_d, d_gamma, f, dw)
    return dw.copy_to_host()


PTX_TARGETS = [
    (make_forward(256), "void(float32[:, ::1], float32[:, ::1], float32[::1], "
                        "float32[:, ::1], float32[:, ::1])"),
    (make_replicate(256)[0], "void(float32[::1], int64, int64, float32[::1])"),
    (make_replicate(256)[1], "void(float32[::1], int64, int64, float32[::1])"),
    (make_multiply(256), "void(float32[::1], float32[::1], float32[::1], float32[::1], "
                         "float32[::1])"),
    (make_per_channel(256), "void(float32[:, ::1], float32[:, ::1], float32[:, ::1], int64, "
                            "float32[:, ::1])"),
    (make_shared(256), _SIG2),
    (make_registers(256), _SIG2),
    (make_row_sum(256), "void(float32[:, ::1], float32[::1])"),
    (make_beta_grad(256), "void(float32[:, ::1], float32[:, ::1], float32[:, ::1], float32[::1])"),
    (make_fused(256, 8), "void(float32[:, ::1], float32[:, ::1], float32[:, ::1], "
                         "float32[:, ::1], float32[::1])"),
    (make_fused_tiled(16, 16), "void(float32[:, ::1], float32[:, ::1], float32[:, ::1], "
                               "float32[:, ::1], float32[::1], int64)"),
    (make_factor(256), _SIG2),
    (make_input_grad(256), "void(float32[:, ::1], float32[:, ::1], float32[:, ::1], "
                           "float32[:, ::1], float32[:, ::1], float32[:, ::1])"),
]


# --------------------------------------------------------------------------- diagrams


HEADLINE_COLUMNS = ("method", "launches", "allocated_mb", "moved_mb", "ms", "reduce_ms",
                    "total_ms", "pct_floor", "speedup_vs_previous", "rel_err")


def show_headline(head) -> None:
    """The headline table, in the columns the chapter discusses; a method that was skipped
    (no CuPy, say) gets a ``note`` column saying why."""
    v.result(head, "head")
    columns = [c for c in HEADLINE_COLUMNS if c in head.columns]
    if any(r.get("note") for r in head.rows):
        columns.append("note")
    head.show(columns)


def plot_headline(head, label: str = ""):
    """Time of each method at the headline size (the whole gradient, and the part that builds
    the raw contributions), against the floor of its must-move bytes at copy speed. Bars are
    not stacked: on the log axis each bar's right end is its value."""
    import matplotlib.pyplot as plt

    from .. import plots

    v.result(head, "head")
    v.string(label, "label", empty=True)
    rows = [r for r in head.rows if r.get("total_ms")]
    if not rows:
        raise ValueError(f"head ({head!r}) has no row with total_ms; pass the headline table.")
    fig, ax = plt.subplots(figsize=(plots.COLUMN_INCHES, 3.8))
    names = [r["method"] for r in rows]
    # On a log axis a stacked segment's length means nothing: every bar starts at the axis
    # and its right end is its value. The whole gradient is the wide bar; the part that
    # builds the raw contributions (where there is a separate reduction) the narrow one in it.
    ax.barh(names, [r["total_ms"] for r in rows], color="tab:orange", height=0.7,
            label="whole gradient (build, then reduce)")
    staged = [r for r in rows if r.get("reduce_ms") is not None]
    ax.barh([r["method"] for r in staged], [r["ms"] for r in staged], color="tab:blue",
            height=0.35, label="building the raw contributions alone")
    ax.barh(names, [r["floor_ms"] for r in rows], fill=False, edgecolor="black",
            linestyle="--", label="floor: must-move bytes at copy speed")
    ax.set_xscale("log")
    # the reference GPUs' records are whole sweeps: mark their rows at the headline size
    plots.reference_bars(ax, head, label="method", y="total_ms", rows=rows,
                         sel={"n_ch": HEADLINE["n_ch"], "side": HEADLINE["side"]})
    ax.invert_yaxis()
    ax.set_xlabel("time (ms, log scale; each bar's right end is its value)")
    ax.set_title(f"dL/dgamma, N={HEADLINE['n_ch']}, {HEADLINE['side']}x{HEADLINE['side']}, "
                 f"batch {BATCH}", fontsize=10)
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(alpha=0.3, axis="x")
    plots.source_label(fig, label or head.label)
    fig.tight_layout()
    return fig


def plot_scaling(res):
    """Time of each method against the channel count, one panel per image size."""
    import matplotlib.pyplot as plt

    from .. import plots

    v.result(res, "res")
    for column in ("side", "n_ch", "total_ms", "method"):
        v.column(res, column, "res column")
    sides = res.values("side")
    fig, axes = plt.subplots(len(sides), 1, figsize=(plots.COLUMN_INCHES, 3.2 * len(sides)),
                             sharex=True, squeeze=False)
    for ax, side in zip(axes.flat, sides):
        plots.lines(res.where(side=side), x="n_ch", y="total_ms", series="method", logx=True,
                    logy=True, ax=ax, title=f"{side}x{side} images, batch {BATCH}",
                    xlabel="channels N", ylabel="time for dL/dgamma (ms)")
        if ax is not axes.flat[-1]:
            ax.set_xlabel("")
        if ax.get_legend() is not None:
            ax.get_legend().remove()
        ax.tick_params(labelbottom=True)
    # One legend for all panels (the methods and their colours are the same in each).
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, [label.split("=", 1)[-1] for label in labels], loc="upper center",
               ncol=len(labels), fontsize=8, frameon=False, title="method", title_fontsize=8)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.5 / (3.2 * len(sides))))
    return fig


def draw_organization(n_ch: int = 3, n_s: int = 8, block: int = 4):
    """Who writes what: the raw matrix (``N*N`` rows x ``S`` samples) under each algorithm.

    Each cell is one raw contribution ``raw[k*N + j, s]``; its colour is the block that
    writes it, numbered within its launch (algorithm 1: the one flat product launch, after
    four replication launches; algorithm 2: N launches, whose block numbers start again at
    0, separated by solid lines; algorithms 3 and 4: block (x, k) of the single 2D launch,
    rows of gamma separated by dashed lines). Numbers in the cells are the writing thread's
    id within its block.
    """
    v.positive_int(n_ch, "n_ch", maximum=8)
    v.positive_int(n_s, "n_s", maximum=64)
    v.positive_int(block, "block", maximum=64)
    import matplotlib.pyplot as plt

    rows = n_ch * n_ch
    from .. import plots

    fig, axes = plt.subplots(1, 3, figsize=(plots.COLUMN_INCHES, 0.3 * rows + 2.2), sharey=True,
                             layout="constrained")
    titles = ["1. replicate: 4 copies\nto N*N*S, one flat launch",
              "2. per channel: N launches\nof N*S threads",
              "3 and 4. one launch,\nblock (x, k): row k of gamma"]
    cmap = plt.get_cmap("tab20")
    for panel, ax in enumerate(axes):
        colour = np.zeros((rows, n_s))
        tid = np.zeros((rows, n_s), dtype=int)
        for r in range(rows):
            k, j = divmod(r, n_ch)
            for s in range(n_s):
                if panel == 0:  # one launch over all N*N*S cells
                    flat = r * n_s + s
                    colour[r, s], tid[r, s] = flat // block, flat % block
                elif panel == 1:  # launch k covers rows k*N .. k*N + N-1; its blocks start at 0
                    flat = j * n_s + s
                    colour[r, s], tid[r, s] = flat // block, flat % block
                else:  # block (x, k) of one 2D launch
                    colour[r, s], tid[r, s] = k * -(-n_s // block) + s // block, s % block
        ax.imshow(colour % 20, cmap=cmap, vmin=0, vmax=19, aspect="auto")
        for r in range(rows):
            for s in range(n_s):
                ax.text(s, r, str(tid[r, s]), ha="center", va="center", fontsize=6)
        if panel:
            for k in range(1, n_ch):
                ax.axhline(k * n_ch - 0.5, color="black", linewidth=1.5,
                           linestyle="-" if panel == 1 else "--")
        ax.set_title(titles[panel], fontsize=9)
        ax.set_xlabel("sample s" if panel != 1 else "sample s (a pixel of an image)", fontsize=8)
        ax.set_xticks(range(n_s))
    axes[0].set_yticks(range(rows), [f"k={r // n_ch}, j={r % n_ch}" for r in range(rows)])
    fig.suptitle(f"raw[k*N + j, s] for N={n_ch}, S={n_s}, blocks of {block} threads: colour = block "
                 "(numbered within its launch),\nnumber = thread in its block; solid lines: separate "
                 "launches, dashed: rows of gamma", fontsize=9)
    return fig


def memory_table(n_ch: int, n_samples: int) -> list[dict]:
    """Bytes each method allocates and must move at one size (no GPU needed)."""
    v.positive_int(n_ch, "n_ch")
    v.positive_int(n_samples, "n_samples")
    return [{"method": m, "allocated_GB": allocated_bytes(m, n_ch, n_samples) / 1e9,
             "moved_GB": moved_bytes(m, n_ch, n_samples) / 1e9} for m in METHODS]


# --------------------------------------------------------------------------- experiments

# The sweep the widget explores: channels x image side, batch of 4 images.
SWEEP_CHANNELS = (16, 32, 64, 128)
SWEEP_SIDES = (32, 64, 128)
BATCH = 4
# The headline configuration the case study's table uses.
HEADLINE = {"n_ch": 64, "side": 128}
# Algorithm 1 allocates five raw-sized matrices; beyond this it is skipped (and reported).
REPLICATE_LIMIT_BYTES = 8 * 2**30
# The GDN article's own configuration (GTX 1080): N = 256 channels, 128 x 128 images.
ARTICLE_CONFIG = {"n_ch": 256, "side": 128, "batch": 4}


def _cupy():
    try:
        import cupy
    except Exception:  # not installed, or installed without a usable CUDA
        return None
    return cupy


def _cublas_gradient(cp, d_delta, d_w, d_d):
    """``dgamma = F @ (w*w).T`` with CuPy: one elementwise pass for F, one for w*w, one SGEMM."""
    factor_kernel = _cupy_factor_kernel(cp)
    delta, w, d = cp.asarray(d_delta), cp.asarray(d_w), cp.asarray(d_d)

    def run():
        f = factor_kernel(delta, w, d)
        return f @ (w * w).T

    return run


@functools.lru_cache(maxsize=1, typed=True)
def _cupy_factor_kernel(cp):
    return cp.ElementwiseKernel("float32 dl, float32 w, float32 d", "float32 f",
                                "f = -0.5f * dl * w * d * d * d", "gdn_factor")


class _Problem:
    """Device arrays for one (N, S) configuration, plus the float64 reference when asked."""

    def __init__(self, n_ch: int, n_samples: int, seed: int = 0):
        w, delta, gamma, beta = random_problem(n_ch, n_samples, seed)
        self.n_ch, self.n_samples = n_ch, n_samples
        self.host = (w, delta, gamma, beta)
        self.w, self.delta = cuda.to_device(w), cuda.to_device(delta)
        self.u = cuda.device_array((n_ch, n_samples), np.float32)
        self.d = cuda.device_array((n_ch, n_samples), np.float32)
        make_forward(DEFAULT_BLOCK)[(math.ceil(n_samples / DEFAULT_BLOCK), n_ch), DEFAULT_BLOCK](
            self.w, cuda.to_device(gamma), cuda.to_device(beta), self.u, self.d)

    def reference(self):
        w, delta, _, _ = self.host
        f = reference_factor(w, delta, self.d.copy_to_host())
        return f @ (w.astype(np.float64) ** 2).T


def _rel_err(got, ref) -> float:
    return float(np.linalg.norm(np.asarray(got, np.float64) - ref) / np.linalg.norm(ref))


def _time(fn, footprint_bytes: int):
    # Launches counted: the per-channel loop issues N launches each shorter than Numba's launch
    # cost, and the host setting the pace is part of what the chapter measures.
    l2 = device.info().l2_bytes or 50 * 2**20
    return bench.time_kernel(fn, min_repeat=5, min_time=0.05, flush=footprint_bytes < 4 * l2,
                             hide_launch=False)


def _method_launcher(method, prob, raw, block, cp):
    """A zero-argument callable that enqueues ``method`` once, and a ``result()`` for dgamma.

    Returns ``(None, reason)`` when the method cannot run here.
    """
    n_ch, n_s = prob.n_ch, prob.n_samples
    if method in ALGORITHMS:
        scratch = None
        if method == "replicate":
            need = allocated_bytes(method, n_ch, n_s)
            if need > REPLICATE_LIMIT_BYTES:
                return None, f"skipped: needs {need / 2**30:.1f} GiB"
            scratch = [cuda.device_array(n_ch * n_ch * n_s, np.float32) for _ in range(4)]

        def run():
            launch_raw(method, prob.delta, prob.w, prob.d, raw, block=block, scratch=scratch)

        return run, None
    if method == "fused":
        coarsen = 8
        dgamma = cuda.device_array((n_ch, n_ch), np.float32)
        dbeta = cuda.device_array(n_ch, np.float32)
        fused = make_fused(block, coarsen)
        grid = (math.ceil(n_s / (block * coarsen)), n_ch)

        def run():
            _zero(dgamma, dbeta)  # the kernel accumulates atomically
            fused[grid, block](prob.delta, prob.w, prob.d, dgamma, dbeta)
            return dgamma

        return run, None
    if cp is None:
        return None, "skipped: CuPy not installed"
    return _cublas_gradient(cp, prob.delta, prob.w, prob.d), None


def _measure_config(n_ch, side, *, cp, copy_gbps, block, progress):
    """Every method at one (N, side): rows with time, floor, % of floor and speedups."""
    n_s = BATCH * side * side
    prob = _Problem(n_ch, n_s, seed=n_ch + side)
    check = (n_ch, side) == (HEADLINE["n_ch"], HEADLINE["side"])
    ref = prob.reference() if check else None
    raw = cuda.device_array((n_ch * n_ch, n_s), np.float32)
    sums = cuda.device_array(n_ch * n_ch, np.float32)
    row_sum = make_row_sum(block)
    footprint = raw_bytes(n_ch, n_s) + 4 * 4 * n_ch * n_s

    def reduce_raw():
        row_sum[n_ch * n_ch, block](raw, sums)

    t_reduce = _time(reduce_raw, footprint)
    rows, previous_ms = [], None
    for method in METHODS:
        row = {"n_ch": n_ch, "side": side, "batch": BATCH, "samples": n_s, "method": method,
               # fused: one launch zeroes its outputs; cublas: F, w*w, then the SGEMM
               "launches": {"replicate": 5, "per_channel": n_ch, "fused": 2,
                            "cublas": 3}.get(method, 1),
               "allocated_mb": allocated_bytes(method, n_ch, n_s) / 1e6,
               "moved_mb": moved_bytes(method, n_ch, n_s) / 1e6}
        run, why_not = _method_launcher(method, prob, raw, block, cp)
        if run is None:
            rows.append({**row, "ms": None, "note": why_not})
            progress(f"N={n_ch:4d} side={side:4d} {method:12s} {why_not}")
            continue
        t = _time(run, footprint)
        complete = method in ("fused", "cublas")
        total_ms = t.median_ms + (0.0 if complete else t_reduce.median_ms)
        floor_ms = moved_bytes(method, n_ch, n_s) / (copy_gbps * 1e9) * 1e3
        row.update({
            "ms": t.median_ms, "spread": t.spread,
            "reduce_ms": None if complete else t_reduce.median_ms,
            "total_ms": total_ms, "floor_ms": floor_ms,
            "pct_floor": 100 * floor_ms / t.median_ms,
            "gbps": bench.gbps(moved_bytes(method, n_ch, n_s), t.median_ms),
            "speedup_vs_previous": previous_ms / total_ms if previous_ms else None,
        })
        if check:
            out = run()
            if method in ALGORITHMS:
                reduce_raw()
                got = sums.copy_to_host().reshape(n_ch, n_ch)
            else:
                got = out.copy_to_host() if method == "fused" else cp.asnumpy(out)
            row["rel_err"] = _rel_err(got, ref)
            if row["rel_err"] > 1e-4:
                raise AssertionError(f"{method} is wrong at N={n_ch}, side={side}: "
                                     f"relative error {row['rel_err']:.2e}")
        previous_ms = total_ms
        rows.append(row)
        progress(f"N={n_ch:4d} side={side:4d} {method:12s} {t.median_ms:9.3f} ms "
                 f"({row['pct_floor']:.0f}% of its floor)")
    return rows


def measure_point(n_ch: int, side: int, method: str = "registers") -> dict:
    """Time one method at one (N, side) on this GPU: the widget's live button."""
    v.choice(method, "method", METHODS)
    v.positive_int(n_ch, "n_ch", maximum=MAX_GRID_Y)
    v.positive_int(side, "side")
    bench._require_gpu("gdn.measure_point")
    v.choice(method, "method", METHODS)
    rows = [r for r in _measure_config(n_ch, side, cp=_cupy(), block=DEFAULT_BLOCK,
                                       copy_gbps=bench.ceilings()["copy_gbps"],
                                       progress=lambda _m: None) if r["method"] == method]
    return rows[0]


@experiment("gdn_algorithms", chapter="gdn",
            title="GDN backward (dgamma): the GDN article's four algorithms, fused, and cuBLAS, "
                  "over channels N and image side (batch of 4)",
            units={"ms": "ms", "reduce_ms": "ms", "total_ms": "ms", "floor_ms": "ms",
                   "pct_floor": "% of floor", "gbps": "GB/s", "moved_mb": "MB",
                   "allocated_mb": "MB", "speedup_vs_previous": "x"})
def algorithms_experiment(progress):
    cp = _cupy()
    copy_gbps = bench.ceilings()["copy_gbps"]
    rows = []
    for n_ch in SWEEP_CHANNELS:
        for side in SWEEP_SIDES:
            rows += _measure_config(n_ch, side, cp=cp, copy_gbps=copy_gbps,
                                    block=DEFAULT_BLOCK, progress=progress)
    return rows


def _zero(dgamma, dbeta):
    """Zero the fused kernel's two outputs in one launch (it accumulates with atomics)."""
    flat = dgamma.reshape(dgamma.size)
    _zero_kernel()[math.ceil(max(flat.size, dbeta.size) / 256), 256](flat, dbeta)


@functools.lru_cache(maxsize=1, typed=True)
def _zero_kernel():
    @cuda.jit
    def zero_two(a, b):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = _ZERO
        if i < b.size:
            b[i] = _ZERO

    return zero_two


PTX_TARGETS.append((_zero_kernel(), "void(float32[::1], float32[::1])"))


INPUT_GRAD_CHANNELS = (64, 256)  # the headline's N and the GDN article's


def input_grad_bytes(n_ch: int, n_samples: int) -> int:
    """Bytes the two input-gradient kernels move at least: delta, w and D read twice (once
    for F, once for the result), F written and read, dw written, gamma read; float32."""
    v.positive_int(n_ch, "n_ch")
    v.positive_int(n_samples, "n_samples")
    return 4 * (9 * n_ch * n_samples + n_ch * n_ch)


@experiment("gdn_input_grad", chapter="gdn",
            title="GDN input gradient dL/dw (128x128, batch 4): Numba's factor and "
                  "gamma.T @ F kernels against CuPy (cuBLAS for the product)",
            units={"ms": "ms", "gbps": "GB/s", "tflops": "TFLOP/s", "rel_err": "relative"})
def input_grad_experiment(progress):
    cp = _cupy()
    n_s = BATCH * HEADLINE["side"] ** 2
    rows = []
    for n_ch in INPUT_GRAD_CHANNELS:
        rows += _input_grad_rows(n_ch, n_s, cp, progress)
    return rows


def _input_grad_rows(n_ch, n_s, cp, progress):
    prob = _Problem(n_ch, n_s, seed=n_ch)
    w, delta, gamma, beta = prob.host
    ref = reference_input_grad(w, delta, gamma, beta)
    d_gamma = cuda.to_device(gamma)
    f = cuda.device_array((n_ch, n_s), np.float32)
    dw = cuda.device_array((n_ch, n_s), np.float32)
    grid = (math.ceil(n_s / DEFAULT_BLOCK), n_ch)
    factor, grad = make_factor(DEFAULT_BLOCK), make_input_grad(DEFAULT_BLOCK)

    def numba_run():
        factor[grid, DEFAULT_BLOCK](prob.delta, prob.w, prob.d, f)
        grad[grid, DEFAULT_BLOCK](prob.delta, prob.w, prob.d, d_gamma, f, dw)
        return dw

    runs = {"numba (factor, then gamma.T @ F in one kernel)": (numba_run, 2)}
    if cp is not None:
        fk = _cupy_factor_kernel(cp)
        c_delta, c_w, c_d = cp.asarray(prob.delta), cp.asarray(prob.w), cp.asarray(prob.d)
        c_gt = cp.asarray(d_gamma).T.copy()

        def cupy_run():
            return c_delta * c_d + 2.0 * c_w * (c_gt @ fk(c_delta, c_w, c_d))

        # the factor, the cuBLAS product, and four elementwise operations (delta * D, 2 * w,
        # that times the product, the sum)
        runs["cupy (factor, cuBLAS gamma.T @ F, elementwise)"] = (cupy_run, 6)
    moved = input_grad_bytes(n_ch, n_s)
    rows = []
    for method, (run, launches) in runs.items():
        out = run()
        got = out.copy_to_host() if hasattr(out, "copy_to_host") else cp.asnumpy(out)
        err = _rel_err(got, ref)
        if err > 1e-4:
            raise AssertionError(f"{method} is wrong at N={n_ch}: relative error {err:.2e}")
        t = _time(run, moved)
        rows.append({"n_ch": n_ch, "samples": n_s, "method": method, "launches": launches,
                     "ms": t.median_ms, "spread": t.spread,
                     "gbps": bench.gbps(moved, t.median_ms),
                     "tflops": bench.tflops(2 * n_ch * n_ch * n_s, t.median_ms),
                     "rel_err": err})
        progress(f"N={n_ch} {method}: {t.median_ms:.3f} ms, error {err:.1e}")
    return rows


TILED_CHANNELS = (16, 64, 128, 256)   # the sweep's smallest N, the headline's, and the article's
TILED_TILES = (16, 32)


@experiment("gdn_tiled", chapter="gdn",
            title="dgamma as a tiled matrix product (128x128, batch 4): the fused kernel, "
                  "its tiled version (chapter 4) and cuBLAS, over channels N",
            units={"ms": "ms", "tflops": "TFLOP/s", "rel_err": "relative",
                   "x_fused": "x", "x_cublas": "x"})
def tiled_experiment(progress):
    """At the headline image size, for each N of ``TILED_CHANNELS``: ``fused`` (one thread
    row per channel k, reading every w_j for each), ``fused_tiled`` with each tile of
    ``TILED_TILES`` (each staged value serving a tile of outputs), and cuBLAS (CuPy: F, then
    w*w, then the SGEMM) when present. Every time includes the launch that zeroes the
    outputs and the host's launch work (the sweep's protocol, ``_time``); every result is
    checked against the float64 reference. ``x_fused``, ``x_cublas``: that method's time
    over this one's, at the same N."""
    cp = _cupy()
    n_s = BATCH * HEADLINE["side"] ** 2
    rows = []
    for n_ch in TILED_CHANNELS:
        prob = _Problem(n_ch, n_s, seed=n_ch + 1)
        ref = prob.reference()
        flops = 2 * n_ch * n_ch * n_s
        dgamma = cuda.device_array((n_ch, n_ch), np.float32)
        dbeta = cuda.device_array(n_ch, np.float32)
        runs = {"fused": _method_launcher("fused", prob, None, DEFAULT_BLOCK, cp)[0]}
        for tile in TILED_TILES:
            grid, threads, span = tiled_launch(n_ch, n_s, tile=tile, depth=tile)
            kernel = make_fused_tiled(tile, tile)

            def run(kernel=kernel, grid=grid, threads=threads, span=span, prob=prob,
                    dgamma=dgamma, dbeta=dbeta):
                _zero(dgamma, dbeta)
                kernel[grid, threads](prob.delta, prob.w, prob.d, dgamma, dbeta, span)
                return dgamma

            runs[f"fused_tiled {tile}x{tile}"] = run
        if cp is not None:
            runs["cublas"] = _cublas_gradient(cp, prob.delta, prob.w, prob.d)
        here = []
        for method, run in runs.items():
            out = run()
            got = out.copy_to_host() if hasattr(out, "copy_to_host") else cp.asnumpy(out)
            err = _rel_err(got, ref)
            if err > 1e-4:
                raise AssertionError(f"{method} is wrong at N={n_ch}: relative error {err:.2e}")
            t = _time(run, 3 * 4 * n_ch * n_s)
            here.append({"n_ch": n_ch, "samples": n_s, "method": method, "ms": t.median_ms,
                         "spread": t.spread, "tflops": bench.tflops(flops, t.median_ms),
                         "rel_err": err})
            progress(f"N={n_ch:4d} {method:18s} {t.median_ms:8.3f} ms "
                     f"({here[-1]['tflops']:.2f} TFLOP/s)")
        ms = {r["method"]: r["ms"] for r in here}
        for r in here:
            r["x_fused"] = ms["fused"] / r["ms"]
            r["x_cublas"] = ms["cublas"] / r["ms"] if "cublas" in ms else None
        rows += here
    return rows


DETERMINISM_RUNS = 20


@experiment("gdn_determinism", chapter="gdn",
            title="The same dgamma computed 20 times (N=64, 128x128, batch 4): distinct results "
                  "of the fused kernel's float atomics against a fixed-order reduction",
            units={"max_rel_diff": "relative", "rel_err": "relative"})
def determinism_experiment(progress):
    n_ch, side = HEADLINE["n_ch"], HEADLINE["side"]
    n_s = BATCH * side * side
    prob = _Problem(n_ch, n_s, seed=7)
    ref = prob.reference()
    raw = cuda.device_array((n_ch * n_ch, n_s), np.float32)
    cp = _cupy()
    rows = []
    for method in ("fused", "registers", "cublas"):
        run, why_not = _method_launcher(method, prob, raw, DEFAULT_BLOCK, cp)
        if run is None:
            rows.append({"method": method, "runs": 0, "note": why_not})
            continue
        sums = cuda.device_array(n_ch * n_ch, np.float32)
        results = []
        for _ in range(DETERMINISM_RUNS):
            out = run()
            if method == "registers":
                make_row_sum(DEFAULT_BLOCK)[n_ch * n_ch, DEFAULT_BLOCK](raw, sums)
                got = sums.copy_to_host().reshape(n_ch, n_ch)
            else:
                got = out.copy_to_host() if method == "fused" else cp.asnumpy(out)
            results.append(np.array(got, np.float32))
        distinct = len({r.tobytes() for r in results})
        first = results[0].astype(np.float64)
        diff = max(float(np.abs(r.astype(np.float64) - first).max()) for r in results)
        errs = [_rel_err(r, ref) for r in results]
        rows.append({"method": method, "runs": DETERMINISM_RUNS, "distinct_results": distinct,
                     "max_rel_diff": diff / float(np.abs(first).max()),
                     "rel_err": float(np.median(errs)), "rel_err_max": max(errs)})
        progress(f"{method}: {distinct} distinct results of {DETERMINISM_RUNS}")
    return rows


@experiment("gdn_reduction", chapter="gdn",
            title="Reducing the raw contributions (N=64, 128x128, batch 4): a loop of launches "
                  "against one batched launch, ours and CuPy's",
            units={"ms": "ms", "gbps": "GB/s", "pct_copy": "% of copy"})
def reduction_experiment(progress):
    cp = _cupy()
    block = DEFAULT_BLOCK
    n_ch, n_s = HEADLINE["n_ch"], BATCH * HEADLINE["side"] ** 2
    prob = _Problem(n_ch, n_s, seed=3)
    raw = cuda.device_array((n_ch * n_ch, n_s), np.float32)
    launch_raw("registers", prob.delta, prob.w, prob.d, raw, block=block)
    ref = raw.copy_to_host().astype(np.float64).sum(axis=1)
    sums = cuda.device_array(n_ch * n_ch, np.float32)
    row_sum = make_row_sum(block)
    nbytes = moved_bytes("reduce", n_ch, n_s)
    rows = []

    nan_sums = np.full(n_ch * n_ch, np.nan, np.float32)
    poison = [lambda: sums.copy_to_device(nan_sums)]  # every method must write its result

    def add(method, launches, fn, result):
        for p in poison:
            p()
        t = bench.time_kernel(fn, min_repeat=5, min_time=0.1, hide_launch=False)  # see _time
        row = {"method": method, "launches": launches, **bench.bandwidth_row(nbytes, t),
               "rel_err": _rel_err(result(), ref)}
        if row["rel_err"] > 1e-4:
            raise AssertionError(f"{method}: relative error {row['rel_err']:.2e}")
        rows.append(row)
        progress(f"{method:40s} {t.median_ms:8.3f} ms  {row['gbps']:.0f} GB/s")

    views = [raw[k * n_ch:(k + 1) * n_ch] for k in range(n_ch)]
    out_views = [sums[k * n_ch:(k + 1) * n_ch] for k in range(n_ch)]

    def loop():
        for k in range(n_ch):
            row_sum[n_ch, block](views[k], out_views[k])

    add("row_sum kernel, a loop of N launches", n_ch, loop, sums.copy_to_host)
    add("row_sum kernel, one batched launch", 1,
        lambda: row_sum[n_ch * n_ch, block](raw, sums), sums.copy_to_host)
    ladder = _reduce_ladder_loop(raw, n_ch * n_ch, n_s)
    if ladder is None:
        rows.append({"method": "reduce ladder's best rung, one call per row", "ms": None,
                     "note": "skipped: the reduce chapter's plan() API is not available"})
    else:
        loop_rows, all_rows, per_call = ladder
        add("reduce ladder's v8 plan, a loop of N*N calls", per_call * n_ch * n_ch, loop_rows,
            all_rows)
    if cp is not None:
        craw = cp.asarray(raw)
        ones = cp.ones(n_s, dtype=cp.float32)
        out = cp.empty(n_ch * n_ch, dtype=cp.float32)
        poison.append(lambda: out.fill(np.nan))

        def gemv_loop():
            for k in range(n_ch):
                cp.matmul(craw[k * n_ch:(k + 1) * n_ch], ones, out=out[k * n_ch:(k + 1) * n_ch])

        add("cuBLAS gemv (raw @ ones), a loop of N calls", n_ch, gemv_loop,
            lambda: cp.asnumpy(out))
        add("cuBLAS gemv (raw @ ones), one call", 1,
            lambda: cp.matmul(craw, ones, out=out), lambda: cp.asnumpy(out))
        add("CuPy raw.sum(axis=1)", 1, lambda: cp.sum(craw, axis=1, out=out),
            lambda: cp.asnumpy(out))
        cublas, handle = _cublas_module(), cp.cuda.device.get_cublas_handle()
        # the calls below run on the handle's stream with scalars read from the host: set both
        cublas.setStream(handle, cp.cuda.get_current_stream().ptr)
        cublas.setPointerMode(handle, _POINTER_MODE_HOST)
        article = _article_cublas_calls(cublas, handle, craw, ones, out, n_ch, n_s, cp)
        for method, launches, fn in article:
            add(method, launches, fn, lambda: cp.asnumpy(out))
    else:
        rows.append({"method": "CuPy (cuBLAS, CUB)", "ms": None, "note": "skipped: no CuPy"})
    return rows


# cuBLAS's enums (cublas_api.h): no transpose, transpose; scalars read from host memory.
_OP_N, _OP_T = 0, 1
_POINTER_MODE_HOST = 0


def _address(a) -> int:
    """The address of ``a``'s first element: a CuPy array's device pointer, a NumPy array's
    host pointer."""
    ptr = getattr(getattr(a, "data", None), "ptr", None)
    return int(ptr) if ptr is not None else int(a.ctypes.data)


def _cublas_module():
    """CuPy's thin binding of the cuBLAS C API (one Python function per routine)."""
    from cupy_backends.cuda.libs import cublas

    return cublas


def _article_cublas_calls(cublas, handle, raw, ones, out, n_ch: int, n_s: int, xp):
    """The article's comparison of the last step, called as cuBLAS's C API is:
    ``(method, launches, run)`` for a loop of ``n_ch`` matrix-vector products (one output row
    of the gradient each), one ``cublasSgemmBatched`` over arrays of pointers (the routine
    the article names), and one ``cublasSgemmStridedBatched`` (the same batch by strides).

    ``raw`` is row-major ``(n_ch * n_ch, n_s)``: output row ``k``'s ``n_ch`` rows start at
    ``raw + k * n_ch * n_s`` and, read column-major as cuBLAS reads, form an ``n_s x n_ch``
    matrix with leading dimension ``n_s``; its transpose times ``ones`` is that row's sums.
    The article's loop called ``cublasSsbmv`` (a symmetric banded matrix-vector product),
    which cannot sum a matrix's rows; ``cublasSgemv`` is the general matrix-vector product
    that does. ``xp``: the array module that holds the pointer arrays (CuPy; NumPy in the
    test's stand-in)."""
    alpha = np.ones(1, np.float32)
    beta = np.zeros(1, np.float32)
    a, b = alpha.ctypes.data, beta.ctypes.data
    base, x, y = _address(raw), _address(ones), _address(out)
    block_bytes = n_ch * n_s * 4

    def gemv_loop():
        for k in range(n_ch):
            cublas.sgemv(handle, _OP_T, n_s, n_ch, a, base + k * block_bytes, n_s, x, 1, b,
                         y + k * n_ch * 4, 1)

    pointers = xp.asarray(np.array([[base + k * block_bytes for k in range(n_ch)],
                                    [x] * n_ch, [y + k * n_ch * 4 for k in range(n_ch)]],
                                   dtype=np.uint64))

    def batched():
        cublas.sgemmBatched(handle, _OP_T, _OP_N, n_ch, 1, n_s, a, _address(pointers[0]), n_s,
                            _address(pointers[1]), n_s, b, _address(pointers[2]), n_ch, n_ch)

    def strided():
        cublas.sgemmStridedBatched(handle, _OP_T, _OP_N, n_ch, 1, n_s, a, base, n_s,
                                   n_ch * n_s, x, n_s, 0, b, y, n_ch, n_ch, n_ch)

    for fn in (gemv_loop, batched, strided):  # cuBLAS holds only their addresses
        fn.keeps_alive = (alpha, beta, pointers)
    return [("cuBLAS sgemv, a loop of N calls (the article's loop)", n_ch, gemv_loop),
            ("cuBLAS sgemmBatched, one call (the article's batched call)", 1, batched),
            ("cuBLAS sgemmStridedBatched, one call", 1, strided)]


def _reduce_ladder_loop(raw, n_rows, n_s):
    """The reduce chapter's best rung (its ``plan("v8", n)``) called once per row of ``raw``.

    Returns ``(run, result, launches_per_call)``, or None when the reduce module lacks that
    API. ``result`` re-runs the loop, gathering every row's sum (for the correctness check).
    """
    try:
        from . import reduce as reduce_chapter

        p = reduce_chapter.plan("v8", n_s)
    except Exception:  # the chapter is missing or its API changed: report, do not crash
        return None
    rows = [raw[r] for r in range(n_rows)]

    def run():
        for row in rows:
            p(row)

    def result():
        return np.array([p(row).copy_to_host()[0] for row in rows], np.float32)

    per_call = sum(1 for _, grid, _ in getattr(p, "launches", []) if grid) or 1
    return run, result, per_call


def headline_table(res):
    """The case study's table (list of dicts) from a ``gdn_algorithms`` result."""
    v.result(res, "res")
    for _c in ("n_ch", "side", "method"):
        v.column(res, _c, "res column")
    rows = res.select(n_ch=HEADLINE["n_ch"], side=HEADLINE["side"])
    table = []
    for r in rows:
        table.append({k: r.get(k) for k in ("method", "launches", "allocated_mb", "moved_mb",
                                             "ms", "floor_ms", "pct_floor", "gbps", "reduce_ms",
                                             "total_ms", "speedup_vs_previous", "rel_err",
                                             "note")})
    return table


def launch_bound_table(res) -> list[dict]:
    """Per sweep point of ``gdn_algorithms`` where both ran: algorithm 1's and algorithm 2's
    whole gradient (``replicate_ms``, ``per_channel_ms``), algorithm 2's time per launch
    against its floor per launch (its must-move bytes at copy speed, per launch), and which
    of the two was faster."""
    v.result(res, "res")
    for c in ("n_ch", "side", "method", "ms", "total_ms", "floor_ms", "launches", "moved_mb"):
        v.column(res, c, "res column")
    table = []
    for n_ch, side in sorted({(r["n_ch"], r["side"]) for r in res.rows}):
        by = {r["method"]: r for r in res.select(n_ch=n_ch, side=side)}
        one, two = by.get("replicate"), by.get("per_channel")
        if not (one and two and one.get("total_ms") and two.get("total_ms")):
            continue  # algorithm 1 did not fit, or a method was not measured here
        table.append({
            "n_ch": n_ch, "side": side, "replicate_moved_mb": one["moved_mb"],
            "replicate_ms": one["total_ms"], "per_channel_ms": two["total_ms"],
            "launches": two["launches"],
            "us_per_launch": 1e3 * two["ms"] / two["launches"],
            "floor_us_per_launch": 1e3 * two["floor_ms"] / two["launches"],
            "faster": "per_channel" if two["total_ms"] < one["total_ms"] else "replicate"})
    return table


def show_launch_bound(res) -> list[dict]:
    """Show :func:`launch_bound_table`, with a count of the points each algorithm won under
    it; return the table."""
    from ..records import Result

    table = launch_bound_table(res)
    if not table:
        raise ValueError("res has no sweep point where both replicate and per_channel ran: "
                         "pass the gdn_algorithms result.")
    slower = sum(r["faster"] == "replicate" for r in table)
    per = [r["us_per_launch"] for r in table]
    note = (f"per_channel was slower than replicate at {slower} of {len(table)} points; its "
            f"time per launch ranged from {min(per):.0f} to {max(per):.0f} us, its floor per "
            f"launch from {min(r['floor_us_per_launch'] for r in table):.1f} to "
            f"{max(r['floor_us_per_launch'] for r in table):.1f} us.")
    Result("gdn_algorithms (algorithms 1 and 2 over the sweep)", table, res.meta,
           res.source).show(note=note)
    return table


def _check_gdn_res(res, *columns):
    v.result(res, "res")
    for c in columns:
        v.column(res, c, "res column")
    return res


def determinism_summary(res) -> dict:
    """Print, per method of ``gdn_determinism``, how many distinct results its runs gave,
    how far apart they lie and their error against float64; return the rows by method."""
    _check_gdn_res(res, "method", "runs", "distinct_results", "max_rel_diff", "rel_err")
    by = {r["method"]: r for r in res.rows if r.get("runs")}
    lines = [f"{m}: {r['distinct_results']} distinct result(s) in {r['runs']} runs on the same "
             f"input; runs differ by up to {r['max_rel_diff']:.1e} of the largest entry; "
             f"median error against float64 {r['rel_err']:.1e}" for m, r in by.items()]
    lines.append(f"({res.label})")
    print("\n".join(lines))
    return by


def input_grad_summary(res) -> dict:
    """Print, per channel count of ``gdn_input_grad``, Numba's time against CuPy's and
    Numba's bandwidth against the copy ceiling; return ``{n_ch: {method: row}}``."""
    _check_gdn_res(res, "n_ch", "method", "ms", "gbps", "tflops")
    copy = res.ceilings.get("copy_gbps")
    out = {}
    for r in res.rows:
        out.setdefault(r["n_ch"], {})[r["method"].split()[0]] = r
    lines = []
    for n_ch, m in sorted(out.items()):
        nb = m.get("numba")
        line = (f"N={n_ch}: Numba {nb['ms']:.3f} ms ({nb['gbps']:.0f} GB/s"
                + (f", {100 * nb['gbps'] / copy:.0f}% of the copy ceiling" if copy else "")
                + f"; {nb['tflops']:.2f} TFLOP/s in the product)")
        if "cupy" in m:
            line += f", CuPy {m['cupy']['ms']:.3f} ms: Numba takes {nb['ms'] / m['cupy']['ms']:.2f}x"
        lines.append(line)
    lines.append(f"({res.label})")
    print("\n".join(lines))
    return out


# --------------------------------------------------------------------------- exercises

# Shapes (N, S) that expose tail, row and channel mistakes; with blocks of 32 and 64
# threads they cover one partial block, exact blocks, and block + 1.
_CHECK_SHAPES = ((1, 1), (2, 31), (3, 32), (2, 33), (3, 65), (1, 100))


def _check_problem(n_ch, n_s, seed):
    w, delta, gamma, beta = random_problem(n_ch, n_s, seed)
    _, d = reference_forward(w, gamma, beta)
    return w, delta, d.astype(np.float32)


@ex.refuses_stubs
def check_registers(kernel) -> ex.Report:
    """Check algorithm 4, ``kernel(delta, w, d, raw)`` on grid ``(ceil(S/block), N)``.

    ``raw[k*N + j, s]`` must equal ``-1/2 delta[k,s] w[k,s] d[k,s]**3 w[j,s]**2``, with the
    three row-k values held in registers (no shared memory, no barrier).
    """
    chk = ex.Checker("algorithm 4: a block row per row of gamma, values in registers")
    if not chk.is_kernel(kernel):
        return chk.report()
    chk.avoids(kernel, "numba.cuda:shared.array",
               why="the point of algorithm 4 is to keep delta_k, w_k and D_k in registers: "
                   "remove the shared arrays.")
    chk.avoids(kernel, "numba.cuda:syncthreads",
               why="with every thread reading only its own element, no barrier is needed: "
                   "remove cuda.syncthreads().")
    w, delta, d = _check_problem(3, 37, 5)
    if not ex.preflight(chk, kernel, (2, 3), 32, delta, w, d, ex.poisoned((9, 37))):
        return chk.report()
    for seed in ex.seeds():
        for block in (32, 64):
            for n_ch, n_s in _CHECK_SHAPES[: (6 if seed == 0 else 3)]:
                with chk.case(f"N={n_ch}, S={n_s}, block={block}", seed=seed):
                    w, delta, d = _check_problem(n_ch, n_s, seed * 100 + n_s)
                    raw = ex.poisoned((n_ch * n_ch, n_s))
                    kernel[(math.ceil(n_s / block), n_ch), block](delta, w, d, raw)
                    chk.compare(raw, reference_raw(w, delta, d), rtol=1e-5, atol=1e-6,
                                what="raw")
    return chk.report()


@ex.refuses_stubs
def check_beta_grad(kernel) -> ex.Report:
    """Check ``kernel(delta, w, d, dbeta)`` launched ``[N, block]`` (block a power of two).

    ``dbeta[k] = sum_s -1/2 delta[k,s] w[k,s] d[k,s]**3``: one block per channel must
    cover all S samples (a block-stride loop) and reduce its threads' partial sums.
    """
    chk = ex.Checker("dL/dbeta: one block per channel, block-stride loop, tree reduction",
                     race_note=True)
    if not chk.is_kernel(kernel):
        return chk.report()
    chk.calls(kernel, "numba.cuda:syncthreads",
              why="a shared-memory tree needs cuda.syncthreads() between its steps (the "
                  "simulator may not show the race a GPU would).")
    w, delta, d = _check_problem(2, 37, 5)
    if not ex.preflight(chk, kernel, 2, 32, delta, w, d, ex.poisoned(2)):
        return chk.report()
    for seed in ex.seeds():
        for block in (32, 64):
            sizes = ex.sizes_around(block) if seed == 0 else (33, block + 1)
            for n_s in sizes:
                n_ch = 3 if n_s < 500 else 1
                with chk.case(f"N={n_ch}, S={n_s}, block={block}", seed=seed):
                    w, delta, d = _check_problem(n_ch, n_s, seed * 100 + n_s)
                    dbeta = ex.poisoned(n_ch)
                    kernel[n_ch, block](delta, w, d, dbeta)
                    ref = reference_factor(w, delta, d).sum(axis=1)
                    chk.compare(dbeta, ref, rtol=1e-4, atol=1e-4, what="dbeta")
    _check_beta_tree(chk, kernel)
    return chk.report()


def _check_beta_tree(chk, kernel, block: int = 32) -> None:
    """In the emulator, one block of ``block`` threads over a channel: its partial sums must
    meet in shared memory (a tree), and the block must write its channel's dbeta a few times
    at most, not once per thread (an atomic per thread into one address is no tree)."""
    from .. import emulator

    w, delta, d = _check_problem(1, 3 * block + 5, 11)
    with chk.case(f"the block's reduction, one block of {block} threads (emulator)"):
        name = emulator._param_names(kernel, 4)[3]
        run = emulator.launch(kernel, 1, block, delta, w, d, ex.poisoned(1))
        writes = sum(1 for e in run.events if e.space == "global" and e.array == name
                     and e.kind in ("store", "atomic"))
        shared = sum(1 for e in run.events if e.space == "shared" and e.kind == "load")
        if writes > 2:
            chk.fail(f"the block wrote `{name}` {writes} times (stores and atomics): each "
                     "thread adds its partial sum to the channel's result, one after another. "
                     "Reduce the partial sums in shared memory with a tree, then write once.")
        elif shared == 0:
            chk.fail("the partial sums never meet in shared memory: reduce them with a "
                     "shared-memory tree (chapter 6), then write the channel's result once.")


@ex.refuses_stubs(solved_by=("moved_bytes", "memory_table"))
def check_moved_bytes(fn) -> ex.Report:
    """Check ``fn(method, n_ch, n_samples)``: the DRAM bytes each algorithm must move."""
    chk = ex.Checker("bytes each algorithm must move")
    rng = ex.case_rng(11)
    cases = [(m, 64, 65536) for m in ALGORITHMS] + [
        (m, int(rng.integers(2, 300)), int(rng.integers(1, 10**6))) for m in ALGORITHMS]
    for method, n_ch, n_s in cases:
        with chk.case(f"{method}, N={n_ch}, S={n_s}"):
            got = fn(method, n_ch, n_s)
            want = moved_bytes(method, n_ch, n_s)
            if not isinstance(got, (int, float, np.integer, np.floating)):
                chk.fail(f"returned {type(got).__name__}; return a number of bytes.")
                continue
            if abs(got - want) > 1e-9 * want:
                ratio = got / want
                hint = ""
                if abs(ratio - 0.25) < 1e-6 or abs(ratio - 4) < 1e-6:
                    hint = ": count bytes, not elements (float32 is 4 bytes)"
                elif method == "per_channel" and got < want:
                    hint = ": each of the N launches reads all of w again"
                elif method == "replicate" and got < want:
                    hint = (": the replicated matrices are written once and read once; "
                            "count both")
                chk.fail(f"got {got:.6g} bytes, expected {want:.6g} (x{ratio:.3g}){hint}.")
    return chk.report()
