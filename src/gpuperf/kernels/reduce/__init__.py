"""Chapter "The reduce ladder": summing a float32 vector, from one thread to the bandwidth limit.

Every rung turns ``n`` float32 values into one number, correct for every ``n >= 1``: the
prologue (one thread, atomics, a shared-memory tree with one atomic per block), then the
ladder ``v0`` .. ``v8`` of the reduce study notes (after NVIDIA's "Optimizing Parallel
Reduction in CUDA"), then one-launch variants (the single pass, warp atomics, argmax).

Where things are:

``kernels.py``        the prologue and the ladder's first rungs (``v0`` .. ``v3``), the constants
                      that name the rungs, and the block-size check every factory runs.
``warps.py``          ``v4`` .. ``v8``: the last warp, ``warp_sum``, the block reduce, 16-byte loads.
``host.py``           ``kernel_for``, :class:`Plan`, ``plan`` and ``reduce_sum``: launches, the
                      second stage, ``head_elements``.
``single_pass.py``    one launch: the single pass, warp atomics and their controls, and
                      ``reduce_single_pass``.
``argmax_kernel.py``  argmax in one launch (``make_argmax``, ``argmax``).
``ablation.py``       v8's three ingredients one at a time (``make_v8_ablation``, ``ablation_plan``).
``edge_cases.py``     the one-launch kernels' edge battery (``edge_case_failures``).
``ptx_tools.py``      PTX and resources (``ptx``, ``ptx_lines``, ``PTX_TARGETS``).
``inputs.py``         the chapter's inputs on the GPU (random and integer-valued vectors).
``races.py``          v4's race in the thread emulator (``emulate_races``).
``experiments.py``    the recorded experiments (``reduce_ladder``, ``reduce_prologue``, ...), registered
                      when the package is imported.
``profiling.py``      Nsight Compute on the first rungs (``profiling_reduce_shared``) and on
                      the atomics patterns (``profiling_reduce_atomics``, ``atomics_waves``).
``summaries.py``      what the notebooks print from those results (``show_rung``, ``*_summary``).
``rounding.py``       float32 rounding by the order of the additions, on the CPU.
``figures.py``        ``draw_rung``, ``plot_summation_errors``, ``plot_size_sweep`` and ``color_versions``.
``checks.py``         the exercise checkers (``check_sequential_max``, ``check_block_max``,
                      ``check_absmax``).

Host API: ``reduce_sum(x, version="v8", block=None, blocks=None) -> float`` and
``plan(version, n, block=..., blocks=...)`` (buffers allocated once, for timing).
"""

from gpuperf.vector import load_float4

from .ablation import ABLATION, ABLATION_CONFIGS, ablation_plan, make_v8_ablation
from .argmax_kernel import argmax, make_argmax, warp_argmax
from .checks import SPEED_NOISE_FLOOR, check_absmax, check_block_max, check_sequential_max
from .edge_cases import edge_case_failures
from .experiments import (
    POST_GRID,
    SINGLE_PASS_SIZES,
    STUDY_NOTES_V100,
    TIMING_METHODS,
    argmax_experiment,
    atomics_per_call,
    block_sweep_experiment,
    grid_sweep_experiment,
    l2_resident_experiment,
    ladder_experiment,
    measure_point,
    one_launch_sass_experiment,
    prologue_experiment,
    prologue_post_experiment,
    racecheck_experiment,
    resources_experiment,
    single_pass_experiment,
    size_sweep_experiment,
    timing_methods_experiment,
    v8_ablation_experiment,
)
from .figures import (
    HOST_FLOOR_WITHIN,
    VERSION_COLORS,
    color_versions,
    draw_rung,
    host_bound_limit,
    plot_size_sweep,
    plot_summation_errors,
)
from .host import (
    Plan,
    default_blocks,
    head_elements,
    kernel_for,
    plan,
    reduce_sum,
    resident_blocks_per_sm,
    signature,
)
from .inputs import INTEGER_RANGE, integer_input
from .kernels import (
    LADDER,
    PROLOGUE,
    RACY,
    V8_UNROLL,
    VERSIONS,
    WARP,
    make_shared_atomic,
    make_v0,
    make_v1,
    make_v1_5,
    make_v2,
    make_v3,
    reduce_block_atomic,
    reduce_grid_atomic,
    reduce_single_thread,
    reduce_single_thread_global,
)
from .profiling import (
    atomics_waves,
    reduce_atomics_experiment,
    reduce_rungs_experiment,
    reduce_shared_experiment,
)
from .ptx_tools import PTX_TARGETS, ptx, ptx_counts, ptx_lines, single_thread_ptx, telling_lines
from .races import emulate_races, show_races
from .rounding import sequential_sum_f32, summation_errors, tree_sum_f32
from .single_pass import (
    SPREAD_WORD_STRIDE,
    SPREAD_WORDS,
    make_per_block_atomic,
    make_single_pass,
    make_spread_atomic,
    make_warp_atomic,
    one_wave,
    reduce_single_pass,
)
from .summaries import (
    STUDY_NOTES_V100_UTILIZATION,
    ablation_summary,
    argmax_summary,
    atomics_ablation_summary,
    l2_resident_summary,
    prologue_grids_summary,
    prologue_vs_numpy,
    show_host_cost,
    show_order_effects,
    show_rung,
    show_study_notes,
    single_pass_summary,
    study_notes_table,
    timing_methods_summary,
    versus_v100,
)
from .warps import (
    make_block_sum,
    make_v4,
    make_v4_1,
    make_v4_2,
    make_v5,
    make_v6,
    make_v7,
    make_v8,
    warp_sum,
)

__all__ = [
    "atomics_waves", "reduce_atomics_experiment", "reduce_rungs_experiment",
    "reduce_shared_experiment",
    # the rungs and their kernels
    "make_block_sum",
    "VERSIONS", "LADDER", "PROLOGUE", "RACY", "WARP", "V8_UNROLL",
    "reduce_single_thread", "reduce_single_thread_global", "reduce_block_atomic",
    "reduce_grid_atomic", "make_shared_atomic",
    "make_v0", "make_v1", "make_v1_5", "make_v2", "make_v3", "make_v4", "make_v4_1", "make_v4_2",
    "make_v5", "make_v6", "make_v7", "make_v8", "warp_sum", "load_float4",
    # the host side
    "reduce_sum", "plan", "Plan", "kernel_for", "signature", "head_elements",
    "resident_blocks_per_sm", "default_blocks",
    # one launch, argmax, the ablation
    "make_single_pass", "reduce_single_pass", "make_warp_atomic", "make_per_block_atomic",
    "make_spread_atomic", "SPREAD_WORD_STRIDE", "SPREAD_WORDS", "one_wave",
    "make_argmax", "argmax", "warp_argmax", "edge_case_failures",
    "ABLATION", "ABLATION_CONFIGS", "make_v8_ablation", "ablation_plan",
    # PTX, inputs, races, rounding
    "PTX_TARGETS", "ptx", "ptx_lines", "ptx_counts", "telling_lines", "single_thread_ptx",
    "INTEGER_RANGE", "integer_input",
    "emulate_races", "show_races", "tree_sum_f32", "sequential_sum_f32", "summation_errors",
    # experiments and what is printed from them
    "argmax_experiment", "block_sweep_experiment", "grid_sweep_experiment",
    "l2_resident_experiment", "ladder_experiment", "one_launch_sass_experiment",
    "prologue_experiment", "prologue_post_experiment", "racecheck_experiment",
    "resources_experiment", "single_pass_experiment",
    "size_sweep_experiment", "timing_methods_experiment", "v8_ablation_experiment",
    "STUDY_NOTES_V100", "STUDY_NOTES_V100_UTILIZATION", "POST_GRID", "TIMING_METHODS",
    "SINGLE_PASS_SIZES", "measure_point", "atomics_per_call",
    "prologue_grids_summary", "prologue_vs_numpy", "timing_methods_summary", "show_host_cost",
    "l2_resident_summary", "single_pass_summary", "atomics_ablation_summary", "argmax_summary",
    "ablation_summary", "show_order_effects", "study_notes_table", "show_study_notes",
    "versus_v100", "show_rung",
    # figures and exercises
    "draw_rung", "plot_summation_errors", "plot_size_sweep", "host_bound_limit", "HOST_FLOOR_WITHIN",
    "VERSION_COLORS", "color_versions",
    "check_sequential_max", "check_block_max",
    "check_absmax", "SPEED_NOISE_FLOOR",
]
