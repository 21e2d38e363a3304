"""Chapter 6's Nsight Compute experiments (built on ``gpuperf.nsight``): the first rungs'
shared-memory wavefronts and bank conflicts (``profiling_reduce_shared``) and the three atomics
patterns of the single pass (``profiling_reduce_atomics``, read by ``atomics_waves``). Each
launch runs in a process of its own under the tool; replayed from the record elsewhere."""

from __future__ import annotations

import json

from gpuperf import nsight, records
from gpuperf.nsight import (
    SHARED_METRICS,
    SOL_METRICS,
    STALL_METRICS,
    STALL_REASONS,
    TIME_METRICS,
)

from .ablation import ablation_plan  # noqa: F401
from .host import reduce_sum  # noqa: F401
from .single_pass import _block_atomic_calls, _spread_atomic_calls, _warp_atomic_calls  # noqa: F401


def _launch(fn) -> str:
    """The ``"module:function"`` that ``gpuperf.nsight`` runs for one of this module's launches."""
    return f"{__name__}:{fn.__name__}"


def _reduce_launch(version: str, block: int, n: int) -> None:
    """Chapter 6: one reduce rung on ``n`` random float32."""
    import numpy as np
    from numba import cuda

    x = cuda.to_device(np.random.default_rng(1).random(n, dtype=np.float32))
    nsight.launch_twice(lambda: reduce_sum(x, version, block=block))


PROFILED_RUNGS = ("v0", "v1", "v1.5", "v2", "v3")  # v1.5: v0 with a mask for the remainder


PROFILED_N = 2**22


@records.experiment(
    "profiling_reduce_shared", chapter="profiling",
    title="Shared-memory bank conflicts of the reduce ladder's first rungs (Nsight Compute)",
    units={"duration_ns": "ns", "warps_active_pct": "%"})
def reduce_shared_experiment(progress) -> list[dict]:
    """Nsight Compute on the first stage of the reduce ladder's first rungs (2^22 float32,
    blocks of 256): shared loads, the wavefronts they took, bank conflicts, and the time."""
    rows = []
    for version in PROFILED_RUNGS:
        progress(f"ncu on reduce {version} (n = 2^22, block 256)")
        m = nsight.profile(_launch(_reduce_launch), version, 256, PROFILED_N,
                           kernel=f"reduce_{version.replace('.', '_')}",
                           metrics=SHARED_METRICS + TIME_METRICS)
        loads = m["smsp__inst_executed_op_shared_ld.sum"]
        waves = m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"]
        rows.append({
            "version": version, "block": 256, "n": PROFILED_N,
            "shared_loads": loads, "wavefronts": waves,
            "wavefronts_per_load": round(waves / loads, 3) if loads else 0.0,
            "bank_conflicts": m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"],
            "duration_ns": m["gpu__time_duration.sum"],
            "warps_active_pct": m["sm__warps_active.avg.pct_of_peak_sustained_active"],
        })
    return rows


# Chapters 6.2 and 9: what holds the ladder's middle rungs and v1 back. Nsight Compute's Speed
# of Light, stall reasons, instruction issue and the LSU data pipe (shared and global loads) of
# the first stage of v1 (as in ``profiling_speed_of_light``) and of v5 and v6 at the ladder's
# size and launch: whether v5 (two elements per thread, a 256-thread tree) waits at barriers or
# on its loads, against v6 (many elements per thread, the same tree); and which SM unit sets
# v1's SM throughput (issue, or the LSU pipe its conflicted shared loads keep busy).
RUNG_STALL_CASES = (("v1", 256, 2**24), ("v5", 256, 2**28), ("v6", 256, 2**28))


RUNG_STALL_METRICS = SOL_METRICS + (
    "smsp__issue_active.avg.pct_of_peak_sustained_elapsed",
    "l1tex__data_pipe_lsu_wavefronts.sum.pct_of_peak_sustained_elapsed",
)


@records.experiment(
    "profiling_reduce_rungs", chapter="profiling",
    title="The reduce ladder's v1, v5 and v6 under Nsight Compute: Speed of Light, stall "
          "reasons, instruction issue and the LSU pipe",
    units={"sm_pct": "% of peak", "memory_pct": "% of peak", "dram_pct": "% of peak",
           "issue_active_pct": "% of peak", "lsu_pipe_pct": "% of peak", "duration_ns": "ns"})
def reduce_rungs_experiment(progress) -> list[dict]:
    """Nsight Compute on the first stage of each rung of ``RUNG_STALL_CASES`` (version, block,
    n), launched as the ladder launches it: the Speed-of-Light columns
    (``nsight.speed_of_light``), the stall reasons (warps stalled per issued instruction), the
    share of cycles a scheduler issued (``issue_active_pct``) and the LSU data pipe's
    wavefronts as a % of its peak (``lsu_pipe_pct``: shared and global memory accesses)."""
    rows = []
    for version, block, n in RUNG_STALL_CASES:
        progress(f"ncu on reduce {version} (n = 2^{n.bit_length() - 1}, block {block})")
        m = nsight.profile(_launch(_reduce_launch), version, block, n,
                           kernel=f"reduce_{version.replace('.', '_')}",
                           metrics=RUNG_STALL_METRICS, launch_count=3)
        rows.append({
            "version": version, "block": block, "n": n, **nsight.speed_of_light(m),
            "issue_active_pct": round(float(
                m["smsp__issue_active.avg.pct_of_peak_sustained_elapsed"]), 1),
            "lsu_pipe_pct": round(float(
                m["l1tex__data_pipe_lsu_wavefronts.sum.pct_of_peak_sustained_elapsed"]), 1),
        })
    return rows


def _reduce_atomics_launch(label: str, n: int) -> None:
    """Chapter 6.3: one of ``reduce_single_pass``'s atomics patterns ("warp atomics", "block
    atomics", "spread atomics") on ``n`` float32 ones, with that experiment's grid and block
    (v8's plan without unroll), twice, each call after its zeroing launch."""
    import numpy as np
    from numba import cuda

    calls = {"warp atomics": _warp_atomic_calls, "block atomics": _block_atomic_calls,
             "spread atomics": _spread_atomic_calls}[label]
    x = cuda.to_device(np.ones(n, dtype=np.float32))
    plan = ablation_plan(n, 4, 1, 4)
    run, fetch, _ = calls(x, n, plan.grid, plan.block)
    nsight.launch_twice(run)
    got = fetch()  # float32 atomics round partial sums above 2^24
    print("RESULT " + json.dumps({"sum": got, "correct": abs(got - n) <= 1e-6 * n}), flush=True)


# Chapter 6.3's atomics patterns: why one atomic per warp costs more than one per block at
# 2^28 floats even when its atomics are spread over 16 words (the chapter could not separate it
# from timings). Nsight Compute on the three kernels at the sizes where spreading did and did
# not remove the excess: registers and occupancy (whether the kernels differ in more than
# their atomics), DRAM throughput, the SMs' active cycles against elapsed (a tail), the
# atomics the L2 served, and the stall reasons.
ATOMICS_PATTERNS = (("warp atomics", "reduce_warp_atomic"),
                    ("block atomics", "reduce_per_block_atomic"),
                    ("spread atomics", "reduce_spread_atomic"))


ATOMICS_SIZES = (2**24, 2**28)


ATOMICS_METRICS = STALL_METRICS + (
    "gpu__time_duration.sum", "dram__bytes_read.sum",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "launch__registers_per_thread", "sm__maximum_warps_per_active_cycle_pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__cycles_active.avg", "sm__cycles_elapsed.avg",
    "smsp__inst_executed_op_global_red.sum", "lts__t_requests_op_red.sum")


@records.experiment(
    "profiling_reduce_atomics", chapter="profiling",
    title="Chapter 6.3's atomics patterns under Nsight Compute: registers, occupancy, DRAM, "
          "the SMs' active cycles and the L2's atomics",
    units={"duration_ns": "ns", "dram_gbps": "GB/s", "dram_pct": "% of peak",
           "active_pct": "% of elapsed cycles", "achieved_occupancy_pct": "%",
           "theoretical_occupancy_pct": "%"})
def reduce_atomics_experiment(progress) -> list[dict]:
    """Nsight Compute on ``reduce_single_pass``'s three atomics patterns (one atomic per warp,
    per block, and per warp spread over ``reduce.SPREAD_WORDS`` words) at each size of
    ``ATOMICS_SIZES``, with that experiment's grid: the kernel's duration, DRAM's bytes per
    second and % of peak, registers, theoretical and achieved occupancy, the SMs' active cycles
    as a % of elapsed cycles (below 100: SMs idle while the kernel ends), the atomic
    instructions issued and the atomic requests the L2 served, and the stall reasons."""
    rows = []
    for n in ATOMICS_SIZES:
        for label, kernel in ATOMICS_PATTERNS:
            progress(f"ncu on {label} (n = 2^{n.bit_length() - 1})")
            m = nsight.profile(_launch(_reduce_atomics_launch), label, n, kernel=kernel, metrics=ATOMICS_METRICS)
            rows.append({
                "version": label, "n": n, "kernel": kernel,
                "duration_ns": m["gpu__time_duration.sum"],
                "dram_gbps": m["dram__bytes_read.sum"] / m["gpu__time_duration.sum"],
                "dram_pct": m["dram__throughput.avg.pct_of_peak_sustained_elapsed"],
                "registers": m["launch__registers_per_thread"],
                "theoretical_occupancy_pct": m["sm__maximum_warps_per_active_cycle_pct"],
                "achieved_occupancy_pct": m["sm__warps_active.avg.pct_of_peak_sustained_active"],
                "active_pct": 100 * m["sm__cycles_active.avg"] / m["sm__cycles_elapsed.avg"],
                "atomic_inst": m["smsp__inst_executed_op_global_red.sum"],
                "l2_atomic_requests": m["lts__t_requests_op_red.sum"],
                **{f"stall_{r}": m[x] for r, x in zip(STALL_REASONS, STALL_METRICS)},
            })
    return rows


def atomics_waves(res) -> list[str]:
    """For each pattern of ``profiling_reduce_atomics`` (``res``), printed and returned: its
    registers, the blocks of the experiment's block size that fit on an SM at its theoretical
    occupancy, and the waves the grid of ``reduce_single_pass`` (the record of the same GPU)
    takes at the largest size: grid / (blocks per SM x SMs)."""
    if not isinstance(res, records.Result) or res.name != "profiling_reduce_atomics":
        raise TypeError(f"res: give gp.records.run(\"profiling_reduce_atomics\"), not "
                        f"{getattr(res, 'name', type(res).__name__)!r}.")
    timed = records.run("reduce_single_pass", live=False, like=res)
    facts = res.meta.get("device") or {}
    if timed.gpu != res.gpu or not facts.get("sm_count") or not facts.get("max_threads_per_sm"):
        raise ValueError(f"no reduce_single_pass record of {res.gpu} with its SM count to "
                         "compare with: record both on that GPU.")
    n = max(res.values("n"))
    lines = []
    for r in res.select(n=n):
        launch = timed.one(n=n, version=r["version"])
        threads_per_sm = r["theoretical_occupancy_pct"] / 100 * facts["max_threads_per_sm"]
        per_sm = int(round(threads_per_sm / launch["block"]))
        places = per_sm * facts["sm_count"]
        lines.append(f"{r['version']}: {r['registers']:.0f} registers per thread; "
                     f"{per_sm} blocks of {launch['block']} threads fit per SM x "
                     f"{facts['sm_count']} SMs = {places} places for a grid of "
                     f"{launch['blocks']} blocks: {launch['blocks'] / places:.2f} waves")
    print("\n".join(lines))
    return lines
