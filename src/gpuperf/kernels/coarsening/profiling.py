"""Nsight Compute on chapter 5's ladder, with chapter 4's tiled kernels beside it (built on
``gpuperf.nsight``): ``profiling_matmul``, ``profiling_matmul_roofline`` (the bytes DRAM, the L2
and the L1/shared data pipe moved) and ``profiling_matmul_issue`` (the FFMA share and the issue
rate). Each launch runs in a process of its own under the tool; replayed from the record
elsewhere. The readings of these records that chapter 4 prints are in ``gpuperf.kernels.matmul``
(``dram_roofline_summary``, ``onchip_roofline_summary``)."""

from __future__ import annotations

from gpuperf import device, nsight, records, validate  # noqa: F401
from gpuperf.kernels import dram as dram_chapter
from gpuperf.nsight import (  # noqa: F401
    ISSUE_METRICS,
    STALL_METRICS,
    STALL_REASONS,
    fp32_lanes,
    issue_columns,
    per,
    top_stalls,
)

from .experiments import ladder_variants  # noqa: F401
from .variants import variant  # noqa: F401


def _launch(fn) -> str:
    """The ``"module:function"`` that ``gpuperf.nsight`` runs for one of this module's launches."""
    return f"{__name__}:{fn.__name__}"


def _matmul_variant(version: str, tile: int, factor: int):
    from gpuperf.kernels import matmul as mm

    if version == "tiled":
        return mm.variant("tiled", tile=tile)
    if version.startswith("naive"):  # chapter 4's naive mappings take no tile
        return mm.variant(version)
    if version == "coarsened":
        return variant("coarsened", tile=tile, factor=factor)
    return variant(version)


def _launch_matmul_twice(v, n: int) -> None:
    from gpuperf.kernels import matmul as mm

    A, B, C = mm.device_operands(n, n, n)
    nsight.launch_twice(lambda: v.launch(A, B, C))


def _matmul_launch(version: str, tile: int, factor: int, n: int) -> None:
    """Chapters 4 and 5: one matmul kernel on n x n float32 operands."""
    _launch_matmul_twice(_matmul_variant(version, tile, factor), n)


def _matmul_ladder_launch(index: int, n: int) -> None:
    """Chapter 5's ladder (``coarsening.ladder_variants()[index]``) on n x n float32 operands."""

    _launch_matmul_twice(ladder_variants()[index], n)


def _cublas_launch(n: int) -> None:
    """cuBLAS's SGEMM (CuPy's ``@`` on float32) on n x n operands, twice."""
    import cupy as cp

    a = cp.ones((n, n), dtype=cp.float32)
    b = cp.ones((n, n), dtype=cp.float32)
    nsight.launch_twice(lambda: cp.matmul(a, b))


MATMUL_METRICS = STALL_METRICS + (
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "smsp__inst_executed_op_shared_ld.sum",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__maximum_warps_per_active_cycle_pct",
    "launch__registers_per_thread",
    "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem",
    "gpu__time_duration.sum",
)


# (label, version, tile, factor): chapter 4's tiled kernels, chapter 5's coarsened ones and
# its pipelined register tile (which loads the next tile while it computes on this one).
PROFILED_MATMULS = (("tiled 16", "tiled", 16, 1), ("tiled 32", "tiled", 32, 1),
                    ("coarsened 32x2", "coarsened", 32, 2),
                    ("coarsened 32x4", "coarsened", 32, 4),
                    ("coarsened 32x8", "coarsened", 32, 8),
                    ("register tile, pipelined", "regtile_pipelined", 0, 0))


PROFILED_MATMUL_N = 4096  # 192 MiB of operands and output: almost four times an H100's L2


@records.experiment(
    "profiling_matmul", chapter="profiling",
    title="The matmul kernels under Nsight Compute: DRAM bytes, shared loads per FMA, "
          "occupancy and stall reasons",
    units={"dram_bytes": "B", "model_bytes": "B", "tflops": "TFLOP/s", "duration_ns": "ns",
           "achieved_occupancy_pct": "%", "theoretical_occupancy_pct": "%"})
def matmul_experiment(progress) -> list[dict]:
    """Nsight Compute on chapter 4's tiled matmul (tiles 16 and 32), chapter 5's coarsened
    one (tile 32, factors 2, 4, 8) and its pipelined register tile, at 4096^3 float32:
    the bytes DRAM moved against the chapter's traffic model, shared-memory load
    instructions per FMA instruction, registers, theoretical and achieved occupancy, and
    the stall reasons per issued instruction."""
    from gpuperf.kernels import matmul as mm

    n = PROFILED_MATMUL_N
    rows = []
    for label, version, tile, factor in PROFILED_MATMULS:
        progress(f"ncu on the matmul: {label} (n = {n})")
        v = _matmul_variant(version, tile, factor)
        kernel = getattr(v.kernel, "py_func", v.kernel).__name__
        m = nsight.profile(_launch(_matmul_launch), version, tile, factor, n, kernel=kernel, metrics=MATMUL_METRICS)
        warp_ffma = m["smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"] / 32
        rows.append({
            "version": label, "n": n, "kernel": kernel,
            "dram_bytes": m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"],
            "model_bytes": mm.traffic_bytes(v.model, n, n, n, *v.params),
            "shared_loads_per_fma": round(m["smsp__inst_executed_op_shared_ld.sum"] / warp_ffma, 3)
            if warp_ffma else 0.0,
            "registers": m["launch__registers_per_thread"],
            "theoretical_occupancy_pct": round(m["sm__maximum_warps_per_active_cycle_pct"], 1),
            "achieved_occupancy_pct": round(
                m["sm__warps_active.avg.pct_of_peak_sustained_active"], 1),
            "blocks_limit_registers": m["launch__occupancy_limit_registers"],
            "blocks_limit_shared": m["launch__occupancy_limit_shared_mem"],
            **{f"stall_{r}": round(m[x], 3) for r, x in zip(STALL_REASONS, STALL_METRICS)},
            "tflops": round(2 * n**3 / m["gpu__time_duration.sum"] / 1e3, 2),
            "duration_ns": m["gpu__time_duration.sum"],
        })
    return rows


# Chapter 4's roofline beyond the L2: each version of the chapter at PROFILED_MATMUL_N, where
# operands and output are several times the L2, with the bytes DRAM moved measured instead of
# modelled, so that a point's intensity is FLOPs per byte DRAM really served.
# (version, tile); each row is named as chapter 4 names the variant.
ROOFLINE_MATMULS = (("naive_row_x", 0), ("naive_col_x", 0),
                    ("tiled", 8), ("tiled", 16), ("tiled", 32))


# DRAM's bytes, and for a hierarchical view the bytes the L2 and L1 were asked for and the
# shared-memory bytes the kernel's loads and stores needed.
ROOFLINE_METRICS = ("dram__bytes_read.sum", "dram__bytes_write.sum", "gpu__time_duration.sum",
                    "lts__t_bytes.sum", "l1tex__t_bytes.sum", "sm__sass_data_bytes_mem_shared.sum",
                    "lts__t_sectors_srcunit_tex_op_read.sum",
                    "lts__t_sectors_srcunit_tex_op_write.sum",
                    "l1tex__data_pipe_lsu_wavefronts.sum",
                    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum")


@records.experiment(
    "profiling_matmul_roofline", chapter="profiling",
    title="The matmul versions of chapters 4 and 5 at 4096^3 on a roofline of measured DRAM "
          "bytes, with the FP32 peak",
    units={"dram_bytes": "B", "model_bytes": "B", "ai_measured": "FLOP/B", "ai_model": "FLOP/B",
           "tflops": "TFLOP/s", "memory_roof_tflops": "TFLOP/s", "fp32_peak_tflops": "TFLOP/s",
           "cublas_tflops": "TFLOP/s", "pct_of_roof": "%", "sm_clock_khz": "kHz",
           "l2_bytes": "B", "l1_bytes": "B", "shared_bytes": "B", "l2_sm_bytes": "B",
           "pipe_bytes": "B", "shared_pipe_bytes": "B"})
def matmul_roofline_experiment(progress) -> list[dict]:
    """Each of chapter 4's versions, then each step of chapter 5's ladder (``chapter``: "tiling"
    or "coarsening"), at 4096^3 float32: the DRAM bytes it moved (Nsight Compute,
    caches flushed before the kernel), hence its measured intensity, beside the traffic
    model's; its rate timed outside the profiler; the memory roof at the measured intensity
    (the copy bandwidth times it), the theoretical FP32 peak (``device.fp32_peak_tflops``) and
    cuBLAS's rate; the rate as a % of the lower roof; and, for a roofline of the whole memory
    hierarchy, the bytes the L2 and the L1 were asked for, the shared-memory bytes, and the
    L1/shared data pipe's wavefronts x 128 bytes (all of them, and the shared ones)."""
    from gpuperf import bench
    from gpuperf.kernels import matmul as mm

    n = PROFILED_MATMUL_N
    ceilings = bench.ceilings()
    peak, clock = device.fp32_peak_tflops(), device.sm_clock_khz()
    flops = mm.flops(n, n, n)
    rows = []

    # chapter 4's versions, then chapter 5's ladder beyond them (one launch per profiled process)
    todo = [("tiling", _matmul_variant(version, tile, 1), (_launch(_matmul_launch), version, tile, 1, n))
            for version, tile in ROOFLINE_MATMULS]
    names = {v.name for _, v, _ in todo}
    todo += [("coarsening", v, (_launch(_matmul_ladder_launch), i, n))
             for i, v in enumerate(ladder_variants()) if v.name not in names]
    for chapter, v, launch in todo:
        label = v.name
        progress(f"ncu and timing: {label} (n = {n})")
        kernel = getattr(v.kernel, "py_func", v.kernel).__name__
        m = nsight.profile(*launch, kernel=kernel, metrics=ROOFLINE_METRICS)
        dram = m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"]
        timed = mm.measure_variant(v, n, min_repeat=5, min_time=0.2)
        model = mm.traffic_bytes(v.model, n, n, n, *v.params)
        memory_roof = ceilings["copy_gbps"] * (flops / dram) / 1e3
        roof = min(memory_roof, peak) if peak else memory_roof
        rows.append({
            "version": label, "chapter": chapter, "n": n, "kernel": kernel, "dram_bytes": dram,
            "model_bytes": model, "ai_measured": flops / dram, "ai_model": flops / model,
            "tflops": timed["tflops"], "spread": timed["spread"],
            "memory_roof_tflops": memory_roof, "fp32_peak_tflops": peak,
            "cublas_tflops": ceilings.get("matmul_tflops"), "sm_clock_khz": clock,
            "pct_of_roof": 100 * timed["tflops"] / roof,
            "l2_bytes": m["lts__t_bytes.sum"], "l1_bytes": m["l1tex__t_bytes.sum"],
            "shared_bytes": m["sm__sass_data_bytes_mem_shared.sum"],
            # what the SMs read from and wrote to the L2 (32-byte sectors)
            "l2_sm_bytes": 32 * (m["lts__t_sectors_srcunit_tex_op_read.sum"]
                                 + m["lts__t_sectors_srcunit_tex_op_write.sum"]),
            # the L1/shared data pipe's work, in the bytes its wavefronts could carry: what
            # the SM's read roof (profiling_onchip_roofs) is measured in
            "pipe_bytes": dram_chapter.BANK_BYTES_PER_CLOCK * m["l1tex__data_pipe_lsu_wavefronts.sum"],
            "shared_pipe_bytes": (dram_chapter.BANK_BYTES_PER_CLOCK
                                  * m["l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"]),
        })
    return rows


# Why chapter 5's best matmul stops where it does: an SM's four sub-partitions each issue at
# most one warp instruction per cycle, and each does lanes/4 FP32 multiply-adds per cycle (one
# warp FFMA per cycle on a 128-lane SM such as Hopper's, one every two cycles on a 64-lane SM
# such as a T4's or an A100's). The FP32 rate is then issue rate x FFMA share x 128/lanes of the
# peak: any other instruction takes an issue slot an FFMA could have used.
ISSUE_FIRST_RUNG = "regtile vectorized"  # the ladder's rungs from this one on are profiled


CUBLAS_KERNEL = "gemm"  # a pattern of cuBLAS's SGEMM kernel names


@records.experiment(
    "profiling_matmul_issue", chapter="profiling",
    title="Chapter 5's register-tiled matmuls and cuBLAS at 4096^3: how often a scheduler "
          "issues, and how many of the instructions are FFMAs",
    units={"inst": "warp instructions issued", "ffma_inst": "warp FFMA instructions",
           "ffma_share_pct": "% of instructions", "issue_active_pct": "% of cycles",
           "issue_bound_pct": "% of FP32 peak", "pct_fp32_peak": "% of FP32 peak",
           "tflops": "TFLOP/s", "fp32_peak_tflops": "TFLOP/s", "pct_cublas": "% of cuBLAS",
           "fp32_lanes_per_sm": "lanes"})
def matmul_issue_experiment(progress) -> list[dict]:
    """The register-tiled steps of chapter 5's ladder (from ``ISSUE_FIRST_RUNG`` on) and
    cuBLAS's SGEMM, at 4096^3 float32: the warp instructions issued and the FFMAs among them
    (Nsight Compute), the share of active cycles in which a scheduler issued an instruction, and
    the stall reasons. One issue slot per sub-partition and cycle, and lanes/4 multiply-adds per
    sub-partition and cycle, give the share of the FP32 peak those counters allow:
    ``issue_bound_pct`` = FFMA share x issue rate x 128/lanes (at most 100). It is an equality
    up to the clock (the peak is taken at the maximum clock) and the cycles an SM idles at the
    end of the grid (the issue rate counts active cycles), so the rate measured outside the
    profiler (``pct_fp32_peak``) sits a little below it; what it shows is which factor, the
    FFMA share or the issue rate, keeps a kernel from the peak."""
    from gpuperf.kernels import matmul as mm

    n = PROFILED_MATMUL_N
    peak = device.fp32_peak_tflops()
    lanes = fp32_lanes()
    ladder = ladder_variants()
    first = next(i for i, v in enumerate(ladder) if v.name.startswith(ISSUE_FIRST_RUNG))
    todo = [(v.name, (_launch(_matmul_ladder_launch), i, n), getattr(v.kernel, "py_func", v.kernel).__name__,
             False, v) for i, v in enumerate(ladder) if i >= first]
    todo.append((mm.CUBLAS, (_launch(_cublas_launch), n), CUBLAS_KERNEL, True, None))
    rows = []
    cublas = mm.measure_cublas(n)
    for label, launch, kernel, library, v in todo:
        progress(f"ncu and timing: {label} (n = {n})")
        m = nsight.profile(*launch, kernel=kernel, metrics=ISSUE_METRICS, library=library)
        timed = cublas if v is None else mm.measure_variant(v, n, min_repeat=5, min_time=0.2)
        rows.append({
            "version": label, "n": n, "kernel": kernel, **issue_columns(m, lanes),
            "tflops": timed["tflops"],
            "spread": timed["spread"], "fp32_peak_tflops": peak,
            "pct_fp32_peak": 100 * timed["tflops"] / peak if peak else None,
            "pct_cublas": 100 * timed["tflops"] / cublas["tflops"] if cublas else None,
        })
    return rows


def issue_summary(res) -> list[str]:
    """One line per kernel of ``profiling_matmul_issue`` or ``profiling_gdn``: the share of
    its instructions that are FFMAs, the share of cycles a scheduler issued, the share of the
    FP32 peak the two allow, and the rate measured (both as % of the peak), then its top stall
    reasons."""
    names = ("profiling_matmul_issue", "profiling_gdn")
    if not isinstance(res, records.Result) or res.name not in names:
        raise TypeError("res must be the Result of profiling_matmul_issue or profiling_gdn "
                        "(gp.records.run(\"profiling_matmul_issue\")).")
    lines = []
    for r in res.rows:
        measured = r.get("pct_fp32_peak")
        if measured is None and r.get("fp32_peak_tflops") and r.get("tflops") is not None:
            measured = 100 * r["tflops"] / r["fp32_peak_tflops"]
        if measured is not None and r.get("issue_bound_pct") is not None:
            rate = (f"together {r['issue_bound_pct']:.0f}% of the FP32 peak, measured "
                    f"{measured:.0f}%")
        else:
            rate = "no FP32 peak known for this GPU"
        label = r.get("version") or f"{r['method']} at N = {r['n_ch']}"
        stalls = ", ".join(f"{name} {value:.2f}" for name, value in top_stalls(r, 2))
        lines.append(f"{label}: {r['ffma_share_pct']:.0f}% of its instructions are FFMAs, "
                     f"a scheduler issues in {r['issue_active_pct']:.0f}% of cycles: {rate} "
                     f"(top stalls per issued instruction: {stalls})")
    lines.append(f"({res.label})")
    print("\n".join(lines))
    return lines


# Finding 8 of issue 60: the shared-memory loads per multiply-add that the hardware executes,
# beside the count of values the source reads (the model behind ``matmul_regtile_1d``'s
# ``fma_per_shared_load``, T_M / (T_M + 1)). The assembler may merge loads a thread makes to
# adjacent addresses (chapter 4's tiled kernel: four ``sA[ty, n]`` in one 16-byte load), so the
# two counts can differ; the chapter shows both.
REGTILE_1D_PROFILED_TILE = 32  # chapter 4's tiled kernel, the baseline of matmul_regtile_1d


def _regtile_1d_profiled():
    """(label, tm, variant) for chapter 4's tiled 32 and every ``REGTILE_1D_CONFIGS`` kernel,
    in the order of ``matmul_regtile_1d``'s rows."""
    from gpuperf.kernels import matmul as mm

    from .experiments import REGTILE_1D_CONFIGS
    from .kernels import regtile_1d_variant

    out = [(f"tiled {REGTILE_1D_PROFILED_TILE}", 1, mm.variant("tiled", tile=REGTILE_1D_PROFILED_TILE))]
    for bm, bn, bk, tm in REGTILE_1D_CONFIGS:
        v = regtile_1d_variant(bm, bn, bk, tm)
        out.append((v.name, tm, v))
    return out


def _regtile_1d_launch(index: int, n: int) -> None:
    """``_regtile_1d_profiled()[index]`` on n x n float32 operands."""
    _launch_matmul_twice(_regtile_1d_profiled()[index][2], n)


REGTILE_1D_METRICS = ("smsp__inst_executed_op_shared_ld.sum",
                      "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
                      "launch__registers_per_thread", "gpu__time_duration.sum")


@records.experiment(
    "profiling_regtile_1d", chapter="profiling",
    title="Shared-memory load instructions per multiply-add, counted by Nsight Compute: chapter "
          "4's tiled kernel and chapter 5's columns of outputs per thread (4096^3)",
    units={"shared_loads_per_fma": "warp shared-load instructions per warp FFMA",
           "fma_per_shared_load": "warp FFMAs per warp shared-load instruction",
           "fma_per_shared_value": "multiply-adds per value the source reads from shared memory",
           "tflops": "TFLOP/s", "duration_ns": "ns"})
def regtile_1d_profile_experiment(progress) -> list[dict]:
    """Nsight Compute on the kernels of ``matmul_regtile_1d`` (chapter 4's tiled 32 and the
    1-D register tiles), at 4096^3 float32: the warp-level shared-memory load instructions
    and FFMA instructions executed, their ratio both ways, and beside them the source's count,
    T_M / (T_M + 1) multiply-adds per value read from shared memory (1/2 for the tiled
    kernel). Where the assembler merged loads of adjacent addresses into wider ones, the
    measured count is higher than the source's."""
    n = PROFILED_MATMUL_N
    rows = []
    for i, (label, tm, v) in enumerate(_regtile_1d_profiled()):
        progress(f"ncu: {label} (n = {n})")
        kernel = getattr(v.kernel, "py_func", v.kernel).__name__
        m = nsight.profile(_launch(_regtile_1d_launch), i, n, kernel=kernel, metrics=REGTILE_1D_METRICS)
        warp_ffma = m["smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"] / 32
        loads = m["smsp__inst_executed_op_shared_ld.sum"]
        rows.append({
            "version": label, "tm": tm, "n": n, "kernel": kernel,
            "shared_loads_per_fma": round(loads / warp_ffma, 4) if warp_ffma else None,
            "fma_per_shared_load": round(warp_ffma / loads, 4) if loads else None,
            "fma_per_shared_value": tm / (tm + 1),
            "registers": m["launch__registers_per_thread"],
            "tflops": round(2 * n**3 / m["gpu__time_duration.sum"] / 1e3, 2),
            "duration_ns": m["gpu__time_duration.sum"],
        })
    return rows


# The kernels whose instruction counts chapters 4 and 5 explain: chapter 4's tiled kernels (how
# many shared-load instructions feed each multiply-add) and the fast path with int64 and with
# uint32 index arithmetic.
_MATMUL_SIGNATURE = "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])"


def _sass_count_kernels():
    from gpuperf.kernels import matmul as mm

    from .variants import fast_kernel_variant

    return (("tiled 16", mm.variant("tiled", tile=16).kernel),
            ("tiled 32", mm.variant("tiled", tile=32).kernel),
            ("fast path only, int64", fast_kernel_variant(index="int64").kernel),
            ("fast path only, uint32", fast_kernel_variant().kernel))


@records.experiment(
    "matmul_sass_counts", chapter="coarsening",
    title="Instructions in this GPU's SASS: shared loads per multiply-add of the tiled kernels, "
          "and the fast path with int64 and uint32 indices",
    units={"instructions": "in the kernel", "shared_loads_per_ffma": "per FFMA"})
def sass_counts_experiment(progress) -> list[dict]:
    """The SASS of chapter 4's tiled kernels (tiles 16 and 32) and of the fast path alone with
    int64 and with uint32 index arithmetic: every instruction in the kernel, its FFMAs, its
    shared loads of 4, 8 and 16 bytes (``LDS``, ``LDS.64``, ``LDS.128``: up to four floats in
    one instruction), and shared-load instructions per FFMA. The tiled kernels' inner loop is
    unrolled once over the tile, so the kernel holds one copy of it."""
    rows = []
    for label, kernel in _sass_count_kernels():
        ops = nsight.sass_opcodes(nsight.kernel_sass(kernel, _MATMUL_SIGNATURE,
                                                     "matmul_sass_counts"))
        shared = [op.split(".") for op in ops if op.split(".")[0] == "LDS"]
        wide = sum(1 for parts in shared if "128" in parts)
        eight = sum(1 for parts in shared if "64" in parts)
        ffma = sum(1 for op in ops if op.split(".")[0] == "FFMA")
        rows.append({"kernel": label, "instructions": len(ops), "ffma": ffma,
                     "lds_4_bytes": len(shared) - wide - eight, "lds_8_bytes": eight,
                     "lds_16_bytes": wide,
                     "shared_loads_per_ffma": len(shared) / ffma if ffma else None})
        progress(f"{label}: {len(ops)} instructions, {ffma} FFMA, {len(shared)} shared loads "
                 f"({wide} of 16 bytes)")
    return rows
