"""Chapter 1's kernels, "Measuring GPU performance": two copies and the grid-stride loop.

``copy_one_per_thread``: one element per thread; the grid must cover the array.
``copy_grid_stride``: each thread walks the array in steps of the whole grid, so any
grid (even ``[1, 1]``, handy for debugging) covers any size, and the grid can be
sized to the GPU (blocks per SM) instead of to the data.
``saxpy_grid_stride``: ``out = a * x + y``, the chapter's exercise.
``launch_config`` chooses a grid for either copy; ``copy`` launches one.
"""

from __future__ import annotations

import numpy as np
from numba import cuda  # gpuperf/__init__ has already chosen the mode

from gpuperf import device, validate


@cuda.jit
def copy_one_per_thread(x, out):
    i = cuda.grid(1)
    if i < x.size:  # the last block hangs over the end of the array
        out[i] = x[i]


@cuda.jit
def copy_grid_stride(x, out):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)  # threads in the whole grid
    while i < x.size:
        out[i] = x[i]
        i += stride


@cuda.jit
def saxpy_grid_stride(a, x, y, out):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < x.size:
        out[i] = a * x[i] + y[i]
        i += stride


METHODS = ("one_per_thread", "grid_stride")


def launch_config(n: int, *, method: str = "grid_stride", block: int = 256,
                  blocks_per_sm: int = 8) -> tuple[int, int]:
    """Blocks and threads for ``n`` elements.

    One element per thread needs ``ceil(n / block)`` blocks. A grid-stride kernel
    gets a grid sized to the GPU: ``blocks_per_sm`` blocks on every SM (never more
    blocks than the data needs).
    """
    validate.positive_int(blocks_per_sm, "blocks_per_sm", maximum=64)
    n = validate.positive_int(n, "n")
    validate.choice(method, "method", METHODS)
    block = validate.block_size(block)
    blocks_needed = (n + block - 1) // block
    if method == "one_per_thread":
        return blocks_needed, block
    blocks_per_sm = validate.positive_int(blocks_per_sm, "blocks_per_sm", maximum=64)
    return min(blocks_needed, blocks_per_sm * device.sm_count(default=2)), block


def copy(x, out=None, *, method: str = "grid_stride", block: int = 256,
         blocks_per_sm: int = 8, blocks: int | None = None):
    """Copy the float32 vector ``x`` into ``out`` (allocated if None) with one of the kernels.

    ``blocks`` overrides the grid (grid-stride only; ``blocks=1, block=1`` runs the
    whole copy on one thread, the debugging configuration).
    """
    validate.choice(method, "method", METHODS)
    validate.block_size(block)
    validate.positive_int(blocks_per_sm, "blocks_per_sm", maximum=64)
    x = validate.array(x, name="x")
    if out is None:
        out = cuda.device_array_like(x) if not isinstance(x, np.ndarray) else np.empty_like(x)
    out = validate.array(out, name="out", writes=True)
    validate.same_shape(x, out, ("x", "out"))
    if blocks is not None:
        if method != "grid_stride":
            raise ValueError("blocks= only applies to method='grid_stride': a one-per-thread "
                             "kernel needs exactly ceil(n / block) blocks.")
        grid = validate.positive_int(blocks, "blocks")
        block = validate.block_size(block)
    else:
        grid, block = launch_config(x.size, method=method, block=block,
                                    blocks_per_sm=blocks_per_sm)
    kernel = copy_one_per_thread if method == "one_per_thread" else copy_grid_stride
    kernel[grid, block](x, out)
    return out
