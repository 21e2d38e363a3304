"""Chapter 3's kernels: a pointer chase for latency, and loads in flight for bandwidth.

``pointer_chase``: one thread follows a chain of indices (``chase_chain`` builds one), so
every load waits for the previous one: the load-to-use latency, with nothing to hide it.
``pointer_chase_unsigned`` is the same chase with unsigned indices (no wrap-around test).
``make_sum_loads(ilp)``: a persistent-grid reduction in which each thread has ``ilp``
independent loads in flight: the bytes in flight are (resident warps) x 32 x ilp x 4.
Launched as one warp alone (with the full grid's stride), it times one round of ``ilp``
loads with nothing else in the memory system: the latency Little's law needs.
``make_copy(ilp)``: a one-pass copy, ``ilp`` elements per thread (occupancy experiment).
``make_strided_chunks(ilp)``: warps read 128-byte chunks laid out so that warps running
at the same time are ``stride`` bytes apart (channel and partition effects).

Each kernel is followed by its host wrapper (``chase``, ``sum_partials``, ``copy``,
``strided_sum``), which validates its arguments and accepts NumPy or device arrays.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import cuda, uint32  # safe here: gpuperf/__init__ (which picks the mode) has already run

from gpuperf import validate

WARP = 32  # threads in a warp
FLOAT_BYTES = 4  # float32: the element of every array these kernels read


@cuda.jit
def pointer_chase(nxt, steps, pos):
    # One thread: every load's address is the value the previous load returned, so
    # no two loads overlap and the time per step is the load-to-use latency.
    if cuda.grid(1) == 0:
        j = pos[0]
        for _ in range(steps):
            j = nxt[j]
        pos[0] = j  # where the chain stopped: the next run carries on from here


@cuda.jit
def pointer_chase_unsigned(nxt, steps, pos):
    # The same chase with each index made unsigned before the load. A signed index may be
    # negative, and Numba wraps negative indices around (x[-1] is the last element): a
    # compare, a select and an add before every load, all on the chain's critical path.
    # An unsigned index cannot be negative, so only the load's address arithmetic is left.
    if cuda.grid(1) == 0:
        j = pos[0]
        for _ in range(steps):
            j = nxt[uint32(j)]
        pos[0] = j


def _check_chain_start(nxt, start):
    """``start`` must be a slot of the chain: ``nxt[start]`` a valid index, not a poisoned -1."""
    arr = validate.array(nxt, name="nxt", dtype=np.int32, ndim=1)
    start = validate.positive_int(start, "start", minimum=0, maximum=arr.shape[0] - 1)
    if isinstance(arr, np.ndarray):
        link = int(arr[start])
    else:
        link = int(arr[start:start + 1].copy_to_host()[0])
    if not 0 <= link < arr.shape[0]:
        raise ValueError(f"start={start} is not on the chain: nxt[{start}] = {link}, not an index "
                         "of nxt. Start at a slot of the chain, e.g. start=0 (slots are "
                         "multiples of the chain's spacing).")


def _as_device(x, name, dtype):
    x = validate.array(x, name=name, dtype=dtype, ndim=1)
    return (cuda.to_device(x), True) if isinstance(x, np.ndarray) else (x, False)


def chase_chain(n_slots: int, *, spacing: int = 32, order: str = "random",
                seed: int = 0) -> np.ndarray:
    """An int32 array holding one cycle through ``n_slots`` slots ``spacing`` elements apart.

    ``order="random"``: the slots are visited in a random order (one cycle through all
    of them), so neither the caches' line structure nor the DRAM row buffer helps.
    ``order="sequential"``: slot ``s`` points to slot ``s + 1`` (and the last to the
    first). With ``spacing=32`` int32s each slot sits in its own 128-byte line.
    """
    seed = validate.positive_int(seed, "seed", minimum=0)
    n_slots = validate.positive_int(n_slots, "n_slots")
    spacing = validate.positive_int(spacing, "spacing")
    validate.choice(order, "order", ("random", "sequential"))
    if n_slots * spacing >= 2**31:
        raise ValueError("the chain holds int32 indices: keep n_slots * spacing below 2**31.")
    if order == "random":
        visit = np.random.default_rng(seed).permutation(n_slots).astype(np.int64)
    else:
        visit = np.arange(n_slots, dtype=np.int64)
    # Poison the unused elements so that a chase that left the chain would fail loudly.
    nxt = np.full(n_slots * spacing, -1, dtype=np.int32)
    nxt[visit * spacing] = np.roll(visit, -1) * spacing
    return nxt


def chase(nxt, steps: int, start: int = 0) -> int:
    """Follow ``steps`` links of ``nxt`` from ``start`` on the GPU; return where it ends."""
    _check_chain_start(nxt, start)
    d_nxt, _ = _as_device(nxt, "nxt", np.int32)
    steps = validate.positive_int(steps, "steps", minimum=0)
    start = validate.positive_int(start, "start", minimum=0, maximum=d_nxt.size - 1)
    pos = cuda.to_device(np.array([start], dtype=np.int32))
    pointer_chase[1, 1](d_nxt, steps, pos)
    return int(pos.copy_to_host()[0])


@functools.lru_cache(maxsize=None, typed=True)
def make_sum_loads(ilp: int):
    """Partial sums with ``ilp`` independent loads per thread per iteration.

    Thread ``t`` sums ``x[t], x[t + stride], x[t + 2 stride], ...``. With ``stride`` the
    grid's size every element is read once; at every step the warp's 32 loads are
    consecutive (coalesced), and the ``ilp`` loads of one iteration do not depend on each
    other, so all of them are in flight together. One warp launched alone with a full
    grid's stride reads the same kind of addresses as each warp of that grid: its time
    per iteration is one round of ``ilp`` loads with nothing else in the memory system.
    """
    ilp = validate.positive_int(ilp, "ilp", maximum=64)

    @cuda.jit
    def sum_loads(x, partial, stride):
        tid = cuda.grid(1)
        n = x.size
        acc = np.float32(0.0)
        i = tid
        # Whole iterations need no bounds test: i + (ilp-1)*stride < n <=> i < full.
        full = n - (ilp - 1) * stride
        while i < full:
            for k in range(ilp):
                acc += x[i + k * stride]
            # (acc != acc) is 0 unless the data hold a NaN (and then the sum is NaN
            # anyway), but the compiler cannot know that: the next iteration's
            # addresses now wait for this iteration's loads. Without it the compiler
            # unrolls the loop (the PTX of ilp=1 then holds more loads per trip).
            i += ilp * stride + (acc != acc)
        while i < n:  # the tail: fewer than ilp elements left for this thread
            acc += x[i]
            i += stride
        partial[tid] = acc

    return sum_loads


def make_sum_loads_unguarded(ilp: int):
    """``make_sum_loads(ilp)`` without the ``(acc != acc)`` in its step: the control that
    shows what the guard does to the compiled loop (``unroll_guard_ptx``); no experiment
    times it."""
    ilp = validate.positive_int(ilp, "ilp", maximum=64)

    @cuda.jit
    def sum_loads_unguarded(x, partial, stride):
        tid = cuda.grid(1)
        n = x.size
        acc = np.float32(0.0)
        i = tid
        full = n - (ilp - 1) * stride
        while i < full:
            for k in range(ilp):
                acc += x[i + k * stride]
            i += ilp * stride
        while i < n:
            acc += x[i]
            i += stride
        partial[tid] = acc

    return sum_loads_unguarded


def sum_partials(x, *, ilp: int = 4, blocks: int = 2, block: int = 64):
    """Per-thread partial sums of ``x`` by ``make_sum_loads(ilp)`` on ``blocks x block`` threads."""
    d_x, _ = _as_device(x, "x", np.float32)
    ilp = validate.choice(ilp, "ilp", range(1, 65))
    blocks = validate.positive_int(blocks, "blocks")
    block = validate.block_size(block)
    partial = cuda.to_device(np.full(blocks * block, np.nan, dtype=np.float32))
    make_sum_loads(ilp)[blocks, block](d_x, partial, blocks * block)
    return partial.copy_to_host()


@functools.lru_cache(maxsize=None, typed=True)
def make_copy(ilp: int):
    """``out = x``, one pass, ``ilp`` elements per thread (a block covers block*ilp elements)."""
    ilp = validate.positive_int(ilp, "ilp", maximum=64)

    @cuda.jit
    def copy(x, out):
        base = cuda.blockIdx.x * cuda.blockDim.x * ilp + cuda.threadIdx.x
        # All loads first, then all stores: a store to out might alias x as far as the
        # compiler knows, so a load placed after a store could not be moved before it.
        vals = cuda.local.array(ilp, np.float32)  # unrolled into registers
        for k in range(ilp):
            i = base + k * cuda.blockDim.x  # consecutive threads, consecutive elements
            if i < x.size:
                vals[k] = x[i]
        for k in range(ilp):
            i = base + k * cuda.blockDim.x
            if i < x.size:
                out[i] = vals[k]

    return copy


def copy(x, *, ilp: int = 1, block: int = 256, shared_bytes: int = 0):
    """``make_copy(ilp)`` over ``x``; ``shared_bytes`` of dynamic shared memory per block
    reserve space that no thread uses, which caps how many blocks fit on an SM."""
    d_x, host = _as_device(x, "x", np.float32)
    ilp = validate.choice(ilp, "ilp", range(1, 65))
    block = validate.block_size(block)
    shared_bytes = validate.positive_int(shared_bytes, "shared_bytes", minimum=0,
                                         maximum=48 * 1024)
    out = cuda.to_device(np.full(d_x.size, np.nan, dtype=np.float32))
    grid = math.ceil(d_x.size / (block * ilp))
    make_copy(ilp)[grid, block, 0, shared_bytes](d_x, out)
    return out.copy_to_host() if host else out


@functools.lru_cache(maxsize=None, typed=True)
def make_strided_chunks(ilp: int):
    """Warps read 32-float (128-byte) chunks; chunk ``c`` is row ``c % rows``, column ``c // rows``.

    Row ``r`` starts at element ``r * pitch``, so warps that run at the same time
    (consecutive ``c``) read addresses ``4 * pitch`` bytes apart. Every chunk is read
    once; each thread leaves its partial sum in ``partial``. Blocks must be whole warps.
    The cursor advances by additions only, in 32-bit unsigned arithmetic (arrays of up to
    2^31 floats, as ``chunk_geometry`` enforces): a division per load, or 64-bit index
    arithmetic, would cost more than the effect measured and turn the experiment into an
    arithmetic benchmark.
    """
    ilp = validate.positive_int(ilp, "ilp", maximum=64)

    u32 = np.uint32

    @cuda.jit
    def strided_chunks(x, partial, n_chunks, rows, pitch):
        tid = cuda.grid(1)
        lane = u32(cuda.threadIdx.x % 32)
        warp = u32(tid // 32)
        warps = u32(cuda.gridsize(1) // 32)
        n_chunks, rows, pitch = u32(n_chunks), u32(rows), u32(pitch)
        # Chunk c = col * rows + row starts at element row * pitch + col * 32. This warp
        # starts at chunk `warp` and steps by `warps` chunks: `step_cols` whole columns and
        # `step_rows` rows. The offset advances by additions (two divisions here instead of
        # one per load), in 32-bit unsigned arithmetic: with 64-bit index arithmetic the
        # instructions between loads, not DRAM, set this kernel's pace.
        row = warp % rows
        step_cols = warps // rows
        step_rows = warps - step_cols * rows
        off = row * pitch + (warp // rows) * u32(32)
        step = step_rows * pitch + step_cols * u32(32)
        row_span = rows * pitch  # a row wrap: back by rows rows, on by one column
        acc = np.float32(0.0)
        c = warp
        # Whole trips need no bounds test, and the wrap is arithmetic, not a branch: with
        # nothing but arithmetic between them, the compiler issues the ilp loads of a trip
        # before the first add waits for its load.
        while c + u32(ilp - 1) * warps < n_chunks:
            for _ in range(ilp):
                acc += x[off + lane]
                off += step
                row += step_rows
                wrap = u32(row >= rows)
                row -= wrap * rows
                off = off - wrap * row_span + wrap * u32(32)
            c += u32(ilp) * warps
        while c < n_chunks:  # the tail: fewer than ilp chunks left for this warp
            acc += x[off + lane]
            off += step
            row += step_rows
            wrap = u32(row >= rows)
            row -= wrap * rows
            off = off - wrap * row_span + wrap * u32(32)
            c += warps
        partial[tid] = acc

    return strided_chunks


def chunk_geometry(n_elements: int, stride_bytes: int, *, padded: bool = False) -> dict:
    """Rows, pitch (elements) and chunk count for ``make_strided_chunks`` over ``n_elements``.

    Concurrent warps read chunks ``stride_bytes`` apart (``stride_bytes + 128`` when
    ``padded``); the chunks tile ``n_elements`` floats, every one read once.
    """
    validate.boolean(padded, "padded")
    # The kernel's cursor is 32-bit unsigned: 2^31 floats leave room for its last step.
    n_elements = validate.positive_int(n_elements, "n_elements", maximum=2**31)
    stride_bytes = validate.positive_int(stride_bytes, "stride_bytes", minimum=WARP * FLOAT_BYTES)
    chunk_bytes = WARP * FLOAT_BYTES
    if stride_bytes % chunk_bytes:
        raise ValueError(f"stride_bytes={stride_bytes} must be a multiple of the 128-byte chunk.")
    cols = stride_bytes // chunk_bytes
    pitch = cols * WARP + (WARP if padded else 0)
    rows = n_elements // pitch
    if rows < 1:
        raise ValueError(f"{n_elements} floats hold no row of {pitch} floats: use a smaller "
                         "stride or a larger array.")
    return {"rows": rows, "cols": cols, "pitch": pitch, "n_chunks": rows * cols,
            "bytes_read": rows * cols * chunk_bytes}


def strided_sum(x, stride_bytes: int, *, padded: bool = False, ilp: int = 1, blocks: int = 2,
                block: int = 64):
    """Partial sums of the chunks ``make_strided_chunks`` reads, and the geometry used."""
    validate.boolean(padded, "padded")
    ilp = validate.choice(ilp, "ilp", range(1, 65))
    validate.positive_int(stride_bytes, "stride_bytes", minimum=WARP * FLOAT_BYTES)
    d_x, _ = _as_device(x, "x", np.float32)
    block = validate.block_size(block, multiple_of=WARP)
    blocks = validate.positive_int(blocks, "blocks")
    geo = chunk_geometry(d_x.size, stride_bytes, padded=padded)
    partial = cuda.to_device(np.full(blocks * block, np.nan, dtype=np.float32))
    make_strided_chunks(ilp)[blocks, block](d_x, partial, geo["n_chunks"], geo["rows"],
                                            geo["pitch"])
    return partial.copy_to_host(), geo
