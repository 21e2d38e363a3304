"""The reduce chapter's experiments (``@experiment``): live on a GPU, replayed from records
elsewhere. The tables and summaries printed from their results are in ``summaries.py``."""

from __future__ import annotations

import re
import time

import numpy as np
from numba import cuda  # gpuperf/__init__ has already chosen the mode

from gpuperf import bench, device, nsight, validate
from gpuperf.records import experiment

from .ablation import ABLATION_CONFIGS, ablation_plan, make_v8_ablation
from .argmax_kernel import _SIG_ARGMAX, _argmax_calls, make_argmax
from .edge_cases import edge_case_failures
from .host import _SIG3, _SIG4, Plan, _ceil_div, kernel_for, plan, signature
from .inputs import _integer_pair, _random_device, _random_pair
from .kernels import (
    _MIN_BLOCK,
    DEFAULT_BLOCK,
    LADDER,
    PROLOGUE,
    V8_UNROLL,
    VERSIONS,
    WARP,
    _check_block,
    _zero,
    reduce_single_thread_global,
)
from .ptx_tools import _compiled_ptx, _registers, ptx_counts, telling_lines
from .races import RACE_VERSIONS
from .single_pass import (
    _SIG_SINGLE_PASS,
    SPREAD_WORDS,
    _block_atomic_calls,
    _read_by_atomic_zero,
    _single_pass_calls,
    _spread_atomic_calls,
    _warp_atomic_calls,
    make_per_block_atomic,
    make_single_pass,
    make_warp_atomic,
    one_wave,
)
from .warps import make_v8

N_LADDER = 2**28  # 1 GiB of float32: fills any GPU, far beyond any L2
SIZE_LOG2 = range(16, 29)  # the size sweep: 256 KiB (inside L2) to 1 GiB
# The reduce study notes, NVIDIA V100 (sm_70), block 256; n = 2^25 float32 inferred from their
# microseconds and GB/s (v0: 788.29 us x 170.90 GB/s = 134.7 MB), the notes do not state it:
# (microseconds, GB/s, speedup).
STUDY_NOTES_V100 = {
    "v0": (788.29, 170.90, 1.00), "v1": (502.43, 268.13, 1.56), "v1.5": (394.88, 341.16, 2.00),
    "v2": (375.90, 358.38, 2.10), "v3": (205.89, 653.10, 3.83), "v4": (176.86, 760.28, 4.46),
    "v4.1": (183.23, 733.86, 4.30), "v4.2": (176.13, 763.46, 4.48), "v5": (175.52, 766.10, 4.49),
    "v6": (163.84, 819.26, 4.81), "v7": (162.62, 825.41, 4.85), "v8": (162.21, 827.45, 4.86),
}
V100_PEAK_GBPS = 900.0


# The step-by-step post, n = 512 * 512 float32, ms per call (each call also memset and copied
# 256 floats).
STEP_BY_STEP_MS = {"numpy.sum (CPU)": 0.041, "single-thread": 31.418, "block-atomic": 0.173,
                   "grid-atomic": 0.036, "shared-atomic": 0.021}
STEP_BY_STEP_WHAT = {"numpy.sum (CPU)": "OpenCV cv::sum on the CPU"}


BACK_TO_BACK = 4  # calls per timed run in the ladder and the sweeps (see _time_calls)


def _time_calls(fn, reps: int = BACK_TO_BACK, min_time: float = 0.1):
    """Median ms per call of ``fn`` called ``reps`` times back to back.

    Back to back, the launches of call k+1 are queued while call k runs, so the
    host's launch overhead stays out of the GPU time, as it does in a real pipeline; where
    a call's launches take the host longer than the GPU's work, the host sets the pace, and
    the time says so (the launches are counted, not hidden).
    """
    t = bench.time_kernel(lambda: [fn() for _ in range(reps)], min_time=min_time, min_repeat=5,
                          hide_launch=False)
    return bench.Timing([ms / reps for ms in t.times_ms])


def _host_us(run, calls: int = 20, batches: int = 9) -> dict:
    """The host's microseconds to enqueue one call of ``run()``: ``host_us``, the median of
    ``batches`` batches of ``calls`` calls (each started on an idle GPU and waited for after
    the clock stops), and ``host_spread``, their interquartile range over the median."""
    times = []
    for _ in range(batches):
        cuda.synchronize()
        t = time.perf_counter()
        for _ in range(calls):
            run()
        times.append(1e6 * (time.perf_counter() - t) / calls)
    cuda.synchronize()
    return {"host_us": float(np.median(times)), "host_spread": bench.Timing(times).spread}


def _plan_calls(p: Plan, d_x):
    """``run()`` enqueues the plan on ``d_x``; ``fetch()`` returns its result as a float."""
    return (lambda: p(d_x)), (lambda: float(p.out.copy_to_host()[0]))


def _measure_plan(p: Plan, d_x, reps: int = 4, min_time: float = 0.1):
    """The plan's result on ``d_x`` (first run) and its time per call."""
    run, fetch = _plan_calls(p, d_x)
    run()
    value = fetch()
    return value, _time_calls(run, reps=reps, min_time=min_time)


def _cupy_sum(d_x):
    try:
        import cupy as cp
    except ImportError:
        return None
    cx = cp.asarray(d_x)
    out = cp.empty((), dtype=cp.float32)
    return lambda: cp.sum(cx, out=out), lambda: float(out.get())


def _cupy_exact(d_int) -> float:
    """cupy.sum of :func:`integer_input`'s values (on the GPU) as a float."""
    run, fetch = _cupy_sum(d_int)
    run()
    return fetch()


def _row(name, n, timing, value, ref, **extra):
    rel = abs(value - ref) / abs(ref)
    return {"version": name, "n": n, **bench.bandwidth_row(4 * n, timing), "result": value,
            "rel_error": rel, **extra}


def _shared_input(n: int):
    """The random input of live measurements from the widgets (kept between calls)."""
    return _random_device(n)


def measure_point(version: str, *, block: int | None = None, blocks: int | None = None,
                  n: int = N_LADDER) -> dict:
    """Time one configuration live on the GPU: the widgets' "measure live" button calls this."""
    validate.choice(version, "version", VERSIONS)
    validate.positive_int(n, "n")
    _check_block(version, block)
    bench.require_gpu("reduce.measure_point")
    d_x, ref = _shared_input(n)
    p = plan(version, n, block=block, blocks=blocks)
    value, t = _measure_plan(p, d_x, min_time=0.05)
    return {"version": version, "block": p.block, "blocks": blocks, "grid": p.grid,
            "rel_error": abs(value - ref) / abs(ref), **bench.bandwidth_row(4 * n, t)}


@experiment("reduce_ladder", chapter="reduce",
            title="Every rung of the reduce ladder at 2^28 float32, with cupy.sum and the "
                  "study notes' V100",
            units={"ms": "ms", "gbps": "GB/s", "pct_peak": "% of peak", "pct_copy": "% of copy",
                   "host_us": "us", "v100_us": "us", "v100_gbps": "GB/s"})
def ladder_experiment(progress):
    n = N_LADDER
    d_x, ref = _random_device(n)
    d_int, exact = _integer_pair(n, 5)
    rows = []
    for version in LADDER:
        p = plan(version, n)
        value, t = _measure_plan(p, d_x)
        theirs = STUDY_NOTES_V100[version]
        got = float(p(d_int).copy_to_host()[0])
        rows.append(_row(version, n, t, value, ref, block=p.block, blocks=p.grid,
                         **_host_us(lambda p=p: p(d_x)),
                         correct=got == exact, integer_sum_error=got - exact,
                         v100_us=theirs[0], v100_gbps=theirs[1],
                         v100_pct_peak=100 * theirs[1] / V100_PEAK_GBPS, v100_speedup=theirs[2]))
        progress(f"{version:5s} {t.median_ms:8.3f} ms  {rows[-1]['gbps']:7.0f} GB/s  "
                 f"rel.err {rows[-1]['rel_error']:.1e}")
    cupy = _cupy_sum(d_x)
    if cupy is not None:
        run, fetch = cupy
        run()
        value = fetch()
        t = _time_calls(run)
        got = _cupy_exact(d_int)
        rows.append(_row("cupy.sum", n, t, value, ref, block=None, blocks=None,
                         **_host_us(run), correct=got == exact, integer_sum_error=got - exact, v100_us=None,
                         v100_gbps=None, v100_pct_peak=None, v100_speedup=None))
        progress(f"cupy.sum {t.median_ms:8.3f} ms  {rows[-1]['gbps']:7.0f} GB/s")
    v0 = rows[0]["ms"]
    best = max((r for r in rows if r["version"] in LADDER and r["correct"]),
               key=lambda r: r["gbps"])
    for r in rows:
        r["speedup_vs_v0"] = v0 / r["ms"]
        if cupy is not None:
            r["pct_cupy"] = 100 * r["gbps"] / rows[-1]["gbps"]
        r["best"] = r is best
    return rows


def _sanitizer() -> str:
    """The path of compute-sanitizer (CUDA toolkit), or a clear error."""
    import os
    import shutil

    for candidate in (shutil.which("compute-sanitizer"),
                      *(os.path.join(os.environ[k], "bin", "compute-sanitizer")
                        for k in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(k)),
                      "/usr/local/cuda/bin/compute-sanitizer"):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise RuntimeError("compute-sanitizer was not found (on PATH, in $CUDA_HOME/bin or "
                       "/usr/local/cuda/bin). It ships with the CUDA toolkit; install the "
                       "toolkit or put its bin folder on PATH, then run this again.")


_RACECHECK_SCRIPT = """
import json, warnings
import numpy as np
import gpuperf
from gpuperf import exercises as ex
from gpuperf.kernels import reduce as red
x = ex.random_array({n}, 3)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", RuntimeWarning)
    got = red.reduce_sum(x, {version!r}, block={block})
print("RESULT " + json.dumps({{"result": got, "reference": float(np.sum(x, dtype=np.float64))}}))
"""


def _racecheck_one(exe: str, version: str, block: int, n: int) -> dict:
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "GPUPERF_MODE": "gpu", "PYTHONPATH": os.pathsep.join(
        p for p in [os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__)))),
                    os.environ.get("PYTHONPATH", "")] if p)}
    script = _RACECHECK_SCRIPT.format(n=n, version=version, block=block)
    proc = subprocess.run([exe, "--tool", "racecheck", "--racecheck-report", "hazard",
                           sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=600)
    out = proc.stdout + proc.stderr
    result = next((json.loads(line[len("RESULT "):]) for line in out.splitlines()
                   if line.startswith("RESULT ")), None)
    try:
        summary = nsight.parse_racecheck(out)
    except ValueError:
        summary = None
    if summary is None or result is None:
        tail = "\n".join(out.strip().splitlines()[-8:])
        raise RuntimeError(f"compute-sanitizer on {version} gave no racecheck summary "
                           f"(exit {proc.returncode}):\n{tail}")
    kinds = sorted(set(re.findall(r"Potential (\w+) hazard", out)))
    first = re.search(r"(?:Warning|Error): (\(.*?\) )?Potential \w+ hazard[^\n]*", out)
    return {"version": version, "block": block, "n": n,
            "hazard_errors": summary["errors"], "hazard_warnings": summary["warnings"],
            "hazard_kinds": ", ".join(kinds) or None,
            "first_hazard": first.group(0).strip() if first else None,
            "result": result["result"], "reference": result["reference"],
            "rel_error": abs(result["result"] - result["reference"]) / abs(result["reference"]),
            "correct": abs(result["result"] - result["reference"])
            <= 1e-5 * abs(result["reference"])}


@experiment("reduce_racecheck", chapter="reduce",
            title="compute-sanitizer --tool racecheck on v4, v4.1 and v4.2 (blocks of 64, "
                  "4096 float32)",
            units={"hazard_errors": "hazards", "hazard_warnings": "hazards"})
def racecheck_experiment(progress):
    exe = _sanitizer()
    rows = []
    for version in RACE_VERSIONS:
        rows.append(_racecheck_one(exe, version, 64, 4096))
        r = rows[-1]
        progress(f"{version:5s} {r['hazard_errors']} errors, {r['hazard_warnings']} warnings "
                 f"({r['hazard_kinds'] or 'none'}); sum {'right' if r['correct'] else 'WRONG'}")
    return rows


# The step-by-step post's grid for its grid-wide and shared-memory atomics: 16 blocks of 256.
POST_GRID = 16


def _flushes_l2(n: int) -> bool:
    """Whether one-call timings of ``n`` float32 flush L2 first: when the data is under four
    times L2, a repeat would otherwise find much of it still there."""
    return 4 * n < 4 * (device.info().l2_bytes or 0)


def _time_one_call(run, n: int, min_time: float = 0.03):
    """ms per call timed one call at a time (an application that sums once), L2 flushed
    before each call when the data would fit in it: the size sweep's method. The launch is
    counted: a small sum costs an application the launch (``reduce_timing_methods`` sets
    these times beside the GPU's own durations)."""
    return bench.time_kernel(run, min_time=min_time, flush=_flushes_l2(n), hide_launch=False)


def _gpu_busy(run, calls: int = 10, flush: bool = False) -> dict:
    """What the GPU itself spent per call of ``run``: CUPTI's durations of every kernel, memset
    and device copy of ``calls`` calls (``nsight.cupti_ops``), per call. ``flush=True``
    flushes L2 before each call, as the one-call timings do, and leaves the flush kernel out.
    ``{"gpu_ms": None, "gpu_ops": None}`` where PyTorch's profiler is missing.

    Launches right after a profiling session run slower for a while (an H200 measured a
    v8 call's host time at about twice its earlier figure just after, and most of the way
    back a second later): experiments call this after their event timings, never between
    them."""
    def calls_then_wait():
        for _ in range(calls):
            if flush:
                bench.flush_l2()
            run()
        cuda.synchronize()

    try:
        ops = nsight.cupti_ops(calls_then_wait)
    except RuntimeError:
        return {"gpu_ms": None, "gpu_ops": None}
    flushers = bench.FLUSH_KERNEL_NAMES
    work = [o for o in ops if o["kind"] in ("kernel", "memset", "d2d") and o["name"] not in flushers]
    return {"gpu_ms": sum(o["end_us"] - o["start_us"] for o in work) / 1000 / calls,
            "gpu_ops": len(work) / calls}


def _at_posts_grid(row: dict) -> bool:
    """Whether a ``reduce_prologue`` row ran at the step-by-step post's grid (16 x 256) rather
    than at ours (its ``whose_grid`` column; one thread and one block are "both")."""
    return row.get("whose_grid") == "post's"


def atomics_per_call(version: str, grid: int, block: int) -> int:
    """Atomic additions into the one result per call of a prologue rung: one per thread for
    ``block-atomic`` and ``grid-atomic``, one per block for ``shared-atomic``, none for one
    thread."""
    validate.choice(version, "version", PROLOGUE)
    grid = validate.positive_int(grid, "grid")
    block = validate.positive_int(block, "block")
    return {"single-thread": 0, "block-atomic": block, "grid-atomic": grid * block,
            "shared-atomic": grid}[version]


@experiment("reduce_prologue", chapter="reduce",
            title="The step-by-step post's prologue: one thread, atomics, shared memory, against "
                  "numpy.sum, at the post's grid and ours",
            units={"ms": "ms", "gbps": "GB/s", "post_ms": "ms", "gpu_ms": "ms"})
def prologue_experiment(progress):
    rows = []
    for n in (2**18, 2**24):
        d_x, ref = _random_device(n, seed=4)
        host = d_x.copy_to_host()
        np.sum(host)
        times = []
        for _ in range(max(5, int(2e7 // n))):
            t0 = time.perf_counter()
            value = float(np.sum(host))
            times.append((time.perf_counter() - t0) * 1e3)
        t = bench.Timing(times)
        rows.append(_row("numpy.sum (CPU)", n, t, value, ref, device="CPU", grid=None,
                         post_ms=STEP_BY_STEP_MS["numpy.sum (CPU)"] if n == 2**18 else None))
        progress(f"n=2^{n.bit_length() - 1} numpy.sum {t.median_ms:.3f} ms")
        configs = []
        for version in PROLOGUE + ("v8",):
            if version == "single-thread" and n > 2**20:
                continue  # one thread would take seconds per call
            if version in ("grid-atomic", "shared-atomic"):
                configs.append((version, POST_GRID, "post's"))
                configs.append((version, None, "ours"))
            elif version in PROLOGUE:  # one thread, one block: the post's launch and ours
                configs.append((version, None, "both"))
            else:
                configs.append((version, None, "ours"))
        runs = []
        for version, blocks, whose in configs:
            p = plan(version, n, blocks=blocks)
            run, fetch = _plan_calls(p, d_x)
            run()
            value = fetch()
            t = _time_one_call(run, n, min_time=0.05)
            post = STEP_BY_STEP_MS.get(version) if n == 2**18 and whose != "ours" else None
            atomics = atomics_per_call(version, p.grid, p.block) if version in PROLOGUE else 0
            rows.append(_row(version, n, t, value, ref, device="GPU", blocks=p.grid,
                             block=p.block, grid=f"{p.grid} x {p.block}", whose_grid=whose,
                             atomics=atomics, post_ms=post))
            runs.append((rows[-1], run, 3 if version == "block-atomic" else 10))
            progress(f"n=2^{n.bit_length() - 1} {version} [{p.grid} x {p.block}] "
                     f"{t.median_ms:.3f} ms")
        cupy = _cupy_sum(d_x)
        if cupy is not None:
            run, fetch = cupy
            run()
            t = _time_one_call(run, n, min_time=0.05)
            rows.append(_row("cupy.sum", n, t, fetch(), ref, device="GPU", grid=None,
                             whose_grid=None, post_ms=None))
            runs.append((rows[-1], run, 10))
        # The GPU's own time after every event timing of this size (see _gpu_busy).
        for row, run, calls in runs:
            row.update(_gpu_busy(run, calls=calls, flush=_flushes_l2(n)))
    return rows


# The prologue as the step-by-step post timed it: its steps at its size, called back to back
# with no L2 flush (1 MiB stays in L2 between calls), and its one-thread kernel, which adds
# into the result in global memory, beside ours, which adds in a register.
POST_KERNELS = ("ours", "post's")


@experiment("reduce_prologue_post", chapter="reduce",
            title="The prologue as the step-by-step post ran it: 2^18 float32 back to back in "
                  "L2, and its one-thread kernel beside ours",
            units={"ms": "ms", "gbps": "GB/s", "post_ms": "ms", "gpu_ms": "ms"})
def prologue_post_experiment(progress):
    """At the post's size (2^18 float32, 1 MiB) and grid (16 x 256 for the atomics), each
    prologue step timed two ways in one run: ``in L2`` (calls back to back with no flush, as
    the post's loop ran them) and ``flushed`` (one call after an L2 flush, as
    ``reduce_prologue`` times them); the one-thread step with our kernel (the running sum in a
    register) and the post's (``out[0] += x[i]`` in global memory). ``gpu_ms``: the GPU's own
    time per call (CUPTI), in the same state."""
    n = 2**18
    d_x, ref = _random_device(n, seed=4)
    out = cuda.device_array(1, np.float32)
    rows, runs = [], []
    configs = [("single-thread", "ours"), ("single-thread", "post's"), ("block-atomic", "ours"),
               ("grid-atomic", "ours"), ("shared-atomic", "ours")]
    for version, kernel in configs:
        if kernel == "post's":
            def run(_d=d_x):
                _zero[1, 1](out)
                reduce_single_thread_global[1, 1](_d, out, n)

            def fetch():
                return float(out.copy_to_host()[0])
        else:
            p = plan(version, n, blocks=POST_GRID if version in ("grid-atomic", "shared-atomic")
                     else None)
            run, fetch = _plan_calls(p, d_x)
        run()
        value = fetch()
        for state in ("in L2", "flushed"):
            if state == "in L2":
                t = _time_calls(run, min_time=0.05)
            else:
                t = bench.time_kernel(run, min_time=0.05, flush=True, hide_launch=False)
            rows.append(_row(version, n, t, value, ref, kernel=kernel, state=state,
                             post_ms=STEP_BY_STEP_MS.get(version)))
            runs.append((rows[-1], run, 3 if version == "single-thread" else 10, state == "flushed"))
            progress(f"{version} ({kernel} kernel, {state}) {t.median_ms:.3f} ms")
    for row, run, calls, flush in runs:  # the GPU's own time, after every event timing
        row.update(_gpu_busy(run, calls=calls, flush=flush))
    return rows


@experiment("reduce_block_sweep", chapter="reduce",
            title="Threads per block for v2, v5, v7 and v8 (2^28 float32)",
            units={"ms": "ms", "gbps": "GB/s", "pct_peak": "% of peak", "pct_copy": "% of copy"})
def block_sweep_experiment(progress):
    n = N_LADDER
    d_x, ref = _random_device(n)

    def measure(version, block):
        if block < _MIN_BLOCK.get(version, WARP):
            return {"ms": None, "gbps": None, "note": "below this rung's minimum block"}
        p = plan(version, n, block=block)
        value = float(p(d_x).copy_to_host()[0])
        t = _time_calls(lambda: p(d_x), min_time=0.05)
        return {"blocks": p.grid, "rel_error": abs(value - ref) / ref,
                **bench.bandwidth_row(4 * n, t)}

    rows = []
    for version in ("v2", "v5", "v7", "v8"):
        rows += bench.sweep(measure, {"version": [version],
                                      "block": [32, 64, 128, 256, 512, 1024]},
                            label=version, progress=progress)
    return [r for r in rows if r.get("ms") is not None]


def _grid_candidates() -> list[int]:
    sms = device.sm_count(default=2)
    fixed = [256, 512, 1024, 2048, 4096, 8192, 16384, 65536]
    per_sm = [sms * k for k in (1, 2, 4, 8, 16, 32)]
    return sorted(set(fixed + per_sm))


@experiment("reduce_grid_sweep", chapter="reduce",
            title="Number of blocks (and elements per thread) for v6, v7 and v8 (2^28 float32)",
            units={"ms": "ms", "gbps": "GB/s", "pct_peak": "% of peak", "pct_copy": "% of copy"})
def grid_sweep_experiment(progress):
    n = N_LADDER
    d_x, ref = _random_device(n)
    sms = device.sm_count(default=2)

    def measure(version, blocks):
        p = plan(version, n, block=256, blocks=blocks)
        value = float(p(d_x).copy_to_host()[0])
        t = _time_calls(lambda: p(d_x), min_time=0.05)
        per_thread = _ceil_div(n, p.grid * 256)
        return {"grid": p.grid, "blocks_per_sm": p.grid / sms, "elements_per_thread": per_thread,
                "rel_error": abs(value - ref) / ref, **bench.bandwidth_row(4 * n, t)}

    rows = []
    for version in ("v6", "v7", "v8"):
        rows += bench.sweep(measure, {"version": [version], "blocks": _grid_candidates()},
                            label=version, progress=progress)
    return rows


@experiment("reduce_size_sweep", chapter="reduce",
            title="Array size 2^16..2^28 float32: where launch overhead gives way to bandwidth",
            units={"ms": "ms", "gbps": "GB/s", "pct_peak": "% of peak", "pct_copy": "% of copy"})
def size_sweep_experiment(progress):
    big, _ = _random_device(N_LADDER)
    host = _random_pair(N_LADDER, 3)[0]
    rows = []
    for log2_n in SIZE_LOG2:
        n = 2**log2_n
        d_x = big[:n]
        ref = float(np.sum(host[:n], dtype=np.float64))
        flush = _flushes_l2(n)
        for version in ("v3", "v7", "v8", "cupy.sum"):
            if version == "cupy.sum":
                cupy = _cupy_sum(d_x)
                if cupy is None:
                    continue
                run, fetch = cupy
            else:
                run, fetch = _plan_calls(plan(version, n), d_x)
            run()
            value = fetch()
            t = _time_one_call(run, n)
            rows.append({**_row(version, n, t, value, ref), "log2_n": log2_n, "l2_flushed": flush})
        progress(f"n=2^{log2_n}: " + "  ".join(f"{r['version']} {r['gbps']:.0f}"
                                               for r in rows if r["n"] == n))
    return rows


# The three ways the chapter's experiments time a call, and the sizes the comparison runs at.
TIMING_METHODS = ("back to back", "one call", "one call after a flush")
TIMING_LOG2 = (18, 24, 28)


@experiment("reduce_timing_methods", chapter="reduce",
            title="One reduction timed three ways, against the GPU's own durations (CUPTI)",
            units={"ms": "ms", "gbps": "GB/s", "gpu_ms": "ms", "pct_peak": "% of peak",
                   "pct_copy": "% of copy"})
def timing_methods_experiment(progress):
    """v8 and cupy.sum at 2^18, 2^24 and 2^28 float32, each timed per call three ways: four
    calls back to back between two events (the ladder's and the block and grid sweeps'
    method), one call between two events, and one call after an L2 flush (the size sweep's
    and the prologue's). Beside each, ``gpu_ms``: CUPTI's sum of the GPU's own kernel
    durations per call, measured the same way (flushed or not) after all the event timings.
    Where an event time is far above ``gpu_ms``, the GPU waited for the host."""
    big, _ = _random_device(N_LADDER)
    host = _random_pair(N_LADDER, 3)[0]
    rows, runs = [], []
    for log2_n in TIMING_LOG2:
        n = 2**log2_n
        d_x = big[:n]
        ref = float(np.sum(host[:n], dtype=np.float64))
        for version in ("v8", "cupy.sum"):
            if version == "cupy.sum":
                cupy = _cupy_sum(d_x)
                if cupy is None:
                    continue
                run, fetch = cupy
            else:
                run, fetch = _plan_calls(plan(version, n), d_x)
            run()
            value = fetch()
            for method in TIMING_METHODS:
                if method == "back to back":
                    t = _time_calls(run, min_time=0.05)
                else:
                    t = bench.time_kernel(run, min_time=0.03, flush=method.endswith("flush"),
                                          hide_launch=False)
                rows.append({**_row(version, n, t, value, ref), "log2_n": log2_n,
                             "method": method})
                runs.append((rows[-1], run))
            progress(f"n=2^{log2_n} {version}: " + ", ".join(
                f"{r['method']} {r['ms'] * 1e3:.1f} us" for r in rows[-3:]))
    busy = {}  # the GPU's own time, after every event timing (see _gpu_busy)
    for row, run in runs:
        key = (row["version"], row["n"], row["method"].endswith("flush"))
        if key not in busy:
            busy[key] = _gpu_busy(run, flush=key[2])
        row.update(busy[key])
    return rows


@experiment("reduce_v8_ablation", chapter="reduce",
            title="v8's three ingredients one at a time: load width x loads per trip x "
                  "accumulators (2^28 float32)",
            units={"ms": "ms", "gbps": "GB/s", "pct_peak": "% of peak", "pct_copy": "% of copy",
                   "pct_v8": "% of v8"})
def v8_ablation_experiment(progress):
    """Every combination of ``ABLATION_CONFIGS`` in v8's plan (512-thread blocks, one wave of
    resident blocks), timed back to back like the ladder, with v8 itself and cupy.sum."""
    n = N_LADDER
    d_x, ref = _random_device(n)
    d_int, exact = _integer_pair(n, 5)
    rows = []

    def add(label, p, width, unroll, accumulators):
        value, t = _measure_plan(p, d_x)
        got = float(p(d_int).copy_to_host()[0])
        kernel = (make_v8(p.block, V8_UNROLL) if label == "v8"
                  else make_v8_ablation(p.block, width, unroll, accumulators))
        text = _compiled_ptx(kernel.compile(_SIG4))  # the launch's compilation, not a new one
        rows.append(_row(label, n, t, value, ref, width=width, unroll=unroll,
                         accumulators=accumulators, block=p.block, blocks=p.grid,
                         correct=got == exact, ptx_v4_loads=text.count("ld.global.v4.f32"),
                         ptx_scalar_loads=text.count("ld.global.f32"),
                         ptx_adds=text.count("add.f32") + text.count("add.rn.f32")))
        progress(f"{label:28s} {t.median_ms:7.3f} ms {rows[-1]['gbps']:7.0f} GB/s")

    for width, unroll, accumulators in ABLATION_CONFIGS:
        add(f"({width}, {unroll}, {accumulators})", ablation_plan(n, width, unroll, accumulators),
            width, unroll, accumulators)
    add("v8", plan("v8", n), 4, V8_UNROLL, 4)
    v8 = rows[-1]["gbps"]
    cupy = _cupy_sum(d_x)
    if cupy is not None:
        run, fetch = cupy
        run()
        rows.append(_row("cupy.sum", n, _time_calls(run), fetch(), ref, width=None, unroll=None,
                         accumulators=None, block=None, blocks=None,
                         correct=_cupy_exact(d_int) == exact))
    for r in rows:
        r["pct_v8"] = 100 * r["gbps"] / v8
    return rows


# Sizes of the single-pass comparison: from a few blocks' work, where a launch is most of the
# time, to N_LADDER, where the data is.
SINGLE_PASS_SIZES = (2**12, 2**16, 2**20, 2**24, 2**28)


@experiment("reduce_single_pass", chapter="reduce",
            title="One launch (the last block adds the partials) against two, by size",
            units={"ms": "ms", "gbps": "GB/s", "host_us": "us", "gpu_ms": "ms",
                   "pct_two_pass": "% of two passes"})
def single_pass_experiment(progress):
    """At each of ``SINGLE_PASS_SIZES``: v8's loads without unroll (the ablation's (4, 1, 4))
    in v8's two-launch plan, the same loads and grid in ``make_single_pass``, in
    ``make_warp_atomic`` (a zeroing launch, then one atomic per warp) and in its two controls,
    ``make_per_block_atomic`` (the same, one atomic per block) and ``make_spread_atomic``
    (one atomic per warp, spread over ``SPREAD_WORDS`` words: ``addresses`` says how many words the atomics
    land on; its words are added on the host, a control, not a sum); all timed back to back
    like the ladder, with the host's microseconds per call beside them and, after every event
    timing, the GPU's own busy time per call (CUPTI). All launch the same way (``packed``:
    one driver call per kernel), so that the host's cost of a launch through Numba does not
    decide the comparison."""
    rows, runs = [], []
    for n in SINGLE_PASS_SIZES:
        d_x, ref = _random_device(n)
        d_int, exact = _integer_pair(n, 5)
        two = ablation_plan(n, 4, 1, 4)
        value, t = _measure_plan(two, d_x)
        got = float(two(d_int).copy_to_host()[0])
        rows.append(_row("two passes", n, t, value, ref, block=two.block, blocks=two.grid,
                         launches=len(two.launches), correct=got == exact, packed=two.packed,
                         **_host_us(_plan_calls(two, d_x)[0])))
        runs.append(_plan_calls(two, d_x)[0])
        first = len(rows) - 1
        for label, calls, launches in (("single pass", _single_pass_calls, 1),
                                       ("warp atomics", _warp_atomic_calls, 2),
                                       ("block atomics", _block_atomic_calls, 2),
                                       ("spread atomics", _spread_atomic_calls, 2)):
            run, fetch, packed = calls(d_x, n, two.grid, two.block)
            run()
            value = fetch()
            run_int, fetch_int, _ = calls(d_int, n, two.grid, two.block)
            run_int()
            got = fetch_int()
            rows.append(_row(label, n, _time_calls(run), value, ref, block=two.block,
                             blocks=two.grid, launches=launches, correct=got == exact,
                             packed=packed, **_host_us(run)))
            if label.endswith("atomics"):
                rows[-1]["addresses"] = SPREAD_WORDS if label == "spread atomics" else 1
            runs.append(run)
            if n == SINGLE_PASS_SIZES[-1] and label != "spread atomics":  # a control, no sum
                failed = edge_case_failures("sum" if label == "single pass" else label, 4,
                                            two.block)
                rows[-1].update(edge_cases=len(failed), edge_failures="; ".join(failed[:4]))
        for r in rows[first:]:
            r["pct_two_pass"] = 100 * rows[first]["ms"] / r["ms"]
        progress(f"n = 2^{n.bit_length() - 1}: " + ", ".join(
            f"{r['version']} {r['ms'] * 1e3:.1f} us" for r in rows[first:]))
    for r, run in zip(rows, runs):  # CUPTI last: launches after a profiling session run slower
        r.update(_gpu_busy(run))
    return rows


# The SASS instructions that order and route the one-launch kernels' memory accesses.
_FENCE_SASS = re.compile(r"\b(MEMBAR|CCTL|FENCE|ATOMG|ATOM|RED|ERRBAR)\S*")


@experiment("reduce_one_launch_sass", chapter="reduce",
            title="The fences and atomics of the one-launch kernels in this GPU's SASS")
def one_launch_sass_experiment(progress):
    """The SASS (``inspect_sass``, which needs ``nvdisasm``) of the single pass, the argmax
    and a kernel that reads a float by an atomic add of zero: each line that fences, empties
    a cache or does an atomic, and whether a fence empties the L1 (``CCTL.IVALL``) and an
    atomic float add flushes subnormals (``.FTZ``)."""
    rows = []
    for label, kernel, sig in (
            ("single pass", make_single_pass(DEFAULT_BLOCK), _SIG_SINGLE_PASS),
            ("argmax, 16-byte loads", make_argmax(DEFAULT_BLOCK, 4), _SIG_ARGMAX),
            ("warp atomics", make_warp_atomic(DEFAULT_BLOCK), _SIG4),
            ("block atomics", make_per_block_atomic(DEFAULT_BLOCK), _SIG4),
            ("atomic add of zero", _read_by_atomic_zero, "void(float32[::1], float32[::1])")):
        try:
            sass = kernel.compile(sig).inspect_sass()
        except Exception as e:  # nvdisasm missing: say so, do not record a guess
            raise RuntimeError(f"reduce_one_launch_sass needs nvdisasm on the PATH ({e}); "
                               "add the CUDA toolkit's bin folder, or skip it with --only.") from e
        lines = [" ".join(line.split()) for line in sass.splitlines() if _FENCE_SASS.search(line)]
        ops = [m.group(0) for line in lines for m in [_FENCE_SASS.search(line)]]
        rows.append({"kernel": label, "ops": " ".join(ops),
                     "empties_l1": any(o.startswith("CCTL.IVALL") for o in ops),
                     "ftz_atomic_add": any(o.startswith(("ATOM", "RED")) and ".ADD.F32.FTZ" in o
                                           for o in ops)})
        progress(f"{label}: {rows[-1]['ops']}")
    return rows


# reduce_l2_resident's sizes (log2 of float32 elements): 1 MiB to 256 MiB, below and above
# the reference GPUs' 50 to 60 MiB of L2.
L2_RESIDENT_LOG2 = (18, 20, 22, 23, 24, 25, 26)


@experiment("reduce_l2_resident", chapter="reduce",
            title="v8 and cupy.sum with the data left in L2 and with L2 flushed, 1 to 256 MiB",
            units={"gpu_ms": "ms", "gbps": "GB/s", "pct_copy": "% of the copy ceiling",
                   "mib": "MiB"})
def l2_resident_experiment(progress):
    """v8 (its two-launch plan) and ``cupy.sum`` on ``2**k`` float32 for k in
    ``L2_RESIDENT_LOG2``, each in two states: ``in L2`` (calls back to back, so an array that
    fits is still in L2 from the call before) and ``flushed`` (L2 written over before every
    call). Timed by the GPU's own kernel durations (CUPTI), since at a few microseconds per
    call events and the host's launch cost would time the host, not the reads."""
    ceiling = bench.ceilings()["copy_gbps"]
    l2 = device.info().l2_bytes
    rows = []
    for k in L2_RESIDENT_LOG2:
        n = 2**k
        d_x, ref = _random_device(n)
        p = plan("v8", n)
        runs = [("v8", _plan_calls(p, d_x)[0])]
        summed = _cupy_sum(d_x)
        if summed is not None:
            runs.append(("cupy.sum", summed[0]))
        for version, run in runs:
            run()
            for state, flush in (("in L2", False), ("flushed", True)):
                busy = _gpu_busy(run, calls=20, flush=flush)
                if busy["gpu_ms"] is None:
                    raise RuntimeError("reduce_l2_resident needs CUPTI (PyTorch's profiler) to "
                                       "time the GPU alone; install torch, or skip it with "
                                       "--only.")
                gbps = 4 * n / (busy["gpu_ms"] * 1e-3) / 1e9
                rows.append({"version": version, "n": n, "mib": 4 * n / 2**20, "state": state,
                             "fits_l2": bool(l2 and 4 * n <= l2), "l2_mib": (l2 or 0) / 2**20,
                             **busy, "gbps": gbps, "pct_copy": 100 * gbps / ceiling})
                progress(f"2^{k} {version:8s} {state:8s} {busy['gpu_ms'] * 1e3:8.1f} us "
                         f"{gbps:7.0f} GB/s")
    return rows


# reduce_argmax's rows: each argmax beside the single-pass sum that reads the same way.
ARGMAX_ROWS = (("argmax, 4-byte loads", "argmax", 1), ("sum, 4-byte loads", "sum", 1),
               ("argmax, 16-byte loads", "argmax", 4), ("sum, 16-byte loads", "sum", 4))


@experiment("reduce_argmax", chapter="reduce",
            title="argmax in one launch against cupy.argmax and the single-pass sum (2^28 float32)",
            units={"ms": "ms", "gbps": "GB/s", "pct_sum": "% of the same loads' sum",
                   "registers": "per thread"})
def argmax_experiment(progress):
    """``make_argmax`` (4-byte and 16-byte loads) on ``N_LADDER`` random floats with equal
    maxima planted far apart, each beside the single-pass sum that reads the same way (the
    same bytes, a plain add) and ``cupy.argmax``. Every kernel runs one full wave of its own
    (``one_wave``: its registers count); each row says whether it found NumPy's answer and
    how many of ``edge_case_failures``'s cases it got wrong on this GPU."""
    n = N_LADDER
    d_x, ref = _random_device(n)
    x = d_x.copy_to_host()
    top = float(x.max()) + 1.0
    for at in (n // 3, (2 * n) // 3):  # two equal maxima far apart: the first must win
        x[at] = top
    d_x = cuda.to_device(x)
    want = int(np.argmax(x))
    total = float(np.sum(x, dtype=np.float64))
    block = DEFAULT_BLOCK
    rows = []
    for label, kind, width in ARGMAX_ROWS:
        if kind == "argmax":
            kernel, sig, calls, ref_value = make_argmax(block, width), _SIG_ARGMAX, _argmax_calls, want
        else:
            kernel, sig, calls, ref_value = (make_single_pass(block, width), _SIG_SINGLE_PASS,
                                             _single_pass_calls, total)
        grid = one_wave(kernel, sig, block)
        run, fetch, packed = calls(d_x, n, grid, block, width)
        run()
        found = fetch()
        failed = edge_case_failures(kind, width, block)
        rows.append(_row(label, n, _time_calls(run), found, ref_value, block=block, blocks=grid,
                         registers=_registers(kernel, sig),
                         index=found if kind == "argmax" else None,
                         correct=found == want if kind == "argmax" else None, packed=packed,
                         edge_cases=len(failed), edge_failures="; ".join(failed[:4])))
    try:
        import cupy as cp
    except ImportError:
        cp = None
    if cp is not None:
        cx = cp.asarray(d_x)
        got = int(cp.argmax(cx))
        rows.append(_row("cupy.argmax", n, _time_calls(lambda: cp.argmax(cx)), got, want,
                         block=None, blocks=None, registers=None, index=got,
                         correct=got == want, packed=None, edge_cases=None, edge_failures=""))
    by = {r["version"]: r for r in rows}
    for r in rows:
        width = "4-byte" if r["version"] == "argmax, 4-byte loads" else "16-byte"
        r["pct_sum"] = 100 * by[f"sum, {width} loads"]["ms"] / r["ms"]
        progress(f"{r['version']:24s} {r['ms']:7.3f} ms {r['gbps']:7.0f} GB/s")
    return rows


@experiment("reduce_resources", chapter="reduce",
            title="Registers, shared memory and telling PTX lines of every rung (default blocks)",
            units={"registers": "per thread", "shared_bytes": "B per block"})
def resources_experiment(progress):
    rows = []
    for version in VERSIONS:
        block = _check_block(version, None)  # each rung's default block
        kernel = kernel_for(version, block)
        sig = signature(version)
        compiled = kernel.compile(sig)  # ptxas ran: these are the SASS figures
        text = _compiled_ptx(compiled)
        counts = ptx_counts(text)
        row = {"version": version, "block": block, "registers": compiled.regs_per_thread,
               "shared_bytes": compiled.shared_mem_per_block,
               "local_bytes": compiled.local_mem_per_thread,
               **{k.replace(".", "_"): v for k, v in counts.items()},
               "ptx_lines": "\n".join(telling_lines(text, limit=12))}
        rows.append(row)
        progress(f"{version}: {row['registers']} registers, {row['shared_bytes']} B shared, "
                 f"{counts['bar.sync']} bar.sync, {counts['shfl.sync']} shfl.sync, "
                 f"{counts['ld.global.v4.f32']} ld.global.v4.f32, {counts['rem']} rem")
    for block in (64, 128, 512, 1024):  # compiled already by the block sweep, if it ran
        compiled = kernel_for("v5", block).compile(_SIG3)
        rows.append({"version": f"v5 (block {block})", **{k.replace(".", "_"): v
                     for k, v in ptx_counts(_compiled_ptx(compiled)).items()}})
    return rows
