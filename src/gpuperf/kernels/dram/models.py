"""Chapter 3's model of DRAM (pure Python, no GPU): the textbook's model and Little's law.

``DramLayout``: interleaved distribution of bytes over channels and banks (burst by
burst: channel 0 bank 0, channel 1 bank 0, ..., then bank 1 of every channel, ...).
``TEXTBOOK``: the textbook's toy system, 8-byte bursts, 4 channels, 2 banks each.
``bank_schedule`` / ``bus_utilization`` / ``banks_needed``: why a channel needs at
least R + 1 banks when a cell-array access takes R times as long as a burst transfer.
``tile_loads`` / ``phase_usage``: which channels and banks each thread block of a tiled
matrix multiplication reaches in each phase.
``littles_law_gbps`` / ``loads_per_thread_needed``: bytes in flight = bandwidth x latency,
where the bandwidth is the rate of the bytes the loads carry (bytes *read*).
``copy_loads_per_thread_needed`` / ``copy_latency_covered_ns``: the same for a copy, whose
bandwidth counts bytes read plus written: its loads carry only the reads, half of it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuperf import validate

from .kernels import FLOAT_BYTES, WARP

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


# A copy's bandwidth (``bench.ceilings()["copy_gbps"]``, chapter 1) counts the bytes read plus
# the bytes written; the loads in flight carry only the reads, half of that figure. So
# ``littles_law_gbps`` gives the rate of the bytes the loads carry (a read bandwidth), and
# ``loads_per_thread_needed`` takes one; for a copy use the ``copy_*`` functions below.
COPY_READ_SHARE = 0.5


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
    """Fewest independent loads per thread whose bytes in flight sustain ``target_gbps`` of reads.

    ``target_gbps`` is the rate of the bytes the loads carry: a read-only kernel's bandwidth.
    For a copy's bandwidth (reads plus writes) use ``copy_loads_per_thread_needed``.
    """
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


def step_latency_ns(ms_short: float, ms_long: float, steps: int) -> float:
    """Latency of one step of a pointer chase, from two timed chains: ``steps`` steps took
    ``ms_short`` ms and ``2 * steps`` steps ``ms_long`` ms, each with its launch in it. The
    difference cancels the launch: ``(ms_long - ms_short) / steps`` ms, in ns."""
    ms_short = validate.positive(ms_short, "ms_short")
    ms_long = validate.positive(ms_long, "ms_long")
    steps = validate.positive_int(steps, "steps")
    if ms_long <= ms_short:
        raise ValueError(f"ms_long ({ms_long}) must exceed ms_short ({ms_short}): the longer "
                         "chain takes longer.")
    return (ms_long - ms_short) / steps * 1e6


def channel_gbps(ratio: float, banks: int, bus_gbps: float) -> float:
    """What a channel delivers with ``banks`` banks when a cell-array access takes ``ratio``
    burst-transfer times: ``bus_gbps x bus_utilization(ratio, banks)``."""
    bus_gbps = validate.positive(bus_gbps, "bus_gbps")
    return bus_gbps * bus_utilization(ratio, banks)


def copy_loads_per_thread_needed(copy_gbps: float, latency_ns: float, warps_per_sm: int,
                                 sm_count: int, bytes_per_load: int = FLOAT_BYTES) -> int:
    """Fewest loads in flight per thread for a copy to move ``copy_gbps`` (bytes read + written).

    The loads carry the reads only, ``COPY_READ_SHARE`` of the copy's bandwidth, so the bytes in
    flight are ``copy_gbps / 2 x latency_ns``: ``loads_per_thread_needed(copy_gbps / 2, ...)``.
    """
    copy_gbps = validate.positive(copy_gbps, "copy_gbps")
    return loads_per_thread_needed(copy_gbps * COPY_READ_SHARE, latency_ns, warps_per_sm,
                                   sm_count, bytes_per_load)


def copy_latency_covered_ns(bytes_in_flight: float, copy_gbps: float) -> float:
    """Longest load latency (ns) that ``bytes_in_flight`` of loads cover for a copy at ``copy_gbps``.

    The copy reads at ``COPY_READ_SHARE x copy_gbps``; bytes / (GB/s) = ns.
    """
    bytes_in_flight = validate.nonnegative(bytes_in_flight, "bytes_in_flight")
    copy_gbps = validate.positive(copy_gbps, "copy_gbps")
    return bytes_in_flight / (copy_gbps * COPY_READ_SHARE)


def _check_layout(layout):
    if not isinstance(layout, DramLayout):
        raise TypeError(f"layout must be a DramLayout (e.g. gp.dram.TEXTBOOK or DramLayout("
                        f"burst_bytes=8, channels=4, banks_per_channel=2)), not "
                        f"{type(layout).__name__}.")
    return layout
