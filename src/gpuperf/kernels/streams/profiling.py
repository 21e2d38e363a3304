"""Chapter 7's timeline from the GPU's own records: CUPTI's activity records of a pipeline run
(through ``gpuperf.nsight.cupti_ops``), matched with the CUDA events the course times with;
replayed from the record elsewhere."""

from __future__ import annotations

from gpuperf import records, validate
from gpuperf.nsight import cupti_ops, overlap_ms, union_ms

from .experiments import N_PIPE, TIMELINE_CHUNKS, TIMELINE_STREAMS, _check_result, _host_inputs, _works
from .pipeline import Pipeline

PIPELINE_OPS = ("h2d", "h2d", "kernel", "d2h")  # what Pipeline._enqueue issues per chunk


def match_pipeline_run(ops, spans) -> list[dict]:
    """Pair the CUPTI records of a ``streams.Pipeline`` run with the CUDA-event spans of that
    run (``Run.spans``): one row per chunk and stage (the spans' ``kind``: "h2d" covers both
    copies in), with the event span (``event_start_ms``, ``event_end_ms``) and what CUPTI saw:
    ``gpu_start_ms``, ``gpu_end_ms`` (first start and last end of the stage's operations) and
    ``gpu_busy_ms`` (the sum of their durations). The run is the last ``4 x chunks``
    operations of ``ops``; its chunks are matched in the order they were issued.

    The two clocks differ by an unknown offset. Every operation runs between the event
    recorded before it and the one after it in its stream, which bounds the offset from both
    sides; the offset used is the one that ends the stages as late as their events allow
    (an event recorded behind a running operation completes as soon as it ends), and
    ``clock_slack_ms`` is the width of the allowed range. Raises ValueError where no offset
    puts every operation inside its events (records of another run), or the operations do not
    follow the pipeline's pattern (two copies in, a kernel and a copy out per chunk, all in
    one stream)."""
    ops = [o for o in validate.sequence(ops, "ops", empty=True) if o.get("kind") != "memset"]
    spans = list(validate.sequence(spans, "spans"))
    chunks = sorted({s["chunk"] for s in spans})
    if chunks != list(range(len(chunks))):
        raise ValueError("spans must number their chunks 0, 1, 2, ...: give Run.spans.")
    per = len(PIPELINE_OPS)
    if len(ops) < per * len(chunks):
        raise ValueError(f"ops holds {len(ops)} GPU operations; a run of {len(chunks)} chunks "
                         f"issues {per * len(chunks)}: was the whole run profiled?")
    run = ops[-per * len(chunks):]
    base = run[0]["start_us"]  # CUPTI's clock is absolute: subtract first, keep the nanoseconds
    by_span = {(s["chunk"], s["kind"]): s for s in spans}
    rows = []
    for c in chunks:
        mine = run[per * c: per * (c + 1)]
        kinds = tuple(o["kind"] for o in mine)
        if kinds != PIPELINE_OPS:
            raise ValueError(f"chunk {c}'s operations are {kinds}, not {PIPELINE_OPS}: these "
                             "records are not a Pipeline run's.")
        if len({o["stream"] for o in mine}) != 1:
            raise ValueError(f"chunk {c}'s operations ran in several streams: these records "
                             "are not a Pipeline run's.")
        for kind in ("h2d", "kernel", "d2h"):
            stage = [o for o in mine if o["kind"] == kind]
            span = by_span[(c, kind)]
            rows.append({
                "chunk": c, "stream": span["stream"], "kind": kind,
                "event_start_ms": span["start_ms"], "event_end_ms": span["end_ms"],
                "gpu_start_ms": (stage[0]["start_us"] - base) / 1000,
                "gpu_end_ms": (max(o["end_us"] for o in stage) - base) / 1000,
                "gpu_busy_ms": sum(o["end_us"] - o["start_us"] for o in stage) / 1000,
            })
    latest = min(r["event_end_ms"] - r["gpu_end_ms"] for r in rows)
    earliest = max(r["event_start_ms"] - r["gpu_start_ms"] for r in rows)
    slack = latest - earliest
    if slack < -0.005:  # a few microseconds: the events' own resolution
        raise ValueError(f"no clock offset puts every operation inside its events (they miss "
                         f"by {-slack:.3f} ms): ops and spans are not records of the same run.")
    for r in rows:
        r["gpu_start_ms"] += latest
        r["gpu_end_ms"] += latest
        r["clock_slack_ms"] = max(slack, 0.0)
    return rows


@records.experiment(
    "profiling_streams_timeline", chapter="profiling",
    title="The pipelined run's copies and kernels as the GPU reported them (CUPTI, through "
          "PyTorch's profiler) against the CUDA events around them",
    units={"event_start_ms": "ms", "event_end_ms": "ms", "gpu_start_ms": "ms",
           "gpu_end_ms": "ms", "gpu_busy_ms": "ms", "events_total_ms": "ms",
           "clock_slack_ms": "ms"})
def streams_timeline_experiment(progress) -> list[dict]:
    """The chapter's pipelined run (``streams_timeline``'s: 2^25 float32, 8 chunks, 4 streams,
    pinned memory), memory-bound and compute-bound, timed as ``Pipeline.time`` times it
    while CUPTI records every copy and kernel: each stage's event span beside the GPU's own
    start, end and busy time."""

    a, b, out = _host_inputs(N_PIPE)
    rows = []
    for work, iters in _works():
        pipe = Pipeline(N_PIPE, iters=iters, n_streams=TIMELINE_STREAMS,
                           n_chunks=TIMELINE_CHUNKS)
        pipe.time(a, b, out, repeats=1)  # compiled, events made: outside the profile
        runs = []

        def timed(pipe=pipe, runs=runs):
            runs.append(pipe.time(a, b, out, repeats=1))

        ops = cupti_ops(timed)
        _check_result(out, a, b, iters, f"CUPTI timeline {work}")
        run = runs[0]
        for r in match_pipeline_run(ops, run.spans):
            rows.append({"work": work, "iters": iters, "n_streams": pipe.n_streams,
                         "n_chunks": len(pipe.chunks), **r,
                         "events_total_ms": run.spans_total_ms})
        progress(f"{work}: {len(ops)} GPU operations recorded; the events' run took "
                 f"{run.spans_total_ms:.2f} ms")
    return rows


def cupti_timeline_summary(res) -> list[dict]:
    """Per work and stage of ``profiling_streams_timeline``: the sum of the event spans, the
    GPU's busy time (CUPTI), the time the stage was in flight counting overlaps once, by the
    events and by the GPU, and the time two or more of its operations ran at once on the GPU;
    one more row per work (``kind`` "run") with the makespans: the events' run total and the
    GPU's first start to last end."""
    rows = _rows_of(res, "profiling_streams_timeline", ("work", "kind", "gpu_busy_ms"))
    out = []
    for work in dict.fromkeys(r["work"] for r in rows):
        mine = [r for r in rows if r["work"] == work]
        for kind in ("h2d", "kernel", "d2h"):
            stage = [r for r in mine if r["kind"] == kind]
            ev = [(r["event_start_ms"], r["event_end_ms"]) for r in stage]
            gpu = [(r["gpu_start_ms"], r["gpu_end_ms"]) for r in stage]
            out.append({"work": work, "kind": kind,
                        "events_sum_ms": sum(b - a for a, b in ev),
                        "gpu_busy_ms": sum(r["gpu_busy_ms"] for r in stage),
                        "events_in_flight_ms": union_ms(ev),
                        "gpu_in_flight_ms": union_ms(gpu),
                        "gpu_overlap_ms": overlap_ms(gpu)})
        out.append({"work": work, "kind": "run", "events_total_ms": mine[0]["events_total_ms"],
                    "gpu_total_ms": max(r["gpu_end_ms"] for r in mine)
                    - min(r["gpu_start_ms"] for r in mine)})
    return out


def _rows_of(res, name: str, columns) -> list[dict]:
    """The rows of a Result of experiment ``name``, checked for ``columns``."""
    rows = getattr(res, "rows", None)
    if getattr(res, "name", None) != name or rows is None:
        raise TypeError(f"res must be the result of {name} (gp.records.run({name!r})), not "
                        f"{type(res).__name__}.")
    if not rows or any(c not in rows[0] for c in columns):
        raise ValueError(f"res has no rows with the columns {list(columns)}.")
    return rows


_STAGE_NAMES = {"h2d": "copies in", "kernel": "kernels", "d2h": "copies out"}


def show_cupti_timeline(res) -> dict:
    """Show :func:`cupti_timeline_summary` as a table (one row per work and stage) with the
    makespans under it; return {work: {"events_total_ms", "gpu_total_ms", stage: row}} for
    the prose around it."""
    summary = cupti_timeline_summary(res)
    table, by_work, notes = [], {}, []
    for r in summary:
        mine = by_work.setdefault(r["work"], {})
        if r["kind"] == "run":
            mine.update(events_total_ms=r["events_total_ms"], gpu_total_ms=r["gpu_total_ms"])
            notes.append(f"{records.value_words('work', r['work'])}: the run took "
                         f"{r['events_total_ms']:.2f} ms between its "
                         f"events, and {r['gpu_total_ms']:.2f} ms from the GPU's first start "
                         "to its last end.")
            continue
        mine[r["kind"]] = r
        table.append({"work": r["work"].split(" (")[0], "stage": _STAGE_NAMES[r["kind"]],
                      "event_spans_summed": r["events_sum_ms"], "gpu_busy": r["gpu_busy_ms"],
                      "in_flight_by_events": r["events_in_flight_ms"],
                      "in_flight_on_gpu": r["gpu_in_flight_ms"],
                      "two_or_more_at_once_on_gpu": r["gpu_overlap_ms"]})
    n = res.rows[0]
    print(f"On {res.gpu}: the pipelined run ({n['n_chunks']} chunks, {n['n_streams']} streams), "
          "each stage's CUDA-event spans against CUPTI's records of the same run, in ms:")
    records.Result("profiling_streams_timeline (summary)", table, res.meta, res.source).show(
        note=" ".join(notes))
    return by_work
