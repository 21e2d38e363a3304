"""Float64 references of GDN's forward and backward passes (the ground truth the kernels
are checked against), the ``(N, S)`` layout (``channel_major``) and random problems."""

from __future__ import annotations

import numpy as np

from gpuperf import validate as v

from .kernels import MAX_GRID_Y


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


def check_energy_terms(gamma, beta) -> None:
    """GDN's energy ``beta_i + sum_j gamma_ij w_j^2`` sits under a square root: refuse a beta
    that is not positive, a gamma that is negative, or either not finite (NumPy or device
    arrays; both are small, N and N x N)."""
    values = {}
    for name, a in (("gamma", gamma), ("beta", beta)):
        a = a.copy_to_host() if hasattr(a, "copy_to_host") else np.asarray(a)
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} holds NaN or infinity; GDN needs finite {name}.")
        values[name] = a
    if values["beta"].size and values["beta"].min() <= 0:
        raise ValueError(f"beta must be > 0 (the energy under the square root must stay "
                         f"positive); its smallest value is {values['beta'].min():g}. Clip it, "
                         "e.g. np.maximum(beta, 1e-6).")
    if values["gamma"].size and values["gamma"].min() < 0:
        raise ValueError(f"gamma must be >= 0 (the energy under the square root must stay "
                         f"positive); its smallest value is {values['gamma'].min():g}. Clip it, "
                         "e.g. np.maximum(gamma, 0).")


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
    check_energy_terms(gamma, beta)
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
