"""The chunked pipeline: ``Pipeline``, ``pipelined`` and ``serial``.

``pipelined(a, b, out, iters=, n_streams=, n_chunks=)``: the chunked pipeline, correct
for every size (chunks differ by at most one element). ``serial(...)``: the same work
as one copy in, one kernel, one copy out. ``Pipeline``: the reusable object both use;
``Pipeline.time`` measures it with CUDA events recorded in every stream (GPU only).
Host arrays follow the pinned memory rule of ``pinned.py``.

``Pipeline(..., issue="driver")`` issues the same copies and kernels with a cheap path to
the driver: each copy one ``cuMemcpyHtoDAsync`` / ``cuMemcpyDtoHAsync`` call with addresses
worked out once, each kernel a ``launch.PackedLaunch`` (one ``cuLaunchKernel``). Numba's
``copy_to_device`` spends many times the driver's host time on each copy
(``streams_copy_overhead``); the ``streams_chunking`` experiment compares the two paths.
Under the simulator (no driver) it issues through Numba.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from numba import cuda

from gpuperf import bench, validate

from .kernels import KINDS, _launch, add_kernel, launch_chunk, plan_chunks, relax_kernel
from .pinned import PAGEABLE_POLICIES, _check_host

ISSUES = ("numba", "driver")  # how a Pipeline issues its copies and kernels


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
    issue_ms: float | None = None  # the host's time to issue one run (median of the runs)

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
                 block: int = 256, buffers=None, issue: str = "numba"):
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
        # issue="driver": one driver call per copy and per kernel (None: through Numba).
        self.issue = validate.choice(issue, "issue", ISSUES)
        self._driver = self._driver_calls() if issue == "driver" else None

    def _driver_calls(self):
        """Per chunk: its stream as the driver sees it, the device addresses of its three
        slices, their byte count and its packed kernel launch; None where there is no driver
        (the simulator), so that runs issue through Numba."""
        from .launch import NotPackable, PackedLaunch, _binding

        try:
            b = _binding()
            calls = []
            for c, s, _, da, db, dout in self._views:
                grid, block = _launch(self.iters, self.block, dout.size)
                args = (da, db, dout) if self.iters == 0 else (da, db, dout, self.iters)
                kernel = add_kernel if self.iters == 0 else relax_kernel
                handle = s.handle
                calls.append((b.CUstream(int(getattr(handle, "value", handle) or 0)),
                              *(int(d.__cuda_array_interface__["data"][0])
                                for d in (da, db, dout)),
                              4 * (c.hi - c.lo), 4 * c.lo,
                              PackedLaunch(kernel, grid, block, *args, stream=s)))
        except (NotPackable, ImportError, AttributeError):
            return None
        return b, calls

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
        if self._driver is not None:
            return self._enqueue_driver(a, b, out, marks)
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

    def _enqueue_driver(self, a, b, out, marks: list | None) -> None:
        """``_enqueue`` with one driver call per copy and per kernel."""
        for name, arr in (("a", a), ("b", b), ("out", out)):
            if arr.dtype != np.float32 or not arr.flags.c_contiguous:
                raise ValueError(f"issue='driver' copies raw bytes: {name} must be a contiguous "
                                 f"float32 array (it is {arr.dtype}, "
                                 f"{'' if arr.flags.c_contiguous else 'not '}contiguous).")
        drv, calls = self._driver
        ok = drv.CUresult.CUDA_SUCCESS
        ha, hb, hout = a.ctypes.data, b.ctypes.data, out.ctypes.data
        for (c, s, *_), (cs, pa, pb, pout, nbytes, offset, kernel) in zip(self._views, calls):
            ev = self._events[c.index] if marks is not None else None
            if ev:
                ev[0].record(s)
            err1, = drv.cuMemcpyHtoDAsync(pa, ha + offset, nbytes, cs)
            err2, = drv.cuMemcpyHtoDAsync(pb, hb + offset, nbytes, cs)
            if ev:
                ev[1].record(s)
            kernel()
            if ev:
                ev[2].record(s)
            err3, = drv.cuMemcpyDtoHAsync(hout + offset, pout, nbytes, cs)
            if ev:
                ev[3].record(s)
                marks.append((c, ev))
            if not err1 == err2 == err3 == ok:
                raise RuntimeError(f"a driver copy of chunk {c.index} failed: "
                                   f"{err1}, {err2}, {err3}")

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
        issued = []

        def one_run(marks):
            start.record(legacy)
            t = time.perf_counter()
            self._enqueue(a, b, out, marks)
            issued.append(1e3 * (time.perf_counter() - t))
            end.record(legacy)
            end.synchronize()
            return start.elapsed_time(end)

        for _ in range(max(warmup, 1)):
            one_run([])  # also creates the span events
        issued.clear()
        times = [one_run(None) for _ in range(validate.positive_int(repeats, "repeats"))]
        issue_ms = float(np.median(issued))
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
                   float(np.median(times)), times, spans, spans_total, issue_ms)


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
