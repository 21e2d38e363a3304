"""The course's own racecheck, in the thread emulator (no GPU needed)."""

from __future__ import annotations

from gpuperf import exercises as ex
from gpuperf import validate as v

from .kernels import SMOOTH_BLOCK, smooth_grid


def find_races(kernel, n: int = 300, *, limit: int = 3) -> list[str]:
    """The course's own racecheck, with or without a GPU: run a smoothing ``kernel(x, out)``
    on ``n`` random floats in the thread emulator, recording every access, and return the
    data races it saw as plain sentences (an empty list: none)."""
    from gpuperf import emulator

    v.kernel(kernel, "kernel")
    n = v.positive_int(n, "n", maximum=1 << 14)
    x, out = ex.random_array(n, 7), ex.poisoned(n)
    run = emulator.launch(kernel, smooth_grid(n), SMOOTH_BLOCK, x, out)
    return run.describe_races(limit)
