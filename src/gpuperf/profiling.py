"""Reading what NVIDIA's tools say about a course kernel: Nsight Compute and compute-sanitizer.

The profilers work on Numba kernels like on any other: run the Python program under the tool,
pick the kernel by the start of its name (Numba's kernels are named after the Python
function: ``reduce_v1[...]``). This module builds those command lines and parses the tools'
output into plain rows, so that a hardware metric can be recorded and shown next to the
explanation it supports:

    cmd = profiling.ncu_command(["python3", "script.py"], kernel="reduce_v1",
                                metrics=profiling.SHARED_METRICS, launch_skip=1)
    rows = profiling.parse_ncu_csv(subprocess.run(cmd, capture_output=True, text=True).stdout)
    profiling.metrics_by_kernel(rows)["reduce_v1"]["l1tex__data_bank_conflicts_..."]

``compute-sanitizer --tool racecheck`` reports shared-memory hazards; ``parse_racecheck``
counts them. Both parsers skip the tools' banner lines and the program's own output.
Captured real output is in ``tests/fixtures/profiling/``.

The experiments run the tools like any other experiment (``python -m gpuperf.record --only
profiling_`` on a GPU with the tools; replayed from the record elsewhere), each on the chapter's
own kernel and launch: ``profiling_stride``, ``profiling_stride_parts`` (the strided copy's
loads and stores profiled apart) and ``profiling_transpose`` (chapter 2: sectors per request,
DRAM bytes, bank conflicts), ``profiling_latency`` (chapter 3: DRAM throughput and
stall reasons as bytes in flight grow), ``profiling_matmul`` (chapters 4 and 5: DRAM bytes
against the traffic model, shared loads per FMA, occupancy, stall reasons) and
``profiling_reduce_shared`` (chapter 6: wavefronts and bank conflicts of the first rungs).
Chapter 6's ``reduce_racecheck`` runs compute-sanitizer and counts with ``parse_racecheck``.
"""

from __future__ import annotations

import math

from . import device, nsight, records, validate
from .kernels import dram as dram_chapter

# The tools' runners and parsers live in ``gpuperf.nsight``; their names stay reachable here.
from .nsight import (  # noqa: F401
    GLOBAL_METRICS,
    ISSUE_METRICS,
    SANITIZER_TOOLS,
    SHARED_METRICS,
    SOL_METRICS,
    STALL_METRICS,
    STALL_REASONS,
    TIME_METRICS,
    available,
    cupti_ops,
    fp32_lanes,
    issue_columns,
    metrics_by_kernel,
    ncu_command,
    overlap_ms,
    parse_cupti_trace,
    parse_ncu_csv,
    parse_racecheck,
    parse_sanitizer,
    per,
    print_result,
    speed_of_light,
    top_stalls,
    union_ms,
)

# --------------------------------------------------------------------------- experiments
# Each experiment runs a tool on a process of its own: ``python -c`` calling one of the launch
# functions below by name (``launch_command``). A launch function builds the chapter's data
# and launches the chapter's kernel twice; Nsight Compute profiles the second launch (the
# first may include loading the module) and flushes the caches before it.


def _stride_launch(stride: int, count: int) -> None:
    """Chapter 2: ``coalescing_stride``'s kernel and launch (float32, 4 elements per thread)."""
    from numba import cuda

    from .kernels import coalescing as co

    src = co._device_data(count * stride)
    dst = cuda.device_array_like(src)
    kernel = co.make_copy_strided(4, "float32")
    grid, block = co.copy_launch(count, version="ilp", ilp=4)
    nsight.launch_twice(lambda: kernel[grid, block](src, dst, count, stride))


def _stride_part_launch(part: str, stride: int, count: int) -> None:
    """Chapter 2: one half of the strided copy, on ``coalescing_stride``'s launch: its loads
    (``part="loads"``, ``read_strided``) or its stores (``part="stores"``, ``write_strided``)."""
    from numba import cuda

    from .kernels import coalescing as co

    data = co._device_data(count * stride)
    grid, block = co.copy_launch(count, version="ilp", ilp=4)
    if part == "loads":
        sums = cuda.device_array(grid * block, dtype=data.dtype)
        kernel = co.make_read_strided(4)
        nsight.launch_twice(lambda: kernel[grid, block](data, sums, count, stride))
    elif part == "stores":
        nsight.launch_twice(lambda: co.write_strided[grid, block](data, count, stride))
    else:
        raise ValueError(f"part={part!r}: give \"loads\" or \"stores\".")


def _transpose_launch(pad, n: int) -> None:
    """Chapter 2: the naive transpose (``pad`` < 0), the 32 x 32 tiled one with ``pad``
    words of padding per shared row, or (``pad`` "vec4" or "vec4_noflip") the 64 x 64 one
    with 16-byte global accesses, with and without its column flip, on an n x n float32
    matrix."""
    from numba import cuda

    from .kernels import coalescing as co

    a = co._device_data(n * n).reshape(n, n)
    out = cuda.device_array((n, n), a.dtype)
    if pad == "tiled64":
        kernel, grid, block = co.make_transpose(64, 4, 1, True), (n // 64, n // 64), (32, 4)
    elif isinstance(pad, str):
        kernel = co.make_transpose_vec4(8, pad == "vec4")
        grid, block = (n // co.VEC_TILE, n // co.VEC_TILE), (16, 8)
    elif pad < 0:
        kernel, grid, block = co.transpose_naive, (n // 32, n // 8), (32, 8)
    else:
        kernel, grid, block = co.make_transpose(32, 32, pad, True), (n // 32, n // 32), (32, 32)
    nsight.launch_twice(lambda: kernel[grid, block](a, out))


def _smooth_launch(racy: int, n: int) -> None:
    """Chapter "Profiling, sanitizing and debugging": the smoothing kernel, with its barrier
    missing (``racy``) or not, on ``n`` random float32, launched once."""
    from numba import cuda

    from . import exercises as ex
    from .kernels import debugging as dbg

    x = ex.random_array(n, 1)
    d_out = cuda.device_array(n, x.dtype)
    kernel = dbg.smooth_racy if racy else dbg.smooth
    kernel[dbg.smooth_grid(n), dbg.SMOOTH_BLOCK](cuda.to_device(x), d_out)
    print_result(d_out.copy_to_host(), dbg.smooth_reference(x))


def _copy_unguarded_launch(n: int) -> None:
    """The copy with no bounds test, on whole blocks of 256 past ``n`` elements."""
    from numba import cuda

    from . import exercises as ex
    from .kernels import debugging as dbg

    x = ex.random_array(n, 2)
    d_out = cuda.device_array(n, x.dtype)
    dbg.copy_unguarded[-(-n // 256), 256](cuda.to_device(x), d_out)
    print_result(d_out.copy_to_host(), x)


def _matmul_early_return_launch(n: int) -> None:
    """Chapter 4's tiled matmul that returns before its barriers (tile 16), n x n x n."""
    from numba import cuda

    from . import exercises as ex
    from .kernels import matmul as mm

    A, B = ex.random_array((n, n), 3), ex.random_array((n, n), 4)
    C = cuda.device_array((n, n), A.dtype)
    mm.variant("tiled_early_return", tile=16).launch(cuda.to_device(A), cuda.to_device(B), C)
    print_result(C.copy_to_host(), mm.reference(A, B))


def _gdn_launch(method: str, tile: int, n_ch: int) -> None:
    """Chapter 8: dgamma at the headline image size (``gdn.BATCH`` images of
    ``gdn.HEADLINE["side"]`` squared) and ``n_ch`` channels, by the fused kernel (``tile`` 0)
    or its tiled version with ``tile`` x ``tile`` blocks and depth ``tile``, twice, each
    launch after the one that zeroes the outputs. Prints whether the result is right."""
    from numba import cuda

    from .kernels import gdn

    n_s = gdn.BATCH * gdn.HEADLINE["side"] ** 2
    prob = gdn._Problem(n_ch, n_s, seed=n_ch + 1)
    if method == "fused":
        run, _ = gdn._method_launcher("fused", prob, None, gdn.DEFAULT_BLOCK, None)
    else:
        grid, threads, span = gdn.tiled_launch(n_ch, n_s, tile=tile, depth=tile)
        kernel = gdn.make_fused_tiled(tile, tile)
        dgamma = cuda.device_array((n_ch, n_ch), "float32")
        dbeta = cuda.device_array(n_ch, "float32")

        def run():
            gdn._zero(dgamma, dbeta)
            kernel[grid, threads](prob.delta, prob.w, prob.d, dgamma, dbeta, span)
            return dgamma
    out = None
    for _ in range(2):
        out = run()
    cuda.synchronize()
    print_result(out.copy_to_host(), prob.reference())


# The launches chapter 9 names (``launch_command("reduce", ...)``): each the ``"module:function"``
# of the chapter module that owns the kernel, run by ``gpuperf.nsight`` in a process of its own.
_HERE = __name__
_LAUNCHES = {"reduce": "gpuperf.kernels.reduce.profiling:_reduce_launch", "stride": f"{_HERE}:_stride_launch",
             "stride_part": f"{_HERE}:_stride_part_launch",
             "transpose": f"{_HERE}:_transpose_launch",
             "sum_loads": "gpuperf.kernels.dram.profiling:_sum_loads_launch",
             "l2_read": "gpuperf.kernels.dram.profiling:_l2_read_launch",
             "onchip_read": "gpuperf.kernels.dram.profiling:_onchip_read_launch",
             "matmul": "gpuperf.kernels.coarsening.profiling:_matmul_launch",
             "matmul_ladder": "gpuperf.kernels.coarsening.profiling:_matmul_ladder_launch",
             "cublas": "gpuperf.kernels.coarsening.profiling:_cublas_launch",
             "smooth": f"{_HERE}:_smooth_launch",
             "copy_unguarded": f"{_HERE}:_copy_unguarded_launch",
             "matmul_early_return": f"{_HERE}:_matmul_early_return_launch",
             "gdn": f"{_HERE}:_gdn_launch",
             "reduce_atomics": "gpuperf.kernels.reduce.profiling:_reduce_atomics_launch"}


def launch(name: str) -> str:
    """The ``"module:function"`` of the launch called ``name`` here (``nsight`` runs it)."""
    validate.choice(name, "name", tuple(_LAUNCHES))
    return _LAUNCHES[name]


def launch_command(name: str, *args, python: str = "python3") -> list[str]:
    """The command line of a process that runs launch ``name`` with ``args``, as one would
    type it (see ``nsight.launch_command``)."""
    return nsight.launch_command(launch(name), *args, python=python)


def profile(name: str, *args, kernel: str, metrics, launch_count: int = 1,
            library: bool = False) -> dict:
    """``nsight.profile`` of launch ``name`` with ``args``."""
    return nsight.profile(launch(name), *args, kernel=kernel, metrics=metrics,
                          launch_count=launch_count, library=library)


def try_profile(name: str, *args, kernel: str, metrics, launch_count: int = 1) -> dict | None:
    """``nsight.try_profile`` of launch ``name`` with ``args``."""
    return nsight.try_profile(launch(name), *args, kernel=kernel, metrics=metrics,
                              launch_count=launch_count)


def sanitize(tool: str, name: str, *args) -> dict:
    """``nsight.sanitize`` of launch ``name`` with ``args``."""
    return nsight.sanitize(tool, launch(name), *args)


# Global loads and stores: sectors per request and the DRAM bytes behind them. DRAM writes
# count what reached DRAM during the kernel: lines still dirty in the L2 when it ends are not.
STRIDE_METRICS = (
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "gpu__time_duration.sum",
)
# The L1's data stage: the wavefronts (passes of up to 128 bytes through it) that the global
# loads and stores took. (Names from `ncu --query-metrics` on an H200.)
STRIDE_WAVEFRONT_METRICS = (
    "l1tex__data_pipe_lsu_wavefronts_mem_lgds_cmd_read.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_lgds_cmd_write.sum",
)
PROFILED_STRIDES = (1, 2, 4, 8, 16, 32)


@records.experiment(
    "profiling_stride", chapter="profiling",
    title="The strided copy under Nsight Compute: sectors and wavefronts per request, DRAM bytes",
    units={"duration_ns": "ns", "dram_read_bytes": "B", "dram_write_bytes": "B"})
def stride_experiment(progress) -> list[dict]:
    """Nsight Compute on chapter 2's strided copy (float32, the ``coalescing_stride`` launch
    and element count) at each of ``PROFILED_STRIDES``: the sectors each warp's load and
    store request touched in L1, and the bytes DRAM read and wrote, against the bytes the
    copy uses. Nsight Compute flushes the caches before the profiled launch."""
    from .kernels import coalescing as co

    count, size = co.N_STRIDE, 4
    rows = []
    for stride in PROFILED_STRIDES:
        progress(f"ncu on the strided copy, stride {stride}")
        m = profile("stride", stride, count, kernel="copy_strided",
                    metrics=STRIDE_METRICS + STRIDE_WAVEFRONT_METRICS)
        useful = count * size  # bytes the copy reads (and writes)
        warp = co.warp_access(stride=stride, elem_bytes=size)
        rows.append({
            "stride": stride, "dtype": "float32", "n": count,
            "load_sectors_per_request": per(m, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                                             "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
            "store_sectors_per_request": per(m, "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
                                              "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
            "model_sectors_per_request": len(warp.sectors),
            "load_wavefronts_per_request": per(
                m, "l1tex__data_pipe_lsu_wavefronts_mem_lgds_cmd_read.sum",
                "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
            "store_wavefronts_per_request": per(
                m, "l1tex__data_pipe_lsu_wavefronts_mem_lgds_cmd_write.sum",
                "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
            "model_lines_per_request": len(warp.lines),
            "dram_read_bytes": m["dram__bytes_read.sum"],
            "dram_write_bytes": m["dram__bytes_write.sum"],
            "dram_read_per_useful": round(m["dram__bytes_read.sum"] / useful, 3),
            "dram_write_per_useful": round(m["dram__bytes_write.sum"] / useful, 3),
            "duration_ns": m["gpu__time_duration.sum"],
        })
    return rows


# (label, launch name and its first argument, kernel name): the copy and its two halves.
STRIDE_PARTS = (("copy", ("stride",), "copy_strided"),
                ("loads only", ("stride_part", "loads"), "read_strided"),
                ("stores only", ("stride_part", "stores"), "write_strided"))


@records.experiment(
    "profiling_stride_parts", chapter="profiling",
    title="Whose DRAM reads? The strided copy, its loads alone and its stores alone (Nsight Compute)",
    units={"duration_ns": "ns"})
def stride_parts_experiment(progress) -> list[dict]:
    """Nsight Compute on chapter 2's strided copy and on its two halves, profiled one after
    the other at each of ``PROFILED_STRIDES`` (float32, the ``coalescing_stride`` launch and
    element count): the copy; its loads alone (``read_strided``: one contiguous store of a
    sum per thread); its stores alone (``write_strided``: no loads). DRAM bytes read and
    written per byte the copy uses, against the sector model's bytes per useful byte."""
    from .kernels import coalescing as co

    count, size = co.N_STRIDE, 4
    useful = count * size
    rows = []
    for stride in PROFILED_STRIDES:
        model = 1 / co.stride_efficiency(stride, size)  # bytes moved per useful byte
        for label, (launch, *first), kernel in STRIDE_PARTS:
            progress(f"ncu on the strided {label}, stride {stride}")
            m = profile(launch, *first, stride, count, kernel=kernel, metrics=STRIDE_METRICS)
            rows.append({
                "stride": stride, "kernel": label, "n": count,
                "model_bytes_per_useful": model,
                "dram_read_per_useful": round(m["dram__bytes_read.sum"] / useful, 3),
                "dram_write_per_useful": round(m["dram__bytes_write.sum"] / useful, 3),
                "duration_ns": m["gpu__time_duration.sum"],
            })
    return rows


def stride_parts_table(result) -> records.Result:
    """``profiling_stride_parts`` as one row per stride: the DRAM bytes read per byte the
    copy uses by the copy, by its loads alone, by its stores alone and by the two halves
    added up, beside the sector model's bytes per useful byte."""
    if not isinstance(result, records.Result) or result.name != "profiling_stride_parts":
        raise TypeError(f"result: give gp.records.run(\"profiling_stride_parts\"), not "
                        f"{getattr(result, 'name', type(result).__name__)!r}.")
    rows = []
    for stride in result.values("stride"):
        read = {r["kernel"]: r["dram_read_per_useful"] for r in result.select(stride=stride)}
        missing = [label for label, *_ in STRIDE_PARTS if label not in read]
        if missing:
            raise ValueError(f"result: stride {stride} has no row for {', '.join(missing)}; "
                             "record the experiment again.")
        rows.append({
            "stride": stride,
            "sector model": result.select(stride=stride)[0]["model_bytes_per_useful"],
            "loads only": read["loads only"], "stores only": read["stores only"],
            "loads + stores": round(read["loads only"] + read["stores only"], 3),
            "copy": read["copy"],
        })
    return records.Result(result.name, rows, result.meta, result.source)


def stride_wavefronts(result, onchip=None) -> records.Result:
    """``profiling_stride`` per stride: the sectors and the L1 data-stage wavefronts each warp's
    load and store request took, beside the model's sectors and 128-byte lines per request;
    with ``onchip`` (``profiling_onchip_roofs`` of the same GPU), the wavefronts' bytes over
    the kernel's duration as a share of the SM's read roof (``pipe_pct_of_roof``): how busy
    the L1's data stage was."""
    if not isinstance(result, records.Result) or result.name != "profiling_stride":
        raise TypeError(f"result: give gp.records.run(\"profiling_stride\"), not "
                        f"{getattr(result, 'name', type(result).__name__)!r}.")
    if "load_wavefronts_per_request" not in result.rows[0]:
        raise ValueError(f"result: the profiling_stride record of {result.gpu} has no wavefront "
                         "counts; record it again (python -m gpuperf.record --only "
                         "profiling_stride).")
    roof = None
    if onchip is not None:
        if not isinstance(onchip, records.Result) or onchip.name != "profiling_onchip_roofs":
            raise TypeError(f"onchip: give gp.records.run(\"profiling_onchip_roofs\") or None, "
                            f"not {getattr(onchip, 'name', type(onchip).__name__)!r}.")
        roof = dram_chapter.onchip_roof_gbps(onchip)
        if onchip.gpu != result.gpu:
            raise ValueError(f"onchip is from {onchip.gpu}, result from {result.gpu}: pass the "
                             "profiling_onchip_roofs record of the same GPU.")
    rows = []
    for r in result.rows:
        row = {"stride": r["stride"], "model_sectors": r["model_sectors_per_request"],
               "load_sectors": r["load_sectors_per_request"],
               "model_lines": r["model_lines_per_request"],
               "load_wavefronts": r["load_wavefronts_per_request"],
               "store_wavefronts": r["store_wavefronts_per_request"],
               "dram_read_per_useful": r["dram_read_per_useful"]}
        if roof:
            # One load and one store request per 32 elements copied; a wavefront is 128 bytes.
            wavefronts = (r["load_wavefronts_per_request"] + r["store_wavefronts_per_request"]) \
                * r["n"] / 32
            row["pipe_pct_of_roof"] = 100 * wavefronts * 128 / r["duration_ns"] / roof
        rows.append(row)
    return records.Result(result.name, rows, result.meta, result.source)


TRANSPOSE_METRICS = SHARED_METRICS + (
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "smsp__inst_executed_op_shared_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    # How busy shared memory's data pipe and DRAM were (% of their peaks over the kernel's time):
    # whether a kernel's bank conflicts can be what limits it.
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__time_duration.sum",
)
# (label, pad): pad -1 is the naive kernel; "tiled64" make_transpose(64, 4, 1), the last 4-byte
# rung; "vec4"/"vec4_noflip" make_transpose_vec4(8) with and without its column flip (the
# rows of coalescing_transpose with the same labels).
PROFILED_TRANSPOSES = (("naive", -1), ("tiled", 0), ("tiled + padding", 1),
                       ("64x64 tiles + padding, 32 per thread", "tiled64"),
                       ("64x64 tiles, 16-byte accesses, padding only", "vec4_noflip"),
                       ("64x64 tiles, 16-byte accesses, padding + flip", "vec4"))
PROFILED_TRANSPOSE_N = 4096


@records.experiment(
    "profiling_transpose", chapter="profiling",
    title="Chapter 2's transposes under Nsight Compute: bank conflicts and store sectors",
    units={"duration_ns": "ns", "shared_pipe_pct": "% of peak", "dram_pct": "% of peak"})
def transpose_experiment(progress) -> list[dict]:
    """Nsight Compute on the naive transpose, the 32 x 32 tiled one without and with a word
    of padding, and the 64 x 64 one with 16-byte global accesses without and with its column
    flip (a 4096 x 4096 float32 matrix): the wavefronts each shared load and store took (one:
    no bank conflict), the bank conflicts, the global store instructions, and the sectors per
    global store request (4 when a warp writes 128 contiguous bytes, 16 for 512)."""
    n = PROFILED_TRANSPOSE_N
    rows = []
    for label, pad in PROFILED_TRANSPOSES:
        progress(f"ncu on the transpose: {label}")
        kernel = ("transpose_tiled" if pad == "tiled64" else
                  "transpose_vec4" if isinstance(pad, str) else
                  "transpose_naive" if pad < 0 else "transpose_tiled")
        m = profile("transpose", pad, n, kernel=kernel, metrics=TRANSPOSE_METRICS + STALL_METRICS)
        rows.append({
            "version": label, "n": n,
            "shared_load_wavefronts_per_load": per(
                m, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                "smsp__inst_executed_op_shared_ld.sum"),
            "shared_store_wavefronts_per_store": per(
                m, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
                "smsp__inst_executed_op_shared_st.sum"),
            "bank_conflicts": (m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"]
                               + m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"]),
            "store_sectors_per_request": per(
                m, "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
                "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
            "global_store_requests": m["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"],
            "shared_pipe_pct": round(m["l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"
                                       ".pct_of_peak_sustained_elapsed"], 2),
            "dram_pct": round(m["dram__throughput.avg.pct_of_peak_sustained_elapsed"], 2),
            **{f"stall_{r}": round(m[x], 3) for r, x in zip(STALL_REASONS, STALL_METRICS)},
            "duration_ns": m["gpu__time_duration.sum"],
        })
    return rows


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
    depth = tile, the launch of ``gdn.tiled_launch``) at the headline image size and each N of
    ``GDN_PROFILED_CHANNELS``: the warp instructions issued and the FFMAs among them, the
    share of active cycles a scheduler issued, the FP32 share those two allow
    (``issue_bound_pct``, as in ``profiling_matmul_issue``), the stall reasons per issued
    instruction, the bytes DRAM and the L2 served to the SMs, shared loads per FFMA and
    wavefronts per shared load, global loads per FFMA, atomics, registers, the grid's blocks
    and occupancy. ``tflops`` is the profiled launch's rate (ncu's duration, clocks as
    they were), for comparing the rows, not the chapter's timed rate."""
    from .kernels import gdn

    n_s = gdn.BATCH * gdn.HEADLINE["side"] ** 2
    peak = device.fp32_peak_tflops()
    lanes = fp32_lanes()
    rows = []
    for n_ch in GDN_PROFILED_CHANNELS:
        for method, tile in GDN_PROFILED:
            label = method if not tile else f"{method} {tile}x{tile}"
            progress(f"ncu on the GDN gradient: {label} (N = {n_ch})")
            m = profile("gdn", method, tile, n_ch, kernel=method, metrics=GDN_METRICS)
            issue = issue_columns(m, lanes)
            ffma = issue["ffma_inst"]
            flops = 2 * n_ch * n_ch * n_s
            shared_ld = m["smsp__inst_executed_op_shared_ld.sum"]
            if tile:
                grid = gdn.tiled_launch(n_ch, n_s, tile=tile, depth=tile)[0]
            else:  # make_fused's grid, as gdn._method_launcher launches it
                grid = (math.ceil(n_s / (gdn.DEFAULT_BLOCK * 8)), n_ch, 1)
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


# --------------------------------------------------------------------------- compute-sanitizer


# --------------------------------------------------------------------------- Speed of Light


# --------------------------------------------------------------------------- CUPTI timeline


# The course's kernels on one roofline (chapter 10): every point, roof and label from one GPU's
# record, the one that has the matmuls' measured DRAM bytes.
def _course_roofline_record(path=None):
    if path is not None:
        return records._path_arg(path)
    here = records.record_path()
    ordered = [here] + [p for p in records.available() if p != here]
    return next((p for p in ordered if "profiling_matmul_roofline" in records.load(p)["experiments"]),
                here)


def _course_matmuls(rows) -> list[dict]:
    """The matmuls a course-wide roofline shows: chapter 4's versions, and of chapter 5's ladder
    the coarsened step, the first register tile and the fastest 2D register tile (its other
    2D steps sit at the same intensity, between these)."""
    rows = list(rows)
    ladder = [r for r in rows if r.get("chapter") == "coarsening"]
    two_d = [r for r in ladder if "regtile" in r["version"] and "1d" not in r["version"]]
    keep = [r for r in ladder if r not in two_d] + ([max(two_d, key=lambda r: r["tflops"])]
                                                    if two_d else [])
    return [r for r in rows if r not in ladder or r in keep]


def course_roofline(path=None) -> dict:
    """Every kernel of the course that does floating-point arithmetic, placed on the roofline
    of one recorded GPU: ``{"gpu", "label", "points", "copy_gbps", "cublas_tflops",
    "fp32_peak_tflops", "l2_gbps", "matmul", "missing"}``. ``path``: a record; by default the
    replayed record if it has ``profiling_matmul_roofline`` (the matmuls' intensity from the
    bytes DRAM moved), else a shipped record that has it, so that no point or roof comes from
    another GPU. Other kernels' intensities count the bytes they must move (read once, written
    once): DRAM moves at least that, so they are upper bounds. ``matmul``: the matmul rows, with the L2's
    bytes for reading them against an L2 roof; the points show chapter 4's versions and three
    steps of chapter 5's ladder (``_course_matmuls``). ``l2_points``: those matmuls again at
    their FLOP per byte the SMs moved through the L2 (with an L2 roof only), where the L2 roof
    is a roof and not only an upper envelope."""
    from .kernels import gdn, streams

    where = _course_roofline_record(path)
    record = records.load(where)
    have = record["experiments"]
    points, missing = [], []

    def get(name, what="not on this roofline"):
        if name not in have:
            missing.append((name, f"{what}: not in this GPU's record"))
            return None
        return records.recorded(name, path=where)

    def add(name, intensity, tflops):
        if intensity and tflops:
            points.append({"name": name, "intensity": intensity, "tflops": tflops})

    mm = get("profiling_matmul_roofline")
    l2_points = []
    for r in _course_matmuls(mm.rows) if mm else ():
        add(f"matmul {r['version']}", r["ai_measured"], r["tflops"])
        if r["ai_measured"] and r["tflops"] and _l2_served(r):
            # the same kernel at its FLOP per byte through the L2, to read against the L2 roof
            l2_points.append({"name": f"matmul {r['version']}", "intensity": _l2_intensity(r),
                              "tflops": r["tflops"]})
    res = get("reduce_ladder")
    for version in ("v0", "v2", "v8"):   # one addition per 4-byte element read
        for r in res.select(version=version) if res else ():
            add(f"reduce {version}", 0.25, r["gbps"] * 0.25 / 1e3)
    res = get("matmul_vecadd_coarsen")
    if res:   # one addition per 12 bytes: two reads, one write
        for r in res.select(factor=1)[:1]:
            add("vector add", 1 / 12, r["gbps"] / 12 / 1e3)
    res = get("streams_pipeline")
    if res:   # the compute-heavy relaxation kernel alone (reads a and b, writes out)
        r = next((r for r in res.rows if r["iters"] > 0), None)
        if r is not None:
            flops = streams.N_PIPE * streams.flops_per_element(r["iters"])
            add(f"streams relaxation ({r['iters']} steps)", streams.arithmetic_intensity(r["iters"]),
                flops / (r["kernel_ms"] * 1e-3) / 1e12)
    res = get("gdn_algorithms")
    for r in res.select(n_ch=gdn.HEADLINE["n_ch"], side=gdn.HEADLINE["side"]) if res else ():
        if r.get("total_ms"):   # 2 N^2 S multiply-adds for dgamma, whatever the organization
            flops = 2 * r["n_ch"] ** 2 * r["samples"]
            moved = gdn.moved_bytes(r["method"], r["n_ch"], r["samples"])
            if r.get("reduce_ms") is not None:
                moved += gdn.moved_bytes("reduce", r["n_ch"], r["samples"])
            add(f"GDN {r['method']}", flops / moved, flops / (r["total_ms"] * 1e-3) / 1e12)
    # The roofs: the ceilings measured with the matmuls (else with another of these results).
    source = mm or next((records.recorded(n, path=where) for n in
                         ("reduce_ladder", "gdn_algorithms", "streams_pipeline") if n in have), None)
    ceilings = source.ceilings if source else {}
    def roof_gbps(name, what, read):
        res = get(name, what)
        try:
            return read(res) if res is not None else None
        except ValueError as err:
            missing.append((name, f"{what}: {err}"))
            return None

    l2_gbps = roof_gbps("profiling_l2_bandwidth", "no L2 roof", dram_chapter.l2_read_gbps)
    sm_read_gbps = roof_gbps("profiling_onchip_roofs", "no SM read roof", dram_chapter.onchip_roof_gbps)
    first = mm.rows[0] if mm is not None and mm.rows else {}
    return {"gpu": record.get("gpu"), "sm_read_gbps": sm_read_gbps,
            "label": source.label if source else f"nothing recorded in {where.name}",
            "points": points, "copy_gbps": ceilings.get("copy_gbps"),
            "cublas_tflops": ceilings.get("matmul_tflops"),
            "fp32_peak_tflops": first.get("fp32_peak_tflops"),
            "l2_gbps": l2_gbps, "l2_points": l2_points if l2_gbps else [],
            "matmul": list(mm.rows) if mm else [], "missing": missing}


def plot_course_roofline(roof: dict, *, title: str = "Every kernel of the course against the "
                                                     "roofs of one GPU"):
    """``course_roofline``'s points under the measured copy bandwidth and cuBLAS's FP32 rate
    (solid), with the theoretical FP32 peak and the L2's measured read bandwidth where
    recorded; with the L2 roof, each profiled matmul also as an open marker at its
    intensity in L2 bytes (a hierarchical roofline: the filled marker against the DRAM roof,
    the open one against the L2 roof), and the SMs' L1/shared read roof where
    ``profiling_onchip_roofs`` is recorded: on this axis of DRAM intensity, like the L2 roof,
    only an upper envelope. (The roofs beyond the two measured ones are drawn as broken lines,
    one style each.)"""
    from . import plots

    if not isinstance(roof, dict) or "points" not in roof:
        raise TypeError("roof: give the dict gp.profiling.course_roofline() returns.")
    validate.string(title, "title")
    if not roof["points"] or not roof["copy_gbps"] or not roof["cublas_tflops"]:
        raise ValueError("roof has no points or no recorded ceilings: record the chapters' "
                         "experiments on a GPU (python -m gpuperf.record).")
    more = []
    if roof["fp32_peak_tflops"]:
        more.append(("FP32 peak (theoretical)", roof["fp32_peak_tflops"], "TFLOP/s"))
    if roof["l2_gbps"]:
        more.append(("L2 read (measured)", roof["l2_gbps"], "GB/s"))
    if roof.get("sm_read_gbps"):
        more.append(("SMs' L1/shared read (128 B/clock/SM)", roof["sm_read_gbps"], "GB/s"))
    second = None
    if roof["l2_gbps"] and roof.get("l2_points"):
        second = ("the matmul at its FLOP per byte through the L2 (read against the L2 roof)",
                  roof["l2_points"])
    return plots.roofline(roof["points"], bw_gbps=roof["copy_gbps"],
                          peak_tflops=roof["cublas_tflops"], label=roof["label"], title=title,
                          xlim=(1 / 32, 512), height=6, more_roofs=more,
                          second_intensity=second)


def _l2_served(row: dict):
    """The bytes the SMs read from and wrote to the L2 in a ``profiling_matmul_roofline`` row
    (``lts__t_bytes`` in a record made before that was counted, which also holds the L2's fills
    from DRAM: more bytes, so a lower intensity, a lower roof and a higher percentage); None
    if neither was recorded."""
    return row.get("l2_sm_bytes") or row.get("l2_bytes") or None


def _l2_intensity(row: dict) -> float:
    """FLOP per byte the SMs moved through the L2, for an n^3 matmul row with ``_l2_served``."""
    return 2 * row["n"] ** 3 / _l2_served(row)


def course_roofline_summary(roof: dict) -> list[str]:
    """What ``course_roofline`` says, printed and returned: what is missing, the ridge points,
    any point above the memory roof (its bytes overcounted, or the copy not quite the memory's
    limit), and, with an L2 roof, each matmul's rate against the L2 at its intensity in L2 bytes."""
    if not isinstance(roof, dict) or "points" not in roof:
        raise TypeError("roof: give the dict gp.profiling.course_roofline() returns.")
    lines = [f"{name}: {why}" for name, why in roof["missing"]]
    copy, cublas, peak, l2 = (roof["copy_gbps"], roof["cublas_tflops"], roof["fp32_peak_tflops"],
                              roof["l2_gbps"])
    if not (roof["points"] and copy and cublas):
        lines.append("No recorded points or ceilings yet: record the chapters' experiments on a "
                     "GPU (python -m gpuperf.record).")
    else:
        lines.append(f"{roof['gpu']}: ridge at {cublas * 1e3 / copy:.1f} FLOP/B for cuBLAS's "
                     f"FP32 rate ({cublas:.1f} TFLOP/s) over the copy ({copy:,.0f} GB/s)"
                     + (f"; at {peak * 1e3 / copy:.1f} FLOP/B for the theoretical FP32 peak "
                        f"({peak:.1f} TFLOP/s)" if peak else "") + ".")
        ridge = cublas * 1e3 / copy
        right = [p["name"] for p in roof["points"] if p["intensity"] > ridge]
        lines.append("right of that ridge: " + (", ".join(right) or "none"))
        ratio = {p["name"]: p["tflops"] / (p["intensity"] * copy / 1e3) for p in roof["points"]}
        over = [f"{k} ({v:.0%} of the roof)" for k, v in ratio.items() if v > 1.1]
        at = [f"{k} ({v:.0%})" for k, v in ratio.items() if 1.0 < v <= 1.1]
        lines.append("far above the memory roof, so their bytes are overcounted: "
                     + (", ".join(over) or "none"))
        lines.append("just above it (the measured copy is not quite the memory's limit): "
                     + (", ".join(at) or "none"))
    rows = [r for r in roof["matmul"] if _l2_served(r)]
    if l2 and rows:
        lines.append(f"Against the L2 ({l2:,.0f} GB/s read, measured), at each matmul's "
                     "intensity in the bytes the SMs moved through the L2; the lower roof there:")
        for r in rows:
            ai_l2 = _l2_intensity(r)
            top = peak or cublas or float("inf")
            bound = min(l2 * ai_l2 / 1e3, top)
            which = "L2" if l2 * ai_l2 / 1e3 < top else "FP32 peak"
            lines.append(f"  {r['version']:45s} {ai_l2:6.2f} FLOP per L2 byte; "
                         f"{r['tflops']:5.2f} TFLOP/s is {r['tflops'] / bound:4.0%} of "
                         f"{bound:5.1f} ({which})")
    if roof.get("sm_read_gbps"):
        sm = roof["sm_read_gbps"]
        against = [f"{sm / gbps:.1f}x {what}" for gbps, what in ((l2, "the L2's read"),
                                                                  (copy, "the copy")) if gbps]
        lines.append(f"The SMs' read roof (L1 and shared memory, 128 bytes per clock per SM): "
                     f"{sm:,.0f} GB/s" + (", " + " and ".join(against) if against else "")
                     + "; chapter 4 reads the matmuls against it at their FLOP per data-pipe byte.")
    for line in lines:
        print(line)
    return lines
