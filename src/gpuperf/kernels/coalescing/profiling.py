"""Chapter 2's Nsight Compute experiments (built on ``gpuperf.nsight``): the strided copy's
sectors per request, DRAM bytes and L1 wavefronts (``profiling_stride``), its loads and stores
apart (``profiling_stride_parts``), and the transposes' shared-memory and DRAM traffic
(``profiling_transpose``), with the readings chapter 2 prints (``stride_parts_table``,
``stride_wavefronts``). Each launch runs in a process of its own under the tool; replayed
from the record elsewhere."""

from __future__ import annotations

from gpuperf import nsight, records
from gpuperf.kernels import dram as dram_chapter
from gpuperf.nsight import SHARED_METRICS, STALL_METRICS, STALL_REASONS, per

from .copies import (  # noqa: F401
    copy_launch,
    make_copy_ilp,  # noqa: F401
    make_copy_strided,
    make_read_strided,
    write_strided,
)
from .experiments import (  # noqa: F401
    COPY_LADDER,
    N_COPY,
    N_OFFSET,
    N_STRIDE,
    _copy_kernel,
    device_data,
)
from .kernels import VEC_TILE, make_transpose, make_transpose_vec4, transpose_naive  # noqa: F401
from .models import stride_efficiency, warp_access  # noqa: F401

# The launches below, by the names the experiments use.
_LAUNCHES = {"stride": "_stride_launch", "stride_part": "_stride_part_launch",
             "transpose": "_transpose_launch"}


def _profile(name: str, *args, **options) -> dict:
    """``nsight.profile`` of this module's launch ``name`` (a process of its own)."""
    return nsight.profile(f"{__name__}:{_LAUNCHES[name]}", *args, **options)


def _stride_launch(stride: int, count: int) -> None:
    """Chapter 2: ``coalescing_stride``'s kernel and launch (float32, 4 elements per thread)."""
    from numba import cuda

    src = device_data(count * stride)
    dst = cuda.device_array_like(src)
    kernel = make_copy_strided(4, "float32")
    grid, block = copy_launch(count, version="ilp", ilp=4)
    nsight.launch_twice(lambda: kernel[grid, block](src, dst, count, stride))


def _stride_part_launch(part: str, stride: int, count: int) -> None:
    """Chapter 2: one half of the strided copy, on ``coalescing_stride``'s launch: its loads
    (``part="loads"``, ``read_strided``) or its stores (``part="stores"``, ``write_strided``)."""
    from numba import cuda

    data = device_data(count * stride)
    grid, block = copy_launch(count, version="ilp", ilp=4)
    if part == "loads":
        sums = cuda.device_array(grid * block, dtype=data.dtype)
        kernel = make_read_strided(4)
        nsight.launch_twice(lambda: kernel[grid, block](data, sums, count, stride))
    elif part == "stores":
        nsight.launch_twice(lambda: write_strided[grid, block](data, count, stride))
    else:
        raise ValueError(f"part={part!r}: give \"loads\" or \"stores\".")


def _transpose_launch(pad, n: int) -> None:
    """Chapter 2: the naive transpose (``pad`` < 0), the 32 x 32 tiled one with ``pad``
    words of padding per shared row, or (``pad`` "vec4" or "vec4_noflip") the 64 x 64 one
    with 16-byte global accesses, with and without its column flip, on an n x n float32
    matrix."""
    from numba import cuda

    a = device_data(n * n).reshape(n, n)
    out = cuda.device_array((n, n), a.dtype)
    if pad == "tiled64":
        kernel, grid, block = make_transpose(64, 4, 1, True), (n // 64, n // 64), (32, 4)
    elif isinstance(pad, str):
        kernel = make_transpose_vec4(8, pad == "vec4")
        grid, block = (n // VEC_TILE, n // VEC_TILE), (16, 8)
    elif pad < 0:
        kernel, grid, block = transpose_naive, (n // 32, n // 8), (32, 8)
    else:
        kernel, grid, block = make_transpose(32, 32, pad, True), (n // 32, n // 32), (32, 32)
    nsight.launch_twice(lambda: kernel[grid, block](a, out))


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
def stride_profile_experiment(progress) -> list[dict]:
    """Nsight Compute on chapter 2's strided copy (float32, the ``coalescing_stride`` launch
    and element count) at each of ``PROFILED_STRIDES``: the sectors each warp's load and
    store request touched in L1, and the bytes DRAM read and wrote, against the bytes the
    copy uses. Nsight Compute flushes the caches before the profiled launch."""

    count, size = N_STRIDE, 4
    rows = []
    for stride in PROFILED_STRIDES:
        progress(f"ncu on the strided copy, stride {stride}")
        m = _profile("stride", stride, count, kernel="copy_strided",
                    metrics=STRIDE_METRICS + STRIDE_WAVEFRONT_METRICS)
        useful = count * size  # bytes the copy reads (and writes)
        warp = warp_access(stride=stride, elem_bytes=size)
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

    count, size = N_STRIDE, 4
    useful = count * size
    rows = []
    for stride in PROFILED_STRIDES:
        model = 1 / stride_efficiency(stride, size)  # bytes moved per useful byte
        for label, (launch, *first), kernel in STRIDE_PARTS:
            progress(f"ncu on the strided {label}, stride {stride}")
            m = _profile(launch, *first, stride, count, kernel=kernel, metrics=STRIDE_METRICS)
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
    return records.Result("DRAM reads of the copy's parts", rows, result.meta, result.source)


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
    return records.Result("L1 wavefronts per request", rows, result.meta, result.source)


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
def transpose_profile_experiment(progress) -> list[dict]:
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
        m = _profile("transpose", pad, n, kernel=kernel, metrics=TRANSPOSE_METRICS + STALL_METRICS)
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


def _offset_launch(misaligned: str, offset: int) -> None:
    """Chapter 2: ``coalescing_offset``'s copy (``make_copy_ilp(4)``, 2^26 float32) starting
    ``offset`` elements into the source and, with ``misaligned="both"``, the destination."""
    from numba import cuda

    src = device_data(N_OFFSET + offset)
    dst = cuda.device_array_like(src)
    xs = src[offset:offset + N_OFFSET]
    ys = dst[offset:offset + N_OFFSET] if misaligned == "both" else dst[:N_OFFSET]
    kernel = make_copy_ilp(4)
    grid, block = copy_launch(N_OFFSET, version="ilp", ilp=4)
    nsight.launch_twice(lambda: kernel[grid, block](xs, ys))


# (label, misaligned, offset in elements): the aligned copy, the offset-1 copy misaligned in
# both arrays and in the source only, and a start 32 bytes past a line (whole sectors, two lines).
PROFILED_OFFSETS = (("aligned", "both", 0), ("4 bytes, load and store", "both", 1),
                    ("4 bytes, load only", "source", 1), ("32 bytes, load and store", "both", 8))


OFFSET_METRICS = STRIDE_METRICS + (
    # the sectors the SMs' stores wrote into the L2 (a misaligned warp store touches five)
    "lts__t_sectors_srcunit_tex_op_write.sum",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
)


@records.experiment(
    "profiling_offset", chapter="profiling",
    title="The misaligned copy under Nsight Compute: DRAM bytes read and written per useful byte",
    units={"duration_ns": "ns", "dram_pct": "% of peak"})
def offset_profile_experiment(progress) -> list[dict]:
    """Nsight Compute on ``coalescing_offset``'s copy (2^26 float32, ``make_copy_ilp(4)``)
    aligned, 4 bytes off in both arrays, 4 bytes off in the source only, and 32 bytes off in
    both: sectors per load and store request, and the bytes DRAM read and wrote per byte
    the copy reads. Nsight Compute flushes the caches before the profiled launch; DRAM
    writes are those that reached DRAM during the kernel."""
    useful = 4 * N_OFFSET
    rows = []
    for label, misaligned, offset in PROFILED_OFFSETS:
        progress(f"ncu on the offset copy: {label}")
        m = nsight.profile(f"{__name__}:_offset_launch", misaligned, offset, kernel="copy_ilp",
                           metrics=OFFSET_METRICS)
        rows.append({
            "case": label, "misaligned": misaligned, "offset_bytes": 4 * offset, "n": N_OFFSET,
            "load_sectors_per_request": per(m, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                                             "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
            "store_sectors_per_request": per(m, "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
                                              "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
            "dram_read_per_useful": round(m["dram__bytes_read.sum"] / useful, 3),
            "dram_write_per_useful": round(m["dram__bytes_write.sum"] / useful, 3),
            "l2_write_sectors_per_useful_sector": round(
                m["lts__t_sectors_srcunit_tex_op_write.sum"] / (useful / 32), 3),
            "dram_pct": round(m["dram__throughput.avg.pct_of_peak_sustained_elapsed"], 2),
            "duration_ns": m["gpu__time_duration.sum"],
        })
    return rows


def _ladder_launch(label: str) -> None:
    """Chapter 2: the rung ``label`` of ``coalescing_copy_ladder`` (1 GiB of float32)."""
    from numba import cuda

    version, ilp, per_sm = next((v, i, b) for name, v, i, b in COPY_LADDER if name == label)
    src = device_data(N_COPY)
    dst = cuda.device_array_like(src)
    grid, block = copy_launch(N_COPY, version=version, ilp=ilp, blocks_per_sm=per_sm)
    kernel = _copy_kernel(version, ilp)
    nsight.launch_twice(lambda: kernel[grid, block](src, dst))


# The rungs compared: one 4-byte load per thread, four 4-byte loads, one 16-byte load (the
# same 16 bytes in flight as four 4-byte ones), and the 16-byte copy with its grid sized to
# the data (every thread one round).
PROFILED_LADDER = ("grid-stride, 1 load in flight", "grid-stride, 4 loads in flight",
                   "16-byte loads, grid-stride", "16-byte loads, grid sized to the data")

LADDER_KERNELS = {"grid_stride": "copy_grid_stride", "ilp": "copy_ilp", "vec4": "copy_vec4",
                  "one_per_thread": "copy_one_per_thread"}

LADDER_METRICS = (
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "smsp__inst_executed.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__time_duration.sum",
)


@records.experiment(
    "profiling_copy_ladder", chapter="profiling",
    title="The copy ladder under Nsight Compute: load requests, instructions, occupancy and "
          "DRAM throughput",
    units={"duration_ns": "ns", "dram_gbps": "GB/s", "dram_pct": "% of peak",
           "occupancy_pct": "%"})
def copy_ladder_profile_experiment(progress) -> list[dict]:
    """Nsight Compute on four rungs of ``coalescing_copy_ladder`` (``PROFILED_LADDER``, 1 GiB
    of float32): global load requests and instructions per KiB copied, sectors per request,
    the achieved occupancy, and DRAM's bytes and throughput."""
    rows = []
    kib = 4 * N_COPY / 1024
    for label in PROFILED_LADDER:
        version, ilp, per_sm = next((v, i, b) for name, v, i, b in COPY_LADDER if name == label)
        progress(f"ncu on the copy: {label}")
        m = nsight.profile(f"{__name__}:_ladder_launch", label, kernel=LADDER_KERNELS[version],
                           metrics=LADDER_METRICS + STALL_METRICS)
        dram = m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"]
        rows.append({
            "version": label, "kernel": version, "ilp": ilp,
            "bytes_per_thread_in_flight": ilp * (16 if version == "vec4" else 4),
            "load_requests_per_kib": round(
                m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] / kib, 3),
            "sectors_per_load_request": per(m, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                                             "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
            "instructions_per_kib": round(m["smsp__inst_executed.sum"] / kib, 2),
            "occupancy_pct": round(m["sm__warps_active.avg.pct_of_peak_sustained_active"], 2),
            "dram_gbps": round(dram / m["gpu__time_duration.sum"], 1),
            "dram_pct": round(m["dram__throughput.avg.pct_of_peak_sustained_elapsed"], 2),
            **{f"stall_{r}": round(m[x], 3) for r, x in zip(STALL_REASONS, STALL_METRICS)},
            "duration_ns": m["gpu__time_duration.sum"],
        })
    return rows


# The kernels whose order of global loads and stores chapter 2 explains, by the labels the
# book gives them: the transpose's rungs around staging (``TRANSPOSE_SWEEP``) and chapter 1's
# copy loop beside the copy that keeps four loads in flight.
_M2 = "void(float32[:, ::1], float32[:, ::1])"
_V2 = "void(float32[::1], float32[::1])"


def _sass_order_kernels():
    from gpuperf.kernels import gridstride

    from .ablations import make_transpose_unchecked
    from .experiments import TRANSPOSE_SWEEP, UNCHECKED

    one, staged = TRANSPOSE_SWEEP[3], TRANSPOSE_SWEEP[5]
    return (
        (one[0], make_transpose(32, 8, 1, staged=False), _M2),
        (UNCHECKED, make_transpose_unchecked(32, 8, 1), _M2),
        (staged[0], make_transpose(32, 8, 1), _M2),
        ("grid-stride copy, 1 load in flight", gridstride.copy_grid_stride, _V2),
        ("grid-stride copy, 4 loads in flight", make_copy_ilp(4), _V2),
    )


@records.experiment(
    "coalescing_sass_order", chapter="coalescing",
    title="The order of global loads and stores in this GPU's SASS: transpose rungs and copies",
    units={"loads_before_store": "loads"})
def sass_order_experiment(progress) -> list[dict]:
    """The SASS of the transpose's rungs "loads one at a time", the same without the bounds
    tests inside interior tiles, and "4 per thread" (staged), and of chapter 1's grid-stride
    copy beside ``make_copy_ilp(4)``: for each, ``loads_before_store`` (the longest run of global
    loads issued with no store between them: ``nsight.loads_before_store``), the global loads,
    stores and shared stores in the compiled code, and ``order``, its memory instructions in
    program order (LDG global load, STS shared store, LDS shared load, STG global store, BAR
    barrier)."""
    rows = []
    for label, kernel, signature in _sass_order_kernels():
        ops = nsight.sass_opcodes(nsight.kernel_sass(kernel, signature, "coalescing_sass_order"))
        bases = [op.split(".")[0] for op in ops]
        memory = [b for b in bases if b in ("LDG", "STG", "STS", "LDS", "BAR")]
        rows.append({"kernel": label, "loads_before_store": nsight.loads_before_store(ops),
                     "global_loads": bases.count("LDG"), "global_stores": bases.count("STG"),
                     "shared_stores": bases.count("STS"), "instructions": len(ops),
                     "order": " ".join(memory)})
        progress(f"{label}: {rows[-1]['loads_before_store']} loads before a store; "
                 f"{rows[-1]['order']}")
    return rows
