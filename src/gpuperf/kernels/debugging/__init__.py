"""Profiling, sanitizing and debugging: kernels with planted bugs, what the tools say, checkers.

Kernels
-------
``smooth_racy``: a three-point average (``out[i] = (x[i-1] + x[i] + x[i+1]) / 3``, the ends
clamped) through a shared tile with a halo, with the barrier between filling the tile and
reading it missing: a thread reads its neighbours' slots before they have written them.
``smooth``: the same with the barrier.
``copy_unguarded``: ``out[i] = x[i]`` with no bounds test, launched on whole blocks: the
threads past the end read and write out of bounds.

Experiments (in ``gpuperf.profiling``, which runs the tools on kernels of every chapter)
--------------------------------------------------------------------------------------
``profiling_sanitizer``: compute-sanitizer's racecheck, memcheck and synccheck on the planted
bugs (and on the fixed smoothing kernel), with whether the result came out right anyway.
``profiling_speed_of_light``: Nsight Compute's Speed-of-Light percentages and the warp stall
reasons for eight course kernels: the data for "what limits this kernel?".

Exercises
---------
``check_limiters(answer)``: what limits each kernel of ``profiling_speed_of_light``.
``check_smooth(kernel)``: the smoothing kernel with its race fixed.
``check_profile_command(fn)``: the Nsight Compute command line for a Numba kernel.

Files
-----
``kernels.py``: the kernels. ``races.py``:
``find_races``, the emulator's racecheck. ``checks.py``: ``limiter``, the checkers and
``speed_of_light`` (the record with the page's kernel labels).
``figures.py``: ``plot_speed_of_light``. ``ptx.py``: ``PTX_TARGETS``.
"""

from __future__ import annotations

from .checks import (
    BUSY_PCT,
    KERNEL_WORDS,
    LIMITERS,
    check_limiters,
    check_profile_command,
    check_smooth,
    limiter,
    smooth_reference,
    speed_of_light,
)
from .figures import plot_speed_of_light
from .kernels import (
    SMOOTH_BLOCK,
    SMOOTH_TILE,
    copy_unguarded,
    smooth,
    smooth_grid,
    smooth_racy,
)
from .ptx import PTX_TARGETS
from .races import find_races

__all__ = [
    # kernels.py
    "SMOOTH_BLOCK", "SMOOTH_TILE", "smooth_racy", "smooth", "copy_unguarded", "smooth_grid",
    # races.py
    "find_races",
    # checks.py
    "smooth_reference", "LIMITERS", "BUSY_PCT", "limiter", "check_limiters", "check_smooth",
    "check_profile_command", "KERNEL_WORDS", "speed_of_light",
    # figures.py
    "plot_speed_of_light",
    # ptx.py
    "PTX_TARGETS",
]
