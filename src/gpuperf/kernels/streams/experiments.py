"""The streams chapter's experiments on the pipeline and the Numba article, and the tables
read from them.

``streams_article``: the Numba article's 9.3 s vs 1.4 s, JIT and all; timed properly; its race.
``streams_host_bandwidth``: pageable against pinned copies, both directions.
``streams_pipeline``: speedup over serial against streams, measured and ideal.
``streams_timeline``: every copy and kernel per stream, measured and ideal.
``streams_explore``: streams x chunks x arithmetic intensity (for the widget).

The experiments on pinned memory, streams and what host calls cost are in ``costs.py``;
those on launches and the hardware queues in ``launch.py``.
"""

from __future__ import annotations

import functools
import time

import numpy as np
from numba import cuda

from gpuperf import bench, validate
from gpuperf import exercises as ex
from gpuperf.records import experiment

from .issue import IssuePipeline
from .kernels import (
    ARTICLE_STREAMS,
    _article_launch,
    article_add,
    article_default_stream,
    article_five_streams,
    fixed_five_streams,
    launch_chunk,
    shared_buffer_pipeline,
)
from .models import arithmetic_intensity, ideal_ms, ideal_schedule, overlap_bound_ms, reference
from .pinned import pinned_copy
from .pipeline import Pipeline, Run, _check_res

N_PIPE = 2**25  # 128 MiB per float32 array: 384 MiB cross the host link per run
PIPE_CHUNKS = 8  # 16 MiB per array and chunk: large copies, little host time per byte
STREAM_COUNTS = (1, 2, 3, 4, 6, 8)


def _host_inputs(n: int, *, pinned: bool = True, seed: int = 7):
    """Host inputs ``a``, ``b`` and an output ``out`` for the experiments, the two latest kept:
    drawing and pinning 2^25 random floats took a second per experiment. Only ``out`` is
    written, and every run fills it before it is checked."""
    return _cached_host_inputs(int(n), bool(pinned), int(seed))


@functools.lru_cache(maxsize=2, typed=True)
def _cached_host_inputs(n: int, pinned: bool, seed: int):
    rng = np.random.default_rng(seed)
    a = ex.random_array(n, rng)
    b = ex.random_array(n, rng)
    if not pinned:
        return a, b, np.empty(n, np.float32)
    pa, pb = pinned_copy(a), pinned_copy(b)
    return pa, pb, cuda.pinned_array(n, dtype=np.float32)


def _check_result(out, a, b, iters, what):
    """Check an experiment's output where an error would show: every 1009th element, and the
    first and last two elements of every chunk of every chunk count up to 64 (a chunk that
    was not copied back, or one copied from the wrong place, is wrong at its edges too).
    Comparing all of 2^25 elements in float64 after every run took most of the chapter's
    time; the tests check every element at small sizes."""
    n = out.shape[0]
    edges = {n * i // c + d for c in range(1, 65) for i in range(c + 1) for d in (-2, -1, 0, 1)}
    idx = np.array(sorted({*range(0, n, 1009), *(e for e in edges if 0 <= e < n)}))
    err = ex.compare(out[idx], reference(a[idx], b[idx], iters), rtol=1e-5, atol=1e-5)
    if err:
        raise AssertionError(f"{what}: {err}")


@functools.lru_cache(maxsize=1, typed=True)
def heavy_iters() -> int:
    """Relaxation steps that make the kernel take about twice the copies in (GPU only).

    Calibrated on this GPU, so that the compute-bound pipeline is compute-bound here
    too: measure the serial copy in, and the kernel at 1024 steps, and scale.
    """
    a, b, out = _host_inputs(N_PIPE)
    h2d = Pipeline(N_PIPE, n_streams=1, n_chunks=1).time(a, b, out, repeats=3)
    h2d_ms = h2d.stage_times()["h2d"][0]
    d_a, d_b, d_out = (cuda.to_device(x) for x in (a, b, out))
    t = bench.time_kernel(lambda: launch_chunk(d_a, d_b, d_out, 1024, 256), min_repeat=3,
                          min_time=0.02)
    iters = int(round(2 * h2d_ms / t.median_ms * 1024 / 64)) * 64
    return int(min(max(iters, 64), 2**16))


def _works():
    return [("memory-bound (a + b)", 0), ("compute-bound (relaxation)", heavy_iters())]


@experiment("streams_pipeline", chapter="streams",
            title="Chunked pipeline over 2^25 float32 (8 chunks): speedup against streams",
            units={"serial_ms": "ms", "pipelined_ms": "ms", "ideal_ms": "ms", "bound_ms": "ms",
                   "h2d_ms": "ms", "kernel_ms": "ms", "d2h_ms": "ms",
                   "pct_of_ideal": "% of ideal speedup"})
def pipeline_experiment(progress):
    a, b, out = _host_inputs(N_PIPE)
    rows = []
    for work, iters in _works():
        serial_run = Pipeline(N_PIPE, iters=iters, n_streams=1, n_chunks=1).time(a, b, out,
                                                                                repeats=7)
        _check_result(out, a, b, iters, f"serial {work}")
        # Stage times measured chunk by chunk with one stream: nothing overlaps, so each
        # span is that stage alone. The ideal for every stream count is built from them.
        staged = Pipeline(N_PIPE, iters=iters, n_streams=1, n_chunks=PIPE_CHUNKS).time(
            a, b, out, repeats=7)
        st = staged.stage_times()
        bound = overlap_bound_ms(st["h2d"], st["kernel"], st["d2h"])
        progress(f"{work}, iters={iters}: serial {serial_run.total_ms:.2f} ms; stages "
                 f"h2d {sum(st['h2d']):.2f}, kernel {sum(st['kernel']):.2f}, "
                 f"d2h {sum(st['d2h']):.2f} ms")
        for n_streams in STREAM_COUNTS:
            pipe = Pipeline(N_PIPE, iters=iters, n_streams=n_streams, n_chunks=PIPE_CHUNKS)
            out[:] = np.nan
            run = pipe.time(a, b, out, repeats=7)
            _check_result(out, a, b, iters, f"pipelined {work}, {n_streams} streams")
            ideal = ideal_ms(st["h2d"], st["kernel"], st["d2h"], n_streams)
            row = {
                "work": work, "iters": iters, "flop_per_byte": arithmetic_intensity(iters),
                "n_streams": n_streams, "n_chunks": PIPE_CHUNKS,
                "serial_ms": serial_run.total_ms, "pipelined_ms": run.total_ms,
                "ideal_ms": ideal, "bound_ms": bound,
                "speedup": serial_run.total_ms / run.total_ms,
                "ideal_speedup": serial_run.total_ms / ideal,
                "pct_of_ideal": 100 * ideal / run.total_ms,
                "h2d_ms": sum(st["h2d"]), "kernel_ms": sum(st["kernel"]),
                "d2h_ms": sum(st["d2h"]), "spread": _spread(run.times_ms),
            }
            rows.append(row)
            progress(f"  {n_streams} streams: {run.total_ms:.2f} ms, speedup "
                     f"{row['speedup']:.2f} (ideal {row['ideal_speedup']:.2f}, "
                     f"{row['pct_of_ideal']:.0f}% of it)")
    return rows


def _spread(times):
    return bench.Timing(list(times)).spread


TIMELINE_CHUNKS = 8
TIMELINE_STREAMS = 4


@experiment("streams_timeline", chapter="streams",
            title="Every copy and kernel per stream (2^25 float32, 8 chunks), measured and ideal",
            units={"start_ms": "ms", "end_ms": "ms"})
def timeline_experiment(progress):
    a, b, out = _host_inputs(N_PIPE)
    pa, pb, pout = _host_inputs(N_PIPE, pinned=False)
    rows = []

    def add(case, work, iters, schedule, host, n_streams, spans):
        for s in spans:
            rows.append({"case": case, "work": work, "iters": iters, "schedule": schedule,
                         "host": host, "n_streams": n_streams, "n_chunks": TIMELINE_CHUNKS,
                         **s})

    for work, iters in _works():
        serial_run = Pipeline(N_PIPE, iters=iters, n_streams=1, n_chunks=1).time(a, b, out)
        add("serial", work, iters, "measured", "pinned", 1, serial_run.spans)
        staged = Pipeline(N_PIPE, iters=iters, n_streams=1, n_chunks=TIMELINE_CHUNKS).time(
            a, b, out)
        add("one stream, chunked", work, iters, "measured", "pinned", 1, staged.spans)
        st = staged.stage_times()
        pipe = Pipeline(N_PIPE, iters=iters, n_streams=TIMELINE_STREAMS,
                        n_chunks=TIMELINE_CHUNKS)
        run = pipe.time(a, b, out)
        _check_result(out, a, b, iters, f"timeline {work}")
        add("pipelined", work, iters, "measured", "pinned", TIMELINE_STREAMS, run.spans)
        add("pipelined", work, iters, "ideal", "pinned", TIMELINE_STREAMS,
            ideal_schedule(st["h2d"], st["kernel"], st["d2h"], TIMELINE_STREAMS))
        progress(f"{work}: serial {serial_run.total_ms:.2f} ms, pipelined {run.total_ms:.2f} ms")
        if iters == 0:
            slow = pipe.time(pa, pb, pout, pageable="allow", repeats=3)
            _check_result(pout, pa, pb, iters, "timeline pageable")
            add("pipelined, pageable host memory", work, iters, "measured", "pageable",
                TIMELINE_STREAMS, slow.spans)
            progress(f"{work}, pageable: {slow.total_ms:.2f} ms")
    return rows


HOST_SIZES_MIB = (1, 4, 16, 64, 256)


@experiment("streams_host_bandwidth", chapter="streams",
            title="Host-device copy bandwidth: pageable against pinned host memory",
            units={"ms": "ms", "gbps": "GB/s", "mib": "MiB"})
def host_bandwidth_experiment(progress):
    """Each copy timed alone; ``copy_engines``: the GPU's asyncEngineCount (its copy
    engines, as the driver reports them)."""
    try:
        engines = int(cuda.get_current_device().ASYNC_ENGINE_COUNT)
    except Exception:  # noqa: BLE001  (a driver that does not report it)
        engines = None
    rows = []
    for mib in HOST_SIZES_MIB:
        n = mib * 2**20 // 4
        d = cuda.device_array(n, dtype=np.float32)
        hosts = {"pageable": np.empty(n, np.float32), "pinned": cuda.pinned_array(n, np.float32)}
        for memory, h in hosts.items():
            h[:] = 1.0
            copies = {"h2d": lambda d=d, h=h: d.copy_to_device(h),
                      "d2h": lambda d=d, h=h: d.copy_to_host(h)}
            for direction, copy in copies.items():
                # hide_launch=False: a Numba copy's host work is part of what a call costs
                t = bench.time_kernel(copy, min_repeat=5, min_time=0.05, hide_launch=False)
                bw = bench.gbps(n * 4, t.median_ms)
                rows.append({"memory": memory, "direction": direction, "mib": mib,
                             "ms": t.median_ms, "gbps": bw, "spread": t.spread,
                             "copy_engines": engines})
                progress(f"{memory:8s} {direction} {mib:4d} MiB: {bw:6.1f} GB/s")
    return rows


SAME_DIRECTION_MIB = 256


def same_direction_copies(mib: int = SAME_DIRECTION_MIB, repeats: int = 5) -> list[dict]:
    """Whether two pinned copies in the same direction, in two streams, share the link: for
    each direction, one copy of ``mib`` MiB alone, one copy of twice that, and two copies of
    ``mib`` MiB issued together in two streams; each run timed on the host from the first issue
    to ``cuda.synchronize()`` (the median of ``repeats``, after one that warms up).
    ``aggregate_gbps``: all the bytes the run moved over its time."""
    mib = validate.positive_int(mib, "mib")
    repeats = validate.positive_int(repeats, "repeats")
    n = mib * 2**20 // 4
    streams = [cuda.stream(), cuda.stream()]
    dev = [cuda.device_array(2 * n, np.float32), cuda.device_array(n, np.float32)]
    host = [cuda.pinned_array(2 * n, np.float32), cuda.pinned_array(n, np.float32)]
    for h in host:
        h[:] = 1.0

    def copy(direction, i, stream, size):
        if direction == "h2d":
            dev[i][:size].copy_to_device(host[i][:size], stream=stream)
        else:
            dev[i][:size].copy_to_host(host[i][:size], stream=stream)

    cases = {
        "one copy": (lambda d: copy(d, 0, streams[0], n), n),
        "one copy of twice the bytes": (lambda d: copy(d, 0, streams[0], 2 * n), 2 * n),
        "two copies, two streams": (lambda d: (copy(d, 0, streams[0], n),
                                               copy(d, 1, streams[1], n)), 2 * n),
    }
    rows = []
    for direction in ("h2d", "d2h"):
        for case, (run, elements) in cases.items():
            times = []
            for attempt in range(repeats + 1):
                cuda.synchronize()
                t = time.perf_counter()
                run(direction)
                cuda.synchronize()
                if attempt:
                    times.append(1e3 * (time.perf_counter() - t))
            ms = float(np.median(times))
            rows.append({"direction": direction, "case": case, "mib": elements * 4 // 2**20,
                         "ms": ms, "aggregate_gbps": bench.gbps(elements * 4, ms),
                         "spread": float((max(times) - min(times)) / ms)})
    return rows


@experiment("streams_same_direction", chapter="streams",
            title="Two pinned copies in the same direction, in two streams, against one",
            units={"ms": "ms", "aggregate_gbps": "GB/s", "mib": "MiB"})
def same_direction_experiment(progress):
    """``same_direction_copies`` at ``SAME_DIRECTION_MIB`` MiB per copy."""
    rows = same_direction_copies()
    for r in rows:
        progress(f"{r['direction']} {r['case']}: {r['ms']:.2f} ms, "
                 f"{r['aggregate_gbps']:.1f} GB/s")
    return rows


ARTICLE_N = 20_000_000


def _fresh_process_script(n: int) -> str:
    """The article's program as a stand-alone script (the functions of ``kernels.py``, by source)."""
    import inspect

    parts = [inspect.getsource(f) for f in (article_add.py_func, _article_launch,
                                            article_default_stream, article_five_streams)]
    return "\n".join([
        "import json, math, time",
        "t0 = time.perf_counter()",
        "import numpy as np",
        "from numba import cuda",
        f"ARTICLE_STREAMS = {ARTICLE_STREAMS}",
        *parts,  # article_add's source starts with its @cuda.jit
        "imported = time.perf_counter()",
        f"rng = np.random.default_rng(3); n = {n}",
        "x = rng.integers(-2**20, 2**20, n, dtype=np.int32)",
        "y = rng.integers(-2**20, 2**20, n, dtype=np.int32)",
        "t = time.perf_counter(); article_default_stream(article_add, x, y)",
        "first = time.perf_counter() - t",
        "t = time.perf_counter(); article_five_streams(article_add, x, y)",
        "second = time.perf_counter() - t",
        "print(json.dumps({'import_s': imported - t0, 'first_s': first, 'second_s': second}))",
    ])


def _fresh_process_rows(progress, n: int = ARTICLE_N) -> list[dict]:
    """Run the article's program as its author did: a new Python process, so that the first
    timed region pays for creating the CUDA context as well as for compiling the kernel."""
    import json
    import subprocess
    import sys

    try:
        done = subprocess.run([sys.executable, "-c", _fresh_process_script(n)],
                              capture_output=True, text=True, timeout=120)
        got = json.loads(done.stdout.strip().splitlines()[-1])
    except Exception as err:  # report and go on: the other rows still stand
        progress(f"fresh-process run failed, skipped: {type(err).__name__}: {err}")
        return []
    progress(f"fresh process: import {got['import_s']:.2f} s, first region "
             f"{got['first_s']:.2f} s, second {got['second_s']:.2f} s")
    return [{"variant": "article: default stream", "timing": "wall clock, new process (CUDA "
             "context + compilation + copies)", "ms": 1e3 * got["first_s"],
             "wrong_elements": None},
            {"variant": "article: 5 streams (pageable, shared output buffer)",
             "timing": "wall clock, new process, second region", "ms": 1e3 * got["second_s"],
             "wrong_elements": None}]


def _events_ms(fn, repeats=5):
    fn()
    cuda.synchronize()
    legacy = cuda.legacy_default_stream()
    times = []
    for _ in range(repeats):
        start, end = cuda.event(), cuda.event()
        start.record(legacy)
        fn()
        end.record(legacy)
        end.synchronize()
        times.append(start.elapsed_time(end))
    return float(np.median(times))


@experiment("streams_article", chapter="streams",
            title="The Numba article's 9.3 s against 1.4 s: compilation, pageable copies, a "
                  "shared buffer",
            units={"ms": "ms"})
def article_experiment(progress):
    rng = np.random.default_rng(3)
    x = rng.integers(-2**20, 2**20, ARTICLE_N, dtype=np.int32)
    y = rng.integers(-2**20, 2**20, ARTICLE_N, dtype=np.int32)
    ref = x.astype(np.float64) + y
    rows = []

    def wrong(result, covered=ARTICLE_N):
        return int(np.count_nonzero(result[:covered] != ref[:covered])) + (ARTICLE_N - covered)

    rows += _fresh_process_rows(progress)
    fresh = cuda.jit(article_add.py_func)  # never compiled: its first call includes the JIT
    cuda.synchronize()
    t = time.perf_counter()
    r = article_default_stream(fresh, x, y)
    rows.append({"variant": "article: default stream", "timing": "wall clock, first call "
                 "(includes compilation)", "ms": (time.perf_counter() - t) * 1e3,
                 "wrong_elements": wrong(r)})
    t = time.perf_counter()
    r = article_five_streams(fresh, x, y)
    rows.append({"variant": "article: 5 streams (pageable, shared output buffer)",
                 "timing": "wall clock, second (already compiled)",
                 "ms": (time.perf_counter() - t) * 1e3, "wrong_elements": wrong(r)})
    for r_ in rows[-2:]:
        progress(f"{r_['variant']}, {r_['timing']}: {r_['ms']:.0f} ms")

    rows.append({"variant": "article: default stream", "timing": "CUDA events, warmed up",
                 "ms": _events_ms(lambda: article_default_stream(fresh, x, y)),
                 "wrong_elements": wrong(article_default_stream(fresh, x, y))})
    rows.append({"variant": "article: 5 streams (pageable, shared output buffer)",
                 "timing": "CUDA events, warmed up",
                 "ms": _events_ms(lambda: article_five_streams(fresh, x, y)),
                 "wrong_elements": wrong(article_five_streams(fresh, x, y))})
    px, py = pinned_copy(x), pinned_copy(y)
    pout = cuda.pinned_array(ARTICLE_N, dtype=np.float64)
    covered = ARTICLE_N // ARTICLE_STREAMS * ARTICLE_STREAMS
    for order, breadth in (("depth-first", False), ("breadth-first", True)):
        worst = 0
        ms = _events_ms(lambda b=breadth: shared_buffer_pipeline(px, py, pout, breadth_first=b))
        for _ in range(5):  # a race: count the worst of several tries
            pout[:] = np.nan
            shared_buffer_pipeline(px, py, pout, breadth_first=breadth)
            worst = max(worst, wrong(pout, covered))
        rows.append({"variant": f"5 streams, pinned, shared output buffer, {order} issue",
                     "timing": "CUDA events, warmed up", "ms": ms, "wrong_elements": worst})
    pout[:] = np.nan
    ms = _events_ms(lambda: fixed_five_streams(px, py, pout))
    pout[:] = np.nan
    rows.append({"variant": "5 streams, pinned, one output slice per segment (fixed)",
                 "timing": "CUDA events, warmed up", "ms": ms,
                 "wrong_elements": wrong(fixed_five_streams(px, py, pout))})
    for r_ in rows:
        if r_["timing"].startswith("CUDA events"):
            progress(f"{r_['variant']}: {r_['ms']:.1f} ms, {r_['wrong_elements']} wrong")
    return rows


def _article_row(article, variant: str, timing: str) -> dict:
    rows = [r for r in article.rows
            if r["variant"].startswith(variant) and r["timing"].startswith(timing)]
    if len(rows) != 1:
        raise ValueError(f"article: expected one row of {variant!r} timed {timing!r} in "
                         f"{article.name}, found {len(rows)}. Pass the streams_article result.")
    return rows[0]


def article_summary(article) -> dict:
    """What the ``streams_article`` rows say, in numbers the chapter prints.

    ``context_ms``: the new process's first region less the same first call in a process
    whose CUDA context exists (both compile the kernel and copy the data); None where the
    new-process run is missing from ``article``."""
    _check_res(article, "variant", "timing", "ms")
    five = "article: 5 streams"
    fresh = [r for r in article.rows if r["timing"].startswith("wall clock, new process")
             and r["variant"].startswith("article: default stream")]
    out = {
        # None where the new process could not run (the experiment reports and goes on)
        "new_process_ms": fresh[0]["ms"] if len(fresh) == 1 else None,
        "warm_first_call_ms": _article_row(article, "article: default stream",
                                           "wall clock, first call")["ms"],
        "default_events_ms": _article_row(article, "article: default stream", "CUDA events")["ms"],
        "five_events_ms": _article_row(article, five, "CUDA events")["ms"],
        "fixed_pinned_ms": _article_row(article, "5 streams, pinned, one output slice",
                                        "CUDA events")["ms"],
    }
    out["context_ms"] = (None if out["new_process_ms"] is None
                         else out["new_process_ms"] - out["warm_first_call_ms"])
    return out


def show_article_summary(article) -> None:
    """Print :func:`article_summary` as the chapter reads it."""
    s = article_summary(article)
    if s["context_ms"] is None:
        print("The run in a new process is missing from this result, so the CUDA context's "
              f"cost cannot be separated; the first call in this process, compiling the "
              f"kernel, took {s['warm_first_call_ms']:.0f} ms.")
    else:
        print(f"New process, first region: {s['new_process_ms']:.0f} ms; the same first call "
              f"in a process whose CUDA context already exists: {s['warm_first_call_ms']:.0f} "
              f"ms. The difference, about {s['context_ms']:.0f} ms, is what a new process's first "
              f"CUDA work costs besides compiling this kernel (the context, the JIT's start, the "
              f"first copy), not separated further here.")
    print(f"Timed with events after a warm-up ({article.gpu}): default stream "
          f"{s['default_events_ms']:.1f} ms, five streams {s['five_events_ms']:.1f} ms "
          f"({100 * s['five_events_ms'] / s['default_events_ms']:.0f}% of the default stream's "
          f"time); fixed, pinned, five streams "
          f"{s['fixed_pinned_ms']:.2f} ms ({s['five_events_ms'] / s['fixed_pinned_ms']:.1f}x "
          f"faster than the article's five streams), its pinned buffers allocated and filled "
          f"before the timing, as in a loop that reuses them.")


EXPLORE_N = 2**24
EXPLORE_STREAMS = (1, 2, 4, 8)
EXPLORE_CHUNKS = (1, 2, 4, 8, 16, 32)
EXPLORE_ITERS = (0, 256, 1024, 4096)


def explore_measure(n_streams: int, n_chunks: int, iters: int, *, n: int = EXPLORE_N) -> dict:
    """Total time, serial time, ideal and overlap of one configuration (GPU only)."""
    validate.positive_int(n_streams, "n_streams", maximum=64)
    validate.positive_int(n_chunks, "n_chunks")
    validate.positive_int(iters, "iters", minimum=0, maximum=2**24)
    validate.positive_int(n, "n")
    a, b, out, buffers = _explore_inputs(n)
    serial_run = _explore_run(n, iters, 1, 1)
    staged = _explore_run(n, iters, 1, n_chunks)
    st = staged.stage_times()
    run = Pipeline(n, iters=iters, n_streams=n_streams, n_chunks=n_chunks,
                   buffers=buffers).time(a, b, out, repeats=3)
    ideal = ideal_ms(st["h2d"], st["kernel"], st["d2h"], n_streams)
    busy = sum(s["end_ms"] - s["start_ms"] for s in staged.spans)
    return {"flop_per_byte": arithmetic_intensity(iters), "total_ms": run.total_ms,
            "serial_ms": serial_run.total_ms, "ideal_ms": ideal,
            "speedup": serial_run.total_ms / run.total_ms,
            # overlap: the share of the stage time hidden under other stages
            "overlap": max(0.0, 1 - run.total_ms / busy) if busy else 0.0,
            "pct_of_ideal": 100 * ideal / run.total_ms}


@functools.lru_cache(maxsize=1, typed=True)
def _explore_inputs(n):
    a, b, out = _host_inputs(n)
    return a, b, out, [cuda.device_array(n, dtype=np.float32) for _ in range(3)]


@functools.lru_cache(maxsize=64, typed=True)
def _explore_run(n, iters, n_streams, n_chunks) -> Run:
    """Serial and one-stream runs, measured once per sweep (they do not depend on streams)."""
    a, b, out, buffers = _explore_inputs(n)
    return Pipeline(n, iters=iters, n_streams=n_streams, n_chunks=n_chunks,
                    buffers=buffers).time(a, b, out, repeats=3)


@experiment("streams_explore", chapter="streams",
            title="Streams x chunks x arithmetic intensity, 2^24 float32",
            units={"total_ms": "ms", "serial_ms": "ms", "ideal_ms": "ms",
                   "pct_of_ideal": "% of ideal"})
def explore_experiment(progress):
    return bench.sweep(explore_measure, {"iters": list(EXPLORE_ITERS),
                                         "n_streams": list(EXPLORE_STREAMS),
                                         "n_chunks": list(EXPLORE_CHUNKS)},
                       label="pipeline", progress=progress)


CHUNKING_N = 2**24  # 64 MiB per float32 array
CHUNKING_STREAMS = 4
CHUNKING_CHUNKS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
CHUNKING_ISSUES = {"numba": "Numba's copies and launches",
                   "driver": "one driver call per copy and per kernel"}


@experiment("streams_chunking", chapter="streams",
            title="How many chunks? The memory-bound pipeline (2^24 float32, 4 streams), "
                  "issued through Numba and through the driver directly",
            units={"total_ms": "ms", "issue_ms": "ms", "ideal_ms": "ms", "bound_ms": "ms",
                   "issue_us_per_chunk": "µs"})
def chunking_experiment(progress):
    """The memory-bound pipeline (the add) over ``CHUNKING_N`` float32 on 4 streams, for
    each chunk count of ``CHUNKING_CHUNKS``, issued two ways (``issue``): through Numba
    (``copy_to_device``, ``copy_to_host``, ``kernel[grid, block, stream]``) and with one
    driver call per copy and per kernel (``IssuePipeline(..., issue="driver")``).
    ``total_ms``: the median of 7 runs; ``issue_ms``: the host's time to issue one run
    (the median over those runs); ``ideal_ms``: the
    ideal pipeline from stage times measured chunk by chunk on one stream, issued through
    the driver (the GPU's own time per stage), and ``h2d_ms``, ``kernel_ms``, ``d2h_ms``,
    each stage's total from them; ``bound_ms``: the busiest engine's total from those stage
    times; ``serial_ms``: one copy in, one kernel, one copy out."""
    n = CHUNKING_N
    a, b, out = _host_inputs(n)
    buffers = [cuda.device_array(n, dtype=np.float32) for _ in range(3)]
    serial_run = Pipeline(n, n_streams=1, n_chunks=1, buffers=buffers).time(a, b, out,
                                                                           repeats=7)
    rows = []
    for n_chunks in CHUNKING_CHUNKS:
        staged = IssuePipeline(n, n_streams=1, n_chunks=n_chunks, buffers=buffers,
                               issue="driver").time(a, b, out, repeats=3)
        st = staged.stage_times()
        ideal = ideal_ms(st["h2d"], st["kernel"], st["d2h"], CHUNKING_STREAMS)
        bound = overlap_bound_ms(st["h2d"], st["kernel"], st["d2h"])
        for issue, words in CHUNKING_ISSUES.items():
            pipe = IssuePipeline(n, n_streams=CHUNKING_STREAMS, n_chunks=n_chunks,
                                 buffers=buffers, issue=issue)
            out[:] = np.nan
            run = pipe.time(a, b, out, repeats=7)
            issue_ms = pipe.timed_issue_ms(repeats=7)
            _check_result(out, a, b, 0, f"{n_chunks} chunks, issued by {issue}")
            rows.append({"issue": issue, "how": words, "n_chunks": n_chunks,
                         "n_streams": CHUNKING_STREAMS, "total_ms": run.total_ms,
                         "issue_ms": issue_ms,
                         "issue_us_per_chunk": 1e3 * issue_ms / n_chunks,
                         "ideal_ms": ideal, "bound_ms": bound,
                         "h2d_ms": sum(st["h2d"]), "kernel_ms": sum(st["kernel"]),
                         "d2h_ms": sum(st["d2h"]),
                         "serial_ms": serial_run.total_ms, "spread": _spread(run.times_ms),
                         "driver_path": pipe.driver_path})
            progress(f"{n_chunks:4d} chunks, {issue}: {run.total_ms:.2f} ms (host issues in "
                     f"{issue_ms:.2f} ms; ideal {ideal:.2f} ms, bound {bound:.2f} ms)")
    return rows


def chunking_summary(res) -> dict:
    """The ``streams_chunking`` rows as the chapter reads them, per ``issue`` (``"numba"``,
    ``"driver"``): ``best`` (the row of the fastest chunk count), ``most`` (the row of the
    most chunks), ``us_per_chunk`` (the host's issue time per chunk, median over the chunk
    counts of 16 and more, where the fixed part of a run is small), and ``host_bound_from``
    (the fewest chunks from which on every run took no less than the host took to issue it,
    within 5%; None if the most chunks' run did not); and ``bound_ms`` (the busiest
    engine's total at one chunk) and ``serial_ms``."""
    _check_res(res, "issue", "n_chunks", "total_ms", "issue_ms", "ideal_ms", "bound_ms",
               "serial_ms")
    out = {}
    for issue in ("numba", "driver"):
        rows = sorted(res.select(issue=issue), key=lambda r: r["n_chunks"])
        if not rows:
            raise ValueError(f"res has no rows issued by {issue!r}; pass the streams_chunking "
                             "result.")
        many = [1e3 * r["issue_ms"] / r["n_chunks"] for r in rows if r["n_chunks"] >= 16]
        bound = [r["total_ms"] <= 1.05 * r["issue_ms"] for r in rows]
        bound_from = next((r["n_chunks"] for i, r in enumerate(rows) if all(bound[i:])), None)
        out[issue] = {"best": min(rows, key=lambda r: r["total_ms"]), "most": rows[-1],
                      "us_per_chunk": float(np.median(many)) if many else None,
                      "host_bound_from": bound_from}
    one = min(res.rows, key=lambda r: r["n_chunks"])
    out["bound_ms"], out["serial_ms"] = one["bound_ms"], one["serial_ms"]
    return out
