"""The NVIDIA tools, run on a course kernel: Nsight Compute (``ncu``), compute-sanitizer and
CUPTI's activity records (through PyTorch's profiler).

The profilers work on Numba kernels like on any other: run a Python process under the tool and
pick the kernel by the start of its name (Numba's kernels are named after the Python function:
``reduce_v1[...]``). This module builds those command lines, runs them on a *launch*, and parses
the tools' output into plain rows, so that a hardware metric can be recorded and shown next to
the explanation it supports:

    cmd = nsight.ncu_command(["python3", "script.py"], kernel="reduce_v1",
                             metrics=nsight.SHARED_METRICS, launch_skip=1)
    rows = nsight.parse_ncu_csv(subprocess.run(cmd, capture_output=True, text=True).stdout)
    nsight.metrics_by_kernel(rows)["reduce_v1"]["l1tex__data_bank_conflicts_..."]

A *launch* is a function of plain arguments (numbers, strings) that builds a chapter's data and
launches its kernel (twice: Nsight Compute profiles the second launch; the first may include
loading the module). It is named by ``"module:function"`` (``"gpuperf.profiling:reduce_launch"``)
and runs in a process of its own (``launch_command``), so that the tool sees only it. Captured
real output of the tools is in ``tests/fixtures/profiling/``. The chapters' profiling experiments
(``gpuperf.profiling``) are built on this module; it imports no chapter.
"""

from __future__ import annotations

import csv
import importlib
import io
import json
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
                launch_count: int = 1, library: bool = False) -> list[str]:
    """The ``ncu`` command line that profiles ``launch_count`` launches of the kernel whose
    name starts with ``kernel`` (after skipping ``launch_skip`` of them: the first launch
    of a Numba kernel may include loading the module), collecting ``metrics`` and/or
    ``sections``, as CSV. The clocks are left alone (``--clock-control none``), as the
    course's timings leave them. ``program``: the command to run, e.g. ``["python3",
    "script.py"]``. ``library=True``: ``kernel`` is a regular expression found anywhere in
    the name of a library's kernel (cuBLAS's, say), which is not a Python function's."""
    program = [validate.string(p, f"program[{i}]") for i, p in
               enumerate(validate.sequence(program, "program"))]
    if not program:
        raise ValueError("program: give the command to profile, e.g. [\"python3\", \"x.py\"].")
    kernel = validate.string(kernel, "kernel")
    library = validate.boolean(library, "library")
    if library:
        try:
            re.compile(kernel)
        except re.error as e:
            raise ValueError(f"kernel={kernel!r} is not a regular expression ({e}): with "
                             "library=True give a pattern of the library kernel's name, e.g. "
                             "\"gemm\".") from None
    elif not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", kernel):
        raise ValueError(f"kernel={kernel!r} is not a Python function name: give the name of "
                         "the kernel's Python function (e.g. \"reduce_v1\").")
    metrics = [validate.string(m, f"metrics[{i}]") for i, m in
               enumerate(validate.sequence(metrics, "metrics", empty=True))]
    sections = [validate.string(s, f"sections[{i}]") for i, s in
                enumerate(validate.sequence(sections, "sections", empty=True))]
    if not metrics and not sections:
        raise ValueError("give metrics (e.g. nsight.SHARED_METRICS) or sections (e.g. "
                         "[\"SpeedOfLight\"]) to collect.")
    validate.positive_int(launch_skip, "launch_skip", minimum=0)
    validate.positive_int(launch_count, "launch_count")
    cmd = ["ncu", "--clock-control", "none", "--csv", "-k",
           f"regex:{kernel}" if library else f"regex:^{kernel}\\[",
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


def launch_twice(launch) -> None:
    """Call ``launch()`` twice and wait: Nsight Compute profiles the second launch."""
    validate.function(launch, "launch", what="a function of no arguments that launches a kernel")
    from numba import cuda

    for _ in range(2):
        launch()
    cuda.synchronize()


def _python() -> str:
    """This interpreter: the profiled process must import the same packages."""
    import sys

    return sys.executable


def _tool_run(cmd, what: str, timeout: float = 300.0) -> str:
    """Run a tool's command line; its stdout, or RuntimeError with its last words."""
    import os
    import subprocess

    tool = cmd[0]
    if shutil.which(tool) is None:
        raise RuntimeError(f"{tool} is not on this machine's PATH: {what} needs NVIDIA's "
                           f"{tool} (Nsight Compute and compute-sanitizer come with the CUDA "
                           "toolkit, and on Colab's GPU image). Without it the recorded "
                           "result is shown.")
    # The profiled process imports this package from where this process found it.
    src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (src, os.environ.get("PYTHONPATH", "")) if p)}
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    log = os.environ.get("GPUPERF_TOOL_LOG")  # a folder: keep every tool's raw output there
    if log:
        os.makedirs(log, exist_ok=True)
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{tool}_{what}")[:120]
        with open(os.path.join(log, name + ".txt"), "w", encoding="utf-8") as f:
            f.write(done.stdout + "\n--- stderr ---\n" + done.stderr)
    if done.returncode != 0 and "SUMMARY" not in done.stdout:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise RuntimeError(f"{tool} failed on {what} (exit {done.returncode}): "
                           + " | ".join(tail))
    return done.stdout


# Why a warp did not issue: the average number of warps stalled for each reason, per issued
# instruction (Nsight Compute's warp state statistics). Long scoreboard: waiting for a global
# (or local) load; barrier: at syncthreads; MIO throttle and short scoreboard: the shared-
# memory pipe's queue and results; math pipe throttle: an execution pipe busy.
STALL_REASONS = ("long_scoreboard", "barrier", "mio_throttle", "short_scoreboard",
                 "math_pipe_throttle", "wait", "not_selected")


STALL_METRICS = tuple(f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio"
                      for r in STALL_REASONS)


# One instruction of SASS as nvdisasm prints it (numba-cuda's ``inspect_sass``): its address in a
# comment, an optional predicate (``@P0``, ``@!UP1``), then the opcode and its modifiers
# (``LDG.E.128``).
_SASS_INSTRUCTION = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)",
                               re.M)


def sass_opcodes(text: str) -> list[str]:
    """The opcodes, with their modifiers, of every instruction in SASS ``text``, in program
    order: ``["LDG.E", "ISETP.GE.AND", "STG.E", ...]``."""
    validate.string(text, "text", empty=True)
    return _SASS_INSTRUCTION.findall(text)


def kernel_sass(kernel, signature: str, what: str) -> str:
    """The SASS of ``kernel`` compiled for ``signature`` on this GPU (``inspect_sass``, which runs
    the CUDA toolkit's ``nvdisasm``). ``what`` names the experiment in the error raised where the
    disassembler is missing: a record never holds a guess."""
    validate.kernel(kernel, "kernel")
    validate.string(signature, "signature")
    validate.string(what, "what")
    try:
        sass = kernel.compile(signature).inspect_sass()
    except Exception as e:  # noqa: BLE001 - nvdisasm missing: say so, do not record a guess
        raise RuntimeError(f"{what} needs nvdisasm on the PATH ({e}); add the CUDA toolkit's bin "
                           "folder, or skip it with --only.") from e
    return "\n".join(map(str, sass.values())) if isinstance(sass, dict) else str(sass)


def loads_before_store(opcodes, loads=("LDG",), stores=("STS", "STG")) -> int:
    """The longest run of global loads (opcodes starting with one of ``loads``) that ``opcodes``
    issues with no store between them. A store waits for the load whose value it writes, so this
    is how many loads one thread of straight-line code can put in flight before it waits."""
    if isinstance(opcodes, (str, bytes)) or not all(isinstance(op, str) for op in opcodes):
        raise TypeError(f"opcodes must be a list of SASS opcodes (strings), as sass_opcodes(text) "
                        f"returns, not {type(opcodes).__name__} ({str(opcodes)[:40]!r}).")
    for name, kinds in (("loads", loads), ("stores", stores)):
        if isinstance(kinds, str) or not kinds or not all(isinstance(k, str) for k in kinds):
            raise TypeError(f"{name} must be a tuple of opcode names such as ('LDG',), not "
                            f"{kinds!r}.")
    best = run = 0
    for op in opcodes:
        base = op.split(".")[0]
        if base in loads:
            run += 1
            best = max(best, run)
        elif base in stores:
            run = 0
    return best


def top_stalls(row: dict, n: int = 2) -> list[tuple[str, float]]:
    """The ``n`` stall reasons with the most warps stalled per issued instruction in a row of
    ``profiling_latency``, ``profiling_matmul`` or ``profiling_transpose``, largest first:
    [("long scoreboard", 5.1), ...].
    "Not selected" is left out: such a warp was ready to issue, and another one did."""
    if not isinstance(row, dict):
        raise TypeError(f"row must be a dict (one row of a profiling result), not "
                        f"{type(row).__name__}.")
    n = validate.positive_int(n, "n", maximum=len(STALL_REASONS))
    stalls = [(k.removeprefix("stall_").replace("_", " "), float(val)) for k, val in row.items()
              if k.startswith("stall_") and k != "stall_not_selected"]
    if not stalls:
        raise ValueError("row has no stall_ columns: give a row of profiling_latency or "
                         "profiling_matmul.")
    return sorted(stalls, key=lambda kv: -kv[1])[:n]


SANITIZER_TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")


def parse_sanitizer(text: str) -> dict:
    """What a ``compute-sanitizer`` run reported: {"errors", "warnings", "first", "correct",
    "max_error"}. ``first`` is the first problem it printed (None if none); ``correct`` and
    ``max_error`` come from the program's own ``RESULT`` line (None if it printed none,
    e.g. because the tool stopped it)."""

    text = validate.string(text, "text")
    race = re.search(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, "
                     r"(\d+) warnings?\)", text)
    summary = re.search(r"ERROR SUMMARY: (\d+) errors?", text)
    if race is None and summary is None:
        raise ValueError("no ERROR SUMMARY or RACECHECK SUMMARY line in this text: was it "
                         "compute-sanitizer's output (its stdout), complete?")
    if race is not None:
        errors, warnings = int(race.group(2)), int(race.group(3))
    else:
        errors, warnings = int(summary.group(1)), 0
    first = None
    for line in text.splitlines():
        body = line.removeprefix("=========").strip()
        if line.startswith("=========") and re.match(
                r"(Invalid|Error|Warning|Barrier|Potential|Uninitialized|Race|Divergent)", body):
            first = re.sub(r"\[abi:.*$", "", body)  # Numba's mangled signature: noise here
            break
    result = next((json.loads(line[len("RESULT "):]) for line in text.splitlines()
                   if line.startswith("RESULT ")), {})
    return {"errors": errors, "warnings": warnings, "first": first,
            "correct": result.get("correct"), "max_error": result.get("max_error")}


# The first section Nsight Compute shows for a kernel: how close it came to the peak of the
# SM (sm__throughput: the busiest of several SM units, instruction issue and the pipelines
# among them) and of memory (the busiest of DRAM, L2 and L1), in % of the peak sustained rate
# over the kernel's time (L1's over the cycles it was active), with the occupancy and the
# stall reasons beside them.
SOL_METRICS = STALL_METRICS + (
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "gpu__time_duration.sum",
)


def speed_of_light(metrics: dict) -> dict:
    """The columns of a Speed-of-Light row from Nsight Compute's ``SOL_METRICS``."""
    if not isinstance(metrics, dict):
        raise TypeError(f"metrics must be a dict of Nsight Compute metrics (from profile), not "
                        f"{type(metrics).__name__}.")
    missing = [m for m in SOL_METRICS if m not in metrics]
    if missing:
        raise ValueError(f"metrics lacks {missing[0]} (and {len(missing) - 1} more): collect "
                         "nsight.SOL_METRICS.")

    def pct(name):
        return round(float(metrics[name]), 1)

    return {
        "sm_pct": pct("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
        "memory_pct": pct("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"),
        "dram_pct": pct("dram__throughput.avg.pct_of_peak_sustained_elapsed"),
        "l1_pct": pct("l1tex__throughput.avg.pct_of_peak_sustained_active"),
        "l2_pct": pct("lts__throughput.avg.pct_of_peak_sustained_elapsed"),
        "fma_pct": pct("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"),
        "occupancy_pct": pct("sm__warps_active.avg.pct_of_peak_sustained_active"),
        **{f"stall_{r}": round(float(metrics[x]), 3) for r, x in zip(STALL_REASONS, STALL_METRICS)},
        "duration_ns": metrics["gpu__time_duration.sum"],
    }


# What the GPU itself reports of each copy and kernel: CUPTI's activity records, the source
# Nsight Systems reads its CUDA timeline from. Here they come through PyTorch's profiler
# (torch.profiler, which writes them as a Chrome trace): Nsight Systems on the course's
# reference machines writes its raw capture but cannot turn it into a report there.
_COPY_KINDS = {"HtoD": "h2d", "DtoH": "d2h", "DtoD": "d2d", "HtoH": "h2h"}


def _kernel_name(name: str) -> str:
    """``gpuperf::kernels::streams::add_kernel[abi:v1]...(Array<...>)`` -> ``add_kernel``."""
    head = re.split(r"[\[(<]", name, maxsplit=1)[0]
    return head.rsplit("::", 1)[-1] or name


def parse_cupti_trace(doc) -> list[dict]:
    """The GPU operations in a Chrome trace written by PyTorch's profiler
    (``prof.export_chrome_trace``; the dict or its JSON text): one dict per copy, memset or
    kernel, in the order they were issued (CUPTI's correlation ID), with ``kind`` ("h2d",
    "d2h", "d2d", "h2h", "memset" or "kernel"), ``name`` (a kernel's Python function name),
    ``stream`` (CUPTI's stream ID), ``correlation``, ``start_us``, ``end_us`` (the GPU's clock,
    microseconds) and ``bytes`` (copies and memsets; None for kernels). Host-side events
    (runtime and driver calls, flow arrows) are skipped. Raises ValueError if the trace has
    no ``traceEvents`` (not such a trace)."""

    if isinstance(doc, str):
        try:
            doc = json.loads(doc)
        except json.JSONDecodeError as err:
            raise ValueError(f"doc is not JSON ({err}): give the file that "
                             "torch.profiler's export_chrome_trace wrote, or its dict.") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise ValueError("doc has no traceEvents list: give the Chrome trace that "
                         "torch.profiler's export_chrome_trace wrote (or its JSON text).")
    ops = []
    for e in doc["traceEvents"]:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue  # flow arrows, metadata
        cat = e.get("cat")
        if cat not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue  # host-side: runtime and driver calls
        args = e.get("args", {})
        name = str(e.get("name", ""))
        if cat == "kernel":
            kind, short = "kernel", _kernel_name(name)
        elif cat == "gpu_memset":
            kind, short = "memset", name
        else:
            found = re.search(r"\b(HtoD|DtoH|DtoD|HtoH)\b", name)
            if found is None:
                continue  # a peer-to-peer or other copy: not one the course issues
            kind, short = _COPY_KINDS[found.group(1)], name
        start = float(e["ts"])
        ops.append({"kind": kind, "name": short, "stream": args.get("stream"),
                    "correlation": args.get("correlation"), "start_us": start,
                    "end_us": start + float(e.get("dur", 0.0)),
                    "bytes": args.get("bytes") if kind != "kernel" else None})
    # The issue order; a record without a correlation ID (none seen) goes by its start.
    ops.sort(key=lambda o: (o["correlation"] is None, o["correlation"] or 0, o["start_us"]))
    return ops


def cupti_ops(fn) -> list[dict]:
    """Call ``fn()`` with PyTorch's profiler collecting CUPTI's activity records of the GPU;
    return them as ``parse_cupti_trace`` does. Needs a GPU and PyTorch (preinstalled on Colab);
    RuntimeError otherwise."""
    import os
    import tempfile

    validate.function(fn, "fn", what="a function of no arguments that issues GPU work")
    try:
        from torch.profiler import ProfilerActivity
        from torch.profiler import profile as torch_profile
    except ImportError:
        raise RuntimeError("the CUPTI timeline needs PyTorch's profiler (import torch failed): "
                           "install torch, or read the recorded result "
                           "(gp.records.run(..., live=False)).") from None
    import warnings

    with warnings.catch_warnings():
        # torch warns once per process that "the profiler clears events at the end of each
        # cycle": true, and what we want (one cycle, one call); not the reader's concern.
        warnings.filterwarnings("ignore", message=".*Profiler clears events", category=UserWarning)
        with torch_profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        with open(path, encoding="utf-8") as f:
            return parse_cupti_trace(json.load(f))


def _intervals(intervals) -> list:
    spans = validate.sequence(intervals, "intervals", empty=True)
    for i, span in enumerate(spans):
        if not (isinstance(span, (tuple, list)) and len(span) == 2
                and all(isinstance(t, (int, float)) and not isinstance(t, bool) for t in span)):
            raise TypeError(f"intervals[{i}] = {span!r} is not a (start, end) pair of numbers.")
    return spans


def union_ms(intervals) -> float:
    """The time covered by at least one of the (start, end) intervals."""
    intervals = _intervals(intervals)
    total, end = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if b > end:
            total += b - max(a, end)
            end = b
    return total


def overlap_ms(intervals) -> float:
    """The time covered by at least two of the (start, end) intervals."""
    intervals = _intervals(intervals)
    points = sorted([(a, 1) for a, b in intervals] + [(b, -1) for a, b in intervals],
                    key=lambda p: (p[0], p[1]))
    total, depth, last = 0.0, 0, None
    for t, step in points:
        if depth >= 2:
            total += t - last
        depth += step
        last = t
    return total


def print_result(got, want) -> None:
    """For a tool's log: whether the launch computed the right thing (a line the tools ignore)."""
    import json

    import numpy as np

    try:
        got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    except (TypeError, ValueError):
        raise TypeError("got and want must be arrays of numbers (the launch's output and the "
                        "reference).") from None
    if got.shape != want.shape:
        raise ValueError(f"got has shape {got.shape} and want {want.shape}: compare the whole "
                         "output with its reference.")
    err = float(np.max(np.abs(got - want))) if got.size else 0.0
    print("RESULT " + json.dumps({"max_error": err, "correct": err <= 1e-5 * (
        1 + float(np.max(np.abs(want))))}), flush=True)


# --------------------------------------------------------------------------- readings


def per(m: dict, numerator: str, denominator: str) -> float | None:
    """numerator / denominator, or None where there is nothing to divide by (e.g. wavefronts
    per shared load of a kernel with no shared loads: not 0, which would read as better than 1)."""
    if not isinstance(m, dict):
        raise TypeError(f"m must be a dict of Nsight Compute metrics, not {type(m).__name__}.")
    return round(m[numerator] / m[denominator], 3) if m[denominator] else None


ISSUE_METRICS = STALL_METRICS + (
    "smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio",
    "smsp__inst_issued.sum", "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "sm__warps_active.avg.per_cycle_active", "gpu__time_duration.sum")


def fp32_lanes():
    """FP32 lanes per SM of this GPU (``device.FP32_LANES_PER_SM``), or None if unknown."""
    from . import device

    return device.FP32_LANES_PER_SM.get(tuple(device.info().compute_capability or ()))


def issue_columns(m: dict, lanes) -> dict:
    """The columns ``ISSUE_METRICS`` give a row: warp instructions issued and FFMAs among them,
    the FFMA share, the share of cycles a scheduler issued, the FP32 share the two allow
    (``issue_bound_pct``: FFMA share x issue rate x 128/lanes, at most 100), the warps active,
    and the stall reasons per issued instruction."""
    if not isinstance(m, dict):
        raise TypeError(f"m must be a dict of Nsight Compute metrics (ISSUE_METRICS), not "
                        f"{type(m).__name__}.")
    missing = [k for k in ISSUE_METRICS if k not in m]
    if missing:
        raise ValueError(f"m lacks {missing[0]}: collect nsight.ISSUE_METRICS.")
    inst = m["smsp__inst_issued.sum"]
    ffma = m["smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"] / 32
    share = 100 * ffma / inst
    issue = m["smsp__issue_active.avg.pct_of_peak_sustained_active"]
    return {
        "inst": inst, "ffma_inst": ffma, "ffma_share_pct": share, "issue_active_pct": issue,
        "fp32_lanes_per_sm": lanes,
        "issue_bound_pct": min(100.0, share * issue / 100 * 128 / lanes) if lanes else None,
        "warps_active": m["sm__warps_active.avg.per_cycle_active"],
        "stall_dispatch_stall": m[
            "smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio"],
        **{f"stall_{r}": m[f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio"]
           for r in STALL_REASONS},
    }


# --------------------------------------------------------------------------- launches

_LAUNCH_SPEC = re.compile(r"(gpuperf(?:\.[A-Za-z_][A-Za-z0-9_]*)*):([A-Za-z_][A-Za-z0-9_]*)")


def _launch_spec(launch: str) -> tuple[str, str]:
    launch = validate.string(launch, "launch")
    m = _LAUNCH_SPEC.fullmatch(launch)
    if m is None:
        raise ValueError(f"launch={launch!r} is not a launch: name it as 'module:function' of "
                         "this package, e.g. 'gpuperf.profiling:reduce_launch'.")
    return m.group(1), m.group(2)


def launch_from_argv(argv=None) -> None:
    """The profiled process: ``python -c "...; launch_from_argv()" MODULE:FUNCTION ARG ...``;
    arguments that look like integers are passed as integers."""
    import sys

    argv = sys.argv[1:] if argv is None else argv
    argv = [validate.string(a, f"argv[{i}]") for i, a in enumerate(validate.sequence(argv, "argv"))]
    launch, *args = argv
    module, function = _launch_spec(launch)
    fn = getattr(importlib.import_module(module), function)
    fn(*(int(a) if re.fullmatch(r"-?\d+", a) else a for a in args))


def launch_command(launch: str, *args, python: str = "python3") -> list[str]:
    """The command line of a process that runs ``launch`` (``"module:function"``) with
    ``args``, as one would type it (``python``: the interpreter; the experiments pass
    ``sys.executable``)."""
    _launch_spec(launch)
    validate.string(python, "python")
    return [python, "-c", "from gpuperf.nsight import launch_from_argv; launch_from_argv()",
            launch, *map(str, args)]


def _launch_label(launch: str, args) -> str:
    return " ".join([launch.rsplit(":", 1)[-1], *map(str, args)])


def profile(launch: str, *args, kernel: str, metrics, launch_count: int = 1,
            library: bool = False) -> dict:
    """Nsight Compute's ``metrics`` for a launch of ``kernel`` in a process that runs launch
    ``name`` with ``args`` (see ``launch_command``): {metric: value}. The first launch is
    skipped (it may include loading the module); of the ``launch_count`` launches after it,
    the longest is kept (a reduction launches the same kernel again on its partial sums).
    ``library=True``: ``kernel`` is a pattern of a library kernel's name (``ncu_command``)."""
    launch_count = validate.positive_int(launch_count, "launch_count")
    cmd = ncu_command(launch_command(launch, *args, python=_python()), kernel=kernel,
                      metrics=metrics, launch_skip=1, launch_count=launch_count,
                      library=library)
    what = _launch_label(launch, args)
    rows = [r for r in parse_ncu_csv(_tool_run(cmd, what))
            if (re.search(kernel, r["kernel"]) if library else r["kernel"] == kernel)]
    if not rows:
        raise RuntimeError(f"ncu profiled no kernel named {kernel} in {what}.")
    launches: dict = {}
    for r in rows:
        launches.setdefault(r["launch"], {})[r["metric"]] = r["value"]
    return max(launches.values(), key=lambda m: m.get("gpu__time_duration.sum") or 0)


def sanitize(tool: str, launch: str, *args) -> dict:
    """Run ``launch`` with ``args`` (see ``launch_command``) under ``compute-sanitizer
    --tool <tool>``: what ``parse_sanitizer`` reads from its output."""
    validate.choice(tool, "tool", SANITIZER_TOOLS)
    # API errors are left out: Numba's start-up probes the driver with calls that may fail,
    # and each would count as an error of the kernel.
    cmd = ["compute-sanitizer", "--tool", tool, "--print-limit", "5", "--report-api-errors", "no",
           *launch_command(launch, *args, python=_python())]
    return parse_sanitizer(_tool_run(cmd, f"{tool} {_launch_label(launch, args)}"))


def try_profile(launch: str, *args, kernel: str, metrics, launch_count: int = 1) -> dict | None:
    """``profile(...)`` where it can run now: on a GPU, with Nsight Compute, with live
    measurement on (``GPUPERF_LIVE``). Elsewhere, or when the tool fails (e.g. no permission
    to read the GPU's counters), None, with the reason on stderr."""
    import sys

    from .mode import SIMULATOR

    ncu_command(launch_command(launch, *args), kernel=kernel, metrics=metrics)  # bad input: now
    reason = None
    if SIMULATOR:
        reason = "no GPU here"
    elif not records.live_by_default():
        reason = f"{records.ENV_LIVE}=0 asks for recorded results"
    elif not available("ncu"):
        reason = "Nsight Compute (ncu) is not on this machine's PATH"
    if reason is None:
        try:
            return profile(launch, *args, kernel=kernel, metrics=metrics,
                           launch_count=launch_count)
        except RuntimeError as err:
            reason = str(err)
    print(f"gpuperf: no live profile ({reason}); the recorded one is shown instead.",
          file=sys.stderr)
    return None
