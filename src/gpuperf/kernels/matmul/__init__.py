"""Chapter "Shared-memory tiling": matrix multiplication from a naive kernel to shared tiles.

``C = A @ B`` with ``A`` of shape (M, K), ``B`` of shape (K, N), all float32, row-major.
``gp.matmul`` is this package; its files, in the order the chapter reads them:

* ``kernels.py``: the kernels the book shows (``naive_row_x``, ``naive_col_x``,
  ``make_tiled_article``, ``make_tiled_early_return``, ``make_tiled``) and the host side every
  version shares, also with ``gpuperf.kernels.coarsening``: ``Variant``, ``variant``,
  ``check_operands``, ``run_variant``, ``matmul``; ``load4``/``store4`` (``gpuperf.vector``).
* ``models.py``: FLOPs, global traffic, arithmetic intensity and the roofline bound.
* ``measure.py``: device operands, the float64 ``reference``, ``verify``, timing one variant
  and cuBLAS.
* ``experiments.py``: the recorded experiments (``matmul_naive_vs_tiled``,
  ``matmul_tile_sweep``, ``matmul_roofline``, ``matmul_article_bugs``), ``measure_version``
  and ``naive_vs_tiled_summary``.
* ``checks.py``: the exercise checkers (``check_tiled``, ``check_intensity``) and their engine.
* ``figures.py``: warps and sectors of the naive mappings, the tiling diagram, the roofline.
* ``profiling.py``: the profiled rooflines read for this chapter (``dram_roofline_summary``,
  ``onchip_roofline_summary`` and their plots).
* ``ptx.py``: ``PTX_TARGETS``, the kernels ``tests/test_ptx.py`` compiles.
"""

# ruff: noqa: F401  (the re-exports below are this package's public names: gp.matmul.<name>)

from __future__ import annotations

from .checks import (
    CHECK_SIZES,
    COALESCED_SECTORS,
    TILED_SPEED_N,
    TILED_SPEED_TARGET,
    TILED_SPEED_TILE,
    check_intensity,
    check_matmul_kernel,
    check_tiled,
    source_checks_apply,
    speed_bar,
)
from .experiments import (
    SIZES,
    article_bugs_experiment,
    bug_outcome,
    measure_version,
    naive_vs_tiled_experiment,
    naive_vs_tiled_summary,
    outcome_text,
    roofline_experiment,
    roofline_rows,
    tile_sweep_experiment,
)
from .figures import draw_mappings, draw_tiling, plot_roofline, show_warp_sectors, warp_sectors, warp_threads
from .kernels import (
    TILES,
    VERSIONS,
    Variant,
    check_operands,
    check_tile,
    check_variant,
    load4,
    make_tiled,
    make_tiled_article,
    make_tiled_early_return,
    matmul,
    naive_col_x,
    naive_row_x,
    run_variant,
    store4,
    variant,
)
from .measure import (
    CUBLAS,
    device_operands,
    measure_cublas,
    measure_variant,
    reference,
    relative_error,
    repeats,
    table,
    verify,
    where_measured,
)
from .models import flops, intensity, roofline_bound, traffic_bytes
from .profiling import (
    dram_roofline_summary,
    onchip_roofline_summary,
    plot_dram_roofline,
    plot_onchip_roofline,
)
from .ptx import PTX_TARGETS

__all__ = [
    "dram_roofline_summary", "onchip_roofline_summary", "plot_dram_roofline", "plot_onchip_roofline",
    "plot_roofline", "naive_row_x", "naive_col_x", "make_tiled_article", "make_tiled_early_return", "make_tiled",
    "Variant", "variant", "matmul", "run_variant", "check_operands", "flops", "traffic_bytes",
    "intensity", "roofline_bound", "verify", "measure_variant", "measure_cublas", "bug_outcome", "outcome_text",
    "check_tiled", "check_intensity", "draw_mappings", "draw_tiling", "load4", "store4",
    "warp_threads", "warp_sectors", "show_warp_sectors",
    "VERSIONS", "TILES", "SIZES",
]
