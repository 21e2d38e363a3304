"""Chapter dram's Nsight Compute experiments (built on ``gpuperf.nsight``): each
runs the chapter's own kernel in a process of its own under the tool and records what
it counted; replayed from the record elsewhere."""

from __future__ import annotations

from gpuperf import device, nsight, records, validate  # noqa: F401
from gpuperf.nsight import (  # noqa: F401
    STALL_METRICS,
    STALL_REASONS,
)

from .experiments import STREAM_ELEMENTS, persistent_launch, resident_blocks_per_sm  # noqa: F401
from .kernels import WARP, make_sum_loads  # noqa: F401


def _launch(fn) -> str:
    """The ``"module:function"`` that ``gpuperf.nsight`` runs for one of this module's launches."""
    return f"{__name__}:{fn.__name__}"


def _sum_loads_launch(ilp: int, warps_per_sm: int) -> None:
    """Chapter 3: ``dram_littles_law``'s kernel (``ilp`` independent loads per thread) on a
    grid that keeps ``warps_per_sm`` warps on every SM, over the experiment's 256 MiB."""
    import numpy as np
    from numba import cuda

    x = cuda.to_device(np.random.default_rng(7).random(STREAM_ELEMENTS, dtype=np.float32))
    kernel = make_sum_loads(ilp)
    sms = device.sm_count()
    partial = cuda.device_array(sms * 64 * WARP, dtype=np.float32)
    kernel[sms, 32](x, partial, sms * 32)  # compile it: its occupancy sizes the grid
    blocks, threads, _ = persistent_launch(kernel, warps_per_sm)
    nsight.launch_twice(lambda: kernel[blocks, threads](x, partial, blocks * threads))


LOAD_METRICS = STALL_METRICS + (
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__bytes_read.sum",
    "sm__warps_active.avg.per_cycle_active",
    "gpu__time_duration.sum",
)


# (independent loads per thread, warps per SM): one warp's loads, and a full SM's.
PROFILED_LOADS = ((1, 8), (1, 64), (4, 64), (16, 64))


@records.experiment(
    "profiling_latency", chapter="profiling",
    title="Bytes in flight under Nsight Compute: DRAM throughput and what the warps wait for",
    units={"dram_pct": "% of peak", "dram_gbps": "GB/s", "duration_ns": "ns"})
def latency_experiment(progress) -> list[dict]:
    """Nsight Compute on chapter 3's ``dram_littles_law`` kernel (``make_sum_loads``) at a
    few (loads per thread, warps per SM) points of ``PROFILED_LOADS``: DRAM throughput as a
    percentage of its peak, the warps resident per SM, and the stall reasons per issued
    instruction (long scoreboard: waiting for memory)."""
    rows = []
    for ilp, warps in PROFILED_LOADS:
        progress(f"ncu on sum_loads: {ilp} load(s) per thread, {warps} warps per SM")
        m = nsight.profile(_launch(_sum_loads_launch), ilp, warps, kernel="sum_loads", metrics=LOAD_METRICS)
        rows.append({
            "ilp": ilp, "warps_per_sm": warps,
            "warps_active_per_sm": round(m["sm__warps_active.avg.per_cycle_active"], 2),
            "dram_pct": round(m["dram__throughput.avg.pct_of_peak_sustained_elapsed"], 1),
            "dram_gbps": round(m["dram__bytes_read.sum"] / m["gpu__time_duration.sum"], 1),
            **{f"stall_{r}": round(m[x], 3) for r, x in zip(STALL_REASONS, STALL_METRICS)},
            "duration_ns": m["gpu__time_duration.sum"],
        })
    return rows


# The L2's read bandwidth, for an L2 roof: a buffer a fraction of the L2 read again and again
# by one launch (after a warm-up that leaves it in the L2), and, for contrast, buffers larger
# than the L2, which DRAM must serve. Nsight Compute confirms where the bytes came from: every
# footprint up to L2_ROOF_FRACTION, whose rate is the roof, and the largest.
L2_FRACTIONS = (1 / 8, 1 / 4, 1 / 2, 1, 2, 8)


L2_ROOF_FRACTION = 1 / 2


L2_BYTES_PER_LAUNCH = 2**31   # bytes read per timed launch: passes x footprint


# The L2's sectors the SMs read (32 bytes each), not lts__t_bytes, which also counts the L2's
# own traffic (fills from DRAM, and between an H100's two halves).
L2_READ_SECTORS = "lts__t_sectors_srcunit_tex_op_read.sum"


L2_METRICS = ("dram__bytes_read.sum", "lts__t_bytes.sum", L2_READ_SECTORS,
              "lts__t_sector_hit_rate.pct", "l1tex__t_sector_hit_rate.pct",
              "gpu__time_duration.sum")


def _l2_setup(footprint: int):
    """The buffer (``footprint`` bytes of small whole numbers), the output, the launch, its
    passes and the sum the threads' sums must add up to. The grid is one full wave: as many
    blocks as fit on the SMs at once (more would leave a second, partial wave)."""
    import numpy as np
    from numba import cuda

    from gpuperf import device
    from gpuperf.kernels.gridstride import read_passes, read_step

    n = footprint // 4 // 16 * 16
    data = (np.arange(n) % 7 + 1).astype(np.float32)
    x = cuda.to_device(data)
    passes = max(4, L2_BYTES_PER_LAUNCH // (4 * n) // 4 * 4)   # whole groups of four passes
    step = read_step(n // 4)
    block = 256
    probe = cuda.device_array(block, dtype=np.float32)
    read_passes[1, block](x, 0, step, probe)   # compiled, so its occupancy can be asked
    grid = device.sm_count() * resident_blocks_per_sm(read_passes, block)
    out = cuda.device_array(grid * block, dtype=np.float32)
    want = float(data.astype(np.float64).sum()) * passes
    return x, out, passes, want, (lambda: read_passes[grid, block](x, passes, step, out))


def _l2_read_launch(footprint: int) -> None:
    """For Nsight Compute: the read of a ``footprint``-byte buffer, passes and all."""
    *_, launch = _l2_setup(footprint)
    nsight.launch_twice(launch)


@records.experiment(
    "profiling_l2_bandwidth", chapter="profiling",
    title="The L2's read bandwidth: a buffer that fits in the L2 read again and again, beside "
          "buffers DRAM must serve",
    units={"footprint_bytes": "B", "bytes_read": "B", "gbps": "GB/s", "pct_copy": "%",
           "dram_bytes": "B", "l2_bytes": "B", "l2_read_bytes": "B", "l2_hit_pct": "%",
           "l1_hit_pct": "%"})
def l2_bandwidth_experiment(progress) -> list[dict]:
    """For each footprint (a fraction of the L2's size): one launch reads the buffer ``passes``
    times (about ``L2_BYTES_PER_LAUNCH`` bytes in all), timed without flushing, after a warm-up
    that leaves what fits in the L2; GB/s counts the bytes the kernel read. Each pass shifts
    every thread's share (``gridstride.read_passes``), so that the L1 cannot serve them. The
    launches up to ``L2_ROOF_FRACTION`` and the largest one also go through Nsight Compute (which
    flushes the caches first): the bytes DRAM served, the bytes the SMs read from the L2, all
    the L2's bytes, and the L2's and the L1's hit rates, which say where the bytes came from."""
    import numpy as np

    from gpuperf import bench, device

    l2 = device.info().l2_bytes
    if not l2:
        raise RuntimeError("profiling_l2_bandwidth needs the GPU's L2 size (device.info().l2_bytes).")
    rows = []
    for fraction in L2_FRACTIONS:
        footprint = int(l2 * fraction) // 64 * 64
        progress(f"L2 read: {footprint / 2**20:.1f} MiB ({fraction:g} of the L2)")
        x, out, passes, want, launch = _l2_setup(footprint)
        t = bench.time_kernel(launch, min_repeat=10, min_time=0.2)
        got = out.copy_to_host()
        nbytes = 4 * x.size * passes
        # each pass reads every element once: the threads' sums add up to passes x the buffer's
        if not np.isclose(got.astype(np.float64).sum(), want, rtol=1e-6):
            raise AssertionError(f"the L2 read kernel read the wrong elements at {footprint} bytes")
        row = {"fraction_of_l2": fraction, "footprint_bytes": 4 * x.size, "passes": passes,
               "bytes_read": nbytes, **bench.bandwidth_row(nbytes, t)}
        if fraction <= L2_ROOF_FRACTION or fraction == max(L2_FRACTIONS):
            m = nsight.profile(_launch(_l2_read_launch), footprint, kernel="read_passes", metrics=L2_METRICS)
            row.update(dram_bytes=m["dram__bytes_read.sum"], l2_bytes=m["lts__t_bytes.sum"],
                       l2_read_bytes=32 * m[L2_READ_SECTORS],
                       l2_hit_pct=m["lts__t_sector_hit_rate.pct"],
                       l1_hit_pct=m["l1tex__t_sector_hit_rate.pct"])
        rows.append(row)
    return rows


def l2_read_gbps(res) -> float:
    """The L2's read bandwidth from ``profiling_l2_bandwidth``: the rate of the largest footprint
    of at most ``L2_ROOF_FRACTION`` of the L2. Smaller ones ran faster on an H100 (whose L2 is
    two halves, a line's home in one of them), but a kernel's working set is rarely that small;
    a whole L2's worth no longer fits beside anything else."""
    if not isinstance(res, records.Result) or res.name != "profiling_l2_bandwidth":
        raise TypeError(f"res: give gp.records.run(\"profiling_l2_bandwidth\"), not "
                        f"{getattr(res, 'name', type(res).__name__)!r}.")
    fits = [r for r in res.rows if r["fraction_of_l2"] <= L2_ROOF_FRACTION and r.get("gbps")]
    if not fits:
        raise ValueError(f"res has no footprint of at most {L2_ROOF_FRACTION:g} of the L2 with a "
                         "rate: record profiling_l2_bandwidth again.")
    return max(fits, key=lambda r: r["fraction_of_l2"])["gbps"]


# The roofs inside the SM: how fast shared memory and the L1 deliver bytes. Both are one array
# of 32 banks of 4 bytes on Volta and later, so their theoretical roof is 128 bytes per clock
# per SM; the 16-byte read kernels measure what a kernel reaches of it (the 4-byte ones run
# out of issue slots first), and Nsight Compute confirms that every load was executed and
# where the bytes came from.
ONCHIP_BLOCK = 512


ONCHIP_READS_PER_THREAD = 32768     # per timed launch: 2^15 loads per thread


ONCHIP_CHECK_READS = 64             # the sums are checked at this count (exact in float32)


BANK_BYTES_PER_CLOCK = 128          # 32 banks x 4 bytes, per SM and clock


# The wavefronts the L1/shared data pipe processed, shared and global alike: one per clock at
# most, each up to BANK_BYTES_PER_CLOCK bytes (a conflict-free 16-byte warp load takes four).
PIPE_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts.sum"


ONCHIP_METRICS = ("smsp__inst_executed_op_shared_ld.sum",
                  "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
                  "l1tex__t_sector_hit_rate.pct",
                  PIPE_WAVEFRONTS,
                  PIPE_WAVEFRONTS + ".pct_of_peak_sustained_elapsed",
                  "smsp__inst_executed.sum",
                  "smsp__issue_active.avg.pct_of_peak_sustained_elapsed",
                  "gpu__time_duration.sum")


def _onchip_setup(name: str, reads: int):
    """The buffer, the output and the launch of ``ONCHIP_READS[name]``'s kernel: one full wave
    of ``ONCHIP_BLOCK``-thread blocks (as many as the SMs hold at once, as ``_l2_setup``
    sizes its grid), ``reads`` loads per thread."""
    import numpy as np
    from numba import cuda

    from gpuperf import device
    from gpuperf.kernels import gridstride as gs

    kernel, block = gs.ONCHIP_READS[name][0], ONCHIP_BLOCK
    src = cuda.to_device(gs.onchip_values())
    probe = cuda.device_array(block, dtype=np.float32)
    kernel[1, block](src, 0, gs.ONCHIP_STEP, probe)   # compiled, so its occupancy can be asked
    grid = device.sm_count() * resident_blocks_per_sm(kernel, block)
    out = cuda.device_array(grid * block, dtype=np.float32)
    return kernel, grid, block, src, out, (
        lambda: kernel[grid, block](src, reads, gs.ONCHIP_STEP, out))


def _onchip_read_launch(name: str) -> None:
    """For Nsight Compute: one on-chip read kernel at the experiment's read count."""
    *_, launch = _onchip_setup(name, ONCHIP_READS_PER_THREAD)
    nsight.launch_twice(launch)


@records.experiment(
    "profiling_onchip_roofs", chapter="profiling",
    title="The roofs inside the SM: shared memory and the L1 read with 4- and 16-byte loads",
    units={"bytes_read": "B", "gbps": "GB/s", "bank_roof_gbps": "GB/s", "pct_bank_roof": "%",
           "sm_clock_khz": "kHz", "warp_loads": "warp-level load instructions",
           "wavefronts_per_load": "wavefronts", "pipe_pct": "% of peak", "l1_hit_pct": "%",
           "issue_active_pct": "% of peak", "inst_per_load": "warp instructions"})
def onchip_roofs_experiment(progress) -> list[dict]:
    """Each of ``gridstride.ONCHIP_READS``: a full wave of blocks reads a 16 KiB buffer, from
    shared memory or (through the L1) from global memory, ``ONCHIP_READS_PER_THREAD`` loads
    per thread; the sums are checked against NumPy at a small read count, then the rate is
    timed, beside the bank roof (128 bytes per clock per SM at the SMs' maximum clock: a GPU
    under load may run below it). Nsight Compute counts the warp-level loads
    executed (refusing a kernel whose compiler merged some), the data pipe's wavefronts per
    load and busy share, the L1's hit rate, the share of cycles a scheduler issued and the
    instructions per load."""
    import numpy as np

    from gpuperf import bench, device
    from gpuperf.kernels import gridstride as gs

    bench.require_gpu("profiling_onchip_roofs")
    clock = device.sm_clock_khz()
    bank_roof = (device.sm_count() * BANK_BYTES_PER_CLOCK * clock * 1e3 / 1e9 if clock
                 else None)
    reads = ONCHIP_READS_PER_THREAD
    rows = []
    for name, (_, source, width, _) in gs.ONCHIP_READS.items():
        progress(f"{source} read, {width}-byte loads")
        kernel, grid, block, src, out, launch = _onchip_setup(name, ONCHIP_CHECK_READS)
        launch()
        want = gs.onchip_expected(name, ONCHIP_CHECK_READS, block, grid)
        if not np.array_equal(out.copy_to_host(), want):
            raise AssertionError(f"the on-chip read kernel {name} read the wrong elements")
        *_, launch = _onchip_setup(name, reads)
        t = bench.time_kernel(launch, min_repeat=10, min_time=0.2)
        nbytes = grid * block * reads * width
        row = {"kernel": name, "source": source, "bytes_per_load": width, "block": block,
               "blocks": grid, "reads_per_thread": reads, "bytes_read": nbytes,
               **bench.bandwidth_row(nbytes, t), "bank_roof_gbps": bank_roof,
               "sm_clock_khz": clock}
        row["pct_bank_roof"] = 100 * row["gbps"] / bank_roof if bank_roof else None
        m = nsight.profile(_launch(_onchip_read_launch), name, kernel=kernel.py_func.__name__, metrics=ONCHIP_METRICS)
        shared = m["smsp__inst_executed_op_shared_ld.sum"]
        # the global loads, less a shared kernel's copy of the buffer into shared memory
        copy_in = (grid * block // 32 * -(-gs.ONCHIP_WORDS // block)
                   if "shared" in source else 0)
        global_ = m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] - copy_in
        loads = {"shared": shared, "L1": global_}.get(source, shared + global_)
        expected = grid * block // 32 * reads
        if loads != expected:
            raise AssertionError(f"{name} executed {loads:,.0f} warp-level loads, not "
                                 f"{expected:,}: the compiler merged or added loads, so its "
                                 "rate does not count the bytes it read")
        row.update(warp_loads=loads,
                   wavefronts_per_load=m[PIPE_WAVEFRONTS] / loads,
                   pipe_pct=m[PIPE_WAVEFRONTS + ".pct_of_peak_sustained_elapsed"],
                   # the shared kernels' global loads are only their copy into shared memory
                   l1_hit_pct=m["l1tex__t_sector_hit_rate.pct"] if source == "L1" else None,
                   issue_active_pct=m["smsp__issue_active.avg.pct_of_peak_sustained_elapsed"],
                   inst_per_load=m["smsp__inst_executed.sum"] / loads)
        rows.append(row)
    return rows


def onchip_reads(res) -> list[dict]:
    """The 16-byte reads (with a rate) of ``res``, a ``profiling_onchip_roofs`` result."""
    if not isinstance(res, records.Result) or res.name != "profiling_onchip_roofs":
        raise TypeError(f"res: give gp.records.run(\"profiling_onchip_roofs\"), not "
                        f"{getattr(res, 'name', type(res).__name__)!r}.")
    wide = [r for r in res.rows if r.get("bytes_per_load") == 16 and r.get("gbps")]
    if not wide:
        raise ValueError("res has no 16-byte read with a rate: record profiling_onchip_roofs "
                         "again.")
    return wide


def onchip_roof_gbps(res) -> float:
    """The SM's read roof from ``profiling_onchip_roofs``, GB/s: 128 bytes per clock per SM
    (one wavefront of the L1/shared data pipe) at the SMs' maximum clock, an upper bound like
    the FP32 peak; where the clock is unknown, the faster of the two 16-byte reads (which
    reach almost all of it; the 4-byte reads run out of issue slots first)."""
    wide = onchip_reads(res)
    return wide[0].get("bank_roof_gbps") or max(r["gbps"] for r in wide)


def onchip_roofs_summary(res) -> list[str]:
    """One line per read kernel of ``profiling_onchip_roofs``: its rate as GB/s and as a % of
    128 bytes per clock per SM, and what Nsight Compute saw (data-pipe wavefronts per load,
    the share of cycles a scheduler issued, instructions per load, the L1's hit rate). Printed
    and returned."""
    onchip_reads(res)
    lines = []
    for r in res.rows:
        line = (f"{r['source']:6s} {r['bytes_per_load']:2d}-byte loads: {r['gbps']:8,.0f} GB/s"
                + (f", {r['pct_bank_roof']:5.1f}% of 128 B per clock per SM"
                   if r.get("pct_bank_roof") else "")
                + f" (spread {r['spread']:.1%})")
        if r.get("warp_loads"):
            line += (f"; {r['wavefronts_per_load']:.2f} wavefronts per warp load, schedulers "
                     f"issuing in {r['issue_active_pct']:.0f}% of cycles, "
                     f"{r['inst_per_load']:.1f} instructions per load"
                     + (f", L1 hit rate {r['l1_hit_pct']:.2f}%"
                        if r.get("l1_hit_pct") is not None else ""))
        lines.append(line)
    first = res.rows[0]
    if first.get("bank_roof_gbps"):
        lines.append(f"128 B per clock per SM = {first['bank_roof_gbps']:,.0f} GB/s at the SMs' "
                     f"maximum clock ({first['sm_clock_khz'] / 1e3:.0f} MHz) ({res.label}).")
    else:
        lines.append(f"({res.label}; the SM clock is unknown: no theoretical roof.)")
    for line in lines:
        print(line)
    return lines
