"""Chapter "Thread coarsening": more work per thread, from the textbook kernel to SGEMM.

It builds on chapter 4 (``gpuperf.kernels.matmul``: ``Variant``, ``verify``, the models) through
that package's public names. ``gp.coarsening`` is this package; its files:

* ``kernels.py``: the textbook's coarsened matmul (``make_coarsened``), the vector add
  (``vecadd``, ``make_vecadd_coarsened``, ``vector_add``), the first register tiles
  (``make_regtile_scalar``, ``make_regtile_1d``) and their ``Variant``s.
* ``regtile.py``: register tiling with 16-byte loads, pipelined (``make_regtile``) and
  double-buffered (``make_regtile_double``).
* ``fast.py``: the double-buffered kernel's fast path alone (``make_regtile_fast``) and the
  edge kernels beside it; ``any_size.py``: ``FastMatmul``, which launches them for any shape,
  and ``fast_matmul``.
* ``variants.py``: the register tiles and the fast path as ``Variant``s, ``variant`` by
  version name, and ``matmul``.
* ``ptx.py``: registers, shared and local memory and occupancy (``resources``), grid
  ``waves``, SASS counts, and ``PTX_TARGETS`` (compiled by ``tests/test_ptx.py``).
* ``experiments.py``: the recorded experiments (``matmul_coarsen_sweep`` ... ``matmul_ladder``);
  ``summaries.py``: the readings printed from their results and the tuning table.
* ``profiling.py``: Nsight Compute on the ladder and chapter 4's kernels (``profiling_matmul``,
  ``profiling_matmul_roofline``, ``profiling_matmul_issue``) and ``issue_summary``.
* ``checks.py``: the exercise checkers; ``figures.py``: the factor plot and the explorers.
"""

# ruff: noqa: F401  (the re-exports below are this package's public names: gp.coarsening.<name>)

from __future__ import annotations

from .any_size import FastMatmul, fast_matmul
from .checks import (
    SPEED_FACTOR,
    SPEED_TILE,
    TILE_REUSE_CASES,
    check_best_factor,
    check_coarsened,
    check_grid_rounds,
    check_tile_reuse,
    compare_tile_reuse,
)
from .experiments import (
    CAP_FACTORS,
    DOUBLE_CONFIGS,
    FACTORS,
    FAST_PARTS,
    FAST_PARTS_SIZES,
    FAST_PATH_SIZES,
    NO_EDGE,
    REGTILE_1D_CONFIGS,
    REGTILE_CONFIGS,
    UNROLL_ABLATION_CAP,
    UNROLL_BKS,
    UNROLL_WARP_TILE,
    coarsen_cap_experiment,
    coarsen_sweep_experiment,
    double_buffer_experiment,
    fast_parts,
    fast_path_experiment,
    ladder_experiment,
    ladder_variants,
    regtile_1d_experiment,
    regtile_sweep_experiment,
    resources_experiment,
    unroll_experiment,
    unroll_variants,
    vecadd_coarsen_experiment,
)
from .fast import make_regtile_fast
from .figures import explore_coarsening, explore_regtile, measure_point, measure_regtile_point, plot_factor_sweep
from .kernels import (
    coarsened_variant,
    make_coarsened,
    make_regtile_1d,
    make_regtile_scalar,
    make_vecadd_coarsened,
    regtile_1d_variant,
    vecadd,
    vector_add,
)
from .profiling import (
    issue_summary,
    matmul_experiment,
    matmul_issue_experiment,
    matmul_roofline_experiment,
    regtile_1d_profile_experiment,
    sass_counts_experiment,
)
from .ptx import PTX_TARGETS, grid_blocks, inner_loop_mix, resources, sass_count, waves
from .regtile import K_STEPS, make_regtile, make_regtile_double
from .summaries import (
    cap_summary,
    double_buffer_summary,
    fast_path_summary,
    occupancy_limits,
    regtile_1d_summary,
    regtile_summary,
    show_tuning,
    tuning_table,
    unroll_summary,
    vecadd_summary,
)
from .variants import VERSIONS, fast_kernel_variant, fast_variant, matmul, no_edge_variant, regtile_variant, variant

__all__ = [
    "issue_summary", "matmul_experiment", "matmul_issue_experiment", "matmul_roofline_experiment",
    "sass_counts_experiment",
    "make_coarsened", "vecadd", "make_vecadd_coarsened", "make_regtile_scalar", "make_regtile",
    "coarsened_variant", "regtile_variant", "variant", "matmul", "vector_add", "resources",
    "waves", "grid_blocks", "ladder_variants", "measure_point", "measure_regtile_point",
    "explore_coarsening", "explore_regtile", "check_coarsened", "check_best_factor",
    "check_tile_reuse", "check_grid_rounds", "compare_tile_reuse", "make_regtile_double",
    "make_regtile_1d", "regtile_1d_variant",
    "REGTILE_1D_CONFIGS", "regtile_1d_summary", "tuning_table", "show_tuning", "sass_count", "cap_summary",
    "double_buffer_summary", "VERSIONS", "FACTORS", "REGTILE_CONFIGS", "CAP_FACTORS",
    "DOUBLE_CONFIGS",
]
