"""The copy ladder's kernels and the host wrapper ``copy``.

``make_copy_ilp(ilp)``: grid-stride copy, ``ilp`` independent loads in flight per thread
(``kernels.make_copy_vec4`` is the same with 16-byte loads). ``make_copy_strided``: every
``stride``-th element, the access the sector model describes; ``make_read_strided`` and
``write_strided`` are its two halves, for the profiler. ``copy_launch`` sizes the grid and
``copy`` runs one version (chapter 1's kernels, ``ilp`` or ``vec4``).
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda, float32, float64  # safe: importing gpuperf.kernels.* runs gpuperf/__init__ (the mode) first

from gpuperf import device, validate

from .kernels import WARP, make_copy_vec4

_DTYPES = {"float32": (np.float32, float32), "float64": (np.float64, float64)}


@functools.lru_cache(maxsize=None, typed=True)
def make_copy_ilp(ilp: int = 4, dtype: str = "float32"):
    """Grid-stride copy with ``ilp`` independent loads in flight per thread.

    Each round a thread loads ``ilp`` elements, one grid apart (so each warp's load is
    128 contiguous bytes), into registers, and only then stores them. Stores never
    wait, so the loads of one round overlap; a plain ``out[i] = x[i]`` loop cannot
    overlap them, because the compiler may not move the next load above a store to
    an array that might alias the source.
    """
    ilp = validate.positive_int(ilp, "ilp", maximum=16)
    _, nb_type = _DTYPES[validate.choice(dtype, "dtype", tuple(_DTYPES))]
    ILP = ilp

    @cuda.jit
    def copy_ilp(src, dst):
        n = src.size
        threads = cuda.gridsize(1)
        i = cuda.grid(1)
        regs = cuda.local.array(ILP, nb_type)
        round_elems = threads * ILP
        base = 0
        while base + round_elems <= n:  # full rounds: no bounds tests
            for k in range(ILP):
                regs[k] = src[base + k * threads + i]
            for k in range(ILP):
                dst[base + k * threads + i] = regs[k]
            base += round_elems
        for k in range(ILP):  # the last, partial round
            j = base + k * threads + i
            if j < n:
                dst[j] = src[j]

    return copy_ilp


@functools.lru_cache(maxsize=None, typed=True)
def make_copy_strided(ilp: int = 4, dtype: str = "float32"):
    """Copy every ``stride``-th element: ``dst[j * stride] = src[j * stride]`` for
    ``j < count``, ``ilp`` loads in flight per thread. Lane ``j`` of a warp reads
    element ``j * stride``: the access the sector model (``warp_access``) describes."""
    ilp = validate.positive_int(ilp, "ilp", maximum=16)
    _, nb_type = _DTYPES[validate.choice(dtype, "dtype", tuple(_DTYPES))]
    ILP = ilp

    @cuda.jit
    def copy_strided(src, dst, count, stride):
        threads = cuda.gridsize(1)
        i = cuda.grid(1)
        regs = cuda.local.array(ILP, nb_type)
        base = 0
        while base + threads * ILP <= count:
            for k in range(ILP):
                regs[k] = src[(base + k * threads + i) * stride]
            for k in range(ILP):
                dst[(base + k * threads + i) * stride] = regs[k]
            base += threads * ILP
        for k in range(ILP):
            j = base + k * threads + i
            if j < count:
                dst[j * stride] = src[j * stride]

    return copy_strided


# The strided copy's two halves, for the profiler: which DRAM reads the loads cause and
# which the strided stores cause (a store that covers part of a sector may make the L2 read
# the rest of it from DRAM). Each touches exactly the elements copy_strided touches.
@functools.lru_cache(maxsize=None, typed=True)
def make_read_strided(ilp: int = 4):
    """The loads of ``make_copy_strided(ilp)`` alone: each thread sums the float32 elements
    ``src[j * stride]`` it would copy and writes its sum to ``sums[thread]`` (one contiguous
    store per thread, whole sectors: no store covers part of a sector)."""
    ilp = validate.positive_int(ilp, "ilp", maximum=16)
    ILP = ilp

    @cuda.jit
    def read_strided(src, sums, count, stride):
        threads = cuda.gridsize(1)
        i = cuda.grid(1)
        regs = cuda.local.array(ILP, float32)
        acc = float32(0)
        base = 0
        while base + threads * ILP <= count:
            for k in range(ILP):
                regs[k] = src[(base + k * threads + i) * stride]
            for k in range(ILP):
                acc += regs[k]
            base += threads * ILP
        for k in range(ILP):
            j = base + k * threads + i
            if j < count:
                acc += src[j * stride]
        if i < sums.shape[0]:
            sums[i] = acc

    return read_strided


@cuda.jit
def write_strided(dst, count, stride):
    """The stores of the strided copy alone: ``dst[j * stride] = j`` for ``j < count``, in
    the elements each thread of the copy stores, with no loads from memory."""
    threads = cuda.gridsize(1)
    j = cuda.grid(1)
    while j < count:
        dst[j * stride] = j
        j += threads


COPY_VERSIONS = ("one_per_thread", "grid_stride", "ilp", "vec4")


def copy_launch(n: int, *, version: str = "vec4", block: int = 256,
                blocks_per_sm: int | None = 8, ilp: int = 2) -> tuple[int, int]:
    """Blocks and threads for copying ``n`` elements with ``version``.

    ``blocks_per_sm=None`` sizes the grid to the data (each thread one round);
    otherwise the grid is ``blocks_per_sm`` blocks per SM, never more than the data needs.
    """
    n = validate.positive_int(n, "n")
    ilp = validate.positive_int(ilp, "ilp", maximum=16)
    validate.choice(version, "version", COPY_VERSIONS)
    block = validate.block_size(block, multiple_of=WARP)
    per_thread = {"one_per_thread": 1, "grid_stride": 1, "ilp": ilp, "vec4": 4 * ilp}[version]
    needed = max(1, -(-n // (block * per_thread)))
    if version == "one_per_thread" or blocks_per_sm is None:
        return needed, block
    blocks_per_sm = validate.positive_int(blocks_per_sm, "blocks_per_sm", maximum=64)
    return min(needed, blocks_per_sm * device.sm_count(default=2)), block


def copy(src, dst=None, *, version: str = "vec4", block: int = 256,
         blocks_per_sm: int | None = None, ilp: int = 1):
    """Copy the float32 vector ``src`` into ``dst`` (allocated if None); return ``dst``.

    ``version``: ``"one_per_thread"``, ``"grid_stride"`` (chapter 1's kernels),
    ``"ilp"`` (``ilp`` loads in flight per thread) or ``"vec4"`` (16-byte loads, ``ilp``
    of them in flight: the one that reaches the copy ceiling). The defaults are the
    fastest measured: 16-byte loads, one per thread, a grid sized to the data.
    """
    validate.choice(version, "version", COPY_VERSIONS)
    validate.positive_int(ilp, "ilp", maximum=16)
    src = validate.array(src, name="src")
    if dst is None:
        dst = np.empty_like(src) if isinstance(src, np.ndarray) else cuda.device_array_like(src)
    dst = validate.array(dst, name="dst")
    validate.same_shape(src, dst, ("src", "dst"))
    grid, block = copy_launch(src.size, version=version, block=block,
                              blocks_per_sm=blocks_per_sm, ilp=ilp)
    if version == "vec4":
        for name, arr in (("src", src), ("dst", dst)):
            validate.aligned16(arr, name, "use version='ilp', or copy from a fresh allocation.")
    from gpuperf.kernels import gridstride

    kernel = {"one_per_thread": gridstride.copy_one_per_thread,
              "grid_stride": gridstride.copy_grid_stride,
              "ilp": make_copy_ilp(ilp), "vec4": make_copy_vec4(ilp)}[version]
    kernel[grid, block](src, dst)
    return dst
