"""Case study: the backward pass of Generalized Divisive Normalization (GDN).

GDN (Ballé, Laparra and Simoncelli, 2016) normalizes each channel ``i`` of a
multi-channel image by a weighted energy of all channels at the same pixel::

    u_i = w_i / sqrt(beta_i + sum_j gamma_ij * w_j**2)          (elementwise over pixels)

With ``N`` channels, ``gamma`` is an ``N x N`` matrix and ``beta`` an ``N``-vector.
Call ``D_i = (beta_i + sum_j gamma_ij w_j**2) ** -1/2`` (the forward pass computes it,
the backward pass reuses it) and ``delta_i = dL/du_i`` the error arriving from the
next layer. Summed over every pixel and every image ``s`` of the batch::

    dL/dgamma_kj = sum_s  -1/2 * delta_k[s] * w_k[s] * D_k[s]**3 * w_j[s]**2
    dL/dbeta_k   = sum_s  -1/2 * delta_k[s] * w_k[s] * D_k[s]**3

Layout: every array is ``(N, S)`` float32, C-contiguous, with ``S = batch * m * n``
samples, so that one channel of the whole batch is one contiguous row (the GDN
article's "column-major" storage). ``channel_major`` converts a ``(batch, N, m, n)`` array.

The GDN article's four algorithms all first build the *raw* contributions
``raw[k*N + j, s] = -1/2 delta_k w_k D_k^3 w_j^2`` (an ``N*N x S`` matrix) and then
sum each row:

1. ``replicate``: materialize four ``N*N x S`` replicated matrices, multiply them
   elementwise, index-free (thread id = memory index).
2. ``per_channel``: no replication; for each row ``k`` of gamma, one 1D launch of
   ``N * S`` threads (``N`` launches).
3. ``shared``: one launch, a block row per row ``k`` of gamma; ``delta_k``, ``w_k``,
   ``D_k`` staged in shared memory, each thread loops over the ``N`` channels ``j``.
4. ``registers``: the same, with the three values held in registers (each thread
   only ever reads its own element, so shared memory buys nothing).

Then the reduction of ``raw`` (a loop of launches against one batched launch, and
CuPy's CUB and cuBLAS when present), and, beyond the article, the kernel that never
writes ``raw`` at all (``fused``) and the observation that the whole gradient is one
matrix product, ``dgamma = F @ (w*w).T`` with ``F = -1/2 delta w D^3``.

Files
-----
``kernels.py``: the kernels the notebook shows, in its order. ``host.py``: the host
wrappers (``forward``, ``raw_contributions``, ``backward``, ``input_grad``...).
``references.py``: the float64 references and random problems. ``models.py``: the bytes
each method allocates and moves. ``figures.py``: the figures and displayed tables.
``experiments.py``: the experiments, the tables made from them and ``dgamma_launcher``.
``profiling.py``: Nsight Compute on the fused kernels (``profiling_gdn``, ``gdn_profile_table``).
``checks.py``: the exercises' checkers. ``ptx.py``: ``PTX_TARGETS``.
"""

from __future__ import annotations

from .checks import (
    check_beta_grad,
    check_moved_bytes,
    check_registers,
)
from .experiments import (
    ARTICLE_CONFIG,
    BATCH,
    DETERMINISM_RUNS,
    HEADLINE,
    INPUT_GRAD_CHANNELS,
    LADDER_MAX_CALLS,
    REDUCTION_CHANNELS,
    REPLICATE_LIMIT_BYTES,
    SWEEP_CHANNELS,
    SWEEP_SIDES,
    TILED_CHANNELS,
    TILED_TILES,
    algorithms_experiment,
    article_size_experiment,
    determinism_experiment,
    determinism_summary,
    dgamma_launcher,
    headline_table,
    input_grad_experiment,
    input_grad_summary,
    launch_bound_table,
    loop_against_batch,
    measure_point,
    reduction_experiment,
    reduction_rows,
    show_launch_bound,
    tiled_experiment,
)
from .figures import (
    HEADLINE_COLUMNS,
    METHOD_WORDS,
    draw_organization,
    plot_headline,
    plot_scaling,
    show_headline,
)
from .host import (
    backward,
    forward,
    input_grad,
    launch_raw,
    make_factor,
    make_forward,
    raw_contributions,
    row_sums,
)
from .kernels import (
    DEFAULT_BLOCK,
    FULL_MASK,
    MAX_GRID_Y,
    make_beta_grad,
    make_fused,
    make_fused_tiled,
    make_input_grad,
    make_multiply,
    make_per_channel,
    make_registers,
    make_replicate,
    make_row_sum,
    make_shared,
    tiled_launch,
)
from .models import (
    ALGORITHMS,
    METHODS,
    allocated_bytes,
    input_grad_bytes,
    memory_table,
    moved_bytes,
    raw_bytes,
)
from .profiling import gdn_experiment, gdn_profile_table
from .ptx import PTX_TARGETS
from .references import (
    channel_major,
    check_energy_terms,
    random_problem,
    reference_backward,
    reference_factor,
    reference_forward,
    reference_input_grad,
    reference_raw,
)

__all__ = [
    "check_energy_terms",
    "gdn_experiment", "gdn_profile_table",
    # kernels.py
    "MAX_GRID_Y", "DEFAULT_BLOCK", "FULL_MASK", "make_replicate", "make_multiply",
    "make_per_channel", "make_shared", "make_registers", "make_row_sum", "make_beta_grad",
    "make_fused", "make_fused_tiled", "tiled_launch", "make_input_grad",
    # host.py
    "make_forward", "forward", "launch_raw", "raw_contributions", "row_sums", "backward",
    "make_factor", "input_grad",
    # references.py
    "channel_major", "reference_forward", "reference_factor", "reference_raw",
    "reference_backward", "reference_input_grad", "random_problem",
    # models.py
    "ALGORITHMS", "METHODS", "raw_bytes", "allocated_bytes", "moved_bytes", "input_grad_bytes",
    "memory_table",
    # figures.py
    "HEADLINE_COLUMNS", "METHOD_WORDS", "show_headline", "plot_headline", "plot_scaling",
    "draw_organization",
    # experiments.py
    "SWEEP_CHANNELS", "SWEEP_SIDES", "BATCH", "HEADLINE", "REPLICATE_LIMIT_BYTES",
    "ARTICLE_CONFIG", "measure_point", "algorithms_experiment", "dgamma_launcher",
    "INPUT_GRAD_CHANNELS", "input_grad_experiment", "TILED_CHANNELS", "TILED_TILES",
    "tiled_experiment", "DETERMINISM_RUNS", "determinism_experiment", "reduction_experiment",
    "headline_table", "launch_bound_table", "show_launch_bound", "determinism_summary",
    "input_grad_summary", "article_size_experiment", "REDUCTION_CHANNELS", "LADDER_MAX_CALLS",
    "reduction_rows", "loop_against_batch",
    # checks.py
    "check_registers", "check_beta_grad", "check_moved_bytes",
    # ptx.py
    "PTX_TARGETS",
]
