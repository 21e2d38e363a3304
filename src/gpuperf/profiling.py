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

import json
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
    launch_twice,
    metrics_by_kernel,
    ncu_command,
    overlap_ms,
    parse_cupti_trace,
    parse_ncu_csv,
    parse_racecheck,
    parse_sanitizer,
    per,
    speed_of_light,
    top_stalls,
    union_ms,
)

# --------------------------------------------------------------------------- experiments
# Each experiment runs a tool on a process of its own: ``python -c`` calling one of the launch
# functions below by name (``launch_command``). A launch function builds the chapter's data
# and launches the chapter's kernel twice; Nsight Compute profiles the second launch (the
# first may include loading the module) and flushes the caches before it.


def _reduce_launch(version: str, block: int, n: int) -> None:
    """Chapter 6: one reduce rung on ``n`` random float32."""
    import numpy as np
    from numba import cuda

    from .kernels import reduce as red

    x = cuda.to_device(np.random.default_rng(1).random(n, dtype=np.float32))
    launch_twice(lambda: red.reduce_sum(x, version, block=block))


def _stride_launch(stride: int, count: int) -> None:
    """Chapter 2: ``coalescing_stride``'s kernel and launch (float32, 4 elements per thread)."""
    from numba import cuda

    from .kernels import coalescing as co

    src = co._device_data(count * stride)
    dst = cuda.device_array_like(src)
    kernel = co.make_copy_strided(4, "float32")
    grid, block = co.copy_launch(count, version="ilp", ilp=4)
    launch_twice(lambda: kernel[grid, block](src, dst, count, stride))


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
        launch_twice(lambda: kernel[grid, block](data, sums, count, stride))
    elif part == "stores":
        launch_twice(lambda: co.write_strided[grid, block](data, count, stride))
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
    launch_twice(lambda: kernel[grid, block](a, out))


def _matmul_variant(version: str, tile: int, factor: int):
    from .kernels import coarsening as cz
    from .kernels import matmul as mm

    if version == "tiled":
        return mm.variant("tiled", tile=tile)
    if version.startswith("naive"):  # chapter 4's naive mappings take no tile
        return mm.variant(version)
    if version == "coarsened":
        return cz.variant("coarsened", tile=tile, factor=factor)
    return cz.variant(version)


def _launch_matmul_twice(v, n: int) -> None:
    from .kernels import matmul as mm

    A, B, C = mm.device_operands(n, n, n)
    launch_twice(lambda: v.launch(A, B, C))


def _matmul_launch(version: str, tile: int, factor: int, n: int) -> None:
    """Chapters 4 and 5: one matmul kernel on n x n float32 operands."""
    _launch_matmul_twice(_matmul_variant(version, tile, factor), n)


def _matmul_ladder_launch(index: int, n: int) -> None:
    """Chapter 5's ladder (``coarsening.ladder_variants()[index]``) on n x n float32 operands."""
    from .kernels import coarsening as cz

    _launch_matmul_twice(cz.ladder_variants()[index], n)


def _cublas_launch(n: int) -> None:
    """cuBLAS's SGEMM (CuPy's ``@`` on float32) on n x n operands, twice."""
    import cupy as cp

    a = cp.ones((n, n), dtype=cp.float32)
    b = cp.ones((n, n), dtype=cp.float32)
    launch_twice(lambda: cp.matmul(a, b))


def _print_result(got, want) -> None:
    """For a tool's log: whether the launch computed the right thing (a line the tools ignore)."""
    import json

    import numpy as np

    err = float(np.max(np.abs(np.asarray(got, np.float64) - want)))
    print("RESULT " + json.dumps({"max_error": err, "correct": err <= 1e-5 * (
        1 + float(np.max(np.abs(want))))}), flush=True)


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
    _print_result(d_out.copy_to_host(), dbg.smooth_reference(x))


def _copy_unguarded_launch(n: int) -> None:
    """The copy with no bounds test, on whole blocks of 256 past ``n`` elements."""
    from numba import cuda

    from . import exercises as ex
    from .kernels import debugging as dbg

    x = ex.random_array(n, 2)
    d_out = cuda.device_array(n, x.dtype)
    dbg.copy_unguarded[-(-n // 256), 256](cuda.to_device(x), d_out)
    _print_result(d_out.copy_to_host(), x)


def _matmul_early_return_launch(n: int) -> None:
    """Chapter 4's tiled matmul that returns before its barriers (tile 16), n x n x n."""
    from numba import cuda

    from . import exercises as ex
    from .kernels import matmul as mm

    A, B = ex.random_array((n, n), 3), ex.random_array((n, n), 4)
    C = cuda.device_array((n, n), A.dtype)
    mm.variant("tiled_early_return", tile=16).launch(cuda.to_device(A), cuda.to_device(B), C)
    _print_result(C.copy_to_host(), mm.reference(A, B))


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
    _print_result(out.copy_to_host(), prob.reference())


def _reduce_atomics_launch(label: str, n: int) -> None:
    """Chapter 6.3: one of ``reduce_single_pass``'s atomics patterns ("warp atomics", "block
    atomics", "spread atomics") on ``n`` float32 ones, with that experiment's grid and block
    (v8's plan without unroll), twice, each call after its zeroing launch."""
    import numpy as np
    from numba import cuda

    from .kernels import reduce as red

    calls = {"warp atomics": red._warp_atomic_calls, "block atomics": red._block_atomic_calls,
             "spread atomics": red._spread_atomic_calls}[label]
    x = cuda.to_device(np.ones(n, dtype=np.float32))
    plan = red.ablation_plan(n, 4, 1, 4)
    run, fetch, _ = calls(x, n, plan.grid, plan.block)
    launch_twice(run)
    got = fetch()  # float32 atomics round partial sums above 2^24
    print("RESULT " + json.dumps({"sum": got, "correct": abs(got - n) <= 1e-6 * n}), flush=True)


# The launches chapter 9 names (``launch_command("reduce", ...)``): each the ``"module:function"``
# of the chapter module that owns the kernel, run by ``gpuperf.nsight`` in a process of its own.
_HERE = __name__
_LAUNCHES = {"reduce": f"{_HERE}:_reduce_launch", "stride": f"{_HERE}:_stride_launch",
             "stride_part": f"{_HERE}:_stride_part_launch",
             "transpose": f"{_HERE}:_transpose_launch",
             "sum_loads": "gpuperf.kernels.dram.profiling:_sum_loads_launch",
             "l2_read": "gpuperf.kernels.dram.profiling:_l2_read_launch",
             "onchip_read": "gpuperf.kernels.dram.profiling:_onchip_read_launch",
             "matmul": f"{_HERE}:_matmul_launch", "matmul_ladder": f"{_HERE}:_matmul_ladder_launch",
             "cublas": f"{_HERE}:_cublas_launch",
             "smooth": f"{_HERE}:_smooth_launch",
             "copy_unguarded": f"{_HERE}:_copy_unguarded_launch",
             "matmul_early_return": f"{_HERE}:_matmul_early_return_launch",
             "gdn": f"{_HERE}:_gdn_launch", "reduce_atomics": f"{_HERE}:_reduce_atomics_launch"}


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


PROFILED_RUNGS = ("v0", "v1", "v2", "v3")
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
        m = profile("reduce", version, 256, PROFILED_N, kernel=f"reduce_{version.replace('.', '_')}",
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
    from .kernels import matmul as mm

    n = PROFILED_MATMUL_N
    rows = []
    for label, version, tile, factor in PROFILED_MATMULS:
        progress(f"ncu on the matmul: {label} (n = {n})")
        v = _matmul_variant(version, tile, factor)
        kernel = getattr(v.kernel, "py_func", v.kernel).__name__
        m = profile("matmul", version, tile, factor, n, kernel=kernel, metrics=MATMUL_METRICS)
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
    from . import bench
    from .kernels import matmul as mm

    n = PROFILED_MATMUL_N
    ceilings = bench.ceilings()
    peak, clock = device.fp32_peak_tflops(), device.sm_clock_khz()
    flops = mm.flops(n, n, n)
    rows = []
    from .kernels import coarsening as cz

    # chapter 4's versions, then chapter 5's ladder beyond them (one launch per profiled process)
    todo = [("tiling", _matmul_variant(version, tile, 1), ("matmul", version, tile, 1, n))
            for version, tile in ROOFLINE_MATMULS]
    names = {v.name for _, v, _ in todo}
    todo += [("coarsening", v, ("matmul_ladder", i, n))
             for i, v in enumerate(cz.ladder_variants()) if v.name not in names]
    for chapter, v, launch in todo:
        label = v.name
        progress(f"ncu and timing: {label} (n = {n})")
        kernel = getattr(v.kernel, "py_func", v.kernel).__name__
        m = profile(*launch, kernel=kernel, metrics=ROOFLINE_METRICS)
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
    from .kernels import coarsening as cz
    from .kernels import matmul as mm

    n = PROFILED_MATMUL_N
    peak = device.fp32_peak_tflops()
    lanes = fp32_lanes()
    ladder = cz.ladder_variants()
    first = next(i for i, v in enumerate(ladder) if v.name.startswith(ISSUE_FIRST_RUNG))
    todo = [(v.name, ("matmul_ladder", i, n), getattr(v.kernel, "py_func", v.kernel).__name__,
             False, v) for i, v in enumerate(ladder) if i >= first]
    todo.append((mm.CUBLAS, ("cublas", n), CUBLAS_KERNEL, True, None))
    rows = []
    cublas = mm.measure_cublas(n)
    for label, launch, kernel, library, v in todo:
        progress(f"ncu and timing: {label} (n = {n})")
        m = profile(*launch, kernel=kernel, metrics=ISSUE_METRICS, library=library)
        timed = cublas if v is None else mm.measure_variant(v, n, min_repeat=5, min_time=0.2)
        rows.append({
            "version": label, "n": n, "kernel": kernel, **issue_columns(m, lanes),
            "tflops": timed["tflops"],
            "spread": timed["spread"], "fp32_peak_tflops": peak,
            "pct_fp32_peak": 100 * timed["tflops"] / peak if peak else None,
            "pct_cublas": 100 * timed["tflops"] / cublas["tflops"] if cublas else None,
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
            m = profile("reduce_atomics", label, n, kernel=kernel, metrics=ATOMICS_METRICS)
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


ROOFLINE_CHAPTERS = {"tiling": "chapter 4's versions", "coarsening": "chapter 5's ladder"}


def _dram_roofline_arg(res, chapter: str = "tiling"):
    """``res`` with the rows of ``chapter`` only ("tiling": chapter 4's; "coarsening": chapter
    5's ladder beyond them; a record made before chapter 5's were added has no ``chapter``
    column: all its rows are chapter 4's)."""
    if not isinstance(res, records.Result) or res.name != "profiling_matmul_roofline":
        raise TypeError(f"res: give gp.records.run(\"profiling_matmul_roofline\"), not "
                        f"{getattr(res, 'name', type(res).__name__)!r}.")
    validate.choice(chapter, "chapter", tuple(ROOFLINE_CHAPTERS))
    rows = [r for r in res.rows if r.get("chapter", "tiling") == chapter]
    if not rows:
        raise ValueError(f"res has no row of {ROOFLINE_CHAPTERS[chapter]}: record "
                         "profiling_matmul_roofline again.")
    return records.Result(res.name, rows, res.meta, res.source)


def dram_roofline_summary(res) -> list[str]:
    """One line per version of ``profiling_matmul_roofline``: the DRAM bytes it moved as a
    fraction of the no-cache model's, its measured intensity, and its rate as a % of the lower
    roof at that intensity; then the roofs. Printed and returned."""
    res = _dram_roofline_arg(res)
    copy = res.ceilings["copy_gbps"]
    lines = []
    for r in res.rows:
        seconds = 2 * r["n"] ** 3 / (r["tflops"] * 1e12)

        def rate(nbytes, seconds=seconds):
            return nbytes / seconds / 1e9

        lines.append(f"{r['version']:20s} DRAM moved {r['dram_bytes'] / 1e9:6.2f} GB, "
                     f"{r['dram_bytes'] / r['model_bytes']:6.1%} of the model's "
                     f"{r['model_bytes'] / 1e9:6.1f} GB: {r['ai_measured']:5.1f} FLOP/B "
                     f"(model {r['ai_model']:.2f}); {r['tflops']:5.2f} TFLOP/s, "
                     f"{r['pct_of_roof']:4.1f}% of its roof"
                     + (f"; L2 {rate(r['l2_bytes']):5.0f} GB/s, L1 {rate(r['l1_bytes']):5.0f} GB/s"
                        if r.get("l2_bytes") else ""))
    first = res.rows[0]
    peak = first.get("fp32_peak_tflops")
    roofs = f"Roofs: the copy bandwidth {copy:,.0f} GB/s"
    roofs += (f" and the FP32 peak {peak:.1f} TFLOP/s at the SMs' maximum clock "
              f"({first['sm_clock_khz'] / 1e3:.0f} MHz; an upper bound: under load the clock "
              "can be lower)" if peak else
              " (no FP32 peak: this GPU's lanes or clock are unknown; the plot's compute roof "
              "is cuBLAS's rate)")
    if first.get("cublas_tflops"):
        roofs += f"; cuBLAS reached {first['cublas_tflops']:.1f} TFLOP/s in the same run"
    lines.append(roofs + ".")
    for line in lines:
        print(line)
    return lines


def plot_dram_roofline(res, *, title: str = "Chapter 4's matmuls: intensity from measured "
                                            "DRAM bytes"):
    """``profiling_matmul_roofline`` on its GPU's roofline: measured intensity against the
    timed rate, under the copy bandwidth and the theoretical FP32 peak."""
    from . import plots

    res = _dram_roofline_arg(res)
    validate.string(title, "title")
    peak = res.rows[0].get("fp32_peak_tflops") or res.rows[0].get("cublas_tflops")
    points = [{"name": r["version"], "intensity": r["ai_measured"], "tflops": r["tflops"]}
              for r in res.rows]
    return plots.roofline(points, bw_gbps=res.ceilings["copy_gbps"], peak_tflops=peak,
                          label=res.label, title=title, xlim=(1 / 2, 64))


def _onchip_roofline_args(dram, onchip, chapter: str = "tiling"):
    """``chapter``'s rows of ``profiling_matmul_roofline`` with the data pipe's bytes, and the
    SM's read roof of the same GPU."""
    dram = _dram_roofline_arg(dram, chapter)
    roof = dram_chapter.onchip_roof_gbps(onchip)
    if dram.meta.get("gpu") is None or dram.gpu != onchip.gpu:
        raise ValueError(f"dram was recorded on {dram.gpu} and onchip on {onchip.gpu}: a "
                         "roofline takes its points and roofs from one GPU. Pass records of "
                         "the same GPU.")
    if any(not r.get("pipe_bytes") for r in dram.rows):
        raise ValueError(f"this record of profiling_matmul_roofline ({dram.label}) has no "
                         "pipe_bytes (the L1/shared data pipe's wavefronts): record it again "
                         "with python -m gpuperf.record --only profiling_matmul_roofline.")
    return dram, roof


BOUND_PCT = 85   # a kernel at this share of a roof or more is said to be bound by it
ALIKE_RATIO = 1.1   # two roofs whose shares are within this ratio are both named


def _dram_side_roof(r: dict) -> str:
    """The roof ``pct_of_roof`` is a share of: the DRAM roof left of the ridge, the FP32 peak
    right of it."""
    return ("the FP32 peak" if r.get("fp32_peak_tflops")
            and r["memory_roof_tflops"] > r["fp32_peak_tflops"] else "the DRAM roof")


def _nearest_roof(r: dict, roof_gbps: float) -> tuple[float, float, str]:
    """A row's rate as a % of its DRAM-or-FP32 roof and of the SM's read roof (at its FLOP per
    data-pipe byte), and which roof it is nearer to ("nearer the DRAM roof"; "as near the SM's
    read roof as the FP32 peak" where the larger share is less than ``ALIKE_RATIO`` times the
    smaller)."""
    flops = 2 * r["n"] ** 3
    onchip_bound = roof_gbps * (flops / r["pipe_bytes"]) / 1e3
    pct_onchip = 100 * r["tflops"] / onchip_bound
    other = _dram_side_roof(r)
    if max(pct_onchip, r["pct_of_roof"]) < ALIKE_RATIO * min(pct_onchip, r["pct_of_roof"]):
        # two roofs that cross at this point's rate: neither is the nearer one
        return r["pct_of_roof"], pct_onchip, f"as near the SM's read roof as {other}"
    nearer = "the SM's read roof" if pct_onchip > r["pct_of_roof"] else other
    return r["pct_of_roof"], pct_onchip, f"nearer {nearer}"


def onchip_roofline_summary(dram, onchip, *, chapter: str = "tiling") -> list[str]:
    """One line per version of ``chapter`` ("tiling": chapter 4; "coarsening": chapter 5's
    ladder) in ``profiling_matmul_roofline`` (``dram``): its FLOP per byte DRAM moved and per
    byte the L1/shared data pipe processed (its wavefronts x 128 bytes), its rate as a % of
    the roof at each, the roof it is nearer to, and (where it uses shared memory) the
    shared-memory wavefronts per warp-level multiply-add; then the roofs (the SM's read roof
    from ``profiling_onchip_roofs``, ``onchip``) and which versions are at 85% or more of one.
    Printed and returned."""
    dram, roof = _onchip_roofline_args(dram, onchip, chapter)
    lines, bound, free = [], [], []
    for r in dram.rows:
        flops = 2 * r["n"] ** 3
        pct_dram, pct_onchip, nearer = _nearest_roof(r, roof)
        if max(pct_dram, pct_onchip) >= BOUND_PCT:
            bound.append(f"{r['version']} ({nearer})")
        else:
            free.append(r["version"])
        lines.append(f"{r['version']} {r['tflops']:5.2f} TFLOP/s; DRAM {flops / r['dram_bytes']:5.1f} "
                     f"FLOP/B, {pct_dram:4.1f}% of {_dram_side_roof(r)}; data pipe "
                     f"{flops / r['pipe_bytes']:5.2f} FLOP/B, {pct_onchip:4.1f}% of the SM's "
                     f"read roof: {nearer}"
                     + (f"; {r['shared_pipe_bytes'] / dram_chapter.BANK_BYTES_PER_CLOCK / (r['n'] ** 3 / 32):.2f} "
                        "shared wavefronts per warp multiply-add"
                        if r.get("shared_bytes") and r.get("shared_pipe_bytes") is not None
                        else ""))
    wide = dram_chapter.onchip_reads(onchip)
    fastest = max(r["gbps"] for r in wide)
    lines.append(f"Roofs: the SM's read roof {roof:,.0f} GB/s ("
                 + (f"128 bytes per clock per SM at the maximum clock; a 16-byte read reached "
                    f"{100 * fastest / roof:.0f}% of it" if wide[0].get("bank_roof_gbps") else
                    "the faster 16-byte read: this GPU's clock is unknown")
                 + f"); the copy bandwidth {dram.ceilings['copy_gbps']:,.0f} GB/s; "
                 + (f"the FP32 peak {dram.rows[0]['fp32_peak_tflops']:.1f} TFLOP/s"
                    if dram.rows[0].get("fp32_peak_tflops") else "no FP32 peak for this GPU")
                 + f" ({dram.label}).")
    lines.append(f"At {BOUND_PCT}% or more of a roof: {', '.join(bound) or 'none'}. Below "
                 f"{BOUND_PCT}% of every roof: {', '.join(free) or 'none'}.")
    for line in lines:
        print(line)
    return lines


def plot_onchip_roofline(dram, onchip, *, chapter: str = "tiling", title: str | None = None):
    """``chapter``'s versions (as in ``onchip_roofline_summary``) twice on one roofline: at
    their FLOP per DRAM byte (filled, under the copy bandwidth) and at their FLOP per byte of
    the L1/shared data pipe (open, under the SM's read roof from ``profiling_onchip_roofs``),
    joined at their measured rate."""
    from . import plots

    dram, roof = _onchip_roofline_args(dram, onchip, chapter)
    if title is None:
        title = (f"{ROOFLINE_CHAPTERS[chapter][0].upper()}{ROOFLINE_CHAPTERS[chapter][1:]} "
                 "against DRAM and the SM's read roof")
    validate.string(title, "title")
    peak = dram.rows[0].get("fp32_peak_tflops") or dram.rows[0].get("cublas_tflops")
    flops = {r["version"]: 2 * r["n"] ** 3 for r in dram.rows}
    points = [{"name": r["version"], "intensity": r["ai_measured"], "tflops": r["tflops"]}
              for r in dram.rows]
    pipe = [{"name": r["version"], "intensity": flops[r["version"]] / r["pipe_bytes"],
             "tflops": r["tflops"]} for r in dram.rows]
    every = [p["intensity"] for p in points + pipe]
    # whole powers of two around every point, at least 1/64 to 64 FLOP/B
    xlim = (2.0 ** min(-6, math.floor(math.log2(min(every))) - 1),
            2.0 ** max(6, math.ceil(math.log2(max(every))) + 1))
    return plots.roofline(
        points, bw_gbps=dram.ceilings["copy_gbps"], peak_tflops=peak, label=dram.label,
        title=title, xlim=xlim,
        more_roofs=[("the SM's read roof (shared memory and L1, 128 B per clock per SM)", roof,
                     "GB/s")],
        second_intensity=("FLOP per byte of the L1/shared data pipe (wavefronts x 128 B)",
                          pipe))


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
