"""Chapter 3's experiments (recorded on a GPU, replayed elsewhere) and their measurement helpers.

``dram_latency``: pointer-chasing latency against working-set size (L1, L2, DRAM).
``dram_latency_index``: the same chase with signed and unsigned indices.
``dram_littles_law``: bandwidth against bytes in flight, with Little's law drawn over it
(bytes in flight / one load's latency, and / the time of one warp's round of loads alone).
``dram_loaded_latency``: the chase as a probe beside the bandwidth kernel: latency under load.
``dram_loaded_latency_copy``: the same probe beside chapter 1's one-load copy.
``dram_occupancy``: occupancy (limited with shared memory) against copy bandwidth.
``dram_strides``: power-of-two strides between concurrent warps, and the same strides
padded by one chunk.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import cuda

from gpuperf import bench, device, validate
from gpuperf.records import experiment

from .kernels import (
    FLOAT_BYTES,
    WARP,
    chase_chain,
    chunk_geometry,
    make_copy,
    make_strided_chunks,
    make_sum_loads,
    pointer_chase,
    pointer_chase_unsigned,
)
from .models import bytes_in_flight, littles_law_gbps

SUM_ILPS = (1, 2, 4, 8, 16)  # loads in flight per thread that dram_littles_law sweeps
COPY_ILPS = (1, 4)  # elements per thread of dram_occupancy's copies


def resident_blocks_per_sm(kernel, block: int, shared_bytes: int = 0) -> int:
    """Blocks of ``kernel`` (already compiled by a launch) that fit on one SM at once."""
    validate.kernel(kernel)
    validate.block_size(block)
    validate.integer(shared_bytes, "shared_bytes", minimum=0)
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


def _dram_latency_ns(order: str = "sequential") -> float:
    """Latency of a load that misses L2: a chase over four times the L2's size."""
    l2 = device.info().l2_bytes or 64 * 2**20
    slots = 4 * l2 // (WARP * FLOAT_BYTES)
    return _chase_latency_ns(chase_chain(slots, order=order, seed=1), steps=2048)["latency_ns"]


LITTLE_WARPS = (1, 2, 4, 8, 16, 32, 64)
STREAM_ELEMENTS = 1 << 26  # 256 MiB of float32: five times an H100's L2


def persistent_launch(kernel, warps_per_sm: int):
    """(blocks, threads per block, resident warps per SM) for a grid that fits at once."""
    validate.kernel(kernel)
    validate.positive_int(warps_per_sm, "warps_per_sm", maximum=64)
    sms = device.sm_count()
    blocks_per_sm = max(1, warps_per_sm // 32)
    threads = warps_per_sm * WARP // blocks_per_sm
    fits = resident_blocks_per_sm(kernel, threads)
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
            blocks, threads, resident = persistent_launch(kernel, warps)
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
    bench.require_gpu("measure_loads")
    ilp = validate.positive_int(ilp, "ilp", maximum=64)
    warps_per_sm = validate.positive_int(warps_per_sm, "warps_per_sm", maximum=64)
    x, partial = _stream_buffers()
    kernel = make_sum_loads(ilp)
    kernel[device.sm_count(), 32](x, partial, device.sm_count() * 32)
    blocks, threads, resident = persistent_launch(kernel, warps_per_sm)
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
    bench.require_gpu("dram_loaded_latency")
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
            blocks, threads, resident = persistent_launch(kernel, warps)
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



LOADED_COPY_BLOCKS_PER_SM = (2, 4, 7)  # blocks of 256: at 7 per SM the probe's block still fits
LOADED_COPY_ELEMENTS = 1 << 28  # chapter 1's copy: 1 GiB read, 1 GiB written


@experiment("dram_loaded_latency_copy", chapter="dram",
            title="Latency under load: a pointer chase beside chapter 1's one-load copy",
            units={"gbps": "GB/s", "read_gbps": "GB/s", "bytes_in_flight": "B", "idle_ns": "ns",
                   "loaded_ns": "ns", "implied_in_flight": "B", "in_flight_pct": "%"})
def dram_loaded_latency_copy(progress):
    """``dram_loaded_latency``'s probe beside chapter 1's grid-stride copy with one 4-byte load
    in flight per thread (``gridstride.copy_grid_stride``, 2^28 float32, blocks of 256, 2, 4
    and 7 blocks per SM, so that the probe's one-thread block always finds room). ``gbps``:
    the copy's bandwidth while the probe ran (read + written); ``read_gbps``: its reads, half
    of it; ``loaded_ns``: the probe's time per step beside it. ``bytes_in_flight``: what one
    load per resident thread allows; ``implied_in_flight`` = ``read_gbps`` x ``loaded_ns``,
    the bytes the loads kept in flight on average (Little's law), and ``in_flight_pct`` its
    share of the allowed bytes."""
    from gpuperf.kernels.gridstride.kernels import copy_grid_stride

    bench.require_gpu("dram_loaded_latency_copy")
    sms = device.sm_count()
    l2 = device.info().l2_bytes or 64 * 2**20
    nxt = chase_chain(4 * l2 // (WARP * FLOAT_BYTES), order="random", seed=3)
    d_nxt = cuda.to_device(nxt)
    pos = cuda.to_device(np.zeros(1, dtype=np.int32))
    probe = pointer_chase_unsigned
    probe_stream, load_stream = cuda.stream(), cuda.stream()
    probe[1, 1](d_nxt, 4 * l2 // (WARP * FLOAT_BYTES), pos)
    idle_ns = _chase_latency_ns(nxt, steps=PROBE_STEPS, kernel=probe)["latency_ns"]
    progress(f"dram_loaded_latency_copy: the probe alone, {idle_ns:.0f} ns per step")
    x = cuda.to_device(np.ones(LOADED_COPY_ELEMENTS, dtype=np.float32))
    out = cuda.device_array_like(x)
    block = 256
    nbytes = 2 * LOADED_COPY_ELEMENTS * FLOAT_BYTES
    rows = []
    for per_sm in LOADED_COPY_BLOCKS_PER_SM:
        alone = copy_grid_stride[sms * per_sm, block]
        one = bench.time_kernel(lambda f=alone: f(x, out), min_repeat=3, min_time=0.01).median_ms
        n = 2 * max(2, math.ceil(4 * PROBE_STEPS * idle_ns * 1e-6 / one) + 1)
        launch = copy_grid_stride[sms * per_sm, block, load_stream]
        fns = [lambda f=launch: f(x, out)] * n
        runs = [_probe_once(probe, d_nxt, pos, PROBE_STEPS, probe_stream, (load_stream, fns))
                for _ in range(4)][1:]
        med = {k: float(np.median([r[k] for r in runs])) for k in runs[0]}
        gbps = bench.gbps(n * nbytes, med["load_ms"])
        allowed = sms * per_sm * block * FLOAT_BYTES
        implied = gbps / 2 * med["probe_ns"]
        rows.append({"block": block, "blocks_per_sm": per_sm, "threads_per_sm": per_sm * block,
                     "bytes_in_flight": allowed, "gbps": gbps, "read_gbps": gbps / 2,
                     "idle_ns": idle_ns, "loaded_ns": med["probe_ns"],
                     "implied_in_flight": implied, "in_flight_pct": 100 * implied / allowed,
                     "covered": all(r["tail_ms"] >= 0 and r["head_ms"] > 0 for r in runs),
                     "launches": n})
        progress(f"dram_loaded_latency_copy {per_sm} blocks/SM: {gbps:6.0f} GB/s, probe "
                 f"{med['probe_ns']:5.0f} ns per step, {rows[-1]['in_flight_pct']:.0f}% in flight")
    return rows


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
                per_sm = resident_blocks_per_sm(kernel, block, shared)
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
        blocks = sms * min(8, resident_blocks_per_sm(kernel, block))
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


def _check_res(res, *columns):
    """``res`` must be a Result (of the right experiment: it has ``columns``)."""
    validate.result(res, "res")
    for c in columns:
        validate.column(res, c, "res column")
    return res


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
