"""Chapter 1, "Measuring GPU performance": copies, the grid-stride loop, and timing.

``gp.gridstride`` (this package) re-exports every public name of its modules:

* ``kernels.py``: ``copy_one_per_thread``, ``copy_grid_stride``, ``saxpy_grid_stride`` and
  their host side (``launch_config``, ``copy``): the code the chapter shows.
* ``roofs.py``: read kernels for the L2's, shared memory's and the L1's read roofs on
  chapter 4's roofline (``read_passes``, ``ONCHIP_READS``).
* ``experiments.py``: ``gridstride_timing``, ``gridstride_launch_sweep``,
  ``gridstride_size_sweep``, ``gridstride_ceilings``, ``gridstride_flush`` (the writing
  against the read-only L2 flush), with ``measure_launch``, ``compare_call_model`` and
  ``flush_comparison``.
* ``figures.py``: ``plot_size_sweep``, ``draw_grid_stride``.
* ``checks.py``: the exercise checkers (``check_saxpy``, ``check_bandwidth_formula``,
  ``check_call_time``).
* ``profiling.py``: ``profiling_launch_occupancy`` (Nsight Compute: the warps the copies'
  launches keep resident).
* ``ptx.py``: ``PTX_TARGETS``, the kernels tests/test_ptx.py compiles.
"""

from gpuperf.mode import SIMULATOR

from .checks import (
    SAXPY_SPEED_N,
    SAXPY_SPEED_TARGET,
    check_bandwidth_formula,
    check_call_time,
    check_saxpy,
)
from .experiments import (
    N_BIG,
    call_launch_part,
    ceilings_experiment,
    compare_call_model,
    flush_comparison,
    flush_experiment,
    launch_sweep_experiment,
    measure_launch,
    size_sweep_experiment,
    timing_experiment,
)
from .figures import draw_grid_stride, plot_size_sweep
from .kernels import (
    METHODS,
    copy,
    copy_grid_stride,
    copy_one_per_thread,
    launch_config,
    saxpy_grid_stride,
)
from .profiling import OCCUPANCY_METRICS, PROFILED_LAUNCHES, launch_occupancy_experiment
from .ptx import PTX_TARGETS
from .roofs import (
    ONCHIP_QUADS,
    ONCHIP_READS,
    ONCHIP_STEP,
    ONCHIP_UNROLL,
    ONCHIP_WORDS,
    l1_read4,
    l1_read16,
    mixed_read16,
    onchip_expected,
    onchip_values,
    read_passes,
    read_step,
    shared_read4,
    shared_read16,
)

__all__ = [
    "launch_occupancy_experiment", "OCCUPANCY_METRICS", "PROFILED_LAUNCHES",
    "copy_one_per_thread", "copy_grid_stride", "saxpy_grid_stride", "copy", "launch_config",
    "check_saxpy", "check_bandwidth_formula", "check_call_time", "compare_call_model", "call_launch_part",
    "plot_size_sweep", "read_passes", "read_step", "shared_read4", "shared_read16", "l1_read4",
    "l1_read16", "mixed_read16", "ONCHIP_READS", "onchip_values", "onchip_expected", "SIMULATOR",
    # also public, outside the list above before the split
    "METHODS", "N_BIG", "ONCHIP_QUADS", "ONCHIP_STEP", "ONCHIP_UNROLL", "ONCHIP_WORDS",
    "PTX_TARGETS", "SAXPY_SPEED_N", "SAXPY_SPEED_TARGET", "ceilings_experiment",
    "draw_grid_stride", "launch_sweep_experiment", "measure_launch", "size_sweep_experiment",
    "timing_experiment", "flush_experiment", "flush_comparison",
]
