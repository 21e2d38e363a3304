"""The order of the additions: float32 sums computed on the CPU in one thread's order and in
v2's tree order, and their relative errors against float64."""

from __future__ import annotations

import math

import numpy as np

from gpuperf import validate

UNIT_ROUNDOFF_F32 = 2.0**-24  # float32: a sum's rounding error is at most this, relatively
ERROR_SIZES = tuple(2**k for k in range(8, 25, 2))


def tree_sum_f32(x, block: int = 256) -> float:
    """``x`` summed in float32 in v2's order: blocks of ``block`` elements, each halved until one
    value is left (element ``t`` adds element ``t + s`` for ``s`` = block/2, block/4, ... 1); the
    partial sums are added the same way, until one is left. Zeros pad the last block (adding
    zero changes no float). The GPU's sequential-addressing rungs add in this order."""
    block = validate.positive_int(block, "block", minimum=2)
    if block & (block - 1):
        raise ValueError(f"block must be a power of two (the tree halves it), not {block}.")
    v = np.asarray(x, dtype=np.float32).ravel()
    if v.size == 0:
        raise ValueError("x is empty: there is nothing to sum.")
    while v.size > 1:
        v = np.concatenate([v, np.zeros(-v.size % block, np.float32)]).reshape(-1, block)
        s = block // 2
        while s >= 1:
            v[:, :s] += v[:, s:2 * s]
            s //= 2
        v = v[:, 0].copy()
    return float(v[0])


def sequential_sum_f32(x) -> float:
    """``x`` summed in float32 one element after another, as one thread's loop does."""
    v = np.asarray(x, dtype=np.float32).ravel()
    if v.size == 0:
        raise ValueError("x is empty: there is nothing to sum.")
    return float(np.cumsum(v, dtype=np.float32)[-1])


def summation_errors(sizes=ERROR_SIZES, *, block: int = 256, seed: int = 0) -> list[dict]:
    """The relative error of a float32 sum, by the order of its additions, computed here on the
    CPU (float32 addition rounds the same way on every IEEE machine): one value after another,
    as one thread adds, against v2's tree, for uniform values in [0.5, 1.5) of each size in
    ``sizes``, each against the float64 sum of the same float32 values."""
    sizes = [validate.positive_int(n, f"sizes[{i}]", maximum=2**26)
             for i, n in enumerate(validate.sequence(sizes, "sizes"))]
    rng = np.random.default_rng(validate.positive_int(seed, "seed", minimum=0))
    rows = []
    for n in sizes:
        x = (rng.random(n, dtype=np.float32) + np.float32(0.5)).astype(np.float32)
        ref = float(np.sum(x, dtype=np.float64))
        for order, value in (("sequential", sequential_sum_f32(x)),
                             (f"tree of {block}", tree_sum_f32(x, block))):
            rows.append({"n": n, "order": order, "rel_error": abs(value - ref) / ref,
                         "bound": (n - 1 if order == "sequential"
                                   else math.ceil(math.log2(n))) * UNIT_ROUNDOFF_F32})
    return rows
