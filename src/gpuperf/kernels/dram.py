"""Chapter "DRAM banks, channels and latency hiding": the textbook's model and the GPU's answer.

The model (pure Python, no GPU)
-------------------------------
``DramLayout``: interleaved distribution of bytes over channels and banks (burst by
burst: channel 0 bank 0, channel 1 bank 0, ..., then bank 1 of every channel, ...).
``TEXTBOOK``: the textbook's toy system, 8-byte bursts, 4 channels, 2 banks each.
``bank_schedule`` / ``bus_utilization`` / ``banks_needed``: why a channel needs at
least R + 1 banks when a cell-array access takes R times as long as a burst transfer.
``tile_loads`` / ``phase_usage``: which channels and banks each thread block of a tiled
matrix multiplication reaches in each phase.
``littles_law_gbps`` / ``loads_per_thread_needed``: bytes in flight = bandwidth x latency.

Kernels
-------
``pointer_chase``: one thread follows a chain of indices, so every load waits for the
previous one: the load-to-use latency, with nothing to hide it.
``make_sum_loads(ilp)``: a persistent-grid reduction in which each thread has ``ilp``
independent loads in flight: the bytes in flight are (resident warps) x 32 x ilp x 4.
Launched as one warp alone (with the full grid's stride), it times one round of ``ilp``
loads with nothing else in the memory system: the latency Little's law needs.
``make_copy(ilp)``: a one-pass copy, ``ilp`` elements per thread (occupancy experiment).
``make_strided_chunks(ilp)``: warps read 128-byte chunks laid out so that warps running
at the same time are ``stride`` bytes apart (channel and partition effects).

Experiments
-----------
``dram_latency``: pointer-chasing latency against working-set size (L1, L2, DRAM).
``dram_littles_law``: bandwidth against bytes in flight, with Little's law drawn over it
(bytes in flight / one load's latency, and / the time of one warp's round of loads alone).
``dram_occupancy``: occupancy (limited with shared memory) against copy bandwidth.
``dram_strides``: power-of-two strides between concurrent warps, and the same strides
padded by one chunk.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from numba import cuda, uint32  # safe here: gpuperf/__init__ (which picks the mode) has already run

from .. import bench, device, validate
from ..records import Result, experiment

WARP = 32
FLOAT_BYTES = 4

# --------------------------------------------------------------------------- the model


@dataclass(frozen=True)
class DramLayout:
    """Interleaved distribution of an address space over channels and banks.

    Consecutive bursts go to consecutive channels (bank 0 of each); once every channel
    has one, the next bursts go to bank 1 of each channel, and so on; after the last
    bank of the last channel the pattern starts again at channel 0, bank 0.
    """

    burst_bytes: int = 8
    channels: int = 4
    banks_per_channel: int = 2

    def __post_init__(self):
        for name in ("burst_bytes", "channels", "banks_per_channel"):
            validate.positive_int(getattr(self, name), name)

    def burst_of(self, byte_address: int) -> int:
        """Which burst (counting from address 0) holds this byte."""
        byte_address = validate.positive_int(byte_address, "byte_address", minimum=0)
        return int(byte_address) // self.burst_bytes

    def locate(self, byte_address: int) -> tuple[int, int]:
        """(channel, bank) that holds this byte."""
        burst = self.burst_of(byte_address)
        return burst % self.channels, (burst // self.channels) % self.banks_per_channel

    def locate_element(self, index: int, element_bytes: int = FLOAT_BYTES) -> tuple[int, int]:
        """(channel, bank) of element ``index`` of an array that starts at address 0."""
        index = validate.positive_int(index, "index", minimum=0)
        element_bytes = validate.positive_int(element_bytes, "element_bytes")
        return self.locate(int(index) * element_bytes)

    def table(self, n_elements: int, element_bytes: int = FLOAT_BYTES) -> list[dict]:
        """One row per element: index, burst, channel, bank."""
        element_bytes = validate.positive_int(element_bytes, "element_bytes")
        n_elements = validate.positive_int(n_elements, "n_elements")
        rows = []
        for i in range(n_elements):
            ch, bank = self.locate_element(i, element_bytes)
            rows.append({"element": i, "burst": self.burst_of(i * element_bytes),
                         "channel": ch, "bank": bank})
        return rows


# The textbook's toy system (its figure of an array distributed over channels and banks).
TEXTBOOK = DramLayout(burst_bytes=8, channels=4, banks_per_channel=2)


def ddr_channel_gbps(bus_bits: int = 64, clock_ghz: float = 1.0) -> float:
    """A double-data-rate bus moves bus_bits/8 bytes twice per clock: 64 bits at 1 GHz = 16 GB/s."""
    clock_ghz = validate.positive(clock_ghz, "clock_ghz")
    validate.positive_int(bus_bits, "bus_bits")
    if clock_ghz <= 0:
        raise ValueError(f"clock_ghz must be positive, not {clock_ghz}.")
    return bus_bits / 8 * 2 * clock_ghz


def channels_needed(target_gbps: float, channel_gbps: float = 16.0) -> int:
    """Channels a processor needs to reach ``target_gbps`` (the textbook: 256 GB/s -> 16)."""
    target_gbps = validate.positive(target_gbps, "target_gbps")
    channel_gbps = validate.positive(channel_gbps, "channel_gbps")
    if target_gbps <= 0 or channel_gbps <= 0:
        raise ValueError("target_gbps and channel_gbps must be positive.")
    return math.ceil(target_gbps / channel_gbps - 1e-12)


def bus_utilization(ratio: float, banks: int) -> float:
    """Steady-state fraction of time a channel's bus transfers data.

    Each access keeps its bank busy for ``ratio`` time units (cell-array access) and then
    one unit on the shared bus (the burst transfer). A bank starts its next access only
    after its transfer, so one bank delivers one burst every ``ratio + 1`` units and
    ``banks`` banks deliver ``banks`` bursts in that time, until the bus is full.
    """
    ratio = validate.nonnegative(ratio, "ratio")
    if ratio < 0:
        raise ValueError(f"ratio (access latency / transfer time) must be >= 0, not {ratio}.")
    banks = validate.positive_int(banks, "banks")
    return min(1.0, banks / (ratio + 1.0))


def banks_needed(ratio: float) -> int:
    """Fewest banks that keep the bus busy all the time: R + 1 (rounded up)."""
    ratio = validate.nonnegative(ratio, "ratio")
    if ratio < 0:
        raise ValueError(f"ratio must be >= 0, not {ratio}.")
    return math.ceil(ratio + 1.0 - 1e-12)


def bank_schedule(ratio: float, banks: int, accesses: int) -> list[dict]:
    """Simulate ``accesses`` back-to-back reads spread round-robin over ``banks`` banks.

    Returns one dict per access: bank, ``start`` (cell-array access begins), ``ready``
    (data sensed, ``start + ratio``), ``bus_start`` and ``bus_end`` (the burst on the
    bus, one time unit, possibly delayed while another bank's burst is on it). A bank's
    next access starts when its previous transfer ends. Time is in burst-transfer units.
    """
    ratio = validate.nonnegative(ratio, "ratio")
    if ratio < 0:
        raise ValueError(f"ratio must be >= 0, not {ratio}.")
    banks = validate.positive_int(banks, "banks")
    accesses = validate.positive_int(accesses, "accesses")
    bank_free = [0.0] * banks
    bus_free = 0.0
    out = []
    for i in range(accesses):
        b = i % banks
        start = bank_free[b]
        ready = start + ratio
        bus_start = max(ready, bus_free)
        bus_end = bus_start + 1.0
        bus_free = bank_free[b] = bus_end
        out.append({"access": i, "bank": b, "start": start, "ready": ready,
                    "bus_start": bus_start, "bus_end": bus_end})
    return out


def simulated_utilization(ratio: float, banks: int, accesses: int = 2000) -> float:
    """Bus utilization measured on ``bank_schedule`` over its second half (steady state)."""
    validate.nonnegative(ratio, "ratio")
    validate.positive_int(banks, "banks")
    validate.positive_int(accesses, "accesses", minimum=2)
    sched = bank_schedule(ratio, banks, accesses)
    half = sched[len(sched) // 2:]
    span = half[-1]["bus_end"] - half[0]["bus_start"]
    return len(half) / span if span > 0 else 1.0


def tile_loads(width: int, tile: int, phase: int, *, matrix: str = "M",
               layout: DramLayout = TEXTBOOK, element_bytes: int = FLOAT_BYTES) -> list[dict]:
    """The coalesced accesses of every block in one phase of the tiled matrix product.

    ``P = M @ N`` with square ``width x width`` row-major matrices, ``tile x tile``
    blocks and tiles: in phase ``ph`` the thread ``(ty, tx)`` of block ``(by, bx)`` loads
    ``M[by*tile + ty, ph*tile + tx]`` and ``N[ph*tile + ty, bx*tile + tx]`` (when inside
    the matrix). The threads of one tile row read consecutive addresses: one coalesced
    access each. Returns one row per (block, tile row) with the element indices loaded,
    the bursts they span and the (channel, bank) pairs those bursts live in.
    """
    _check_layout(layout)
    element_bytes = validate.positive_int(element_bytes, "element_bytes")
    width = validate.positive_int(width, "width")
    tile = validate.positive_int(tile, "tile")
    n_phases = math.ceil(width / tile)
    phase = validate.positive_int(phase, "phase", minimum=0, maximum=n_phases - 1)
    validate.choice(matrix, "matrix", ("M", "N"))
    blocks = math.ceil(width / tile)
    out = []
    for by in range(blocks):
        for bx in range(blocks):
            for ty in range(tile):
                if matrix == "M":
                    row, col0 = by * tile + ty, phase * tile
                else:
                    row, col0 = phase * tile + ty, bx * tile
                cols = [c for c in range(col0, col0 + tile) if c < width]
                if row >= width or not cols:
                    continue  # the bounds test: these threads load nothing (they store 0)
                elements = tuple(row * width + c for c in cols)
                bursts = sorted({layout.burst_of(e * element_bytes) for e in elements}
                                | {layout.burst_of(e * element_bytes + element_bytes - 1)
                                   for e in elements})
                places = []
                for b in bursts:
                    place = layout.locate(b * layout.burst_bytes)
                    if place not in places:
                        places.append(place)
                out.append({"block": (by, bx), "tile_row": ty, "elements": elements,
                            "bursts": tuple(bursts), "places": tuple(places)})
    return out


def phase_usage(width: int, tile: int, phase: int, *, matrix: str = "M",
                layout: DramLayout = TEXTBOOK, element_bytes: int = FLOAT_BYTES) -> dict:
    """Distinct bursts requested from each (channel, bank) in one phase, all blocks together.

    Blocks that load the same burst (``block(0,0)`` and ``block(0,1)`` share M's tiles)
    count it once: the L2 cache merges such requests when they come close in time.
    ``matrix="both"`` adds M's and N's bursts, each matrix starting at channel 0, bank 0
    (as if each were allocated on a boundary of the whole interleaving pattern).
    """
    validate.positive_int(width, "width")
    validate.positive_int(tile, "tile")
    validate.positive_int(phase, "phase", minimum=0)
    _check_layout(layout)
    validate.choice(matrix, "matrix", ("M", "N", "both"))
    usage: dict[tuple[int, int], int] = {}
    for which in (("M", "N") if matrix == "both" else (matrix,)):
        bursts = set()
        for acc in tile_loads(width, tile, phase, matrix=which, layout=layout,
                              element_bytes=element_bytes):
            bursts.update(acc["bursts"])
        for b in bursts:
            place = layout.locate(b * layout.burst_bytes)
            usage[place] = usage.get(place, 0) + 1
    return dict(sorted(usage.items()))


def channels_used(width: int, tile: int, phase: int, *, matrix: str = "M",
                  layout: DramLayout = TEXTBOOK, element_bytes: int = FLOAT_BYTES) -> list[int]:
    """Sorted channels that any block reaches in this phase."""
    validate.choice(matrix, "matrix", ("M", "N", "both"))
    validate.positive_int(width, "width")
    validate.positive_int(tile, "tile")
    return sorted({ch for ch, _ in phase_usage(width, tile, phase, matrix=matrix,
                                               layout=layout, element_bytes=element_bytes)})


# --------------------------------------------------------------------------- Little's law


def littles_law_gbps(bytes_in_flight: float, latency_ns: float) -> float:
    """Bandwidth that ``bytes_in_flight`` sustain when each request takes ``latency_ns``.

    Bytes per nanosecond are GB/s (1e9 bytes per 1e9 ns), so no conversion is needed.
    """
    bytes_in_flight = validate.nonnegative(bytes_in_flight, "bytes_in_flight")
    latency_ns = validate.positive(latency_ns, "latency_ns")
    if latency_ns <= 0:
        raise ValueError(f"latency_ns must be positive, not {latency_ns}.")
    if bytes_in_flight < 0:
        raise ValueError(f"bytes_in_flight must be >= 0, not {bytes_in_flight}.")
    return bytes_in_flight / latency_ns


def bytes_in_flight(warps_per_sm: int, loads_per_thread: int, sm_count: int,
                    bytes_per_load: int = FLOAT_BYTES) -> int:
    """Resident warps x 32 threads x independent loads per thread x bytes per load."""
    warps_per_sm = validate.positive_int(warps_per_sm, "warps_per_sm", minimum=0)
    loads_per_thread = validate.positive_int(loads_per_thread, "loads_per_thread", minimum=0)
    sm_count = validate.positive_int(sm_count, "sm_count")
    bytes_per_load = validate.positive_int(bytes_per_load, "bytes_per_load")
    return warps_per_sm * sm_count * WARP * loads_per_thread * bytes_per_load


def loads_per_thread_needed(target_gbps: float, latency_ns: float, warps_per_sm: int,
                            sm_count: int, bytes_per_load: int = FLOAT_BYTES) -> int:
    """Fewest independent loads per thread whose bytes in flight sustain ``target_gbps``."""
    target_gbps = validate.positive(target_gbps, "target_gbps")
    latency_ns = validate.positive(latency_ns, "latency_ns")
    if target_gbps <= 0 or latency_ns <= 0:
        raise ValueError("target_gbps and latency_ns must be positive.")
    warps_per_sm = validate.positive_int(warps_per_sm, "warps_per_sm")
    sm_count = validate.positive_int(sm_count, "sm_count")
    bytes_per_load = validate.positive_int(bytes_per_load, "bytes_per_load")
    needed = target_gbps * latency_ns  # bytes in flight
    per_load_round = warps_per_sm * sm_count * WARP * bytes_per_load
    return max(1, math.ceil(needed / per_load_round - 1e-9))


# --------------------------------------------------------------------------- kernels


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
            # unrolls the loop and overlaps iterations, and ilp=1 keeps 4 loads in flight.
            i += ilp * stride + (acc != acc)
        while i < n:  # the tail: fewer than ilp elements left for this thread
            acc += x[i]
            i += stride
        partial[tid] = acc

    return sum_loads


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


SUM_ILPS = (1, 2, 4, 8, 16)
COPY_ILPS = (1, 4)
_COPY_SIG = "void(float32[::1], float32[::1])"
PTX_TARGETS = (
    [(pointer_chase, "void(int32[::1], int64, int32[::1])"),
     (pointer_chase_unsigned, "void(int32[::1], int64, int32[::1])")]
    + [(make_sum_loads(k), "void(float32[::1], float32[::1], int64)") for k in SUM_ILPS]
    + [(make_copy(k), _COPY_SIG) for k in COPY_ILPS]
    + [(make_strided_chunks(k), "void(float32[::1], float32[::1], int64, int64, int64)")
       for k in (1, 2, 8)]
)

# --------------------------------------------------------------------------- host wrappers


def _check_layout(layout):
    if not isinstance(layout, DramLayout):
        raise TypeError(f"layout must be a DramLayout (e.g. gp.dram.TEXTBOOK or DramLayout("
                        f"burst_bytes=8, channels=4, banks_per_channel=2)), not "
                        f"{type(layout).__name__}.")
    return layout


def _check_res(res, *columns):
    """``res`` must be a Result (of the right experiment: it has ``columns``)."""
    validate.result(res, "res")
    for c in columns:
        validate.column(res, c, "res column")
    return res


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


def sum_partials(x, *, ilp: int = 4, blocks: int = 2, block: int = 64):
    """Per-thread partial sums of ``x`` by ``make_sum_loads(ilp)`` on ``blocks x block`` threads."""
    d_x, _ = _as_device(x, "x", np.float32)
    ilp = validate.choice(ilp, "ilp", range(1, 65))
    blocks = validate.positive_int(blocks, "blocks")
    block = validate.block_size(block)
    partial = cuda.to_device(np.full(blocks * block, np.nan, dtype=np.float32))
    make_sum_loads(ilp)[blocks, block](d_x, partial, blocks * block)
    return partial.copy_to_host()


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


# --------------------------------------------------------------------------- measurement helpers


def _resident_blocks_per_sm(kernel, block: int, shared_bytes: int = 0) -> int:
    """Blocks of ``kernel`` (already compiled by a launch) that fit on one SM at once."""
    compiled = next(iter(kernel.overloads.values()))
    return compiled.max_cooperative_grid_blocks(block, shared_bytes) // device.sm_count()


def _chase_latency_ns(nxt_host, *, steps: int = 4096, warm: bool = True,
                      kernel=pointer_chase) -> dict:
    """Nanoseconds per dependent load: (t(2s) - t(s)) / s, so the launch overhead cancels.

    The chain carries on across runs (the kernel leaves its position in ``pos``), so a
    working set larger than the steps of one run is still visited all round, and the
    caches hold what the working set's size lets them hold.
    """
    d_nxt = cuda.to_device(nxt_host)
    pos = cuda.to_device(np.zeros(1, dtype=np.int32))
    slots = int((nxt_host >= 0).sum())
    l2 = device.info().l2_bytes or 64 * 2**20
    if warm and slots * WARP * FLOAT_BYTES <= 2 * l2:
        # Go once round the whole chain, so that whatever fits in L1 or L2 is there when
        # the timed runs start (they carry on round the same chain).
        kernel[1, 1](d_nxt, slots, pos)
    short = bench.time_kernel(lambda: kernel[1, 1](d_nxt, steps, pos),
                              min_repeat=5, min_time=0.02)
    long = bench.time_kernel(lambda: kernel[1, 1](d_nxt, 2 * steps, pos),
                             min_repeat=5, min_time=0.02)
    ns = (long.median_ms - short.median_ms) * 1e6 / steps
    end = int(pos.copy_to_host()[0])
    if end < 0 or nxt_host[end] < 0:
        raise RuntimeError("the pointer chase left its chain: the kernel is broken.")
    return {"latency_ns": ns, "spread": max(short.spread, long.spread)}


def _clock_ghz() -> float | None:
    try:
        return cuda.get_current_device().CLOCK_RATE / 1e6  # kHz -> GHz
    except Exception:
        return None


LATENCY_SIZES_KIB = [4, 8, 16, 32, 64, 96, 128, 192, 256, 384, 512, 1024, 2048, 4096, 8192,
                     16384, 24576, 32768, 49152, 65536, 98304, 131072, 262144, 524288, 1048576]


@experiment("dram_latency", chapter="dram",
            title="Load-to-use latency by pointer chasing, against working-set size",
            units={"kib": "KiB", "latency_ns": "ns", "latency_cycles": "cycles"})
def dram_latency(progress):
    ghz = _clock_ghz()
    rows = []
    for order in ("random", "sequential"):
        for kib in LATENCY_SIZES_KIB:
            slots = kib * 1024 // (WARP * FLOAT_BYTES)  # one slot per 128-byte line
            nxt = chase_chain(slots, order=order, seed=kib)
            steps = 4096 if kib <= 65536 else 2048
            m = _chase_latency_ns(nxt, steps=steps)
            rows.append({"order": order, "kib": kib, "latency_ns": m["latency_ns"],
                         "latency_cycles": m["latency_ns"] * ghz if ghz else None,
                         "spread": m["spread"]})
            progress(f"dram_latency {order:10s} {kib:8d} KiB  {m['latency_ns']:7.1f} ns")
    return rows


INDEX_LEVELS = (("L1", 16), ("L2", 1024), ("DRAM", None))  # KiB; None: four times the L2


@experiment("dram_latency_index", chapter="dram",
            title="Pointer chase with signed (int32) and unsigned indices: the load against the "
                  "index arithmetic",
            units={"kib": "KiB", "signed_ns": "ns", "unsigned_ns": "ns", "arithmetic_ns": "ns"})
def dram_latency_index(progress):
    l2 = device.info().l2_bytes or 64 * 2**20
    ghz = _clock_ghz()
    rows = []
    for level, kib in INDEX_LEVELS:
        kib = kib or 4 * l2 // 1024
        nxt = chase_chain(kib * 1024 // (WARP * FLOAT_BYTES), order="random", seed=kib)
        steps = 4096 if kib <= 65536 else 2048
        signed = _chase_latency_ns(nxt, steps=steps)
        unsigned = _chase_latency_ns(nxt, steps=steps, kernel=pointer_chase_unsigned)
        rows.append({"level": level, "kib": kib, "signed_ns": signed["latency_ns"],
                     "unsigned_ns": unsigned["latency_ns"],
                     "arithmetic_ns": signed["latency_ns"] - unsigned["latency_ns"],
                     "unsigned_cycles": unsigned["latency_ns"] * ghz if ghz else None,
                     "spread": max(signed["spread"], unsigned["spread"])})
        progress(f"{level} ({kib} KiB): signed {signed['latency_ns']:.1f} ns, "
                 f"unsigned {unsigned['latency_ns']:.1f} ns")
    return rows


def latency_index_summary(res) -> str:
    """Per level: signed and unsigned time per step and the share that is index arithmetic."""
    _check_res(res, "level", "signed_ns", "unsigned_ns")
    lines = []
    for r in res.rows:
        s, u = r["signed_ns"], r["unsigned_ns"]
        if not (s and u):
            continue
        lines.append(f"{r['level']}: {s:.1f} ns per step with int32 indices, {u:.1f} ns unsigned: "
                     f"the signed chase {'slower' if s >= u else 'faster'} by {abs(s - u):.1f} ns "
                     f"({abs(s - u) / s:.0%} of its figure)")
    lines.append(f"({res.label})")
    text = "\n".join(lines)
    print(text)
    return text


def _dram_latency_ns(order: str = "sequential") -> float:
    """Latency of a load that misses L2: a chase over four times the L2's size."""
    l2 = device.info().l2_bytes or 64 * 2**20
    slots = 4 * l2 // (WARP * FLOAT_BYTES)
    return _chase_latency_ns(chase_chain(slots, order=order, seed=1), steps=2048)["latency_ns"]


LITTLE_WARPS = (1, 2, 4, 8, 16, 32, 64)
STREAM_ELEMENTS = 1 << 26  # 256 MiB of float32: five times an H100's L2


def _persistent_launch(kernel, warps_per_sm: int):
    """(blocks, threads per block, resident warps per SM) for a grid that fits at once."""
    sms = device.sm_count()
    blocks_per_sm = max(1, warps_per_sm // 32)
    threads = warps_per_sm * WARP // blocks_per_sm
    fits = _resident_blocks_per_sm(kernel, threads)
    blocks_per_sm = min(blocks_per_sm, fits)
    return sms * blocks_per_sm, threads, blocks_per_sm * threads // WARP


def _round_ns(kernel, ilp: int, x, partial, stride: int) -> float:
    """Nanoseconds per iteration of ``kernel`` (``make_sum_loads(ilp)``) run by one warp alone.

    With ``stride`` a full grid's size the warp reads the addresses one warp of that grid
    reads, so this is the time of one round of ``ilp`` loads (and the loop around them)
    when nothing else uses the memory system: the latency each warp of the grid would see
    if adding warps cost nothing.
    """
    # One warp touches only a stride-th of x, which would stay in L2 from run to run:
    # flush it before each run, so that the loads go to DRAM as the full grid's do.
    t = bench.time_kernel(lambda: kernel[1, WARP](x, partial, stride), min_repeat=3,
                          min_time=0.03, flush=True)
    loads = math.ceil(x.size / stride)  # per thread (lane 0; the others differ by at most 1)
    return t.median_ms * 1e6 / (loads / ilp)


@experiment("dram_littles_law", chapter="dram",
            title="Bandwidth against bytes in flight (resident warps x loads per thread)",
            units={"gbps": "GB/s", "predicted_gbps": "GB/s", "textbook_gbps": "GB/s",
                   "bytes_in_flight": "B", "latency_ns": "ns", "round_ns": "ns",
                   "gbps_launch_counted": "GB/s"})
def dram_littles_law(progress):
    sms = device.sm_count()
    latency = _dram_latency_ns("sequential")
    latency_random = _dram_latency_ns("random")
    progress(f"dram_littles_law: DRAM latency {latency:.0f} ns sequential, "
             f"{latency_random:.0f} ns random")
    rng = np.random.default_rng(7)
    x = cuda.to_device((rng.random(STREAM_ELEMENTS, dtype=np.float32) - 0.5) * 3 + 1)
    partial = cuda.device_array(sms * 64 * WARP, dtype=np.float32)
    rows = []
    for ilp in SUM_ILPS:
        kernel = make_sum_loads(ilp)
        kernel[sms, 32](x, partial, sms * 32)  # compile before asking for its occupancy
        # The latency for this curve: one warp alone, with the smallest grid's stride. A
        # thread waits each iteration for all ilp loads, so a round is longer than one load.
        round_ns = _round_ns(kernel, ilp, x, partial, sms * WARP)
        progress(f"dram_littles_law ilp={ilp:2d}: one warp alone takes {round_ns:.0f} ns per "
                 f"round of {ilp} loads")
        for warps in LITTLE_WARPS:
            blocks, threads, resident = _persistent_launch(kernel, warps)
            launch = kernel[blocks, threads]
            # time_kernel hides the launch: a kernel of about 0.1 ms would otherwise be timed
            # with the host's launch work in it, and read tens of percent slow near the ceiling.
            t = bench.time_kernel(lambda launch=launch, s=blocks * threads: launch(x, partial, s),
                                  min_repeat=5, min_time=0.05)
            # The same launch timed the plain way, the host's launch work inside the events:
            # what the hold before the start event leaves out.
            plain = bench.time_kernel(lambda launch=launch, s=blocks * threads:
                                      launch(x, partial, s), min_repeat=5, min_time=0.02,
                                      hide_launch=False)
            in_flight = bytes_in_flight(resident, ilp, sms)
            bw = bench.gbps(STREAM_ELEMENTS * FLOAT_BYTES, t.median_ms)
            pred = littles_law_gbps(in_flight, round_ns)
            rows.append({"warps_per_sm": resident, "ilp": ilp, "bytes_in_flight": in_flight,
                         "gbps": bw, "predicted_gbps": pred, "round_ns": round_ns,
                         "textbook_gbps": littles_law_gbps(in_flight, latency),
                         "latency_ns": latency, "latency_random_ns": latency_random,
                         "spread": t.spread,
                         "gbps_launch_counted": bench.gbps(STREAM_ELEMENTS * FLOAT_BYTES,
                                                           plain.median_ms)})
            progress(f"dram_littles_law warps/SM={resident:2d} ilp={ilp:2d} "
                     f"{in_flight / 1024:8.0f} KiB  {bw:7.0f} GB/s  (Little: {pred:7.0f})")
    linear = [r for r in littles_law_agreement(rows) if r["linear"]]
    progress(f"dram_littles_law: {sum(r['agrees'] for r in linear)} of {len(linear)} points "
             "where bandwidth still rises in proportion to the bytes in flight agree with "
             "Little's law within 20%")
    return rows


@functools.lru_cache(maxsize=1, typed=True)
def _stream_buffers():
    sms = device.sm_count()
    rng = np.random.default_rng(7)
    x = cuda.to_device((rng.random(STREAM_ELEMENTS, dtype=np.float32) - 0.5) * 3 + 1)
    return x, cuda.device_array(sms * 64 * WARP, dtype=np.float32)


def measure_loads(ilp: int, warps_per_sm: int) -> dict:
    """Measure one point of ``dram_littles_law`` live (GPU only): GB/s and bytes in flight."""
    validate.positive_int(ilp, "ilp", maximum=64)
    validate.positive_int(warps_per_sm, "warps_per_sm", maximum=64)
    bench._require_gpu("measure_loads")
    ilp = validate.positive_int(ilp, "ilp", maximum=64)
    warps_per_sm = validate.positive_int(warps_per_sm, "warps_per_sm", maximum=64)
    x, partial = _stream_buffers()
    kernel = make_sum_loads(ilp)
    kernel[device.sm_count(), 32](x, partial, device.sm_count() * 32)
    blocks, threads, resident = _persistent_launch(kernel, warps_per_sm)
    launch = kernel[blocks, threads]
    t = bench.time_kernel(lambda: launch(x, partial, blocks * threads), min_repeat=5,
                          min_time=0.05)
    return {"gbps": bench.gbps(STREAM_ELEMENTS * FLOAT_BYTES, t.median_ms),
            "warps_per_sm": resident,
            "bytes_in_flight": bytes_in_flight(resident, ilp, device.sm_count())}


LOADED_ILPS = (1, 4, 16)
LOADED_WARPS = (1, 2, 4, 8, 16, 32)  # at most half an SM's warps: the probe's block fits beside
PROBE_STEPS = 2048


def _probe_once(probe, d_nxt, pos, steps, stream, launches):
    """The probe (the unsigned chase) run for ``steps`` steps in ``stream`` inside a load:
    ``launches`` = (load stream, callables issuing the load). The first half of the load is
    issued, then the probe, made to wait on the GPU until that half has ended, then the
    other half. The host has issued the probe long before the wait ends, so the probe's span
    holds neither the host's launch work nor unloaded time. Returns the probe's nanoseconds
    per step, the load's span (ms), and how far the probe started after the load
    (``head_ms``) and ended before it (``tail_ms``)."""
    load_stream, fns = launches
    half = max(1, len(fns) // 2)
    cuda.synchronize()
    a0, a1, started = cuda.event(), cuda.event(), cuda.event()
    a0.record(load_stream)
    for fn in fns[:half]:
        fn()
    started.record(load_stream)
    started.wait(stream)  # the probe starts once the first half of the load has run
    b0, b1 = cuda.event(), cuda.event()
    b0.record(stream)
    probe[1, 1, stream](d_nxt, steps, pos)
    b1.record(stream)
    for fn in fns[half:]:
        fn()
    a1.record(load_stream)
    cuda.synchronize()
    return {"probe_ns": b0.elapsed_time(b1) * 1e6 / steps, "probe_ms": b0.elapsed_time(b1),
            "load_ms": a0.elapsed_time(a1), "head_ms": a0.elapsed_time(b0),
            "tail_ms": b1.elapsed_time(a1)}


@experiment("dram_loaded_latency", chapter="dram",
            title="Latency under load: a pointer chase running beside the bandwidth kernel",
            units={"gbps": "GB/s", "bytes_in_flight": "B", "idle_ns": "ns", "loaded_ns": "ns",
                   "little_gbps": "GB/s", "implied_in_flight": "B"})
def dram_loaded_latency(progress):
    """For points of ``dram_littles_law``'s sweep: the bandwidth kernel runs, launched back to
    back in one stream, while a probe, the unsigned pointer chase over four times the L2 in
    random order, runs in another stream. The probe's time per step is the latency a load sees
    while the memory system carries that bandwidth (``loaded_ns``); the probe alone gives
    ``idle_ns``. ``little_gbps``: the bytes in flight over the loaded latency; and the other
    way round, ``implied_in_flight``: the measured bandwidth times the loaded latency, an
    estimate of the bytes that were on average in flight. The median of three runs after one
    more; ``covered``: in every run the probe started after the load's first kernel and ended
    before its last (``_probe_once``)."""
    bench._require_gpu("dram_loaded_latency")
    sms = device.sm_count()
    l2 = device.info().l2_bytes or 64 * 2**20
    x, partial = _stream_buffers()
    nxt = chase_chain(4 * l2 // (WARP * FLOAT_BYTES), order="random", seed=3)
    d_nxt = cuda.to_device(nxt)
    pos = cuda.to_device(np.zeros(1, dtype=np.int32))
    probe = pointer_chase_unsigned
    probe_stream, load_stream = cuda.stream(), cuda.stream()
    probe[1, 1](d_nxt, 4 * l2 // (WARP * FLOAT_BYTES), pos)  # compiles, and goes round once
    # Alone: the difference of two chain lengths (the launch cancels), as dram_latency does.
    idle_ns = _chase_latency_ns(nxt, steps=PROBE_STEPS, kernel=probe)["latency_ns"]
    progress(f"dram_loaded_latency: the probe alone, {idle_ns:.0f} ns per step")
    rows = []
    for ilp in LOADED_ILPS:
        kernel = make_sum_loads(ilp)
        kernel[sms, 32](x, partial, sms * 32)  # compile before asking for its occupancy
        for warps in LOADED_WARPS:
            blocks, threads, resident = _persistent_launch(kernel, warps)
            stride = blocks * threads
            alone = kernel[blocks, threads]
            one = bench.time_kernel(lambda f=alone, s=stride: f(x, partial, s),
                                    min_repeat=3, min_time=0.01).median_ms
            # The second half of the launches alone outlasts the probe, even if latency
            # grows fourfold under load; the first half outlasts the host's issuing.
            n = 2 * max(2, math.ceil(4 * PROBE_STEPS * idle_ns * 1e-6 / one) + 1)
            launch = kernel[blocks, threads, load_stream]
            fns = [lambda f=launch, s=stride: f(x, partial, s)] * n
            runs = [_probe_once(probe, d_nxt, pos, PROBE_STEPS, probe_stream,
                                (load_stream, fns)) for _ in range(4)][1:]
            med = {k: float(np.median([r[k] for r in runs])) for k in runs[0]}
            loaded_ns = med["probe_ns"]
            gbps = bench.gbps(n * STREAM_ELEMENTS * FLOAT_BYTES, med["load_ms"])
            in_flight = bytes_in_flight(resident, ilp, sms)
            rows.append({"ilp": ilp, "warps_per_sm": resident, "bytes_in_flight": in_flight,
                         "gbps": gbps, "idle_ns": idle_ns, "loaded_ns": loaded_ns,
                         "little_gbps": littles_law_gbps(in_flight, loaded_ns),
                         "implied_in_flight": gbps * loaded_ns,
                         "head_ms": med["head_ms"], "probe_ms": med["probe_ms"],
                         "covered": all(r["tail_ms"] >= 0 and r["head_ms"] > 0 for r in runs),
                         "launches": n})
            progress(f"dram_loaded_latency ilp={ilp:2d} warps/SM={resident:2d}: {gbps:6.0f} GB/s, "
                     f"probe {loaded_ns:5.0f} ns per step, Little {rows[-1]['little_gbps']:6.0f}")
    return rows


def loaded_latency_summary(res) -> list[dict]:
    """``dram_loaded_latency`` per point: measured GB/s, latency idle and loaded, Little's law
    with the loaded latency (``little_gbps``, and ``measured_over_little``), and the bytes in
    flight the measurement implies as a share of those the loads allow (``in_flight_pct``)."""
    _check_res(res, "ilp", "warps_per_sm", "gbps", "loaded_ns", "little_gbps",
               "implied_in_flight", "bytes_in_flight")
    return [{"ilp": r["ilp"], "warps_per_sm": r["warps_per_sm"],
             "in_flight_kib": r["bytes_in_flight"] / 1024, "gbps": r["gbps"],
             "loaded_ns": r["loaded_ns"], "x_idle": r["loaded_ns"] / r["idle_ns"],
             "little_gbps": r["little_gbps"], "measured_over_little": r["gbps"] / r["little_gbps"],
             "in_flight_pct": 100 * r["implied_in_flight"] / r["bytes_in_flight"],
             "covered": r["covered"]} for r in res.rows]


def show_loaded_latency(res) -> list[dict]:
    """Show :func:`loaded_latency_summary` as a table; return its rows."""
    rows = loaded_latency_summary(res)
    print(f"On {res.gpu}: the probe alone takes {res.rows[0]['idle_ns']:.0f} ns per step; "
          "beside the bandwidth kernel:")
    Result("dram_loaded_latency (summary)", rows, res.meta, res.source).show(
        note="x_idle: the loaded latency over the probe's alone. little_gbps: the allowed "
             "bytes in flight (SMs x resident warps x 32 x loads per thread x 4 B) / loaded "
             "latency. in_flight_pct: measured GB/s x loaded latency, as a share of the allowed "
             "bytes. covered: the probe ran inside the load in every run.")
    return rows


def loaded_latency_reading(res, little) -> str:
    """Two readings of ``dram_loaded_latency`` (``res``), printed and returned: how far the
    probe's latency rose at the highest bandwidth, and, per loads per thread, the share of the
    allowed bytes in flight at the lightest load against one load's latency over one warp's
    round of loads alone (``round_ns`` of ``dram_littles_law``, ``little``, same GPU)."""
    _check_res(res, "ilp", "gbps", "loaded_ns", "idle_ns", "implied_in_flight",
               "bytes_in_flight")
    _check_res(little, "ilp", "warps_per_sm", "round_ns")
    if little.gpu != res.gpu:
        raise ValueError(f"little was recorded on {little.gpu}, res on {res.gpu}: pass both "
                         "experiments of the same GPU.")
    top = max(res.rows, key=lambda r: r["gbps"])
    copy = res.ceilings.get("copy_gbps")
    share = f", {100 * top['gbps'] / copy:.0f}% of the device copy" if copy else ""
    lines = [f"the probe alone: {top['idle_ns']:.0f} ns per load; beside {top['gbps']:.0f} GB/s"
             f"{share}: {top['loaded_ns']:.0f} ns ({top['loaded_ns'] / top['idle_ns']:.1f}x)"]
    for ilp in sorted(res.values("ilp")):
        light = min(res.select(ilp=ilp), key=lambda r: r["gbps"])
        rounds = [r["round_ns"] for r in little.rows if r["ilp"] == ilp]
        pct = 100 * light["implied_in_flight"] / light["bytes_in_flight"]
        line = (f"{ilp:2d} load{'s' if ilp > 1 else ' '} per thread, lightest load: {pct:.0f}% "
                "of the allowed bytes in flight")
        if rounds:
            line += (f"; one load's latency over one warp's round alone: "
                     f"{100 * light['idle_ns'] / rounds[0]:.0f}%")
        lines.append(line)
    lines.append(f"({res.label})")
    text = "\n".join(lines)
    print(text)
    return text


def loaded_littles_law(res, little, *, within: float = 1.2) -> list[dict]:
    """Little's law at every point of ``dram_loaded_latency`` (``res``), with the latency
    measured under load, printed as a table and returned as rows.

    Two predictions, each capped at the device copy (``res.ceilings["copy_gbps"]``):

    * ``loaded_gbps``: the allowed bytes in flight over the probe's loaded latency, the
      textbook law with the loaded latency in it;
    * ``predicted_gbps``: the allowed bytes in flight over one warp's round of loads alone
      (``round_ns`` of ``dram_littles_law``, ``little``, same GPU, same loads per thread)
      stretched by the probe's loaded over idle latency. A thread waits for its whole batch
      of loads each round, so its round, not one load, is the time the law needs; under load
      every load of the batch waits longer, by the factor the probe measures.

    ``agrees``: ``predicted_gbps`` and the measured GB/s within a factor ``within`` (1.2:
    20%) of each other. A point of ``res`` with no round time for its loads per thread in
    ``little`` is refused.
    """
    _check_res(res, "ilp", "warps_per_sm", "gbps", "loaded_ns", "idle_ns", "bytes_in_flight")
    _check_res(little, "ilp", "round_ns")
    within = validate.number(within, "within", minimum=1.0, maximum=10.0)
    if little.gpu != res.gpu:
        raise ValueError(f"little was recorded on {little.gpu}, res on {res.gpu}: pass both "
                         "experiments of the same GPU.")
    rounds = {r["ilp"]: r["round_ns"] for r in little.rows}
    missing = sorted({r["ilp"] for r in res.rows} - set(rounds))
    if missing:
        raise ValueError(f"little has no round time for {missing} loads per thread: pass the "
                         "dram_littles_law record of the same GPU, which sweeps them.")
    copy = res.ceilings.get("copy_gbps") or math.inf
    out = []
    for r in sorted(res.rows, key=lambda r: (r["ilp"], r["warps_per_sm"])):
        stretch = r["loaded_ns"] / r["idle_ns"]
        predicted = min(r["bytes_in_flight"] / (rounds[r["ilp"]] * stretch), copy)
        out.append({"ilp": r["ilp"], "warps_per_sm": r["warps_per_sm"], "gbps": r["gbps"],
                    "x_idle": stretch,
                    "loaded_gbps": min(r["bytes_in_flight"] / r["loaded_ns"], copy),
                    "predicted_gbps": predicted, "measured_over_predicted": r["gbps"] / predicted,
                    "agrees": 1 / within <= predicted / r["gbps"] <= within})
    agree = sum(r["agrees"] for r in out)
    print(f"On {res.gpu}: {agree} of {len(out)} points within {100 * (within - 1):.0f}% of "
          "Little's law with the round time stretched by the loaded latency")
    Result("dram_loaded_latency (Little's law under load)", out, res.meta, res.source).show(
        note="loaded_gbps: min(allowed bytes in flight / probe's loaded latency, copy). "
             "predicted_gbps: min(allowed bytes in flight / (one warp's round alone x x_idle), "
             "copy). agrees: predicted and measured within "
             f"{100 * (within - 1):.0f}% of each other.")
    return out


def plot_loaded_latency(res):
    """Left: latency under load against the bandwidth carried, per loads per thread, with the
    idle latency and the copy ceiling. Right: the bytes in flight the measurement implies
    (bandwidth x loaded latency) against those the loads allow, with the line where they are
    equal."""
    _check_res(res, "ilp", "gbps", "loaded_ns", "idle_ns", "implied_in_flight",
               "bytes_in_flight")
    from .. import plots  # lazily: matplotlib only when drawing
    fig = _figure(plots.COLUMN_INCHES, 7.6)
    ax, rax = fig.subplots(2, 1)
    ilps = sorted(res.values("ilp"))
    for i, ilp in enumerate(ilps):
        rows = sorted(res.select(ilp=ilp), key=lambda r: r["gbps"])
        label = f"{ilp} load{'s' if ilp > 1 else ''}/thread"
        ax.plot([r["gbps"] for r in rows], [r["loaded_ns"] for r in rows], "o-", ms=4, lw=1,
                color=_CHANNEL_COLORS[i], label=label)
        rax.plot([r["bytes_in_flight"] for r in rows], [r["implied_in_flight"] for r in rows],
                 "o-", ms=4, lw=1, color=_CHANNEL_COLORS[i], label=label)
    idle = res.rows[0]["idle_ns"]
    ax.axhline(idle, color="k", lw=0.8, ls="--")
    ax.text(ax.get_xlim()[0], idle * 1.03, f" the probe alone: {idle:.0f} ns", fontsize=8)
    ceiling = res.ceilings.get("copy_gbps")
    if ceiling:
        ax.axvline(ceiling, color="#C44E52", lw=1, ls=":")
        lo, hi = ax.get_ylim()
        ax.text(ceiling, lo + 0.5 * (hi - lo), f"device copy\n{ceiling:.0f} GB/s ", fontsize=8,
                color="#C44E52", ha="right", va="center")
    ax.set_xlabel("bandwidth carried by the load (GB/s)")
    ax.set_ylabel("probe's latency per load (ns)")
    ax.legend(fontsize=7, loc="upper left")
    _style(ax, res, "Latency grows with the load on the memory system")
    lo = min(r["bytes_in_flight"] for r in res.rows)
    hi = max(r["bytes_in_flight"] for r in res.rows)
    rax.plot([lo, hi], [lo, hi], "k--", lw=0.8, label="all the loads' bytes in flight")
    rax.set_xscale("log", base=2)
    rax.set_yscale("log", base=2)
    ticks = [2**k for k in range(14, 26, 2) if lo / 2 <= 2**k <= hi * 2]
    rax.set_xticks(ticks, [_bytes_label(t) for t in ticks], fontsize=8)
    rax.set_yticks(ticks, [_bytes_label(t) for t in ticks], fontsize=8)
    rax.set_xlabel("bytes in flight the resident warps' loads allow")
    rax.set_ylabel("bandwidth x loaded latency")
    rax.legend(fontsize=7, loc="upper left")
    rax.grid(alpha=0.3)
    return fig


OCC_BLOCKS = (32, 64, 128, 256, 384, 512)


def _shared_for_blocks_per_sm(blocks_per_sm: int) -> int:
    """Dynamic shared memory per block that leaves room for at most ``blocks_per_sm`` blocks."""
    per_sm = device.info().shared_per_sm or 100 * 1024
    # The driver reserves about 1 KiB per block; asking for just over a 1/(b+1) share
    # keeps a (b+1)-th block out.
    return min(48 * 1024, per_sm // (blocks_per_sm + 1) + 1)


@experiment("dram_occupancy", chapter="dram",
            title="Occupancy against copy bandwidth (occupancy capped with shared memory)",
            units={"gbps": "GB/s", "occupancy": "%"})
def dram_occupancy(progress):
    n = STREAM_ELEMENTS
    rng = np.random.default_rng(11)
    x = cuda.to_device((rng.random(n, dtype=np.float32) - 0.5) * 5 - 2)
    out = cuda.device_array(n, dtype=np.float32)
    max_warps = device.info().max_warps_per_sm or 64
    smem = _shared_for_blocks_per_sm(4)
    rows = []
    for ilp in COPY_ILPS:
        kernel = make_copy(ilp)
        for block in OCC_BLOCKS:
            for capped in (True, False):
                shared = smem if capped else 0
                grid = math.ceil(n / (block * ilp))
                kernel[grid, block, 0, shared](x, out)
                per_sm = _resident_blocks_per_sm(kernel, block, shared)
                warps = per_sm * block // WARP
                launch = kernel[grid, block, 0, shared]
                t = bench.time_kernel(lambda launch=launch: launch(x, out),
                                      min_repeat=5, min_time=0.05)
                row = {"ilp": ilp, "block": block, "shared_bytes": shared,
                       "blocks_per_sm": per_sm, "warps_per_sm": warps,
                       "occupancy": 100 * warps / max_warps,
                       **bench.bandwidth_row(2 * n * FLOAT_BYTES, t)}
                rows.append(row)
                progress(f"dram_occupancy ilp={ilp} block={block:4d} shared={shared:6d} "
                         f"{warps:2d} warps/SM  {row['gbps']:7.0f} GB/s")
    return rows


STRIDES = [128 << k for k in range(0, 19)]  # 128 B .. 32 MiB
STRIDE_ELEMENTS = 1 << 28  # 1 GiB: rows = 1 GiB / stride, enough for every warp in flight
STRIDE_ILPS = (2, 4, 8, 16)  # loads in flight per thread tried before the sweep
STRIDE_RETIME_SPREAD = 0.10  # repeats further apart than this: the point is timed again


@experiment("dram_strides", chapter="dram",
            title="Power-of-two strides between concurrent warps (channel and partition effects)",
            units={"stride_bytes": "B", "gbps": "GB/s"})
def dram_strides(progress):
    sms = device.sm_count()
    rng = np.random.default_rng(5)
    x = cuda.to_device((rng.random(STRIDE_ELEMENTS, dtype=np.float32) - 0.5) * 2 + 0.25)
    block = 256
    partial = cuda.device_array(sms * 8 * block, dtype=np.float32)
    geo0 = chunk_geometry(STRIDE_ELEMENTS, 128)
    args0 = (x, partial, geo0["n_chunks"], geo0["rows"], geo0["pitch"])
    # A kernel that cannot saturate DRAM cannot show channel or partition camping: first
    # pick the loads in flight per thread that read contiguous chunks fastest.
    best = None
    for ilp in STRIDE_ILPS:
        kernel = make_strided_chunks(ilp)
        kernel[sms, block](*args0)
        blocks = sms * min(8, _resident_blocks_per_sm(kernel, block))
        t = bench.time_kernel(lambda k=kernel, b=blocks: k[b, block](*args0), min_repeat=5,
                              min_time=0.05)
        gbps = bench.gbps(geo0["bytes_read"], t.median_ms)
        progress(f"dram_strides contiguous, {ilp:2d} loads per thread: {gbps:7.0f} GB/s")
        if best is None or gbps > best[0]:
            best = (gbps, ilp, kernel, blocks)
    _, ilp, kernel, blocks = best
    rows = []
    for stride in STRIDES:
        for padded in (False, True):
            geo = chunk_geometry(STRIDE_ELEMENTS, stride, padded=padded)
            args = (x, partial, geo["n_chunks"], geo["rows"], geo["pitch"])
            t = bench.time_kernel(lambda args=args: kernel[blocks, block](*args),
                                  min_repeat=5, min_time=0.05)
            timings = 1
            # A point whose repeats disagree was disturbed (one H100 run read a single
            # stride at 0.6x with its fastest repeat as fast as its neighbours): time it
            # again, at most twice, and keep the steadiest timing.
            while t.spread > STRIDE_RETIME_SPREAD and timings < 3:
                again = bench.time_kernel(lambda args=args: kernel[blocks, block](*args),
                                          min_repeat=5, min_time=0.05)
                timings += 1
                t = min(t, again, key=lambda tt: tt.spread)
            row = {"stride_bytes": stride, "padded": padded,
                   "pitch_bytes": geo["pitch"] * FLOAT_BYTES, "rows": geo["rows"],
                   "ilp": ilp, "timings": timings,
                   **bench.bandwidth_row(geo["bytes_read"], t)}
            rows.append(row)
            progress(f"dram_strides stride={stride:9d} padded={padded!s:5s} "
                     f"{row['gbps']:7.0f} GB/s")
    return rows


# --------------------------------------------------------------------------- analysis


def littles_law_agreement(res, *, linear_growth: float = 1.8) -> list[dict]:
    """Each point of ``dram_littles_law`` that has a next one, with prediction / measurement.

    ``res`` is the experiment's Result (or its rows). A point is ``linear`` (bandwidth still
    rising) when doubling the resident warps at the same loads per thread still multiplies
    the bandwidth by at least ``linear_growth`` (1.8: within 10% of proportional). There the
    bytes in flight set the pace, and Little's law with one warp's round time alone should
    hold; past the bend the memory system queues requests, and the latency grows with load.
    ``agrees``: prediction and measurement within 20% of each other (each of the two at
    most 1.2 times the other). The last point of each curve has no next one and is left out.
    """
    if not isinstance(res, list):  # a Result, or its rows
        _check_res(res, "ilp", "warps_per_sm", "gbps")
    linear_growth = validate.number(linear_growth, "linear_growth", minimum=1.0, maximum=2.0)
    rows = res.rows if hasattr(res, "rows") else list(res)
    out = []
    for ilp in sorted({r["ilp"] for r in rows}):
        curve = sorted((r for r in rows if r["ilp"] == ilp), key=lambda r: r["warps_per_sm"])
        for r, nxt in zip(curve, curve[1:]):
            more = nxt["warps_per_sm"] / r["warps_per_sm"]
            if more <= 1:
                continue
            growth = (nxt["gbps"] / r["gbps"]) ** (1 / math.log2(more))  # per doubling
            out.append({"warps_per_sm": r["warps_per_sm"], "ilp": ilp,
                        "bytes_in_flight": r["bytes_in_flight"], "gbps": r["gbps"],
                        "predicted_gbps": r["predicted_gbps"],
                        "ratio": r["predicted_gbps"] / r["gbps"],
                        "agrees": 1 / 1.2 <= r["predicted_gbps"] / r["gbps"] <= 1.2,
                        "growth": growth, "linear": growth >= linear_growth})
    return out


def launch_in_timing(res) -> str:
    """What counting the host's launch work would do to ``dram_littles_law``: at its slowest
    and fastest points, the bandwidth timed with the launch left out (``gbps``) and with it
    inside the events (``gbps_launch_counted``). Prints and returns the lines."""
    _check_res(res, "ilp", "warps_per_sm", "gbps", "gbps_launch_counted")
    rows = sorted(res.rows, key=lambda r: r["gbps"])
    lines = []
    for r in (rows[0], rows[-1]):
        ms = STREAM_ELEMENTS * FLOAT_BYTES / (r["gbps"] * 1e6)
        lines.append(f"{r['warps_per_sm']} warps/SM x {r['ilp']} loads (a kernel of "
                     f"{ms:.2f} ms): {r['gbps']:.0f} GB/s with the launch left out, "
                     f"{r['gbps_launch_counted']:.0f} GB/s with it counted "
                     f"({r['gbps_launch_counted'] / r['gbps']:.2f}x)")
    lines.append(f"({res.label})")
    text = "\n".join(lines)
    print(text)
    return text


def latency_levels(res, order: str = "random") -> dict:
    """Typical latency (median of a plateau) at the smallest, a mid-L2 and the largest sizes."""
    _check_res(res, "order", "kib", "latency_ns")
    validate.choice(order, "order", res.values("order"))
    rows = sorted(res.select(order=order), key=lambda r: r["kib"])
    l2_kib = (res.meta.get("device") or {}).get("l2_bytes")
    l2_kib = l2_kib // 1024 if l2_kib else 50 * 1024
    small = [r["latency_ns"] for r in rows[:3]]
    mid = [r["latency_ns"] for r in rows if 2048 <= r["kib"] <= l2_kib // 4]
    big = [r["latency_ns"] for r in rows if r["kib"] >= 8 * l2_kib]
    med = lambda v: float(np.median(v)) if v else None  # noqa: E731
    return {"l1_ns": med(small), "l2_ns": med(mid), "dram_ns": med(big)}


# --------------------------------------------------------------------------- figures of the model

_CHANNEL_COLORS = ["#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860",
                   "#DA8BC3", "#8C8C8C", "#CCB974", "#64B5CD"]


def _figure(w, h):
    # Through pyplot, so that a notebook shows the figure at the end of the cell (a bare
    # matplotlib.figure.Figure is only shown if it is the cell's last expression).
    import matplotlib.pyplot as plt

    from .. import plots

    w = min(w, plots.COLUMN_INCHES)  # never wider than the book's column

    return plt.figure(figsize=(w, h), layout="constrained")


def _channel_color(ch: int, bank: int = 0, banks: int = 1):
    from matplotlib.colors import to_rgb

    r, g, b = to_rgb(_CHANNEL_COLORS[ch % len(_CHANNEL_COLORS)])
    # Later banks of a channel: the same hue, lighter.
    f = 0.55 * bank / max(banks - 1, 1)
    return (r + (1 - r) * f, g + (1 - g) * f, b + (1 - b) * f)


def draw_burst(burst_bytes: int = 32, request: int = 21, words: int = 32, word_bytes: int = 4,
               ratio: float = 10.0):
    """A DRAM row: the burst around a requested address, and what a burst costs in time.

    Top: ``words`` consecutive words; the one asked for (``request``, a word index) and
    the rest of its burst are delivered together. Bottom: reading the burst's words one
    access at a time would cost the cell-array latency (``ratio`` transfer times) per
    word; a burst pays it once, then streams the words over the bus.
    """
    for _name, _val in (("burst_bytes", burst_bytes), ("request", request), ("words", words),
                       ("word_bytes", word_bytes)):
        validate.positive_int(_val, _name, minimum=0 if _name == "request" else 1)
    words = validate.positive_int(words, "words", maximum=256)
    ratio = validate.nonnegative(ratio, "ratio")
    burst_bytes = validate.positive_int(burst_bytes, "burst_bytes", minimum=word_bytes)
    if burst_bytes % word_bytes:
        raise ValueError("burst_bytes must be a multiple of word_bytes.")
    request = validate.positive_int(request, "request", minimum=0, maximum=words - 1)
    per_burst = burst_bytes // word_bytes
    first = request // per_burst * per_burst
    fig = _figure(9, 3.6)
    ax, ax2 = fig.subplots(2, 1, height_ratios=[1, 1.3])
    for w in range(words):
        in_burst = first <= w < first + per_burst
        color = "#4C72B0" if in_burst else "#E5E5E5"
        ax.add_patch(_rect(w, 0, 0.95, 1, color))
        ax.text(w + 0.47, 0.5, str(w), ha="center", va="center", fontsize=7,
                color="white" if in_burst else "#555555")
        if w % per_burst == 0:
            ax.axvline(w - 0.025, color="#333333", lw=0.8)
    ax.annotate("requested word", (request + 0.47, 1.0), (request + 0.47, 1.7), ha="center",
                arrowprops={"arrowstyle": "->"}, fontsize=8)
    ax.set_xlim(-0.5, words + 0.5)
    ax.set_ylim(-0.2, 2.0)
    ax.axis("off")
    ax.set_title(f"One DRAM row, {word_bytes}-byte words, {burst_bytes}-byte bursts: the sense "
                 f"amplifiers read the whole burst (blue) at once", fontsize=9)
    # Timing: one access per word against one burst.
    y_single, y_burst = 1.0, 0.0
    t = 0.0
    for _ in range(per_burst):
        ax2.add_patch(_rect(t, y_single, ratio, 0.6, "#BBBBBB"))
        ax2.add_patch(_rect(t + ratio, y_single, 1, 0.6, "#222222"))
        t += ratio + 1
    ax2.add_patch(_rect(0, y_burst, ratio, 0.6, "#BBBBBB"))
    for k in range(per_burst):
        ax2.add_patch(_rect(ratio + k, y_burst, 0.95, 0.6, "#222222"))
    ax2.set_xlim(0, max(t, ratio + per_burst) * 1.02)
    ax2.set_ylim(-0.3, 1.9)
    ax2.set_yticks([y_burst + 0.3, y_single + 0.3],
                   ["one burst", f"{per_burst} separate\naccesses"])
    ax2.set_xlabel("time (in word-transfer times; grey: cell-array access, black: transfer)")
    ax2.text(ratio + per_burst + 1, y_burst + 0.3,
             f"{ratio + per_burst:.0f} against {t:.0f}: {t / (ratio + per_burst):.1f}x faster",
             va="center", fontsize=8)
    for side in ("top", "right"):
        ax2.spines[side].set_visible(False)
    return fig


def _rect(x, y, w, h, color, **kw):
    from matplotlib.patches import Rectangle

    return Rectangle((x, y), w, h, facecolor=color, edgecolor=kw.pop("edgecolor", "none"), **kw)


def draw_banks(ratio: float = 4.0, banks: int = 2, accesses: int | None = None):
    """The textbook's bank timing: grey cell-array accesses, black bursts on the shared bus."""
    validate.nonnegative(ratio, "ratio")
    if accesses is not None:
        validate.positive_int(accesses, "accesses", maximum=1000)
    banks = validate.positive_int(banks, "banks", maximum=64)
    accesses = accesses or max(3 * banks, 6)
    sched = bank_schedule(ratio, banks, accesses)
    fig = _figure(9, 0.45 * (banks + 1) + 1.6)
    ax = fig.subplots()
    for a in sched:
        y = banks - a["bank"]
        ax.add_patch(_rect(a["start"], y, a["ready"] - a["start"], 0.7, "#BBBBBB"))
        if a["bus_start"] > a["ready"]:  # the data wait for the bus
            ax.add_patch(_rect(a["ready"], y, a["bus_start"] - a["ready"], 0.7, "white",
                               edgecolor="#BBBBBB", hatch="///"))
        ax.add_patch(_rect(a["bus_start"], y, 1, 0.7, "#222222"))
        ax.add_patch(_rect(a["bus_start"], 0, 1, 0.7, _channel_color(a["bank"] % 10)))
    end = sched[-1]["bus_end"]
    ax.set_xlim(0, end * 1.01)
    ax.set_ylim(-0.3, banks + 0.9)
    ax.set_yticks([0.35] + [banks - b + 0.35 for b in range(banks)],
                  ["bus"] + [f"bank {b}" for b in range(banks)])
    ax.set_xlabel("time (burst-transfer times)")
    util = bus_utilization(ratio, banks)
    ax.set_title(f"access latency R = {ratio:g} transfer times, {banks} bank"
                 f"{'s' if banks > 1 else ''}: the bus is busy {util:.0%} of the time "
                 f"(R + 1 = {banks_needed(ratio)} banks keep it full)", fontsize=9)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return fig


def draw_interleaving(layout: DramLayout = TEXTBOOK, n_elements: int = 16,
                      element_bytes: int = FLOAT_BYTES):
    """Which elements of an array sit in which channel and bank (the textbook's Fig. 6.9)."""
    _check_layout(layout)
    element_bytes = validate.positive_int(element_bytes, "element_bytes")
    n_elements = validate.positive_int(n_elements, "n_elements", maximum=512)
    cells: dict[tuple[int, int], list[int]] = {}
    for r in layout.table(n_elements, element_bytes):
        cells.setdefault((r["channel"], r["bank"]), []).append(r["element"])
    C, B = layout.channels, layout.banks_per_channel
    fig = _figure(min(2.2 * C + 1, 14), 0.9 * B + 1.2)
    ax = fig.subplots()
    for ch in range(C):
        for bank in range(B):
            elems = cells.get((ch, bank), [])
            ax.add_patch(_rect(ch + 0.04, B - 1 - bank + 0.06, 0.92, 0.88,
                               _channel_color(ch, bank, B)))
            text = ", ".join(f"M[{e}]" for e in elems[:8]) + (" ..." if len(elems) > 8 else "")
            ax.text(ch + 0.5, B - 1 - bank + 0.5, f"bank {bank}\n{_wrap(text, 22)}",
                    ha="center", va="center", fontsize=7)
    ax.set_xlim(0, C)
    ax.set_ylim(0, B)
    ax.set_xticks([c + 0.5 for c in range(C)], [f"channel {c}" for c in range(C)])
    ax.set_yticks([])
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    ax.set_title(f"{n_elements} elements of {element_bytes} bytes, {layout.burst_bytes}-byte "
                 f"bursts, {C} channels x {B} banks: burst k goes to channel k mod {C}, "
                 f"bank (k div {C}) mod {B}", fontsize=9)
    return fig


def _wrap(text: str, width: int) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width)) if text else "(empty)"


def draw_matmul_phases(width: int = 4, tile: int = 2, *, matrix: str = "M",
                       layout: DramLayout = TEXTBOOK, element_bytes: int = FLOAT_BYTES,
                       max_phases: int = 4):
    """Which channel and bank every element loaded in each phase lives in, and the load per channel.

    Top row: the matrix, one panel per phase; each element loaded in that phase is
    coloured by its channel (lighter for higher banks) and labelled with the blocks that
    load it. Bottom: distinct bursts asked of each channel in each phase.
    """
    _check_layout(layout)
    validate.positive_int(element_bytes, "element_bytes")
    validate.choice(matrix, "matrix", ("M", "N"))
    width = validate.positive_int(width, "width", maximum=64)
    tile = validate.positive_int(tile, "tile", maximum=width)
    phases = math.ceil(width / tile)
    shown = min(phases, validate.positive_int(max_phases, "max_phases"))
    # Panels share the column; a cell gets a label only if it is big enough to read.
    from .. import plots  # lazily: matplotlib only when drawing
    panel = (min(2.6 * shown + 0.5, plots.COLUMN_INCHES) - 0.5) / shown
    fig = _figure(2.6 * shown + 0.5, panel + 3.0)
    axes = fig.subplots(2, shown, squeeze=False, height_ratios=[panel + 0.6, 1.6])
    C, B = layout.channels, layout.banks_per_channel
    labels = panel / width >= 0.3
    for ph in range(shown):
        ax = axes[0][ph]
        who: dict[int, list[tuple[int, int]]] = {}
        for acc in tile_loads(width, tile, ph, matrix=matrix, layout=layout,
                              element_bytes=element_bytes):
            for e in acc["elements"]:
                who.setdefault(e, []).append(acc["block"])
        for e in range(width * width):
            r, c = divmod(e, width)
            if e in who:
                ch, bank = layout.locate_element(e, element_bytes)
                color = _channel_color(ch, bank, B)
            else:
                color = "#F2F2F2"
            ax.add_patch(_rect(c, width - 1 - r, 0.96, 0.96, color))
            if labels and e in who:
                ch, bank = layout.locate_element(e, element_bytes)
                text = f"c{ch}b{bank}"
                if phases <= 2:  # few blocks: name the ones that load the element
                    text += "\n" + " ".join(f"{by}{bx}" for by, bx in sorted(set(who[e])))
                ax.text(c + 0.48, width - 1 - r + 0.48, text, ha="center", va="center",
                        fontsize=6 if width > 4 else 7)
        ax.set_xlim(0, width)
        ax.set_ylim(0, width)
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
        used = channels_used(width, tile, ph, matrix=matrix, layout=layout,
                             element_bytes=element_bytes)
        ax.set_title(f"phase {ph}\nchannels {used}", fontsize=9)
        usage = phase_usage(width, tile, ph, matrix=matrix, layout=layout,
                            element_bytes=element_bytes)
        bx = axes[1][ph]
        bottom = np.zeros(C)
        for bank in range(B):
            counts = np.array([usage.get((ch, bank), 0) for ch in range(C)], dtype=float)
            bx.bar(range(C), counts, bottom=bottom,
                   color=[_channel_color(ch, bank, B) for ch in range(C)],
                   edgecolor="white", label=f"bank {bank}")
            bottom += counts
        bx.set_xticks(range(C), [f"c{c}" for c in range(C)])
        bx.yaxis.get_major_locator().set_params(integer=True)
        bx.set_ylabel("bursts" if ph == 0 else "")
        for side in ("top", "right"):
            bx.spines[side].set_visible(False)
    fig.suptitle(f"{width}x{width} tiled matrix product, {tile}x{tile} tiles: the elements of "
                 f"{matrix} each phase loads ({shown} of {phases} phases shown)"
                 + ("\nlabels: c<channel>b<bank>"
                    + (", then the blocks (by bx) that load it" if phases <= 2 else "")
                    if labels else ""),
                 fontsize=9)
    return fig


def explore_model():
    """Sliders over the model: bank timing, and channels per phase of the tiled product.

    Built from ``gpuperf.widgets.interact`` (sliders redrawing into an output area), like
    every other explorer of the course.
    """
    from .. import widgets  # imported here: a GPU box may lack ipywidgets

    def matmul_view(width, tile, matrix, burst_bytes, channels, banks):
        layout = DramLayout(burst_bytes, channels, banks)
        fig = draw_matmul_phases(width, min(tile, width), matrix=matrix, layout=layout)
        if tile > width:  # say so: otherwise the figure just repeats the tile = width one
            fig.text(0.5, -0.01, f"tile {tile} is wider than the {width}x{width} matrix: drawn "
                     f"with tile {width}", ha="center", va="top", fontsize=8, color="#a00")
        return fig

    # Both start where the chapter's figures start.
    banks_tab = widgets.interact(lambda ratio, banks: draw_banks(ratio, banks),
                                 start={"ratio": 4, "banks": 2},
                                 ratio=(1, 24, 1), banks=(1, 26, 1))
    matmul_tab = widgets.interact(matmul_view,
                                  start={"width": 4, "tile": 2, "burst_bytes": 8,
                                         "channels": 4, "banks": 2},
                                  width=(2, 32, 1), tile=[1, 2, 4, 8, 16], matrix=["M", "N"],
                                  burst_bytes=[4, 8, 16, 32, 64], channels=(1, 8, 1),
                                  banks=(1, 4, 1))
    return widgets.tabs({"banks on a channel": banks_tab,
                         "tiled matmul: channels per phase": matmul_tab})


# --------------------------------------------------------------------------- measured figures


def _style(ax, res, title):
    ax.set_title(title + "\n", fontsize=10)
    ax.grid(True, which="both", alpha=0.25)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.text(0.995, 1.0, res.label, transform=ax.transAxes, ha="right", va="bottom", fontsize=7,
            color="#555555")


def plot_latency(res):
    """Latency against working set: the L1, L2 and DRAM plateaus, L2's size marked."""
    _check_res(res, "order", "kib", "latency_ns")
    from .. import plots  # lazily: matplotlib only when drawing
    fig = _figure(8, 4.2)
    ax = fig.subplots()
    for i, order in enumerate(res.values("order")):
        rows = sorted(res.select(order=order), key=lambda r: r["kib"])
        ax.plot([r["kib"] * 1024 for r in rows], [r["latency_ns"] for r in rows], "o-",
                ms=4, color=_CHANNEL_COLORS[i], label=f"{order} chain")
    plots.reference_curves(ax, res, x="kib", y="latency_ns", series="order", rows=res.rows,
                           x_factor=1024, colors={order: _CHANNEL_COLORS[i] for i, order
                                                  in enumerate(res.values("order"))})
    ax.set_xscale("log", base=2)
    l2 = (res.meta.get("device") or {}).get("l2_bytes")
    if l2:
        ax.axvline(l2, color="#999999", ls="--", lw=1)
        ax.text(l2, ax.get_ylim()[1] * 0.95, f" L2 = {l2 / 2**20:.0f} MiB", fontsize=8,
                va="top", color="#555555")
    ax.set_xticks([2**k for k in range(12, 31, 2)],
                  [_bytes_label(2**k) for k in range(12, 31, 2)], fontsize=8)
    ax.set_xlabel("working set (one 4-byte index per 128-byte line)")
    ax.set_ylabel("load-to-use latency (ns)")
    ax.legend(fontsize=8, loc="upper left")
    _style(ax, res, "Pointer chasing: one dependent load at a time")
    return fig


def _bytes_label(n: float) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n:g} B"


def plot_littles_law(res):
    """Measured bandwidth against bytes in flight, Little's law and the ceilings over it.

    Right: measurement / prediction (with the round latency) against the measured bandwidth,
    the 20% band shaded; filled markers where bandwidth still rises in proportion.
    """
    _check_res(res, "ilp", "warps_per_sm", "gbps", "bytes_in_flight")
    from .. import plots  # lazily: matplotlib only when drawing
    fig = _figure(plots.COLUMN_INCHES, 8.4)
    ax, rax = fig.subplots(2, 1, height_ratios=[1.4, 1])
    ilps = sorted(res.values("ilp"))
    for i, ilp in enumerate(ilps):
        rows = sorted(res.select(ilp=ilp), key=lambda r: r["bytes_in_flight"])
        ax.plot([r["bytes_in_flight"] for r in rows], [r["gbps"] for r in rows], "o-", ms=4,
                color=_CHANNEL_COLORS[i], label=f"{ilp} load{'s' if ilp > 1 else ''}/thread",
                lw=1)
    plots.reference_curves(ax, res, x="bytes_in_flight", y="gbps", series="ilp", rows=res.rows,
                           colors={ilp: _CHANNEL_COLORS[i] for i, ilp in enumerate(ilps)})
    latency = res.rows[0]["latency_ns"]
    textbook = sorted((r["bytes_in_flight"], r["textbook_gbps"]) for r in res.rows)
    xs, line = (np.array(v, dtype=float) for v in zip(*textbook))
    ceiling = res.ceilings.get("copy_gbps")
    top = max([r["gbps"] for r in res.rows] + [ceiling or 0])
    keep = line <= 1.3 * top
    ax.plot(xs[keep], line[keep], "k--", lw=1.2,
            label=f"Little's law, one load's latency: bytes in flight / {latency:.0f} ns")
    for i, ilp in enumerate(ilps):
        # The same law with one warp's measured round of ilp loads alone (round_ns).
        rows = sorted(res.select(ilp=ilp), key=lambda r: r["bytes_in_flight"])
        pts = [(r["bytes_in_flight"], r["predicted_gbps"]) for r in rows
               if r["predicted_gbps"] <= 1.3 * top]
        if pts:
            ax.plot(*zip(*pts), ":", color=_CHANNEL_COLORS[i], lw=1.2,
                    label="Little's law, one warp's round alone (dotted)" if i == 0 else None)
    if ceiling:
        ax.axhline(ceiling, color="#C44E52", lw=1, ls=":")
        ax.text(xs[0], ceiling * 1.02, f"device copy {ceiling:.0f} GB/s", fontsize=8,
                color="#C44E52")
    peak = res.ceilings.get("peak_gbps")
    if peak:
        ax.axhline(peak, color="#999999", lw=1, ls=":")
        ax.text(xs[0], peak * 1.02, f"theoretical {peak:.0f} GB/s", fontsize=8, color="#777777")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks([2**k for k in range(14, 25, 2)],
                  [_bytes_label(2**k) for k in range(14, 25, 2)], fontsize=8)
    ax.set_xlabel("bytes in flight = SMs x resident warps x 32 x loads per thread x 4 B")
    ax.set_ylabel("bandwidth (GB/s, log scale)")
    ax.legend(fontsize=7, loc="lower right")
    _style(ax, res, "Bandwidth needs bytes in flight: latency x bandwidth")

    rax.axhspan(0.8, 1.2, color="#55A868", alpha=0.12, lw=0)
    rax.axhline(1.0, color="k", lw=0.8)
    agree = littles_law_agreement(res)
    for i, ilp in enumerate(ilps):
        for linear in (True, False):
            pts = [(r["gbps"], 1 / r["ratio"]) for r in agree if r["ilp"] == ilp
                   and r["linear"] == linear]
            if pts:
                rax.plot(*zip(*pts), "o", ms=5, color=_CHANNEL_COLORS[i],
                         mfc=_CHANNEL_COLORS[i] if linear else "none")
    rax.set_xscale("log")
    rax.set_ylim(0, 1.3)
    rax.set_xlabel("measured bandwidth (GB/s, log scale)")
    rax.set_ylabel("measured / Little's law (one warp's round)")
    rax.set_title("filled: bandwidth still doubles with the bytes in flight\n"
                  "hollow: past the bend, latency grows with load; band: within 20%",
                  fontsize=8)
    rax.grid(alpha=0.3)
    return fig


def plot_occupancy(res):
    """Copy bandwidth against occupancy, for 1 and 4 elements per thread."""
    _check_res(res, "ilp", "occupancy", "gbps")
    from .. import plots  # lazily: matplotlib only when drawing
    fig = _figure(8, 4.2)
    ax = fig.subplots()
    for i, ilp in enumerate(sorted(res.values("ilp"))):
        rows = sorted(res.select(ilp=ilp), key=lambda r: (r["occupancy"], -r["gbps"]))
        ax.plot([r["occupancy"] for r in rows], [r["gbps"] for r in rows], "o", ms=5,
                color=_CHANNEL_COLORS[i], label=f"{ilp} element{'s' if ilp > 1 else ''}/thread")
        best: dict[float, float] = {}
        for r in rows:
            best[r["occupancy"]] = max(best.get(r["occupancy"], 0), r["gbps"])
        ax.plot(list(best), list(best.values()), "-", color=_CHANNEL_COLORS[i], lw=1)
    plots.reference_curves(ax, res, x="occupancy", y="gbps", series="ilp", rows=res.rows,
                           connect=False, colors={ilp: _CHANNEL_COLORS[i] for i, ilp
                                                  in enumerate(sorted(res.values("ilp")))})
    ceiling = res.ceilings.get("copy_gbps")
    if ceiling:
        ax.axhline(ceiling, color="#C44E52", lw=1, ls=":")
        ax.text(1, ceiling * 1.02, f"device copy {ceiling:.0f} GB/s", fontsize=8,
                color="#C44E52")
    ax.set_xlabel("occupancy (% of the SM's warp slots, from the occupancy calculator)")
    ax.set_ylabel("copy bandwidth (GB/s, read + write)")
    ax.set_xlim(0, 105)
    ax.legend(fontsize=8, loc="lower right")
    _style(ax, res, "A memory-bound copy against occupancy")
    return fig


def plot_strides(res):
    """Bandwidth with concurrent warps a power of two apart, and one chunk more."""
    _check_res(res, "padded", "stride_bytes", "gbps")
    from .. import plots  # lazily: matplotlib only when drawing
    fig = _figure(8, 4.2)
    ax = fig.subplots()
    for i, padded in enumerate((False, True)):
        rows = sorted(res.select(padded=padded), key=lambda r: r["stride_bytes"])
        ax.plot([r["stride_bytes"] for r in rows], [r["gbps"] for r in rows], "o-", ms=4,
                color=_CHANNEL_COLORS[i],
                label="stride + 128 B (padded)" if padded else "power-of-two stride")
    plots.reference_curves(ax, res, x="stride_bytes", y="gbps", series="padded", rows=res.rows,
                           colors={False: _CHANNEL_COLORS[0], True: _CHANNEL_COLORS[1]})
    ceiling = res.ceilings.get("copy_gbps")
    if ceiling:
        ax.axhline(ceiling, color="#C44E52", lw=1, ls=":")
    ax.set_xscale("log", base=2)
    ax.set_xticks([2**k for k in range(7, 26, 2)],
                  [_bytes_label(2**k) for k in range(7, 26, 2)], fontsize=8)
    ax.set_ylim(0, None)
    ax.set_xlabel("distance between the chunks that concurrent warps read")
    ax.set_ylabel("read bandwidth (GB/s)")
    ax.legend(fontsize=8, loc="lower left")
    _style(ax, res, "Power-of-two strides: does everything land in one channel?")
    return fig


# --------------------------------------------------------------------------- exercises

from .. import exercises as _exercises  # noqa: E402 (the checkers below)


def _sample_layouts():
    return [TEXTBOOK, DramLayout(32, 8, 4), DramLayout(64, 6, 3), DramLayout(16, 5, 1),
            DramLayout(256, 16, 16)]


def _bank_queues(indices, element_bytes: int, layout: DramLayout) -> dict:
    """Accesses per (channel, bank) when concurrent threads load ``indices``: elements in one
    burst arrive in one access, so each burst counts once."""
    from collections import Counter

    bursts = {int(i) * element_bytes // layout.burst_bytes for i in indices}
    return Counter(layout.locate(b * layout.burst_bytes) for b in bursts)


def _bank_queue_cases(layout: DramLayout, element_bytes: int, rng) -> list[tuple[str, list]]:
    """Index sets that tell the wrong answers apart, each named so that a student can rebuild
    it: walks whose stride is one element, one burst, one round of the channels and one round
    of every bank; a tile's rows; random sets with repeats (listed whole); a single element."""
    per_burst = max(1, layout.burst_bytes // element_bytes)
    per_round = per_burst * layout.channels
    cases = []
    for name, stride in (("consecutive", 1), ("one burst apart", per_burst),
                         ("one round of the channels apart", per_round),
                         ("one round of every bank apart", per_round * layout.banks_per_channel),
                         ("a random stride", int(rng.integers(2, 3 * per_round)))):
        count = int(rng.integers(8, 40))
        start = int(rng.integers(0, 1000))
        cases.append((f"{count} loads from element {start}, {_plural(stride, 'element')} "
                      f"apart ({name})",
                      [start + k * stride for k in range(count)]))
    width = 4 * per_burst
    cases.append((f"a 4 x {width} tile at the start of a row-major array {3 * width} elements "
                  "wide", [r * 3 * width + c for r in range(4) for c in range(width)]))
    for _ in range(3):
        picks = rng.integers(0, 50 * per_round, int(rng.integers(5, 60)))
        indices = [int(i) for i in np.concatenate([picks, picks[:3]])]
        cases.append((f"the loads {indices}", indices))
    one = int(rng.integers(0, 10**6))
    cases.append((f"one load, element {one}", [one]))
    return cases


def _bank_queue_mistakes(indices, element_bytes: int, layout: DramLayout) -> list[tuple]:
    """(value, why) for each known mistake: what it returns for ``indices``, and the advice."""
    from collections import Counter

    queues = _bank_queues(indices, element_bytes, layout)
    bursts = {i * element_bytes // layout.burst_bytes for i in indices}
    ch, banks = layout.channels, layout.banks_per_channel

    def longest(keys):
        return max(Counter(keys).values())

    return [
        (longest(layout.locate(i * element_bytes) for i in indices),
         "that is what counting elements (or repeats) gives: elements in one burst arrive in "
         "one access, so count each burst once"),
        (longest(b % ch for b in bursts), "that is what counting per channel gives: a channel "
         "has several banks, and only accesses to the same bank wait for each other"),
        (longest((b // ch) % banks for b in bursts), "that is what counting per bank number "
         "gives: bank b of channel 0 and bank b of channel 1 are different banks; a bank is "
         "the pair (channel, bank)"),
        (len(queues), "that is how many banks are busy; the question is the longest queue, "
         "the most accesses any one bank serves"),
        (len(bursts), "that is how many bursts the loads touch, not how many one bank serves"),
        (longest(layout.locate(b * layout.burst_bytes)
                 for b in {i // layout.burst_bytes for i in indices}),
         "that is what taking the index for the byte address gives: element i starts at "
         "byte i * element_bytes"),
        (longest((b % ch, b // ch) for b in bursts), "that is what banks that never wrap "
         "give: after every bank of a channel has had a burst, the next round starts again "
         "at bank 0"),
    ]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


@_exercises.refuses_stubs
def check_bank_queue(fn):
    """Exercise: the longest bank queue of a set of loads.

    ``fn(indices, element_bytes, burst_bytes, channels, banks) -> int``: the most accesses
    any one (channel, bank) serves when concurrent threads load elements ``indices`` of an
    array that starts at address 0 (``banks`` per channel). A hint names a mistake only
    where that mistake gives every answer the student's code gave on a system."""
    import inspect

    from .. import exercises as ex

    chk = ex.Checker("the longest bank queue of a set of loads")
    if not callable(fn):
        chk.fail(f"expected a function, got {type(fn).__name__}.")
        return chk.report()
    try:
        inspect.signature(fn).bind(0, 0, 0, 0, 0)
    except TypeError:
        chk.fail(f"{getattr(fn, '__name__', 'your function')} must take five arguments: "
                 "(indices, element_bytes, burst_bytes, channels, banks).")
        return chk.report()
    except ValueError:  # no signature to read (a builtin): let the calls tell
        pass
    rng = ex.case_rng(4)
    for layout in _sample_layouts():
        for element_bytes in (4, 8, 2):
            system = (f"{layout.burst_bytes}-byte bursts, {_plural(layout.channels, 'channel')} "
                      f"x {_plural(layout.banks_per_channel, 'bank')}, {element_bytes}-byte "
                      "elements")
            with chk.case(system):
                answers = []  # (what, got, want, mistakes)
                for what, indices in _bank_queue_cases(layout, element_bytes, rng):
                    got = fn(list(indices), element_bytes, layout.burst_bytes, layout.channels,
                             layout.banks_per_channel)
                    whole = isinstance(got, (int, np.integer)) or (
                        isinstance(got, (float, np.floating)) and float(got).is_integer())
                    if isinstance(got, bool) or not whole:
                        chk.fail(f"{what}: returned {got!r}; return the number of accesses, "
                                 "a whole number.")
                        break
                    answers.append((what, int(got),
                                    max(_bank_queues(indices, element_bytes, layout).values()),
                                    _bank_queue_mistakes(indices, element_bytes, layout)))
                else:
                    wrong = [a for a in answers if a[1] != a[2]]
                    if wrong:
                        what, got, want, _ = wrong[0]
                        # A mistake is named only if it explains every answer on this system:
                        # one coincidence on a single index set names nothing.
                        explains = [k for k in range(len(answers[0][3]))
                                    if all(a[1] == a[3][k][0] for a in answers)]
                        hint = f" ({answers[0][3][explains[0]][1]})" if len(explains) == 1 else ""
                        chk.fail(f"{what}: got {got}, expected {want}{hint}; "
                                 f"{len(wrong)} of {len(answers)} index sets wrong here.")
    return chk.report()


def _loads_cases():
    """Cases whose exact answer is far from a rounding boundary (no float ambiguity), and two
    whose quotient is exactly a whole number (every float in them is exact): there the
    answer is that number, which tells a ceiling from ``int(q) + 1``."""
    rng = _exercises.case_rng(12)
    cases = [(3350.0, 620.0, 8, 132, 4), (3350.0, 620.0, 64, 132, 4), (4200.0, 700.0, 16, 132, 4),
             (300.0, 450.0, 4, 40, 4), (300.0, 450.0, 32, 40, 16), (2000.0, 550.0, 2, 108, 8),
             (4096.0, 500.0, 8, 100, 4), (3200.0, 640.0, 16, 100, 4)]
    while len(cases) < 14:
        c = (float(rng.integers(200, 5000)), float(rng.integers(300, 900)),
             int(rng.choice([1, 2, 4, 8, 16, 32, 48, 64])), int(rng.integers(20, 150)),
             int(rng.choice([4, 8, 16])))
        q = c[0] * c[1] / (c[2] * c[3] * WARP * c[4])
        if q > 1 and abs(q - round(q)) > 1e-3:
            cases.append(c)
    return cases


@_exercises.refuses_stubs(solved_by=("loads_per_thread_needed",))
def check_loads_needed(fn):
    """Exercise: ``fn(ceiling_gbps, latency_ns, warps_per_sm, sm_count, bytes_per_load) -> int``."""
    from .. import exercises as ex

    chk = ex.Checker("Little's law: loads per thread to reach the ceiling")
    if not callable(fn):
        chk.fail(f"expected a function, got {type(fn).__name__}.")
        return chk.report()
    for c in _loads_cases():
        gbps, ns, warps, sms, nbytes = c
        with chk.case(f"{gbps:.0f} GB/s, {ns:.0f} ns, {warps} warps/SM, {sms} SMs, "
                      f"{nbytes}-byte loads"):
            got = fn(*c)
            want = loads_per_thread_needed(*c)
            exact = gbps * ns / (warps * sms * WARP * nbytes)
            if isinstance(got, bool) or not isinstance(got, (int, np.integer)):
                if isinstance(got, (float, np.floating)) and float(got).is_integer():
                    chk.fail(f"returned {got!r}, a float; return an int (loads are whole).")
                else:
                    chk.fail(f"returned {got!r}; return a whole number of loads (an int): "
                             f"{exact:.3g} loads per thread is not enough, so round up.")
            elif got != want:
                if got == want + 1 and float(exact).is_integer():
                    why = (f"exactly {exact:.0f} loads per thread are enough here: round up "
                           "with a ceiling (math.ceil), not int(q) + 1.")
                elif got == math.floor(exact):
                    why = "that is rounded down, and falls short of the ceiling; round up."
                elif got == math.ceil(exact * WARP - 1e-9):
                    why = "each warp is 32 threads, and each thread has its own loads in flight."
                elif got == math.ceil(gbps * ns / (warps * WARP * nbytes) - 1e-9):
                    why = "the bytes in flight are spread over every SM, not one."
                else:
                    why = ("bytes in flight = bandwidth x latency, and GB/s x ns = bytes "
                           f"(exact answer before rounding: {exact:.3g}).")
                chk.fail(f"got {got}, expected {want}: {why}")
    return chk.report()


# --------------------------------------------------------------------------- occupancy by hand

# Colab's GPU, from NVIDIA's specifications of compute capability 7.5 (not a record): a
# third set of facts for the occupancy exercise, with another per-SM block limit, no
# reserved shared memory and half the resident threads of a Hopper SM.
T4_SPEC_FACTS = {"name": "NVIDIA T4 (specification)", "compute_capability": (7, 5),
                 "max_threads_per_sm": 1024, "max_threads_per_block": 1024,
                 "registers_per_sm": 65536, "registers_per_block": 65536,
                 "shared_per_sm": 65536, "shared_per_block": 49152,
                 "shared_per_block_optin": 65536, "warp_size": 32}

_RESOURCE_EXPERIMENTS = ("matmul_resources", "matmul_coarsen_sweep", "matmul_regtile_sweep")


def _recorded_occupancy_cases() -> list[tuple]:
    """(threads, registers, shared_bytes, facts, blocks_per_sm) of every compiled kernel whose
    resources and occupancy a shipped record holds: the CUDA occupancy API's answers."""
    from .. import records

    seen, cases = set(), []
    for path in records.available():
        exps = records.load(path)["experiments"]
        for name in _RESOURCE_EXPERIMENTS:
            entry = exps.get(name)
            if not entry:
                continue
            facts = entry["provenance"].get("device") or {}
            for r in entry["rows"]:
                if r.get("blocks_per_sm") is None or r.get("regs") is None:
                    continue
                threads = r.get("threads") or r["tile"] ** 2
                key = (threads, r["regs"], r["smem_bytes"], facts.get("name"))
                if key not in seen:
                    seen.add(key)
                    cases.append((threads, r["regs"], r["smem_bytes"], facts,
                                  r["blocks_per_sm"]))
    return cases


def _drawn_occupancy_cases(n: int = 24) -> list[tuple]:
    """Configurations drawn at random, on each recorded GPU's facts and the T4's, that each
    put another limit in charge; the answer is gp.device.occupancy's."""
    from .. import records

    facts = [T4_SPEC_FACTS] + [records.load(p)["experiments"][_RESOURCE_EXPERIMENTS[0]]
                               ["provenance"]["device"] for p in records.available()
                               if _RESOURCE_EXPERIMENTS[0] in records.load(p)["experiments"]]
    rng = _exercises.case_rng(31)
    # Each of these puts one rule on the edge: registers' unit of 256 (640, 33), the reserved
    # KiB (128, 116000 and 256, 58000), shared memory's unit of 128 bytes (256, 45670), whole
    # warps (680 threads), the per-SM block limit (32 threads), and more.
    fixed = [(48, 40, 0), (1024, 64, 0), (96, 255, 100), (64, 24, 40000), (32, 16, 0),
             (640, 33, 12345), (200, 72, 3000), (128, 32, 116000), (256, 24, 58000),
             (256, 32, 45670), (680, 16, 0)]
    cases = []
    while len(cases) < n + len(fixed) * len(facts):
        if fixed:
            t, r, sh = fixed.pop()
            chosen = list(facts)
        else:
            t = int(rng.choice([32, 48, 64, 96, 128, 160, 192, 256, 384, 512, 768, 1000, 1024]))
            r = int(rng.integers(16, 256))
            sh = int(rng.choice([0, int(rng.integers(1, 48 * 1024)), int(rng.integers(1, 8192))]))
            chosen = [facts[int(rng.integers(len(facts)))]]
        for f in chosen:
            try:
                o = device.occupancy(t, r, sh, f)
            except ValueError:  # a block that cannot run at all: not a case
                continue
            cases.append((t, r, sh, f, o["blocks_per_sm"]))
    return cases


def _occupancy_mistake(got, threads, registers, shared, facts) -> str | None:
    """Name the rule an answer skipped, if skipping exactly one rule gives it."""
    cc = tuple(facts["compute_capability"])
    warps = -(-threads // WARP)
    max_warps = facts["max_threads_per_sm"] // WARP
    blocks_cap = device.MAX_BLOCKS_PER_SM[cc]
    reg_unit = -(-registers * WARP // device.REGISTER_UNIT) * device.REGISTER_UNIT
    reserved = 1024 if cc >= (8, 0) else 0
    shared_unit = -(-shared // device.SHARED_UNIT) * device.SHARED_UNIT

    def blocks(warp_count=warps, per_warp=reg_unit, sh=shared_unit + reserved, cap=blocks_cap,
               thread_limit=None):
        limits = [thread_limit if thread_limit is not None else max_warps // warp_count, cap,
                  facts["registers_per_sm"] // (warp_count * per_warp)]
        if sh:
            limits.append(facts["shared_per_sm"] // sh)
        return min(limits)

    o = device.occupancy(threads, registers, shared, facts)
    variants = [
        (blocks(per_warp=registers * WARP),
         "registers are given to a warp in units of 256: round registers x 32 up first"),
        (blocks(sh=shared_unit), "from compute capability 8.0 the system reserves 1 KiB of "
                                 "shared memory per block: add it"),
        (blocks(sh=shared + reserved), "shared memory is given to a block in units of 128 bytes: "
                                       "round up first"),
        (blocks(cap=10**9), "an SM holds at most gp.device.MAX_BLOCKS_PER_SM[cc] blocks, whatever "
                            "else is free"),
        (blocks(thread_limit=facts["max_threads_per_sm"] // threads),
         "a block takes whole warps: count its threads rounded up to a multiple of 32"),
        (o["warps_per_sm"], "that is the warps per SM; return the blocks"),
    ]
    for value, why in variants:
        if got == value and value != o["blocks_per_sm"]:
            return why
    return None


def occupancy_agreement() -> str:
    """Print how many recorded kernels' blocks per SM (the CUDA occupancy API's answer, from
    every shipped record that holds compiled resources) ``gp.device.occupancy`` reproduces."""
    cases = _recorded_occupancy_cases()
    gpus = sorted({c[3].get("name", "?") for c in cases})
    agree = sum(device.occupancy(t, r, sh, f)["blocks_per_sm"] == want
                for t, r, sh, f, want in cases)
    text = (f"{agree} of {len(cases)} kernel configurations of chapters 4 and 5 (threads, "
            f"registers, shared memory), recorded on {' and '.join(gpus)}: the calculation "
            "by hand gives the blocks per SM that the CUDA occupancy API reported")
    print(text)
    return text


@_exercises.refuses_stubs(solved_by=("gpuperf.device:occupancy", "gpuperf.device:show_occupancy"))
def check_blocks_per_sm(fn):
    """Exercise: ``fn(threads, registers, shared_bytes, facts) -> int``, blocks per SM."""
    from .. import exercises as ex

    chk = ex.Checker("occupancy by hand: resident blocks per SM")
    if not callable(fn):
        chk.fail(f"expected a function, got {type(fn).__name__}.")
        return chk.report()
    recorded = _recorded_occupancy_cases()
    for origin, cases in (("the CUDA occupancy API, recorded", recorded),
                          ("the hardware's rules", _drawn_occupancy_cases())):
        for threads, registers, shared, facts, want in cases:
            with chk.case(f"{threads} threads, {registers} registers, {shared:,} B shared on "
                          f"{facts.get('name', 'a GPU')} ({origin})"):
                got = fn(threads, registers, shared, dict(facts))
                if isinstance(got, bool) or not isinstance(got, (int, np.integer)):
                    chk.fail(f"returned {got!r}; return the number of resident blocks, an int.")
                elif got != want:
                    why = _occupancy_mistake(got, threads, registers, shared, facts)
                    chk.fail(f"got {got}, expected {want}"
                             + (f": {why}." if why else ": compute each resource's limit "
                                "(threads, blocks, registers, shared memory) and take the "
                                "smallest."))
    return chk.report()


# The performance exercise: a copy with one block of IN_FLIGHT_THREADS threads per SM (4 warps,
# 6% of an H100's or H200's warp slots) must reach IN_FLIGHT_SPEED_TARGET of the device-to-device
# copy measured in the same check, at IN_FLIGHT_SPEED_N float32. On an H100 (one run, best of
# three), a grid-stride copy with k loads in flight per thread at this launch read 12% (k = 1),
# 32% (4), 47% (8) and 63% (16) of the copy; each thread loading 4 consecutive elements, 34%.
IN_FLIGHT_THREADS = 128
IN_FLIGHT_SPEED_N = 2**26
IN_FLIGHT_SPEED_TARGET = 0.4
_IN_FLIGHT_SIMULATED = (2, 32)  # the simulator runs every thread in Python: a small launch


def in_flight_launch() -> tuple[int, int]:
    """``(blocks, threads)`` of the copy exercise: one block of ``IN_FLIGHT_THREADS`` threads
    per SM of this GPU (on the simulator, 2 blocks of 32)."""
    from ..mode import SIMULATOR

    if SIMULATOR:
        return _IN_FLIGHT_SIMULATED
    return device.sm_count(default=2), IN_FLIGHT_THREADS


_GUARD = 64  # elements after the end of dst that a correct copy never writes


def _only_partial_trips(missed, n: int, total: int) -> bool:
    """Whether the elements ``missed`` are exactly those that a grid-stride loop of batches
    of ``u`` loads (some u up to 64), with no loop for the rest, leaves out: the elements of
    each thread's last, partial batch."""
    if missed.size == 0:
        return False
    idx = np.arange(n)
    for u in range(2, 65):
        start = idx % total + (idx // total) // u * u * total  # the batch each element is in
        partial = idx[start + (u - 1) * total >= n]
        if partial.size == missed.size and np.array_equal(partial, missed):
            return True
    return False


@_exercises.refuses_stubs(solved_by=("make_copy", "make_sum_loads"))
def check_copy_in_flight(kernel):
    """Exercise: a copy with few threads, ``kernel(src, dst)``.

    The kernel copies float32 ``src`` into ``dst`` (same length, any length), launched with
    ``in_flight_launch()``: few threads, so it must keep several loads in flight per thread.
    Every element copied exactly, nothing written past the
    end of ``dst`` (guard cells after it), ``src`` untouched; sizes around multiples of the
    grid's thread count, so that whole trips and tails both run. On a GPU, also at least
    ``IN_FLIGHT_SPEED_TARGET`` of a device-to-device copy measured in the same check, at
    ``IN_FLIGHT_SPEED_N`` elements."""
    from .. import exercises as ex
    from ..mode import SIMULATOR

    chk = ex.Checker("a copy with few threads: loads in flight")
    if not chk.is_kernel(kernel):
        return chk.report()
    blocks, threads = in_flight_launch()
    total = blocks * threads  # threads in the grid
    if not ex.preflight(chk, kernel, 2, 32, ex.random_array(200, 3), ex.poisoned(200)):
        return chk.report()
    sizes = sorted({1, 2, 31, 33, 100, total - 1, total, total + 1, 3 * total + 5,
                    8 * total - 1, 8 * total + 3, 16 * total, 17 * total + 1, 40 * total + 7,
                    *ex.hidden_sizes(1, 40 * total)})
    for seed in ex.seeds():
        for n in sizes if seed == 0 else sizes[::3]:
            with chk.case(f"n={n}, launch [{blocks}, {threads}]", seed=seed):
                src_host = ex.random_array(n, seed * 7919 + n)
                src = cuda.to_device(src_host)
                whole = cuda.to_device(ex.poisoned(n + _GUARD))
                kernel[blocks, threads](src, whole[:n])
                got = whole.copy_to_host()
                missed = np.flatnonzero(got[:n] != src_host)
                if missed.size:
                    i = int(missed[0])
                    tail = _only_partial_trips(missed, n, total)
                    chk.fail(f"dst[{i}] is {float(got[i]):g}, expected src[{i}] = "
                             f"{float(src_host[i]):g} ({missed.size} of {n} elements wrong"
                             + ((", each in its thread's last, partial batch: the elements "
                                 "left over after the last whole trip need their own loop)"
                                 if missed.size < n else
                                 "; if your loop copies whole batches only, this n is smaller "
                                 "than one batch: the elements left over after the last whole "
                                 "trip need their own loop)") if tail else ")"))
                written = np.flatnonzero(~np.isnan(got[n:]))
                if written.size:
                    chk.fail(f"wrote past the end of dst (dst[{n + int(written[0])}] of a "
                             f"dst of {n} elements): test every index against n before "
                             "loading or storing.")
                if not np.array_equal(src.copy_to_host(), src_host):
                    chk.fail("src changed: the copy must only read it.")
    if SIMULATOR:
        ex.speed_not_measured(chk, f"{IN_FLIGHT_SPEED_TARGET:.0%} of a device-to-device copy "
                                   f"at 2^{IN_FLIGHT_SPEED_N.bit_length() - 1} elements, "
                                   f"launched with one block of {IN_FLIGHT_THREADS} threads "
                                   "per SM")
    elif chk.report_.ok:
        n = IN_FLIGHT_SPEED_N
        src = cuda.to_device(ex.random_array(n, 5))
        dst = cuda.device_array(n, np.float32)
        ex.speed_against_copy(
            chk, lambda: kernel[blocks, threads](src, dst), 8 * n,
            target=IN_FLIGHT_SPEED_TARGET,
            what=f"your copy ({blocks} blocks of {threads} threads, n = 2^{n.bit_length() - 1})",
            advice="with this few threads, Little's law asks for several loads in flight per "
                   "thread: load a batch of elements (each a grid's width apart, so that each "
                   "warp's loads stay coalesced) into registers before storing any of them.")
    return chk.report()


def verify_prediction(loads: int, warps_per_sm: int, res=None) -> dict:
    """Look up the measured bandwidth at ``loads`` per thread and ``warps_per_sm`` warps/SM.

    Prints how close it comes to the best bandwidth measured, and what half as many loads
    reach. ``res`` defaults to ``records.run("dram_littles_law")`` (live on a GPU).
    """
    if res is not None:
        _check_res(res, "ilp", "warps_per_sm", "gbps")
    from .. import records

    loads = validate.positive_int(loads, "loads")
    warps_per_sm = validate.positive_int(warps_per_sm, "warps_per_sm")
    res = res or records.run("dram_littles_law")
    rows = res.select(warps_per_sm=warps_per_sm)
    if not rows:
        raise ValueError(f"warps_per_sm={warps_per_sm} was not measured; choose one of "
                         f"{sorted(res.values('warps_per_sm'))}.")
    measured = sorted(r["ilp"] for r in rows)
    if loads > measured[-1]:
        raise ValueError(f"loads={loads} is above the most loads per thread measured "
                         f"({measured[-1]}); choose one of {measured}.")
    at = min(k for k in measured if k >= loads)
    plateau = max(r["gbps"] for r in res.rows)
    row = next(r for r in rows if r["ilp"] == at)
    below = [r for r in rows if r["ilp"] < at]
    half = max(below, key=lambda r: r["ilp"]) if below else None
    print(f"{warps_per_sm} warps/SM, {at} loads per thread"
          + (f" (the measured point at or above {loads})" if at != loads else "")
          + f": {row['gbps']:.0f} GB/s = {100 * row['gbps'] / plateau:.0f}% of the best "
          f"measured ({plateau:.0f} GB/s).")
    if half:
        print(f"  with {half['ilp']} loads per thread: {half['gbps']:.0f} GB/s = "
              f"{100 * half['gbps'] / plateau:.0f}%.")
    print(f"  ({res.label})")
    return {"ilp": at, "gbps": row["gbps"], "fraction": row["gbps"] / plateau,
            "fewer_fraction": half["gbps"] / plateau if half else None}


# --------------------------------------------------------------------------- prose helpers


def one_load_per_thread(res=None) -> str:
    """Little's law for a copy with one 4-byte load in flight per resident thread.

    From the device facts of the GPU behind ``res`` (``gp.device.facts``) and its measured copy
    ceiling: the bytes such a copy keeps in flight, and the longest load latency they can cover
    at the copy ceiling. Prints the sentence and returns it.
    """
    from .. import device

    if res is not None:
        validate.result(res, "res")
    values, where = device.facts(res)
    threads, sms = values.get("max_threads_per_sm"), values.get("sm_count")
    copy = (getattr(res, "ceilings", None) or {}).get("copy_gbps")
    if not (threads and sms):
        text = f"{where[0].upper()}{where[1:]}: the SM count and threads per SM are not known."
    else:
        per_sm = threads * FLOAT_BYTES
        total = per_sm * sms
        text = (f"{where[0].upper()}{where[1:]}: at most {threads} resident threads per SM x "
                f"{FLOAT_BYTES} bytes = {per_sm / 1024:.0f} KiB in flight per SM, "
                f"{total / 1e6:.2f} MB on {sms} SMs.")
        if copy:
            text += (f" At the copy ceiling of {copy:,.0f} GB/s, that many bytes cover a load "
                     f"latency of at most {total / copy:.0f} ns (bytes / (GB/s) = ns); a load "
                     "that takes longer leaves the copy short of the ceiling.")
    print(text)
    return text


def occupancy_summary(res) -> str:
    """What the occupancy experiment says, in three lines printed from its rows.

    The best copy with the fewest loads per thread; the lowest occupancy at which the most loads
    per thread do at least as well; the best copy of all against the device-to-device copy.
    """
    _check_res(res, "ilp", "gbps", "occupancy", "block")
    ilps = sorted(res.values("ilp"))
    few, many = ilps[0], ilps[-1]
    gbps = lambda r: r["gbps"]  # noqa: E731
    base = max(res.select(ilp=few), key=gbps)
    lines = [f"{few} load(s) per thread: best {base['gbps']:,.0f} GB/s, at {base['occupancy']:.0f}% "
             f"occupancy (block {base['block']})."]
    match = [r for r in res.select(ilp=many) if r["gbps"] >= base["gbps"]]
    if match:
        m = min(match, key=lambda r: (r["occupancy"], -r["gbps"]))
        lines.append(f"{many} loads per thread do at least as well from {m['occupancy']:.0f}% "
                     f"occupancy: {m['gbps']:,.0f} GB/s (block {m['block']}).")
    else:
        lines.append(f"{many} loads per thread never reach that, at any occupancy measured.")
    top = max(res.rows, key=gbps)
    lines.append(f"Best copy of all: {top['gbps']:,.0f} GB/s = {top['pct_copy']:.0f}% of the "
                 f"device-to-device copy ({top['ilp']} loads per thread, block {top['block']}, "
                 f"{top['occupancy']:.0f}% occupancy; {res.label}).")
    text = "\n".join(lines)
    print(text)
    return text
