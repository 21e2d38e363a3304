"""Memory coalescing: what a warp's addresses turn into, and kernels that respect it.

A warp executes one load instruction for 32 threads at once. The memory system
serves it in 32-byte *sectors* (four to a 128-byte cache line): the instruction
costs as many sectors as its 32 addresses touch, whether the threads use all of
their bytes or four of them. This package makes that visible and measurable.

The model (no GPU needed)
-------------------------
``warp_access(stride, offset, elem_bytes)``: the sectors and lines one warp's load
touches, and its efficiency (bytes used / bytes moved). ``draw_warp_access`` draws
it, ``draw_warp_access_gallery`` draws the cases the chapter discusses, and
``explore_warp_access()`` is the interactive version (ipywidgets, imported lazily).

``trace(kernel, grid, block, *args)`` runs a kernel in the course's thread emulator
(``gpuperf.emulator``, the same with or without a GPU) and records every global and
shared access, warp by warp: the sectors each load and store touched and the
shared-memory bank conflicts. The exercises' checkers use it to tell a coalesced
kernel from an uncoalesced one, on a GPU and off it.

Kernels
-------
``make_copy_ilp(ilp)``: grid-stride copy, ``ilp`` independent loads in flight per thread.
``make_copy_vec4(ilp)``: the same with 16-byte loads and stores (``load_float4``/``store_float4``).
``matmul_naive`` / ``matmul_naive_bcol``: the textbook's traversals, B[k, col] against B stored
column-major (element ``col * K + k``).
``make_matmul_bcol(tile, mode, pad)``: tiled matmul with B column-major: ``"uncoalesced"``
(the chapter-4 loading), ``"corner"`` (corner turning), and ``"rowmajor"`` (B row-major, the
reference).
``transpose_naive``, ``make_transpose(tile, block_rows, pad)``: the transpose ladder.

Experiments (all prefixed ``coalescing_``)
------------------------------------------
``coalescing_stride``, ``coalescing_offset``, ``coalescing_traversal``,
``coalescing_matmul_bcol``, ``coalescing_transpose``, ``coalescing_copy_ladder``,
``coalescing_copy_tuning``.

Exercises
---------
``check_remap(kernel)``: fix an uncoalesced kernel by remapping threads to data.
``check_padded_transpose(kernel)``: the tiled transpose with padding.
``check_layout_bytes(fn)`` and ``check_inplace_transpose(kernel)``: the sector model applied to
a layout, and the padded transpose done in place.

Files
-----
``kernels.py``: the kernels the notebooks show, in their order. ``copies.py``: the copy
ladder's other kernels and ``copy``. ``host.py``: ``matmul`` and ``transpose``.
``models.py``: the sector model. ``figures.py``: its drawings. ``tracing.py``: ``trace``.
``experiments.py``: the experiments and the tables made from them. ``checks.py``: the
exercises' checkers. ``profiling.py``: Nsight Compute on the strided copies and the transposes
(``profiling_stride``, ``profiling_stride_parts``, ``profiling_transpose``). ``ptx.py``:
``PTX_TARGETS``, ``transpose_ptx_order``.
"""

from __future__ import annotations

from .ablations import make_transpose_unchecked
from .checks import (
    EXERCISE_BLOCK_ROWS,
    EXERCISE_TILE,
    REMAP_BLOCK,
    REMAP_SPEED_TARGET,
    check_inplace_transpose,
    check_layout_bytes,
    check_padded_transpose,
    check_remap,
    compare_layout_bytes,
)
from .copies import (
    COPY_VERSIONS,
    copy,
    copy_launch,
    make_copy_ilp,
    make_copy_strided,
    make_read_strided,
    write_strided,
)
from .experiments import (
    AOS_USED,
    BEST_SCALAR,
    COPY_LADDER,
    MATMUL_VARIANTS,
    N_AOS,
    N_COPY,
    N_OFFSET,
    N_STRIDE,
    N_TRANSPOSE,
    OFFSETS,
    STRIDE_SPAN,
    STRIDES,
    TRANSPOSE_SWEEP,
    TRANSPOSE_VEC4_SWEEP,
    UNCHECKED,
    VEC4_FLIP,
    VEC4_ONLY,
    aos_soa_experiment,
    copy_in_flight,
    copy_ladder_experiment,
    copy_tuning_experiment,
    device_data,
    fill_pseudorandom,
    matmul_experiment,
    offset_experiment,
    staging_ablation,
    stride_experiment,
    stride_footprint,
    stride_span_experiment,
    transpose_experiment,
    traversal_experiment,
    vec4_transpose_summary,
)
from .figures import (
    GALLERY_CASES,
    draw_stride_efficiency,
    draw_warp_access,
    draw_warp_access_gallery,
    explore_warp_access,
)
from .host import (
    MAX_GRID_Y,
    TRANSPOSE_VERSIONS,
    matmul,
    transpose,
)
from .kernels import (
    AOS_FIELDS,
    AOS_LAYOUTS,
    MATMUL_MODES,
    VEC_TILE,
    WARP,
    load_float4,
    make_copy_vec4,
    make_matmul_bcol,
    make_sum_fields,
    make_transpose,
    make_transpose_vec4,
    matmul_naive,
    matmul_naive_bcol,
    scale_rows_uncoalesced,
    transpose_naive,
)
from .models import (
    BANKS,
    LINE_BYTES,
    SECTOR_BYTES,
    WarpAccess,
    aos_model_bytes,
    stride_efficiency,
    warp_access,
)
from .profiling import (
    PROFILED_LADDER,
    PROFILED_OFFSETS,
    copy_ladder_profile_experiment,
    offset_profile_experiment,
    sass_order_experiment,
    stride_parts_experiment,
    stride_parts_table,
    stride_profile_experiment,
    stride_wavefronts,
    transpose_profile_experiment,
)
from .ptx import PTX_TARGETS, transpose_ptx_order
from .tracing import (
    AccessTrace,
    Request,
    trace,
)

__all__ = [
    "stride_profile_experiment", "stride_parts_experiment", "stride_parts_table", "stride_wavefronts",
    "transpose_profile_experiment", "offset_profile_experiment", "copy_ladder_profile_experiment",
    "sass_order_experiment",
    "PROFILED_OFFSETS", "PROFILED_LADDER",
    # ablations.py
    "make_transpose_unchecked",
    # kernels.py
    "WARP", "transpose_naive", "matmul_naive", "matmul_naive_bcol", "AOS_FIELDS",
    "AOS_LAYOUTS", "make_sum_fields", "scale_rows_uncoalesced", "MATMUL_MODES", "make_matmul_bcol",
    "make_transpose", "VEC_TILE", "make_transpose_vec4", "make_copy_vec4",
    "load_float4",  # gpuperf.vector's, which make_copy_vec4 uses (the notebook prints its doc)
    # copies.py
    "make_copy_ilp", "make_copy_strided", "make_read_strided", "write_strided", "COPY_VERSIONS",
    "copy_launch", "copy",
    # host.py
    "matmul", "TRANSPOSE_VERSIONS", "MAX_GRID_Y", "transpose",
    # models.py
    "SECTOR_BYTES", "LINE_BYTES", "BANKS", "WarpAccess", "warp_access", "stride_efficiency",
    "aos_model_bytes",
    # figures.py
    "draw_warp_access", "GALLERY_CASES", "draw_warp_access_gallery", "draw_stride_efficiency",
    "explore_warp_access",
    # tracing.py
    "Request", "AccessTrace", "trace",
    # experiments.py
    "fill_pseudorandom", "device_data", "N_STRIDE", "STRIDES", "STRIDE_SPAN", "stride_experiment",
    "stride_span_experiment", "stride_footprint", "N_OFFSET", "OFFSETS", "offset_experiment",
    "AOS_USED", "N_AOS", "aos_soa_experiment", "traversal_experiment", "MATMUL_VARIANTS",
    "matmul_experiment", "N_TRANSPOSE", "TRANSPOSE_SWEEP", "TRANSPOSE_VEC4_SWEEP",
    "transpose_experiment", "VEC4_FLIP", "VEC4_ONLY", "BEST_SCALAR", "vec4_transpose_summary",
    "N_COPY", "COPY_LADDER", "copy_ladder_experiment", "copy_tuning_experiment",
    "UNCHECKED", "staging_ablation", "copy_in_flight",
    # checks.py
    "REMAP_BLOCK", "REMAP_SPEED_TARGET", "check_layout_bytes", "compare_layout_bytes",
    "check_remap", "EXERCISE_TILE", "EXERCISE_BLOCK_ROWS", "check_padded_transpose",
    "check_inplace_transpose",
    # ptx.py
    "PTX_TARGETS", "transpose_ptx_order",
]
