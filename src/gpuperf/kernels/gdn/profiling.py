"""Chapter 8's Nsight Compute experiment (built on ``gpuperf.nsight``): the fused dgamma kernel
and its tiled version under the profiler (``profiling_gdn``: instructions per FFMA, issue,
stalls, bytes), and the table chapter 8 reads from it (``gdn_profile_table``). Each launch runs
in a process of its own under the tool; replayed from the record elsewhere."""

from __future__ import annotations

import math

from gpuperf import device, nsight, records
from gpuperf.nsight import ISSUE_METRICS, fp32_lanes, issue_columns, per, print_result

from .experiments import BATCH, HEADLINE, dgamma_launcher
from .kernels import DEFAULT_BLOCK, make_fused_tiled, tiled_launch  # noqa: F401


def _launch(fn) -> str:
    """The ``"module:function"`` that ``gpuperf.nsight`` runs for one of this module's launches."""
    return f"{__name__}:{fn.__name__}"


def _gdn_launch(method: str, tile: int, n_ch: int) -> None:
    """Chapter 8: dgamma at the headline image size and ``n_ch`` channels by ``method``
    (``dgamma_launcher``), twice, each launch after the one that zeroes the outputs. Prints
    whether the result is right."""
    from numba import cuda

    run, reference = dgamma_launcher(method, n_ch, tile)
    out = None
    for _ in range(2):
        out = run()
    cuda.synchronize()
    print_result(out.copy_to_host(), reference())


# Why chapter 8's tiled fused kernel stops far below chapter 4's tiled matmul: the fused kernel
# and the tiled one (both tiles) at the headline image size, for the headline's N and the
# article's. The same counters as profiling_matmul_issue (what share of instructions are FFMAs,
# how often a scheduler issues, why warps wait), with the bytes DRAM and the L2 served, the
# shared loads per FFMA and the wavefronts per shared load (bank conflicts), and the atomics.
GDN_PROFILED = (("fused", 0), ("fused_tiled", 16), ("fused_tiled", 32))


GDN_PROFILED_CHANNELS = (64, 256)


GDN_METRICS = ISSUE_METRICS + (
    "dram__bytes_read.sum", "dram__bytes_write.sum",
    "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_op_write.sum",
    "smsp__inst_executed_op_shared_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_cmd_read.sum",
    "smsp__inst_executed_op_global_ld.sum", "smsp__inst_executed_op_global_red.sum",
    "sm__maximum_warps_per_active_cycle_pct", "sm__warps_active.avg.pct_of_peak_sustained_active",
    "launch__registers_per_thread")


@records.experiment(
    "profiling_gdn", chapter="profiling",
    title="Chapter 8's fused dgamma kernel and its tiled version under Nsight Compute: "
          "instructions, issue, stalls, bytes",
    units={"tflops": "TFLOP/s (profiled launch)", "duration_ns": "ns", "dram_bytes": "B",
           "l2_sm_bytes": "B", "ffma_share_pct": "% of instructions",
           "issue_active_pct": "% of cycles", "issue_bound_pct": "% of FP32 peak",
           "achieved_occupancy_pct": "%", "theoretical_occupancy_pct": "%",
           # gdn_profile_table's columns
           "inst_per_ffma": "warp instructions", "pct_fp32_peak": "% of FP32 peak",
           "dram_gbps": "GB/s", "dram_pct_copy": "% of copy", "l2_gbps": "GB/s"})
def gdn_experiment(progress) -> list[dict]:
    """Nsight Compute on chapter 8's ``fused`` kernel and ``fused_tiled`` (tiles 16 and 32,
    depth = tile, the launch of ``tiled_launch``) at the headline image size and each N of
    ``GDN_PROFILED_CHANNELS``: the warp instructions issued and the FFMAs among them, the
    share of active cycles a scheduler issued, the FP32 share those two allow
    (``issue_bound_pct``, as in ``profiling_matmul_issue``), the stall reasons per issued
    instruction, the bytes DRAM and the L2 served to the SMs, shared loads per FFMA and
    wavefronts per shared load, global loads per FFMA, atomics, registers, the grid's blocks
    and occupancy. ``tflops`` is the profiled launch's rate (ncu's duration, clocks as
    they were), for comparing the rows, not the chapter's timed rate."""

    n_s = BATCH * HEADLINE["side"] ** 2
    peak = device.fp32_peak_tflops()
    lanes = fp32_lanes()
    rows = []
    for n_ch in GDN_PROFILED_CHANNELS:
        for method, tile in GDN_PROFILED:
            label = method if not tile else f"{method} {tile}x{tile}"
            progress(f"ncu on the GDN gradient: {label} (N = {n_ch})")
            m = nsight.profile(_launch(_gdn_launch), method, tile, n_ch, kernel=method, metrics=GDN_METRICS)
            issue = issue_columns(m, lanes)
            ffma = issue["ffma_inst"]
            flops = 2 * n_ch * n_ch * n_s
            shared_ld = m["smsp__inst_executed_op_shared_ld.sum"]
            if tile:
                grid = tiled_launch(n_ch, n_s, tile=tile, depth=tile)[0]
            else:  # make_fused's grid, as _method_launcher launches it
                grid = (math.ceil(n_s / (DEFAULT_BLOCK * 8)), n_ch, 1)
            grid_blocks = math.prod(grid)
            rows.append({
                "method": label, "n_ch": n_ch, "samples": n_s, "kernel": method,
                "tflops": flops / m["gpu__time_duration.sum"] / 1e3,
                "duration_ns": m["gpu__time_duration.sum"], "fp32_peak_tflops": peak,
                **issue,
                "dram_bytes": m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"],
                "l2_sm_bytes": 32 * (m["lts__t_sectors_srcunit_tex_op_read.sum"]
                                     + m["lts__t_sectors_srcunit_tex_op_write.sum"]),
                "shared_loads_per_ffma": shared_ld / ffma if ffma else None,
                "wavefronts_per_shared_load": per(
                    m, "l1tex__data_pipe_lsu_wavefronts_mem_shared_cmd_read.sum",
                    "smsp__inst_executed_op_shared_ld.sum"),
                "global_loads_per_ffma": m["smsp__inst_executed_op_global_ld.sum"] / ffma
                if ffma else None,
                # atomic adds whose result is unused compile to reductions (RED)
                "atomics": m["smsp__inst_executed_op_global_red.sum"],
                "registers": m["launch__registers_per_thread"],
                "grid_blocks": grid_blocks,
                "theoretical_occupancy_pct": m["sm__maximum_warps_per_active_cycle_pct"],
                "achieved_occupancy_pct": m["sm__warps_active.avg.pct_of_peak_sustained_active"],
            })
    return rows


def gdn_profile_table(res) -> records.Result:
    """``profiling_gdn`` as chapter 8 reads it, one row per kernel and N: instructions issued
    per FFMA, the share of cycles a scheduler issued, the FP32 share those allow and the share
    measured (under the profiler), shared loads per FFMA, and DRAM's and the L2's bytes per
    second as a % of the copy ceiling of the same record (``dram_pct_copy``) and in GB/s."""
    if not isinstance(res, records.Result) or res.name != "profiling_gdn":
        raise TypeError(f"res: give gp.records.run(\"profiling_gdn\"), not "
                        f"{getattr(res, 'name', type(res).__name__)!r}.")
    copy = res.ceilings.get("copy_gbps")
    rows = []
    for r in res.rows:
        dram_gbps = r["dram_bytes"] / r["duration_ns"]
        rows.append({
            "n_ch": r["n_ch"], "method": r["method"],
            "inst_per_ffma": 100 / r["ffma_share_pct"] if r["ffma_share_pct"] else None,
            "issue_active_pct": r["issue_active_pct"], "issue_bound_pct": r["issue_bound_pct"],
            "pct_fp32_peak": (100 * r["tflops"] / r["fp32_peak_tflops"]
                              if r.get("fp32_peak_tflops") else None),
            "shared_loads_per_ffma": r["shared_loads_per_ffma"],
            "dram_gbps": dram_gbps, "dram_pct_copy": 100 * dram_gbps / copy if copy else None,
            "l2_gbps": r["l2_sm_bytes"] / r["duration_ns"],
            "achieved_occupancy_pct": r["achieved_occupancy_pct"]})
    return records.Result(res.name, rows, res.meta, res.source)  # units: the experiment's
