"""The chunked pipeline: ``Pipeline``, ``pipelined`` and ``serial``.

``pipelined(a, b, out, iters=, n_streams=, n_chunks=)``: the chunked pipeline, correct
for every size (chunks differ by at most one element). ``serial(...)``: the same work
as one copy in, one kernel, one copy out. ``Pipeline``: the reusable object both use;
``Pipeline.time`` measures it with CUDA events recorded in every stream (GPU only).
Host arrays follow the pinned memory rule of ``pinned.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import cuda

from gpuperf import bench, validate

from .kernels import KINDS, launch_chunk, plan_chunks
from .pinned import PAGEABLE_POLICIES, _check_host


def _check_res(res, *columns):
    validate.result(res, "res")
    for c in columns:
        validate.column(res, c, "res column")
    return res


@dataclass
class Run:
    """A measured pipeline: the total (median of repeats) and the spans of one more run."""

    n: int
    iters: int
    n_streams: int
    n_chunks: int
    total_ms: float
    times_ms: list[float] = field(repr=False)
    spans: list[dict] = field(repr=False)
    spans_total_ms: float | None = None  # the instrumented run the spans come from

    def __post_init__(self):
        validate.positive_int(self.n, "n")
        validate.positive_int(self.iters, "iters", minimum=0)
        validate.positive_int(self.n_streams, "n_streams")
        validate.positive_int(self.n_chunks, "n_chunks")
        validate.nonnegative(self.total_ms, "total_ms")
        for i, t in enumerate(validate.sequence(self.times_ms, "times_ms")):
            validate.nonnegative(t, f"times_ms[{i}]")
        for i, s in enumerate(validate.sequence(self.spans, "spans", empty=True)):
            if not isinstance(s, dict) or not {"kind", "chunk", "start_ms", "end_ms"} <= set(s):
                raise TypeError(f"spans[{i}] must be a dict with kind, chunk, start_ms, end_ms.")

    def stage_times(self) -> dict[str, list[float]]:
        """Per-chunk duration of each stage, from the spans (exact when one stream ran)."""
        out = {k: [0.0] * self.n_chunks for k in KINDS}
        for s in self.spans:
            out[s["kind"]][s["chunk"]] = s["end_ms"] - s["start_ms"]
        return out


class Pipeline:
    """Device buffers, streams and a chunk plan for ``n`` float32 elements, reusable.

    ``run(a, b, out)`` enqueues, for each chunk, the copies of ``a`` and ``b`` in, the
    kernel and the copy of ``out`` back, all in that chunk's stream, then waits. Each
    chunk has its own slice of the device buffers, so no stream ever overwrites data
    another stream still needs.
    """

    def __init__(self, n: int, *, iters: int = 0, n_streams: int = 4, n_chunks: int = 16,
                 block: int = 256, buffers=None):
        validate.positive_int(n_streams, "n_streams", maximum=64)
        validate.positive_int(n_chunks, "n_chunks")
        self.n = validate.positive_int(n, "n")
        self.iters = validate.positive_int(iters, "iters", minimum=0, maximum=2**24)
        self.block = validate.block_size(block, multiple_of=32)
        self.chunks = plan_chunks(self.n, n_chunks, n_streams)
        self.n_streams = min(n_streams, len(self.chunks))
        self.streams = [cuda.stream() for _ in range(self.n_streams)]
        # buffers: three float32 device arrays of n elements to reuse (pipelines that
        # never run at the same time may share them); allocated when None.
        if buffers is None:
            buffers = [cuda.device_array(self.n, dtype=np.float32) for _ in range(3)]
        if len(buffers) != 3 or any(getattr(d, "size", -1) != self.n for d in buffers):
            raise ValueError(f"buffers must be three device arrays of {self.n} float32.")
        self.d_a, self.d_b, self.d_out = buffers
        # Host time per chunk is the pipeline's hidden cost: Numba's host work per copy is
        # many times the driver's (streams_copy_overhead), and each slice of a device array
        # and each launch cost host time too. Slice once here, so that a run only issues
        # copies, launches and events.
        self._views = [(c, self.streams[c.stream], slice(c.lo, c.hi), self.d_a[c.lo:c.hi],
                        self.d_b[c.lo:c.hi], self.d_out[c.lo:c.hi]) for c in self.chunks]
        self._events = None

    def _arrays(self, a, b, out, pageable):
        a = validate.array(a, name="a")
        b = validate.array(b, name="b")
        for name, arr in (("a", a), ("b", b)):
            if not isinstance(arr, np.ndarray):
                raise TypeError(f"{name} is already a device array: there is nothing to copy, "
                                "so there is nothing to overlap. Pass host (NumPy) arrays, "
                                "ideally from cuda.pinned_array.")
        validate.same_shape(a, b, ("a", "b"))
        if a.size != self.n:
            raise ValueError(f"this Pipeline was built for {self.n} elements, but a has "
                             f"{a.size}. Build one with Pipeline({a.size}, ...).")
        if out is None:
            out = cuda.pinned_array(self.n, dtype=np.float32)
        out = validate.array(out, name="out", writes=True)
        if not isinstance(out, np.ndarray):
            raise TypeError("out must be a host (NumPy) array, ideally from cuda.pinned_array.")
        validate.same_shape(a, out, ("a", "out"))
        _check_host({"a": a, "b": b, "out": out}, pageable)
        return a, b, out

    def _enqueue(self, a, b, out, marks: list | None) -> None:
        """Issue every chunk; with ``marks``, bracket each operation with events."""
        if marks is not None and self._events is None:
            # Four events per chunk, recorded in its stream: each operation's span runs
            # from the event before it to the event after it. Made once, reused per run.
            self._events = [[cuda.event() for _ in range(4)] for _ in self.chunks]
        for c, s, sl, da, db, dout in self._views:
            ev = self._events[c.index] if marks is not None else None
            if ev:
                ev[0].record(s)
            da.copy_to_device(a[sl], stream=s)
            db.copy_to_device(b[sl], stream=s)
            if ev:
                ev[1].record(s)
            launch_chunk(da, db, dout, self.iters, self.block, s)
            if ev:
                ev[2].record(s)
            dout.copy_to_host(out[sl], stream=s)
            if ev:
                ev[3].record(s)
                marks.append((c, ev))

    def run(self, a, b, out=None, *, pageable: str = "warn"):
        """Compute ``out`` from host arrays ``a`` and ``b``; return ``out`` (pinned if new)."""
        validate.choice(pageable, "pageable", PAGEABLE_POLICIES)
        a, b, out = self._arrays(a, b, out, pageable)
        self._enqueue(a, b, out, None)
        cuda.synchronize()
        return out

    def time(self, a, b, out=None, *, pageable: str = "warn", repeats: int = 5,
             warmup: int = 1) -> Run:
        """Measure the pipeline (GPU only): the median total of ``repeats`` runs, and spans.

        A reference event on the legacy default stream opens each run; the legacy
        default stream waits for every stream before it runs, so an event recorded
        on it after the work closes the run. The totals come from plain runs; the
        spans from one more run with an event before and after every operation
        (recorded in that operation's stream, read relative to the reference event).
        """
        validate.choice(pageable, "pageable", PAGEABLE_POLICIES)
        validate.positive_int(repeats, "repeats")
        validate.positive_int(warmup, "warmup", minimum=0)
        bench.require_gpu("Pipeline.time")
        a, b, out = self._arrays(a, b, out, pageable)
        legacy = cuda.legacy_default_stream()
        start, end = cuda.event(), cuda.event()

        def one_run(marks):
            start.record(legacy)
            self._enqueue(a, b, out, marks)
            end.record(legacy)
            end.synchronize()
            return start.elapsed_time(end)

        for _ in range(max(warmup, 1)):
            one_run([])  # also creates the span events
        times = [one_run(None) for _ in range(validate.positive_int(repeats, "repeats"))]
        marks: list = []
        spans_total = one_run(marks)
        spans = []
        for c, ev in marks:
            t = [start.elapsed_time(e) for e in ev]
            for k, kind in enumerate(KINDS):
                spans.append({"stream": c.stream, "kind": kind, "start_ms": t[k],
                              "end_ms": t[k + 1], "label": f"{kind} {c.index}",
                              "chunk": c.index})
        return Run(self.n, self.iters, self.n_streams, len(self.chunks),
                   float(np.median(times)), times, spans, spans_total)


def pipelined(a, b, out=None, *, iters: int = 0, n_streams: int = 4, n_chunks: int = 16,
              block: int = 256, pageable: str = "warn"):
    """``out = a + b`` (``iters=0``) or the relaxation, chunked and overlapped over streams.

    ``a``, ``b`` and ``out`` are float32 host arrays, pinned (see the pinned memory
    rule in ``pinned.py`` for ``pageable``). ``out`` is allocated pinned when None. Returns ``out``.
    """
    validate.positive_int(iters, "iters", minimum=0, maximum=2**24)
    validate.positive_int(n_streams, "n_streams", maximum=64)
    validate.positive_int(n_chunks, "n_chunks")
    validate.block_size(block, multiple_of=32)
    validate.choice(pageable, "pageable", PAGEABLE_POLICIES)
    a = validate.array(a, name="a")
    return Pipeline(a.size, iters=iters, n_streams=n_streams, n_chunks=n_chunks,
                    block=block).run(a, b, out, pageable=pageable)


def serial(a, b, out=None, *, iters: int = 0, block: int = 256):
    """The same work without overlap: one copy in, one kernel, one copy out, one stream."""
    validate.positive_int(iters, "iters", minimum=0, maximum=2**24)
    validate.block_size(block, multiple_of=32)
    a = validate.array(a, name="a")
    return Pipeline(a.size, iters=iters, n_streams=1, n_chunks=1,
                    block=block).run(a, b, out, pageable="allow")
