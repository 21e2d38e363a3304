"""The host wrappers of chapter 8's kernels, and the two kernels only they launch
(``make_forward`` for ``forward``, ``make_factor`` for ``input_grad``): they check the
arguments, choose the launch, and accept NumPy or device arrays."""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import cuda

from gpuperf import validate as v

from .kernels import (
    _MINUS_HALF,
    _ONE,
    DEFAULT_BLOCK,
    MAX_GRID_Y,
    make_beta_grad,
    make_fused,
    make_fused_tiled,
    make_input_grad,
    make_multiply,
    make_per_channel,
    make_registers,
    make_replicate,
    make_row_sum,
    make_shared,
    tiled_launch,
)
from .models import ALGORITHMS
from .references import check_energy_terms


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
    check_energy_terms(gamma, beta)
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
