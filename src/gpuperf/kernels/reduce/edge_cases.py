"""The edge battery of the one-launch reductions: inputs on which they can go wrong where
random floats do not (subnormals, ties, NaNs, -inf, signed zeros, misaligned starts)."""

from __future__ import annotations

import math

import numpy as np
from numba import cuda  # gpuperf/__init__ has already chosen the mode

from gpuperf import validate
from gpuperf.mode import SIMULATOR

from .argmax_kernel import _argmax_calls
from .kernels import DEFAULT_BLOCK, _check_block
from .single_pass import _block_atomic_calls, _single_pass_calls, _warp_atomic_calls

# The grid of the edge battery: few blocks, so that every case spans several of them.
EDGE_GRID = 4
_TINY = np.float32(np.finfo(np.float32).smallest_subnormal)


def _edge_cases(kind: str, n: int) -> list[tuple[str, np.ndarray, float]]:
    """``(name, x, want)`` for ``edge_case_failures``: inputs on which a one-launch reduction
    can go wrong where random floats do not, each with NumPy's answer."""
    if kind == "sum":
        # multiples of the smallest subnormal: every partial sum is exact while it stays
        # below 2^24 of them, so any order of additions gives NumPy's sum exactly
        steps = (np.arange(n) % 64 + 1).astype(np.float32) * _TINY
        cases = [("subnormal partials", np.full(n, _TINY, np.float32)), ("subnormal steps", steps),
                 ("signed zeros", np.where(np.arange(n) % 2, -0.0, 0.0).astype(np.float32)),
                 ("integers", (np.arange(n) % 7 - 3).astype(np.float32))]
        return [(name, x, float(np.sum(x, dtype=np.float64))) for name, x in cases]
    ramp = (np.arange(n) + 1).astype(np.float32) * _TINY  # subnormal, exact, increasing
    nan_late = np.zeros(n, np.float32)
    nan_late[[n // 2, n - 2]] = np.nan
    zeros = np.full(n, -0.0, np.float32)
    zeros[n - 1] = 0.0  # equal to -0.0: the first index wins
    cases = [("subnormal maxima", ramp), ("subnormal maxima, reversed", ramp[::-1].copy()),
             ("equal everywhere", np.ones(n, np.float32)), ("NaNs", nan_late),
             ("all -inf", np.full(n, -np.inf, np.float32)), ("signed zeros", zeros)]
    return [(name, x, int(np.argmax(x))) for name, x in cases]


def edge_case_failures(kind: str = "argmax", width: int = 4, block: int = DEFAULT_BLOCK,
                       n: int | None = None) -> list[str]:
    """The edge cases a one-launch reduction (``kind``: ``"argmax"``, ``"sum"`` (the single
    pass), ``"warp atomics"`` (``make_warp_atomic``) or ``"block atomics"``
    (``make_per_block_atomic``; for both atomics ``width`` does not apply)) gets wrong on
    this GPU (the simulator without one), as names with the start offset: subnormal maxima and
    partials (an L2 atomic used to read them flushes them to zero), ties, NaNs, all -inf and
    signed zeros, each at start offsets 0 to 3, over ``EDGE_GRID`` blocks of ``block``
    threads. An empty list: every answer is NumPy's (sums exact in float64)."""
    kind = validate.choice(kind, "kind", ("argmax", "sum", "warp atomics", "block atomics"))
    width = validate.choice(validate.positive_int(width, "width"), "width", (1, 4))
    block = _check_block("v8", block)
    n = validate.positive_int(n if n is not None else 4 * EDGE_GRID * block * 3 + 3, "n",
                              maximum=2**18)  # sums of the subnormal inputs stay exact
    failures = []
    for name, x, want in _edge_cases("argmax" if kind == "argmax" else "sum", n):
        for offset in range(4):
            padded = np.zeros(n + offset, np.float32)
            padded[offset:] = x
            d_x = padded[offset:] if SIMULATOR else cuda.to_device(padded)[offset:]
            if kind == "sum":
                run, fetch, _ = _single_pass_calls(d_x, n, EDGE_GRID, block, width)
            elif kind == "warp atomics":
                run, fetch, _ = _warp_atomic_calls(d_x, n, EDGE_GRID, block)
            elif kind == "block atomics":
                run, fetch, _ = _block_atomic_calls(d_x, n, EDGE_GRID, block)
            else:
                run, fetch, _ = _argmax_calls(d_x, n, EDGE_GRID, block, width)
            run()
            got = fetch()
            if got != want or math.copysign(1.0, got) != math.copysign(1.0, want):
                failures.append(f"{name} (offset {offset}): got {got!r}, NumPy {want!r}")
    return failures
