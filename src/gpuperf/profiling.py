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

Three experiments run the tools like any other experiment (``python -m gpuperf.record --only
profiling_`` on a GPU with the tools; replayed from the record elsewhere):
``profiling_reduce_shared`` (Nsight Compute: shared loads, wavefronts, bank conflicts and time
of the reduce ladder's first rungs), ``profiling_racecheck`` (compute-sanitizer's racecheck
on rungs with and without v4's race) and ``profiling_stride`` (Nsight Compute: sectors per
request and DRAM bytes of chapter 2's strided copy).
"""

from __future__ import annotations

import csv
import io
import re
import shutil

from . import records, validate

# Shared-memory traffic: bank conflicts and wavefronts (the passes a request needs) per
# shared load instruction; a conflict-free warp load is one wavefront.
SHARED_METRICS = (
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "smsp__inst_executed_op_shared_ld.sum",
)
# Global loads: sectors per request (4 for a coalesced warp of float32), DRAM bytes.
GLOBAL_METRICS = (
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "dram__bytes_read.sum",
)
TIME_METRICS = ("gpu__time_duration.sum", "sm__warps_active.avg.pct_of_peak_sustained_active")


def available(tool: str = "ncu") -> bool:
    """Whether ``tool`` ("ncu", "compute-sanitizer" or "nsys") is on this machine's PATH."""
    validate.choice(tool, "tool", ("ncu", "compute-sanitizer", "nsys"))
    return shutil.which(tool) is not None


def ncu_command(program, *, kernel: str, metrics=(), sections=(), launch_skip: int = 0,
                launch_count: int = 1) -> list[str]:
    """The ``ncu`` command line that profiles ``launch_count`` launches of the kernel whose
    name starts with ``kernel`` (after skipping ``launch_skip`` of them: the first launch
    of a Numba kernel may include loading the module), collecting ``metrics`` and/or
    ``sections``, as CSV. The clocks are left alone (``--clock-control none``), as the
    course's timings leave them. ``program``: the command to run, e.g. ``["python3",
    "script.py"]``."""
    program = [validate.string(p, f"program[{i}]") for i, p in
               enumerate(validate.sequence(program, "program"))]
    if not program:
        raise ValueError("program: give the command to profile, e.g. [\"python3\", \"x.py\"].")
    kernel = validate.string(kernel, "kernel")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", kernel):
        raise ValueError(f"kernel={kernel!r} is not a Python function name: give the name of "
                         "the kernel's Python function (e.g. \"reduce_v1\").")
    metrics = [validate.string(m, f"metrics[{i}]") for i, m in
               enumerate(validate.sequence(metrics, "metrics", empty=True))]
    sections = [validate.string(s, f"sections[{i}]") for i, s in
                enumerate(validate.sequence(sections, "sections", empty=True))]
    if not metrics and not sections:
        raise ValueError("give metrics (e.g. profiling.SHARED_METRICS) or sections (e.g. "
                         "[\"SpeedOfLight\"]) to collect.")
    validate.positive_int(launch_skip, "launch_skip", minimum=0)
    validate.positive_int(launch_count, "launch_count")
    cmd = ["ncu", "--clock-control", "none", "--csv", "-k", f"regex:^{kernel}\\[",
           "--launch-skip", str(launch_skip), "--launch-count", str(launch_count)]
    if metrics:
        cmd += ["--metrics", ",".join(metrics)]
    for section in sections:
        cmd += ["--section", section]
    return cmd + program


def _number(text: str):
    """``"1,191,577"`` -> 1191577, ``"27.5"`` -> 27.5; anything else stays text."""
    plain = text.replace(",", "")
    try:
        return int(plain)
    except ValueError:
        try:
            return float(plain)
        except ValueError:
            return text


def parse_ncu_csv(text: str) -> list[dict]:
    """The rows of ``ncu --csv`` output, one per kernel launch and metric: ``kernel`` (the
    Python function's name, Numba's specialization suffix dropped), ``launch`` (ncu's ID),
    ``block``, ``grid``, ``section``, ``metric``, ``unit``, ``value`` (a number where the
    tool printed one; thousands separators removed). Lines before the CSV header (the tool's
    ``==PROF==`` lines, the program's output) are skipped. Raises ValueError if there is no
    CSV table (the tool failed: its message is in its stderr)."""
    validate.string(text, "text", empty=True)
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID",')), None)
    if start is None:
        raise ValueError("no ncu CSV table in this text: was ncu run with --csv, and did it "
                         "profile a kernel? (-k must match the start of the kernel's name; "
                         "ncu's own errors go to stderr.)")
    table = [line for line in lines[start:] if line.startswith('"')]
    rows = []
    for rec in csv.DictReader(io.StringIO("\n".join(table))):
        if not rec.get("Metric Name"):  # a section's rule (advice text), not a metric
            continue
        name = rec.get("Kernel Name", "")
        rows.append({
            "kernel": name.split("[", 1)[0].split("(", 1)[0],
            "launch": _number(rec.get("ID", "")),
            "block": rec.get("Block Size", ""),
            "grid": rec.get("Grid Size", ""),
            "section": rec.get("Section Name", ""),
            "metric": rec.get("Metric Name", ""),
            "unit": rec.get("Metric Unit", ""),
            "value": _number(rec.get("Metric Value", "")),
        })
    return rows


def metrics_by_kernel(rows) -> dict:
    """``{kernel: {metric: value}}`` from ``parse_ncu_csv`` rows. Where a kernel was profiled
    more than once, its last launch's values are kept."""
    out: dict = {}
    for i, row in enumerate(validate.sequence(rows, "rows", empty=True)):
        if not isinstance(row, dict) or not {"kernel", "metric", "value"} <= row.keys():
            raise TypeError(f"rows[{i}] must be a row of parse_ncu_csv (a dict with kernel, "
                            f"metric and value), not {row!r}.")
        out.setdefault(row["kernel"], {})[row["metric"]] = row["value"]
    return out


def parse_racecheck(text: str) -> dict:
    """What ``compute-sanitizer --tool racecheck`` found: ``errors`` and ``warnings`` (its
    summary), ``displayed`` (hazard reports printed, at most ``--print-limit``),
    ``hazards`` (the hazard counts the reports give, summed: each report names one pair of
    instructions and how many times they conflicted) and ``kernels`` (the Python function
    names the reports name). Raises ValueError without a racecheck summary (the tool did
    not finish)."""
    validate.string(text, "text", empty=True)
    summary = re.search(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, "
                        r"(\d+) warnings?\)", text)
    if summary is None:
        raise ValueError("no RACECHECK SUMMARY line in this text: was it compute-sanitizer "
                         "--tool racecheck's output, and did the program finish?")
    counts = [int(c) for c in re.findall(r"\[(\d+) hazards?\]", text)]
    kernels = sorted(set(re.findall(r"::([A-Za-z_][A-Za-z0-9_]*)\[abi:", text)))
    return {"displayed": int(summary.group(1)), "errors": int(summary.group(2)),
            "warnings": int(summary.group(3)), "hazards": sum(counts), "kernels": kernels}


# --------------------------------------------------------------------------- experiments
# The tools run the Python program below in a process of their own: one reduce rung launched
# twice, the second launch profiled (the first may include loading the module).

_REDUCE_PROGRAM = """\
import sys
import numpy as np
from numba import cuda
from gpuperf.kernels import reduce as red
version, block, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
x = cuda.to_device(np.random.default_rng(1).random(n, dtype=np.float32))
for _ in range(2):
    red.reduce_sum(x, version, block=block)
cuda.synchronize()
"""

PROFILED_RUNGS = ("v0", "v1", "v2", "v3")
PROFILED_N = 2**22
RACECHECK_CASES = (("v2", 64), ("v4", 64), ("v4.1", 64))
RACECHECK_N = 2**16


def _tool_run(cmd, what: str, timeout: float = 300.0) -> str:
    """Run a tool's command line; its stdout, or RuntimeError with its last words."""
    import subprocess

    tool = cmd[0]
    if shutil.which(tool) is None:
        raise RuntimeError(f"{tool} is not on this machine's PATH: {what} needs NVIDIA's "
                           f"{tool} (Nsight Compute and compute-sanitizer come with the CUDA "
                           "toolkit, and on Colab's GPU image). Without it the recorded "
                           "result is shown.")
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0 and "RACECHECK SUMMARY" not in done.stdout:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise RuntimeError(f"{tool} failed on {what} (exit {done.returncode}): "
                           + " | ".join(tail))
    return done.stdout


# The strided copy of chapter 2 (``coalescing_stride``'s kernel and launch), launched twice.
_STRIDE_PROGRAM = """\
import sys
from numba import cuda
from gpuperf.kernels import coalescing as co
stride, count = int(sys.argv[1]), int(sys.argv[2])
src = co._device_data(count * stride)
dst = cuda.device_array_like(src)
kernel = co.make_copy_strided(4, "float32")
grid, block = co.copy_launch(count, version="ilp", ilp=4)
for _ in range(2):
    kernel[grid, block](src, dst, count, stride)
cuda.synchronize()
"""

# Chapter 2's transposes (``coalescing_transpose``'s kernels), launched twice: the naive one,
# or a tile of 32 x 32 threads with ``pad`` words of padding per shared row.
_TRANSPOSE_PROGRAM = """\
import sys
from numba import cuda
from gpuperf.kernels import coalescing as co
pad, n = int(sys.argv[1]), int(sys.argv[2])
a = co._device_data(n * n).reshape(n, n)
out = cuda.device_array((n, n), a.dtype)
if pad < 0:
    kernel, grid, block = co.transpose_naive, (n // 32, n // 8), (32, 8)
else:
    kernel, grid, block = co.make_transpose(32, 32, pad, True), (n // 32, n // 32), (32, 32)
for _ in range(2):
    kernel[grid, block](a, out)
cuda.synchronize()
"""
TRANSPOSE_METRICS = SHARED_METRICS + (
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "smsp__inst_executed_op_shared_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "gpu__time_duration.sum",
)
# (label, pad): pad -1 is the naive kernel.
PROFILED_TRANSPOSES = (("naive", -1), ("tiled", 0), ("tiled + padding", 1))
PROFILED_TRANSPOSE_N = 4096

# Global loads and stores: sectors per request and the DRAM bytes behind them.
STRIDE_METRICS = (
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "gpu__time_duration.sum",
)
PROFILED_STRIDES = (1, 2, 4, 8, 16, 32)


def _program_file(tmp, source: str = _REDUCE_PROGRAM, name: str = "profiled_rung.py") -> str:
    import os

    path = os.path.join(tmp, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)
    return path


@records.experiment(
    "profiling_reduce_shared", chapter="profiling",
    title="Shared-memory bank conflicts of the reduce ladder's first rungs (Nsight Compute)",
    units={"duration_ns": "ns", "warps_active_pct": "%"})
def reduce_shared_experiment(progress) -> list[dict]:
    """Nsight Compute on the first stage of the reduce ladder's first rungs (2^22 float32,
    blocks of 256): shared loads, the wavefronts they took, bank conflicts, and the time."""
    import sys
    import tempfile

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        program = _program_file(tmp)
        for version in PROFILED_RUNGS:
            progress(f"ncu on reduce {version} (n = 2^22, block 256)")
            kernel = f"reduce_{version.replace('.', '_')}"
            cmd = ncu_command([sys.executable, program, version, "256", str(PROFILED_N)],
                              kernel=kernel, metrics=SHARED_METRICS + TIME_METRICS,
                              launch_skip=1)
            got = metrics_by_kernel(parse_ncu_csv(_tool_run(cmd, f"reduce {version}")))
            m = got.get(kernel)
            if m is None:
                raise RuntimeError(f"ncu profiled no kernel named {kernel}: it saw "
                                   f"{sorted(got) or 'none'}.")
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


@records.experiment(
    "profiling_racecheck", chapter="profiling",
    title="Shared-memory hazards racecheck finds in the reduce rungs (compute-sanitizer)")
def racecheck_experiment(progress) -> list[dict]:
    """compute-sanitizer's racecheck on reduce rungs at blocks of 64 (2^16 float32): the
    hazards it reports in shared memory. v4's last warp runs with no barrier."""
    import sys
    import tempfile

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        program = _program_file(tmp)
        for version, block in RACECHECK_CASES:
            progress(f"racecheck on reduce {version} (block {block})")
            cmd = ["compute-sanitizer", "--tool", "racecheck", "--print-limit", "3",
                   sys.executable, program, version, str(block), str(RACECHECK_N)]
            found = parse_racecheck(_tool_run(cmd, f"reduce {version}"))
            rows.append({"version": version, "block": block, "n": RACECHECK_N,
                         "hazards": found["hazards"], "errors": found["errors"],
                         "warnings": found["warnings"], "displayed": found["displayed"]})
    return rows



@records.experiment(
    "profiling_stride", chapter="profiling",
    title="The strided copy under Nsight Compute: sectors per request and DRAM bytes",
    units={"duration_ns": "ns", "dram_read_bytes": "B", "dram_write_bytes": "B"})
def stride_experiment(progress) -> list[dict]:
    """Nsight Compute on chapter 2's strided copy (float32, the ``coalescing_stride`` launch
    and element count) at each of ``PROFILED_STRIDES``: the sectors each warp's load and
    store request touched in L1, and the bytes DRAM read and wrote, against the bytes the
    copy uses. Nsight Compute flushes the caches before the profiled launch."""
    import sys
    import tempfile

    from .kernels import coalescing as co

    count, size = co.N_STRIDE, 4
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        program = _program_file(tmp, _STRIDE_PROGRAM, "profiled_stride.py")
        for stride in PROFILED_STRIDES:
            progress(f"ncu on the strided copy, stride {stride}")
            cmd = ncu_command([sys.executable, program, str(stride), str(count)],
                              kernel="copy_strided", metrics=STRIDE_METRICS, launch_skip=1)
            got = metrics_by_kernel(parse_ncu_csv(_tool_run(cmd, f"stride {stride}")))
            m = got.get("copy_strided")
            if m is None:
                raise RuntimeError(f"ncu profiled no kernel named copy_strided: it saw "
                                   f"{sorted(got) or 'none'}.")
            useful = count * size  # bytes the copy reads (and writes)
            ld_req = m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]
            st_req = m["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"]
            ld = m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
            st = m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"]
            rows.append({
                "stride": stride, "dtype": "float32", "n": count,
                "load_sectors_per_request": round(ld / ld_req, 3) if ld_req else 0.0,
                "store_sectors_per_request": round(st / st_req, 3) if st_req else 0.0,
                "model_sectors_per_request": len(co.warp_access(stride=stride,
                                                                elem_bytes=size).sectors),
                "dram_read_bytes": m["dram__bytes_read.sum"],
                "dram_write_bytes": m["dram__bytes_write.sum"],
                "dram_read_per_useful": round(m["dram__bytes_read.sum"] / useful, 3),
                "dram_write_per_useful": round(m["dram__bytes_write.sum"] / useful, 3),
                "duration_ns": m["gpu__time_duration.sum"],
            })
    return rows


@records.experiment(
    "profiling_transpose", chapter="profiling",
    title="Chapter 2's transposes under Nsight Compute: bank conflicts and store sectors",
    units={"duration_ns": "ns"})
def transpose_experiment(progress) -> list[dict]:
    """Nsight Compute on the naive transpose and the 32 x 32 tiled one without and with a
    word of padding (a 4096 x 4096 float32 matrix): the wavefronts each shared load and
    store took (one: no bank conflict), the bank conflicts, and the sectors per global store
    request (4 when a warp writes 128 contiguous bytes)."""
    import sys
    import tempfile

    n = PROFILED_TRANSPOSE_N
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        program = _program_file(tmp, _TRANSPOSE_PROGRAM, "profiled_transpose.py")
        for label, pad in PROFILED_TRANSPOSES:
            progress(f"ncu on the transpose: {label}")
            kernel = "transpose_naive" if pad < 0 else "transpose_tiled"
            cmd = ncu_command([sys.executable, program, str(pad), str(n)], kernel=kernel,
                              metrics=TRANSPOSE_METRICS, launch_skip=1)
            got = metrics_by_kernel(parse_ncu_csv(_tool_run(cmd, f"transpose {label}")))
            m = got.get(kernel)
            if m is None:
                raise RuntimeError(f"ncu profiled no kernel named {kernel}: it saw "
                                   f"{sorted(got) or 'none'}.")

            def per(numerator, denominator, m=m):
                return round(m[numerator] / m[denominator], 3) if m[denominator] else 0.0

            rows.append({
                "version": label, "n": n,
                "shared_load_wavefronts_per_load": per(
                    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                    "smsp__inst_executed_op_shared_ld.sum"),
                "shared_store_wavefronts_per_store": per(
                    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
                    "smsp__inst_executed_op_shared_st.sum"),
                "bank_conflicts": (m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"]
                                   + m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"]),
                "store_sectors_per_request": per(
                    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
                    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
                "duration_ns": m["gpu__time_duration.sum"],
            })
    return rows
