"""Chapter "Streams and copy/compute overlap": pinned memory, streams, and pipelines.

A GPU has separate engines for host-to-device copies, kernels and device-to-host
copies. Work in one CUDA stream runs in order; work in different streams may run at
the same time. Split a problem into chunks, give each chunk its own copy in, kernel
and copy out, spread the chunks round-robin over a few streams, and the three engines
work at once: a pipeline.

Kernels
-------
``add_kernel``: ``out = a + b``, grid-stride (memory-bound: the copies dominate).
``relax_kernel``: ``iters`` steps of ``z = 0.75 z + 0.25 (a + b)`` from ``z = a``, one
fused multiply-add per step (compute-bound for large ``iters``). ``iters`` sets the
arithmetic intensity: about ``2 iters / 12`` FLOP per byte copied.
``article_add``: the Numba article's kernel, one element per thread (kept to reproduce it).

Host code
---------
``pipelined(a, b, out, iters=, n_streams=, n_chunks=)``: the chunked pipeline, correct
for every size (chunks differ by at most one element). ``serial(...)``: the same work
as one copy in, one kernel, one copy out. ``Pipeline``: the reusable object both use;
``Pipeline.time`` measures it with CUDA events recorded in every stream (GPU only).

Pinned memory rule (the same on a GPU and in the simulator)
-----------------------------------------------------------
A copy from pageable memory (an ordinary NumPy array) is staged by the driver through a
pinned buffer of its own: it runs at a fraction of the pinned bandwidth, and its call
holds the host thread until about the whole copy is done, so nothing issued after it (in
any stream, another copy included) starts before it ends; a kernel already running in
another stream does run on beside it. The experiment ``streams_pageable_overlap``
measures each of these. A pipeline over pageable arrays is
therefore slow, not wrong: ``pipelined`` runs it with a ``PageableMemoryWarning`` that
says so (``pageable="warn"``, the default), refuses it with ``pageable="error"``, and
runs it silently with ``pageable="allow"`` (used to measure the slow case on purpose).
Arrays from ``cuda.pinned_array`` / ``cuda.pinned_array_like`` (and views of them) are
pinned. The simulator has no page-locked memory, so importing this module makes the
simulator's ``cuda.pinned_array`` remember the arrays it made; ``is_pinned`` then
answers as a GPU would. In the simulator every stream runs synchronously: results are
right, and nothing overlaps.

Ideal pipeline
--------------
``ideal_schedule(h2d_ms, kernel_ms, d2h_ms, n_streams)`` predicts the best in-order
schedule from measured per-chunk stage times: one engine per stage (two copy engines,
one for each direction), each serving chunks in order, and a stream's next chunk
waiting for its previous chunk's copy back.

Experiments
-----------
``streams_article``: the Numba article's 9.3 s vs 1.4 s, JIT and all; timed properly; its race.
``streams_host_bandwidth``: pageable against pinned copies, both directions.
``streams_pipeline``: speedup over serial against streams, measured and ideal.
``streams_timeline``: every copy and kernel per stream, measured and ideal.
``streams_default_stream``: how a launch on the default stream blocks other streams, and a
stream waiting for another's event.
``streams_sync_calls``: which host calls (allocation, free, pinning, copies) wait for a kernel.
``streams_memory_kinds``: pinned copies against mapped and managed memory.
``streams_explore``: streams x chunks x arithmetic intensity (for the widget).
"""

from __future__ import annotations

import functools
import math
import time
import warnings
import weakref
from dataclasses import dataclass, field

import numpy as np

# gpuperf/__init__ (which picks GPU or simulator) has run before any module of the
# package, so numba.cuda is already in the right mode here.
from numba import cuda

from .. import bench, device, validate
from .. import exercises as ex
from ..mode import SIMULATOR
from ..records import Result, experiment

# --------------------------------------------------------------------------- kernels

RELAX_KEEP = np.float32(0.75)  # exact in binary, so z = t is an exact fixed point
RELAX_PULL = np.float32(0.25)


@cuda.jit
def add_kernel(a, b, out):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < out.size:
        out[i] = a[i] + b[i]
        i += stride


@cuda.jit
def relax_kernel(a, b, out, iters):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < out.size:
        pull = RELAX_PULL * (a[i] + b[i])
        z = a[i]
        for _ in range(iters):
            z = z * RELAX_KEEP + pull  # one fused multiply-add per step
        out[i] = z
        i += stride


@cuda.jit
def article_add(a, b, result, n):
    # The Numba article's kernel: one element per thread, a bounds test for the last block.
    idx = cuda.threadIdx.x + cuda.blockDim.x * cuda.blockIdx.x
    if idx < n:
        result[idx] = a[idx] + b[idx]


PTX_TARGETS = [
    (add_kernel, "void(float32[::1], float32[::1], float32[::1])"),
    (relax_kernel, "void(float32[::1], float32[::1], float32[::1], int64)"),
    (article_add, "void(int32[::1], int32[::1], float64[::1], int64)"),
]

BLOCKS_PER_SM = 8


def reference(a, b, iters: int = 0) -> np.ndarray:
    """The float64 result ``pipelined`` must match: ``a + b``, or the relaxation's closed form.

    After ``k`` steps of ``z = 0.75 z + 0.25 t`` from ``z = a``, ``z = t + 0.75^k (a - t)``
    with ``t = a + b``.
    """
    a = validate.array(a, name="a", dtype=None, ndim=None, contiguous=False)
    b = validate.array(b, name="b", dtype=None, ndim=None, contiguous=False)
    validate.same_shape(a, b, ("a", "b"))
    validate.positive_int(iters, "iters", minimum=0, maximum=2**24)
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    t = a64 + b64
    if iters == 0:
        return t
    return t + 0.75 ** iters * (a64 - t)


def flops_per_element(iters: int) -> int:
    """Floating-point operations per element: the add, then one FMA (2 FLOP) per step."""
    validate.positive_int(iters, "iters", minimum=0, maximum=2**24)
    return 1 if iters == 0 else 2 + 2 * iters


BYTES_PER_ELEMENT = 12  # two float32 inputs copied in, one float32 output copied back


def arithmetic_intensity(iters: int) -> float:
    """FLOP per byte crossing the host link."""
    validate.positive_int(iters, "iters", minimum=0, maximum=2**24)
    return flops_per_element(iters) / BYTES_PER_ELEMENT


def _launch(iters: int, block: int, m: int) -> tuple[int, int]:
    grid = min((m + block - 1) // block, BLOCKS_PER_SM * device.sm_count(default=2))
    return max(grid, 1), block


def launch_chunk(d_a, d_b, d_out, iters: int, block: int, stream=0) -> None:
    """Enqueue the kernel for one chunk (``iters=0``: the add) on ``stream``."""
    validate.integer(iters, "iters", minimum=0)  # cheap: this runs once per chunk
    validate.integer(block, "block", minimum=1, maximum=1024)
    grid, block = _launch(iters, block, d_out.size)
    if iters == 0:
        add_kernel[grid, block, stream](d_a, d_b, d_out)
    else:
        relax_kernel[grid, block, stream](d_a, d_b, d_out, iters)


# --------------------------------------------------------------------------- pinned memory


class PageableMemoryWarning(UserWarning):
    """A pipeline was given pageable host memory: its copies hold the host thread and queue
    behind one another."""


# Simulator only: the arrays the simulator's pinned_array made, by id, with a weak
# reference to confirm the id was not reused. Views of them share their base, so they
# count as pinned too; copies (a + b, np.copy) are new arrays and do not.
_SIM_PINNED: dict[int, weakref.ref] = {}


def _sim_mark(arr: np.ndarray) -> np.ndarray:
    key = id(arr)
    _SIM_PINNED[key] = weakref.ref(arr, lambda _r, k=key: _SIM_PINNED.pop(k, None))
    return arr


def _install_simulated_pinning() -> None:
    """Make the simulator's ``cuda.pinned_array(_like)`` mark the arrays they return.

    The simulator's versions return plain NumPy arrays, indistinguishable from
    pageable ones; the wrappers keep the same behaviour and remember the arrays.
    """
    import numba.cuda as nc

    if getattr(nc.pinned_array, "_gpuperf_marks", False):
        return
    plain, plain_like = nc.pinned_array, nc.pinned_array_like

    @functools.wraps(plain)
    def pinned_array(shape, dtype=np.float64, strides=None, order="C"):
        return _sim_mark(plain(shape, dtype=dtype, strides=strides, order=order))

    @functools.wraps(plain_like)
    def pinned_array_like(ary):
        return _sim_mark(plain_like(ary))

    pinned_array._gpuperf_marks = pinned_array_like._gpuperf_marks = True
    nc.pinned_array, nc.pinned_array_like = pinned_array, pinned_array_like


if SIMULATOR:
    _install_simulated_pinning()


def _owner_chain(x):
    obj = x
    while obj is not None:
        yield obj
        obj = getattr(obj, "base", None)


def is_pinned(x) -> bool:
    """True if the NumPy array ``x`` lives in page-locked (pinned) host memory."""
    if hasattr(x, "copy_to_host"):
        return False  # a device array is not host memory at all
    if not isinstance(x, np.ndarray):
        return False
    if SIMULATOR:
        for obj in _owner_chain(x):
            ref = _SIM_PINNED.get(id(obj))
            if ref is not None and ref() is obj:
                return True
        return False
    from numba.cuda.cudadrv import driver as drv

    pinned_types = tuple(t for t in (getattr(drv, "PinnedMemory", None),
                                     getattr(drv, "MappedMemory", None)) if t is not None)
    if any(isinstance(obj, pinned_types) for obj in _owner_chain(x)):
        return True
    return _driver_says_pinned(x)


def _driver_says_pinned(x: np.ndarray) -> bool:
    """Ask the driver (for memory pinned in place with ``cuda.pinned(...)`` or elsewhere)."""
    if x.size == 0:
        return False
    try:
        from numba.cuda.cudadrv import driver as drv

        binding = drv.binding
        err, _flags = binding.cuMemHostGetFlags(x.ctypes.data)
        return err == binding.CUresult.CUDA_SUCCESS
    except Exception:  # an older driver binding: assume pageable, the safe answer
        return False


PAGEABLE_POLICIES = ("error", "warn", "allow")


def _check_host(arrays: dict, pageable: str) -> None:
    validate.choice(pageable, "pageable", PAGEABLE_POLICIES)
    bad = [name for name, arr in arrays.items() if not is_pinned(arr)]
    if not bad or pageable == "allow":
        return
    names = ", ".join(bad)
    msg = (f"{names} {'is' if len(bad) == 1 else 'are'} in pageable host memory. The driver "
           "stages a pageable copy through a pinned buffer of its own, at a fraction of the "
           "pinned bandwidth, and the copy's call holds the host thread until about the whole "
           "copy is done: nothing issued after it, in any stream, starts before it ends, so "
           "the chunks' copies and kernels queue one behind another (only a kernel already "
           "running in another stream goes on beside a copy). Allocate host arrays with "
           "cuda.pinned_array(n, dtype=np.float32) (or cuda.pinned_array_like(x), then copy "
           "into it)")
    if pageable == "error":
        raise ValueError(msg + ", or pass pageable='warn' to run anyway, slowly.")
    msg += "; pageable='allow' runs without this warning."
    warnings.warn(msg, PageableMemoryWarning, stacklevel=4)


def pinned_copy(x: np.ndarray) -> np.ndarray:
    """A pinned copy of the host array ``x`` (one extra host copy; do it once, up front)."""
    x = validate.array(x, name="x", dtype=None, ndim=None, contiguous=False)
    if not isinstance(x, np.ndarray):
        raise TypeError("x is a device array already; pinned_copy copies host (NumPy) arrays.")
    x = np.ascontiguousarray(x)
    p = cuda.pinned_array_like(x)
    p[...] = x
    return p


# --------------------------------------------------------------------------- the pipeline


@dataclass(frozen=True)
class Chunk:
    index: int
    stream: int
    lo: int
    hi: int

    def __post_init__(self):
        for name in ("index", "stream", "lo", "hi"):
            validate.integer(getattr(self, name), name, minimum=0)
        if self.hi <= self.lo:
            raise ValueError(f"a chunk must hold at least one element: hi={self.hi} <= "
                             f"lo={self.lo}.")

    @property
    def size(self) -> int:
        return self.hi - self.lo


def plan_chunks(n: int, n_chunks: int, n_streams: int) -> list[Chunk]:
    """Split ``n`` elements into ``min(n_chunks, n)`` chunks, round-robin over the streams.

    Chunk sizes differ by at most one (the first ``n % chunks`` get the extra element),
    so no element is dropped when ``n`` does not divide evenly, and no chunk is empty.
    """
    n = validate.positive_int(n, "n")
    n_chunks = min(validate.positive_int(n_chunks, "n_chunks"), n)
    n_streams = validate.positive_int(n_streams, "n_streams", maximum=64)
    base, extra = divmod(n, n_chunks)
    chunks, lo = [], 0
    for i in range(n_chunks):
        hi = lo + base + (1 if i < extra else 0)
        chunks.append(Chunk(i, i % n_streams, lo, hi))
        lo = hi
    return chunks


KINDS = ("h2d", "kernel", "d2h")


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
        out = validate.array(out, name="out")
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
        bench._require_gpu("Pipeline.time")
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

    ``a``, ``b`` and ``out`` are float32 host arrays, pinned (see the module's pinned
    memory rule for ``pageable``). ``out`` is allocated pinned when None. Returns ``out``.
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


# --------------------------------------------------------------------------- the ideal


def _check_res(res, *columns):
    validate.result(res, "res")
    for c in columns:
        validate.column(res, c, "res column")
    return res


def _stage_lists(h2d_ms, kernel_ms, d2h_ms):
    h, k, d = ([validate.nonnegative(t, f"{name}[{i}]")
                for i, t in enumerate(validate.sequence(x, name))]
               for x, name in ((h2d_ms, "h2d_ms"), (kernel_ms, "kernel_ms"), (d2h_ms, "d2h_ms")))
    if not (len(h) == len(k) == len(d)) or not h:
        raise ValueError("h2d_ms, kernel_ms and d2h_ms must be lists of the same, non-zero "
                         f"length (one time per chunk); got {len(h)}, {len(k)}, {len(d)}.")
    if min(h + k + d) < 0:
        raise ValueError("stage times must not be negative.")
    return h, k, d


def ideal_schedule(h2d_ms, kernel_ms, d2h_ms, n_streams: int) -> list[dict]:
    """The ideal in-order pipeline for per-chunk stage times, as timeline spans.

    Three engines (copy in, compute, copy out) each serve the chunks in order; a
    chunk's stage starts when the engine is free and its previous stage is done; and
    chunk ``i`` shares a stream with chunk ``i - n_streams``, so its copy in waits for
    that chunk's copy out. With one stream this is the serial sum; with enough
    streams and equal chunks it is ``h + k + d + (chunks - 1) * max(h, k, d)``.
    """
    h, k, d = _stage_lists(h2d_ms, kernel_ms, d2h_ms)
    n_streams = validate.positive_int(n_streams, "n_streams")
    fin = {kind: [0.0] * len(h) for kind in KINDS}
    spans = []
    for i in range(len(h)):
        stream_free = fin["d2h"][i - n_streams] if i >= n_streams else 0.0
        prev = {kind: (fin[kind][i - 1] if i else 0.0) for kind in KINDS}
        ready = max(prev["h2d"], stream_free)
        for kind, t in zip(KINDS, (h[i], k[i], d[i])):
            start = max(prev[kind], ready)
            fin[kind][i] = start + t
            spans.append({"stream": i % n_streams, "kind": kind, "start_ms": start,
                          "end_ms": start + t, "label": f"{kind} {i}", "chunk": i})
            ready = fin[kind][i]
    return spans


def ideal_ms(h2d_ms, kernel_ms, d2h_ms, n_streams: int) -> float:
    """The makespan of ``ideal_schedule``."""
    _stage_lists(h2d_ms, kernel_ms, d2h_ms)
    return max(s["end_ms"] for s in ideal_schedule(h2d_ms, kernel_ms, d2h_ms, n_streams))


def overlap_bound_ms(h2d_ms, kernel_ms, d2h_ms) -> float:
    """No pipeline beats its busiest engine: ``max(sum h2d, sum kernel, sum d2h)``."""
    h, k, d = _stage_lists(h2d_ms, kernel_ms, d2h_ms)
    return max(sum(h), sum(k), sum(d))


# --------------------------------------------------------------------------- experiments

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
                             "ms": t.median_ms, "gbps": bw, "spread": t.spread})
                progress(f"{memory:8s} {direction} {mib:4d} MiB: {bw:6.1f} GB/s")
    return rows


ARTICLE_N = 20_000_000
ARTICLE_STREAMS = 5


def _article_launch(kernel, da, db, dout, n, stream=0):
    threads = 1024
    blocks = math.ceil(n / threads)
    kernel[blocks, threads, stream](da, db, dout, n)


def article_default_stream(kernel, x, y):
    """The article's first program: copies, one launch and a copy back, all on the default
    stream."""
    n = x.size
    x_device = cuda.to_device(x)
    y_device = cuda.to_device(y)
    out_device = cuda.device_array(n)  # float64, as in the article
    _article_launch(kernel, x_device, y_device, out_device, n)
    result = out_device.copy_to_host()
    cuda.synchronize()
    return result


def article_five_streams(kernel, x, y, n_streams: int = ARTICLE_STREAMS):
    """The article's multi-stream program, bugs included: pageable copies, one shared output
    buffer for all streams, and ``n // n_streams`` per segment (the remainder is dropped)."""
    n = x.size
    segment = n // n_streams
    streams = [cuda.stream() for _ in range(n_streams)]
    shared_out = cuda.device_array(segment)
    result = np.empty(n)
    for i in range(n_streams):
        sl = slice(i * segment, (i + 1) * segment)
        xd = cuda.to_device(x[sl], stream=streams[i])
        yd = cuda.to_device(y[sl], stream=streams[i])
        _article_launch(kernel, xd, yd, shared_out, segment, streams[i])
        result[sl] = shared_out.copy_to_host(stream=streams[i])
    cuda.synchronize()
    return result


def shared_buffer_pipeline(x, y, out, n_streams: int = ARTICLE_STREAMS, *,
                           breadth_first: bool = False):
    """The article's shared output buffer with pinned memory, where streams really overlap.

    ``breadth_first=True`` issues every copy in, then every kernel, then every copy
    back (a common way to write it): then every copy back reads the last kernel's
    result, even in the simulator. Depth-first, the race depends on timing.
    """
    n = x.size
    segment = n // n_streams
    streams = [cuda.stream() for _ in range(n_streams)]
    shared_out = cuda.device_array(segment, dtype=out.dtype)
    ins = []
    for i in range(n_streams):
        sl = slice(i * segment, (i + 1) * segment)
        ins.append((cuda.to_device(x[sl], stream=streams[i]),
                    cuda.to_device(y[sl], stream=streams[i]), sl))
        if not breadth_first:
            _article_launch(article_add, ins[i][0], ins[i][1], shared_out, segment, streams[i])
            shared_out.copy_to_host(out[sl], stream=streams[i])
    if breadth_first:
        for i, (xd, yd, _sl) in enumerate(ins):
            _article_launch(article_add, xd, yd, shared_out, segment, streams[i])
        for i, (_xd, _yd, sl) in enumerate(ins):
            shared_out.copy_to_host(out[sl], stream=streams[i])
    cuda.synchronize()
    return out


def fixed_five_streams(x, y, out, n_streams: int = ARTICLE_STREAMS):
    """The article's program fixed: pinned memory, one output slice per segment, every
    element covered (the last segment takes the remainder)."""
    n = x.size
    chunks = plan_chunks(n, n_streams, n_streams)
    streams = [cuda.stream() for _ in range(n_streams)]
    d_x = cuda.device_array(n, dtype=x.dtype)
    d_y = cuda.device_array(n, dtype=y.dtype)
    d_out = cuda.device_array(n, dtype=out.dtype)
    for c in chunks:
        s, sl = streams[c.stream], slice(c.lo, c.hi)
        d_x[sl].copy_to_device(x[sl], stream=s)
        d_y[sl].copy_to_device(y[sl], stream=s)
        _article_launch(article_add, d_x[sl], d_y[sl], d_out[sl], c.size, s)
        d_out[sl].copy_to_host(out[sl], stream=s)
    cuda.synchronize()
    return out



def _check_article_args(x, y, out=None, n_streams=ARTICLE_STREAMS, breadth_first=False,
                        kernel=None):
    if kernel is not None:
        validate.kernel(kernel)
    x = validate.array(x, name="x", dtype=None)
    y = validate.array(y, name="y", dtype=None)
    validate.same_shape(x, y, ("x", "y"))
    if out is not None:
        validate.same_shape(x, validate.array(out, name="out", dtype=None), ("x", "out"))
    validate.positive_int(n_streams, "n_streams", maximum=64)
    validate.boolean(breadth_first, "breadth_first")


def _checked(fn, check):
    """``fn`` with its arguments checked first; its source (shown in the book, and run as a
    stand-alone script) stays the article's, since ``inspect.getsource`` unwraps it."""
    import functools

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        check(*args, **kwargs)
        return fn(*args, **kwargs)

    return checked


# The article's programs are shown and run verbatim; their checks wrap them.
article_default_stream = _checked(article_default_stream, lambda kernel, x, y:
                                  _check_article_args(x, y, kernel=kernel))
article_five_streams = _checked(
    article_five_streams, lambda kernel, x, y, n_streams=ARTICLE_STREAMS:
    _check_article_args(x, y, n_streams=n_streams, kernel=kernel))
shared_buffer_pipeline = _checked(
    shared_buffer_pipeline, lambda x, y, out, n_streams=ARTICLE_STREAMS, *, breadth_first=False:
    _check_article_args(x, y, out, n_streams, breadth_first))
fixed_five_streams = _checked(fixed_five_streams, lambda x, y, out, n_streams=ARTICLE_STREAMS:
                              _check_article_args(x, y, out, n_streams))

def _fresh_process_script(n: int) -> str:
    """The article's program as a stand-alone script (the functions above, by source)."""
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
              f"ms. Creating the CUDA context and the compiler's first start in a new process "
              f"account together for about {s['context_ms']:.0f} ms of the first.")
    print(f"Timed with events after a warm-up ({article.gpu}): default stream "
          f"{s['default_events_ms']:.1f} ms, five streams {s['five_events_ms']:.1f} ms "
          f"({100 * s['five_events_ms'] / s['default_events_ms']:.0f}% of the default stream's "
          f"time); fixed, pinned, five streams "
          f"{s['fixed_pinned_ms']:.2f} ms ({s['five_events_ms'] / s['fixed_pinned_ms']:.1f}x "
          f"faster than the article's five streams).")


# ------------------------------------------------------------ pinned memory, streams, costs


def pinned_default_stream(x, y, out):
    """The article's serial program with pinned host memory: ``x`` and ``y`` copied in, one
    launch and the copy back into the pinned ``out``, all on the default stream."""
    n = x.size
    d_x, d_y = cuda.to_device(x), cuda.to_device(y)
    d_out = cuda.device_array(n, dtype=out.dtype)
    _article_launch(article_add, d_x, d_y, d_out, n)
    d_out.copy_to_host(out)
    cuda.synchronize()
    return out


pinned_default_stream = _checked(pinned_default_stream, lambda x, y, out:
                                 _check_article_args(x, y, out))


@experiment("streams_pinned_and_streams", chapter="streams",
            title="The article's vector addition (2e7 int32): an output allocated once, "
                  "pinned memory and five streams, each alone and together",
            units={"ms": "ms"})
def pinned_and_streams_experiment(progress):
    """What each change to the article's program gives, timed alike (CUDA events on the legacy
    default stream around the whole program, after a warm-up): the article's serial program
    (its ``copy_to_host()`` allocates the output on every call); the same copying into an
    output allocated once (``pinned_default_stream`` given pageable arrays); then pinned
    memory, five streams (``fixed_five_streams``), and both."""
    rng = np.random.default_rng(3)
    x = rng.integers(-2**20, 2**20, ARTICLE_N, dtype=np.int32)
    y = rng.integers(-2**20, 2**20, ARTICLE_N, dtype=np.int32)
    ref = x.astype(np.float64) + y
    px, py = pinned_copy(x), pinned_copy(y)
    out = np.empty(ARTICLE_N, np.float64)
    pout = cuda.pinned_array(ARTICLE_N, dtype=np.float64)
    fresh = {}

    def article():  # the article's serial program: copy_to_host() allocates the output
        fresh["out"] = article_default_stream(article_add, x, y)

    once, per_call = "allocated once", "new array per call (the article's)"
    variants = [
        ("pageable", per_call, 1, article, None),
        ("pageable", once, 1, lambda: pinned_default_stream(x, y, out), out),
        ("pinned", once, 1, lambda: pinned_default_stream(px, py, pout), pout),
        ("pageable", once, ARTICLE_STREAMS, lambda: fixed_five_streams(x, y, out), out),
        ("pinned", once, ARTICLE_STREAMS, lambda: fixed_five_streams(px, py, pout), pout),
    ]
    rows = []
    for memory, output, n_streams, run, result in variants:
        if result is not None:
            result[:] = np.nan
        ms = _events_ms(run, repeats=7)
        got = fresh["out"] if result is None else result
        rows.append({"host_memory": memory, "output": output, "n_streams": n_streams, "ms": ms,
                     "wrong_elements": int(np.count_nonzero(got != ref))})
        progress(f"{memory}, output {output}, {n_streams} stream(s): {ms:.2f} ms, "
                 f"{rows[-1]['wrong_elements']} wrong")
    return rows


OVERLAP_MIB = 256
OVERLAP_KERNEL_N = 2**22  # the kernel's elements; its steps set its duration


def _issue_in_streams(ops) -> dict:
    """Issue ``ops`` (callables taking a stream) in order, each in a stream of its own, and
    time them: every op's span from events recorded in its stream, the makespan from the
    first start to the last end, and how long each call held the host thread."""
    streams = [cuda.stream() for _ in ops]
    events = [(cuda.event(), cuda.event()) for _ in ops]
    held = []
    cuda.synchronize()
    for op, s, (e0, e1) in zip(ops, streams, events):
        e0.record(s)
        t = time.perf_counter()
        op(s)
        held.append(1e3 * (time.perf_counter() - t))
        e1.record(s)
    cuda.synchronize()
    first = events[0][0]
    spans = [(first.elapsed_time(e0), first.elapsed_time(e1)) for e0, e1 in events]
    return {"makespan_ms": max(e for _, e in spans) - min(s for s, _ in spans),
            "span_ms": [e - s for s, e in spans], "host_ms": held}


def _median_of(ops, repeats: int) -> dict:
    runs = [_issue_in_streams(ops) for _ in range(repeats + 1)][1:]  # the first warms up
    med = float(np.median([r["makespan_ms"] for r in runs]))
    return {"makespan_ms": med,
            "host_ms": [float(np.median([r["host_ms"][i] for r in runs]))
                        for i in range(len(ops))],
            "spread": bench.Timing([r["makespan_ms"] for r in runs]).spread}


@experiment("streams_pageable_overlap", chapter="streams",
            title="A 256 MiB copy beside a kernel in another stream, pageable against pinned "
                  "host memory",
            units={"first_ms": "ms", "second_ms": "ms", "makespan_ms": "ms",
                   "host_blocked_ms": "ms", "hidden_pct": "%"})
def pageable_overlap_experiment(progress):
    """Which copies overlap what. For each host memory (pageable, pinned): a copy in and a
    copy out of 256 MiB alone; each beside a kernel of about the pageable copies' duration
    in another stream, issued after the kernel and before it; and the copy in beside the
    copy out. Each row names the operation issued first and second (``first_ms`` and
    ``second_ms``: each alone); ``hidden_pct`` is how much of the shorter one the overlap
    hid (100: all of it, 0: one ran after the other); ``host_blocked_ms`` is how long the
    (first) copy's call held the host thread: nothing issued after it starts before."""
    n = OVERLAP_MIB * 2**20 // 4
    d_in, d_out = cuda.device_array(n, np.float32), cuda.device_array(n, np.float32)
    d_out[:] = 1.0
    hosts = {"pageable": (np.ones(n, np.float32), np.ones(n, np.float32)),
             "pinned": (cuda.pinned_array(n, np.float32), cuda.pinned_array(n, np.float32))}
    for src, dst in hosts.values():
        src[:] = 1.0
        dst[:] = 0.0  # touch every page before timing
    names = {"h2d": f"copy in ({OVERLAP_MIB} MiB)", "d2h": f"copy out ({OVERLAP_MIB} MiB)"}

    def copy(memory, direction):
        src, dst = hosts[memory]
        if direction == "h2d":
            return lambda s: d_in.copy_to_device(src, stream=s)
        return lambda s: d_out.copy_to_host(dst, stream=s)

    alone = {(m, d): _median_of([copy(m, d)], 5) for m in hosts for d in names}
    # A kernel about as long as the slower pageable copy, so that either order shows.
    kernel, _ = _long_kernel(max(alone[("pageable", d)]["makespan_ms"] for d in names))
    k_ms = _median_of([kernel], 5)["makespan_ms"]
    progress(f"kernel: {k_ms:.2f} ms")
    rows = []

    def add(memory, first, first_ms, second, second_ms, timed, copy_at):
        hidden = None
        if second is not None and min(first_ms, second_ms) > 0:
            hidden = 100 * (first_ms + second_ms - timed["makespan_ms"]) / min(first_ms,
                                                                              second_ms)
        rows.append({"memory": memory, "first": first, "second": second,
                     "first_ms": first_ms, "second_ms": second_ms,
                     "makespan_ms": timed["makespan_ms"],
                     "host_blocked_ms": timed["host_ms"][copy_at], "hidden_pct": hidden,
                     "spread": timed["spread"]})
        if hidden is not None:
            progress(f"{memory}: {first}, then {second}: {timed['makespan_ms']:.2f} ms "
                     f"(alone {first_ms:.2f} and {second_ms:.2f}), {hidden:.0f}% hidden, "
                     f"host held {rows[-1]['host_blocked_ms']:.2f} ms")

    for memory in hosts:
        for direction, name in names.items():
            c, c_ms = copy(memory, direction), alone[(memory, direction)]["makespan_ms"]
            add(memory, name, c_ms, None, None, alone[(memory, direction)], 0)
            add(memory, "kernel", k_ms, name, c_ms, _median_of([kernel, c], 3), 1)
            add(memory, name, c_ms, "kernel", k_ms, _median_of([c, kernel], 3), 0)
        add(memory, names["h2d"], alone[(memory, "h2d")]["makespan_ms"], names["d2h"],
            alone[(memory, "d2h")]["makespan_ms"],
            _median_of([copy(memory, "h2d"), copy(memory, "d2h")], 3), 0)
    return rows


PCIE_GT_PER_LANE = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}  # GT/s, by generation


def pcie_link() -> dict:
    """The GPU's PCIe link as ``nvidia-smi`` reports it (generation and lanes, the most the
    GPU and its slot support), and its theoretical bandwidth per direction in GB/s: lanes
    x transfer rate x 128/130 (generations 3 to 5 encode 128 bits in 130; generation 6's
    FLIT encoding is counted the same way here) / 8 bits. Empty where nothing is reported."""
    import subprocess

    try:
        out = subprocess.run(["nvidia-smi", "--id=" + str(cuda.get_current_device().id),
                              "--query-gpu=pcie.link.gen.max,pcie.link.width.max",
                              "--format=csv,noheader,nounits"], capture_output=True, text=True,
                             timeout=20).stdout.strip().splitlines()[0]
        gen, width = (int(x) for x in out.split(","))
    except Exception:  # noqa: BLE001  (no nvidia-smi, or a field it does not report)
        return {}
    if gen not in PCIE_GT_PER_LANE or width <= 0:
        return {}
    return {"pcie_gen": gen, "pcie_lanes": width,
            "pcie_gbps": PCIE_GT_PER_LANE[gen] * width * 128 / 130 / 8}


OVERHEAD_KIB = (4, 64, 1024)
OVERHEAD_BATCHES, OVERHEAD_COPIES = 7, 40  # per size and call: the median batch is kept


def _driver_copy(d, h, stream):
    """``cuMemcpyHtoDAsync`` called directly, without Numba's host-side work, or None where
    this Numba has no driver binding to call."""
    try:
        from numba.cuda.cudadrv import driver as drv

        binding = drv.binding
        dptr = int(d.__cuda_array_interface__["data"][0])
        hptr, nbytes, handle = int(h.ctypes.data), int(h.nbytes), stream.handle
        success = binding.CUresult.CUDA_SUCCESS
    except Exception:  # noqa: BLE001
        return None

    def copy():
        (err,) = binding.cuMemcpyHtoDAsync(dptr, hptr, nbytes, handle)
        if err != success:
            raise RuntimeError(f"cuMemcpyHtoDAsync failed: {err}")
    return copy


@experiment("streams_copy_overhead", chapter="streams",
            title="What one small pinned copy in costs: Numba's copy_to_device against the "
                  "driver's cuMemcpyHtoDAsync",
            units={"host_us": "µs", "gpu_us": "µs", "transfer_us": "µs", "kib": "KiB"})
def copy_overhead_experiment(progress):
    """Per copy of one size, the median over 7 batches of 40 back-to-back copies (a one-time
    cost in one batch does not move it): ``host_us``, the host's time to issue one, and
    ``host_spread``, its spread over the batches; ``gpu_us``, the stream's time per copy from
    an event before a batch's first copy to one after its last (when the host issues slower
    than the link moves, the host sets it);
    ``transfer_us``, the bytes over the link's bandwidth measured with one 256 MiB copy."""
    s = cuda.stream()
    big = OVERLAP_MIB * 2**20 // 4
    hb, db = cuda.pinned_array(big, np.float32), cuda.device_array(big, np.float32)
    hb[:] = 1.0
    link = bench.time_kernel(functools.partial(db.copy_to_device, hb, stream=s),
                             min_repeat=5, min_time=0.05, hide_launch=False)
    link_gbps = bench.gbps(hb.nbytes, link.median_ms)
    del hb, db
    pcie = pcie_link()
    progress(f"one {OVERLAP_MIB} MiB pinned copy in: {link_gbps:.1f} GB/s"
             + (f"; PCIe gen {pcie['pcie_gen']} x{pcie['pcie_lanes']}: "
                f"{pcie['pcie_gbps']:.1f} GB/s per direction in theory" if pcie else ""))
    rows = []
    for kib in OVERHEAD_KIB:
        n = kib * 1024 // 4
        h, d = cuda.pinned_array(n, np.float32), cuda.device_array(n, np.float32)
        h[:] = 1.0
        apis = {"Numba: d.copy_to_device(h, stream=s)": functools.partial(d.copy_to_device, h,
                                                                          stream=s),
                "driver: cuMemcpyHtoDAsync": _driver_copy(d, h, s)}
        for api, op in apis.items():
            if op is None:
                progress(f"{api}: no driver binding to call here, skipped")
                continue
            try:
                for _ in range(10):
                    op()
            except Exception as err:  # noqa: BLE001  (a binding this Numba calls differently)
                progress(f"{api}: failed here ({type(err).__name__}: {err}), skipped")
                continue
            s.synchronize()
            host_us, stream_us = [], []
            for _ in range(OVERHEAD_BATCHES):
                e0, e1 = cuda.event(), cuda.event()
                e0.record(s)
                t = time.perf_counter()
                for _ in range(OVERHEAD_COPIES):
                    op()
                host_us.append(1e6 * (time.perf_counter() - t) / OVERHEAD_COPIES)
                e1.record(s)
                e1.synchronize()
                stream_us.append(1e3 * e0.elapsed_time(e1) / OVERHEAD_COPIES)
            if not np.array_equal(d.copy_to_host()[:: max(1, n // 64)], h[:: max(1, n // 64)]):
                raise AssertionError(f"{api}: the copied data is wrong")
            rows.append({"api": api, "kib": kib,
                         "host_us": float(np.median(host_us)),
                         "gpu_us": float(np.median(stream_us)),
                         "host_spread": bench.Timing(host_us).spread,
                         "transfer_us": kib * 1024 / (link_gbps * 1e9) * 1e6,
                         "link_gbps": link_gbps, **pcie})
            progress(f"{kib:5d} KiB, {api}: host {rows[-1]['host_us']:.1f} µs, stream "
                     f"{rows[-1]['gpu_us']:.1f} µs per copy (the bytes alone "
                     f"{rows[-1]['transfer_us']:.1f} µs)")
    return rows


def pinned_and_streams_summary(res) -> dict:
    """The ``streams_pinned_and_streams`` rows as the chapter reads them: each program's time
    (``pageable_serial_ms``, ``pinned_serial_ms``, ``pageable_streams_ms``,
    ``pinned_streams_ms``, all with an output allocated once) and what each change gives, as
    speedups over the serial pageable program (``pinned_x``, ``streams_x``, ``both_x``) and
    streams on top of pinned memory (``streams_on_pinned_x``); the article's own serial
    program, which allocates its output on every call (``article_serial_ms``), and the
    speedup of allocating it once (``output_once_x``), both None in a record without it."""
    _check_res(res, "host_memory", "n_streams", "ms")
    many = max(res.values("n_streams"))
    once = [r for r in res.rows if r.get("output", "allocated once") == "allocated once"]

    def ms(memory, n):
        match = [r for r in once if r["host_memory"] == memory and r["n_streams"] == n]
        if len(match) != 1:
            raise ValueError(f"res: {len(match)} rows of {memory} memory, {n} stream(s) and an "
                             "output allocated once, expected one; pass the "
                             "streams_pinned_and_streams result.")
        return match[0]["ms"]

    out = {"n_streams": many,
           "pageable_serial_ms": ms("pageable", 1), "pinned_serial_ms": ms("pinned", 1),
           "pageable_streams_ms": ms("pageable", many), "pinned_streams_ms": ms("pinned", many)}
    base = out["pageable_serial_ms"]
    out.update(pinned_x=base / out["pinned_serial_ms"], streams_x=base / out["pageable_streams_ms"],
               both_x=base / out["pinned_streams_ms"],
               streams_on_pinned_x=out["pinned_serial_ms"] / out["pinned_streams_ms"])
    # The article's own serial program, whose copy_to_host() allocates the output on every
    # call (absent from records made before it was added)
    article = [r for r in res.rows if r.get("output", "allocated once") != "allocated once"]
    out["article_serial_ms"] = article[0]["ms"] if len(article) == 1 else None
    out["output_once_x"] = (None if out["article_serial_ms"] is None
                            else out["article_serial_ms"] / base)
    return out


def show_pinned_and_streams(res) -> None:
    """Print :func:`pinned_and_streams_summary`: what pinned memory and streams each give."""
    s = pinned_and_streams_summary(res)
    k = s["n_streams"]
    if s["article_serial_ms"] is not None:
        print(f"On {res.gpu}, the article's serial program, whose copy_to_host() allocates its "
              f"output on every call: {s['article_serial_ms']:.2f} ms; the same program copying "
              f"into an output allocated once: {s['pageable_serial_ms']:.2f} ms (allocating it "
              f"once is {s['output_once_x']:.2f}x faster).")
    print(f"On {res.gpu}, against the serial program on pageable memory, output allocated once "
          f"({s['pageable_serial_ms']:.2f} ms):")
    def speedup(x):
        return f"{x:.2f}x" + (" (slower)" if x < 1 else "")

    print(f"  pinned memory alone (one stream):   {s['pinned_serial_ms']:6.2f} ms, "
          f"{speedup(s['pinned_x'])}")
    print(f"  {k} streams alone (pageable memory): {s['pageable_streams_ms']:6.2f} ms, "
          f"{speedup(s['streams_x'])}")
    print(f"  both:                               {s['pinned_streams_ms']:6.2f} ms, "
          f"{speedup(s['both_x'])}")
    print(f"On pinned memory, {k} streams give {speedup(s['streams_on_pinned_x'])} over one.")


def pageable_overlap_summary(res) -> dict:
    """The ``streams_pageable_overlap`` rows by host memory (``"pageable"``, ``"pinned"``):
    each copy's time alone (``in_ms``, ``out_ms``) and the share of it its call held the host
    thread (``in_held_pct``, ``out_held_pct``); the share of the shorter operation hidden for
    a copy issued after the kernel (``in_after_kernel_pct``, ``out_after_kernel_pct``), before
    it (``in_before_kernel_pct``, ``out_before_kernel_pct``), and for a copy in issued with a
    copy out (``in_with_out_pct``); and the kernel's time alone (``kernel_ms``)."""
    _check_res(res, "memory", "first", "second", "first_ms", "makespan_ms", "host_blocked_ms",
               "hidden_pct")
    out = {}
    for memory in ("pageable", "pinned"):
        alone = {r["first"]: r for r in res.select(memory=memory, second=None)}
        names = {d: [n for n in alone if n.startswith(f"copy {d}")] for d in ("in", "out")}
        if any(len(v) != 1 for v in names.values()):
            raise ValueError(f"res: expected one copy in and one copy out alone for {memory} "
                             f"memory, found {sorted(alone)}; pass the streams_pageable_overlap "
                             "result.")
        c_in, c_out = names["in"][0], names["out"][0]

        def hidden(first, second, memory=memory):
            return res.one(memory=memory, first=first, second=second)["hidden_pct"]

        out[memory] = {
            "in_ms": alone[c_in]["makespan_ms"], "out_ms": alone[c_out]["makespan_ms"],
            "in_held_pct": 100 * alone[c_in]["host_blocked_ms"] / alone[c_in]["makespan_ms"],
            "out_held_pct": 100 * alone[c_out]["host_blocked_ms"] / alone[c_out]["makespan_ms"],
            "in_after_kernel_pct": hidden("kernel", c_in),
            "in_before_kernel_pct": hidden(c_in, "kernel"),
            "out_after_kernel_pct": hidden("kernel", c_out),
            "out_before_kernel_pct": hidden(c_out, "kernel"),
            "in_with_out_pct": hidden(c_in, c_out),
        }
    out["kernel_ms"] = res.select(first="kernel")[0]["first_ms"]
    return out


def show_pageable_overlap(res) -> None:
    """Show :func:`pageable_overlap_summary` as one table, pageable beside pinned."""
    s = pageable_overlap_summary(res)
    size = next(r["first"] for r in res.rows if r["first"].startswith("copy in"))
    size = size[size.find("(") + 1:size.rfind(")")]
    lines = [("copy in alone (ms)", "in_ms"),
             ("copy in: share of it the call held the host (%)", "in_held_pct"),
             ("copy out alone (ms)", "out_ms"),
             ("copy out: share of it the call held the host (%)", "out_held_pct"),
             ("copy in issued after the kernel: hidden (%)", "in_after_kernel_pct"),
             ("copy in issued before the kernel: hidden (%)", "in_before_kernel_pct"),
             ("copy out issued after the kernel: hidden (%)", "out_after_kernel_pct"),
             ("copy out issued before the kernel: hidden (%)", "out_before_kernel_pct"),
             ("copy in and copy out issued together: hidden (%)", "in_with_out_pct")]
    rows = [{"what": what, "pageable": s["pageable"][key], "pinned": s["pinned"][key]}
            for what, key in lines]
    capped = [f"{r['what'].split(':')[0]}, {m}: {r[m]:.0f}%" for r in rows
              for m in ("pageable", "pinned")
              if "hidden" in r["what"] and round(r[m]) > 100]
    for r in rows:
        if "hidden" in r["what"]:
            r["pageable"], r["pinned"] = min(r["pageable"], 100.0), min(r["pinned"], 100.0)
    print(f"On {res.gpu}: copies of {size}, each alone, and beside a kernel of "
          f"{s['kernel_ms']:.1f} ms in another stream:")
    note = ("Shown as 100, where the pair finished sooner than its longer operation's median "
            "alone (run-to-run variation): " + "; ".join(capped) + ".") if capped else ""
    Result("streams_pageable_overlap (summary)", rows, res.meta, res.source).show(note=note)


def copy_overhead_summary(res) -> list[dict]:
    """Per copy size (KiB): the host's time to issue one copy through Numba and through the
    driver (``numba_host_us``, ``driver_host_us``; None where the driver was not called),
    the stream's time per copy through each, and the bytes' own time on the measured link."""
    _check_res(res, "api", "kib", "host_us", "gpu_us", "transfer_us")
    out = []
    for kib in sorted(set(res.values("kib"))):
        row = {"kib": kib}
        for prefix, who in (("numba", "Numba"), ("driver", "driver")):
            match = [r for r in res.select(kib=kib) if r["api"].startswith(who)]
            row[f"{prefix}_host_us"] = match[0]["host_us"] if match else None
            row[f"{prefix}_stream_us"] = match[0]["gpu_us"] if match else None
        row["transfer_us"] = res.select(kib=kib)[0]["transfer_us"]
        out.append(row)
    return out


def show_copy_overhead(res) -> None:
    """Show :func:`copy_overhead_summary` as a table, then the measured link against the
    PCIe link's theoretical bandwidth where ``nvidia-smi`` reported it."""
    rows = copy_overhead_summary(res)
    Result("streams_copy_overhead (summary)", rows, res.meta, res.source).show()
    r = res.rows[0]
    line = f"One {OVERLAP_MIB} MiB pinned copy in: {r['link_gbps']:.1f} GB/s"
    if r.get("pcie_gbps"):
        line += (f"; the PCIe gen {r['pcie_gen']} x{r['pcie_lanes']} link moves at most "
                 f"{r['pcie_gbps']:.1f} GB/s per direction in theory, so the copy reaches "
                 f"{100 * r['link_gbps'] / r['pcie_gbps']:.0f}% of it.")
    else:
        line += "; nvidia-smi reported no PCIe link to compare with."
    print(line)
    for row in rows:
        if row["numba_host_us"] and row["driver_host_us"]:
            print(f"{row['kib']:5d} KiB: Numba's call takes "
                  f"{row['numba_host_us'] / row['driver_host_us']:.0f}x the driver's host time.")


def _nonblocking_stream():
    """A stream created with CU_STREAM_NON_BLOCKING (Numba's cuda.stream() blocks), or None."""
    try:
        from numba.cuda.cudadrv import driver as drv

        binding = drv.binding
        err, handle = binding.cuStreamCreate(binding.CUstream_flags.CU_STREAM_NON_BLOCKING.value)
        if err != binding.CUresult.CUDA_SUCCESS:
            return None
        return cuda.external_stream(int(handle))
    except Exception:
        return None


WAIT_CASE = "stream 2 waits for an event of stream 1"
PER_THREAD_CASE = "a per-thread default-stream launch in between"


@experiment("streams_default_stream", chapter="streams",
            title="Two kernels in two streams, with and without a launch on the default stream",
            units={"start_ms": "ms", "end_ms": "ms", "makespan_ms": "ms"})
def default_stream_experiment(progress):
    sms = device.sm_count(default=2)
    # Each long kernel fills at most half of the SMs, so two of them can run together.
    blocks, threads = max(1, sms // 2), 256
    n = blocks * threads
    rng = np.random.default_rng(5)
    a = cuda.to_device(ex.random_array(n, rng))
    b = cuda.to_device(ex.random_array(n, rng))
    outs = [cuda.device_array(n, np.float32) for _ in range(2)]
    tiny = [cuda.device_array(1, np.float32) for _ in range(3)]
    probe = 2**14
    t = bench.time_kernel(lambda: relax_kernel[blocks, threads](a, b, outs[0], probe),
                          min_repeat=3, min_time=0.01)
    iters = int(min(2**24, max(probe, probe * 3.0 / t.median_ms)))  # about 3 ms each
    progress(f"long kernels: {blocks} blocks x {threads} threads, {iters} steps")
    legacy = cuda.legacy_default_stream()
    rows = []
    per_thread = cuda.per_thread_default_stream()
    # (case, the stream of the tiny launch in between or None, non-blocking streams, wait)
    cases = [("two streams", None, False, False),
             ("a default-stream launch in between", legacy, False, False),
             ("non-blocking streams, default-stream launch in between", legacy, True, False),
             (PER_THREAD_CASE, per_thread, False, False),
             (WAIT_CASE, None, False, True)]
    for case, middle, nonblocking, wait in cases:
        if nonblocking:
            streams = [_nonblocking_stream(), _nonblocking_stream()]
            if None in streams:
                progress(f"{case}: cannot create non-blocking streams here, skipped")
                continue
        else:
            streams = [cuda.stream(), cuda.stream()]
        for _attempt in range(2):  # the first pass warms up; the second is recorded
            ref = cuda.event()
            ref.record(legacy)
            ev = []
            for s, who in ((streams[0], 1), (middle, 0), (streams[1], 2)):
                if who == 0 and middle is None:
                    continue
                e0, e1 = cuda.event(), cuda.event()
                if wait and who == 2:
                    # stream 2 waits, on the GPU, for the event recorded after kernel 1
                    # (cudaStreamWaitEvent; Numba spells it on the event)
                    ev[0][2].wait(s)
                e0.record(s)
                if who == 0:
                    add_kernel[1, 32, s](tiny[0], tiny[1], tiny[2])
                else:
                    relax_kernel[blocks, threads, s](a, b, outs[who - 1], iters)
                e1.record(s)
                ev.append((who, e0, e1))
            cuda.synchronize()
        spans = [{"stream": who, "kind": "kernel",
                  "label": ("per-thread default-stream kernel" if middle is per_thread else
                            "default-stream kernel") if who == 0 else f"long kernel {who}",
                  "start_ms": ref.elapsed_time(e0), "end_ms": ref.elapsed_time(e1)}
                 for who, e0, e1 in ev]
        makespan = max(s["end_ms"] for s in spans)
        for s in spans:
            rows.append({"case": case, **s, "makespan_ms": makespan, "iters": iters})
        progress(f"{case}: makespan {makespan:.2f} ms")
    return rows


SYNC_MIB = 64  # the size of what each call below allocates, frees, pins or copies
SYNC_KERNEL_MS = 20.0


def _long_kernel(target_ms: float):
    """A launcher ``fn(stream)`` of a relaxation kernel taking about ``target_ms`` here, and
    its measured time (ms)."""
    n = OVERLAP_KERNEL_N
    rng = np.random.default_rng(13)
    ka, kb = (cuda.to_device(ex.random_array(n, rng)) for _ in range(2))
    kout = cuda.device_array(n, np.float32)
    probe = bench.time_kernel(lambda: launch_chunk(ka, kb, kout, 256, 256), min_repeat=3,
                              min_time=0.02)
    iters = int(min(2**24, max(64, round(256 * target_ms / probe.median_ms))))

    def launch(stream):
        launch_chunk(ka, kb, kout, iters, 256, stream)

    t = bench.time_kernel(lambda: launch(0), min_repeat=3, min_time=0.05)
    return launch, t.median_ms


def _sync_calls(n: int):
    """(name, setup, call) of each host call the experiment times while a kernel runs:
    ``setup()`` runs before the kernel is issued and returns what ``call(state)`` needs."""
    ctx = cuda.current_context()
    host = np.ones(n, np.float32)
    pinned = cuda.pinned_array(n, np.float32)
    pinned[:] = 1.0
    d = cuda.device_array(n, np.float32)
    other = cuda.stream()

    def free(holder):
        holder.pop()  # the last reference: Numba queues the free...
        ctx.deallocations.clear()  # ...and this runs it now (cuMemFree / cuMemFreeHost)

    def fill(arr):
        arr[:] = 0.0

    def register(arr):
        with cuda.pinned(arr):  # cuMemHostRegister on entry, cuMemHostUnregister on exit
            pass

    return [
        ("cuda.device_array: allocate device memory", lambda: None,
         lambda _: cuda.device_array(n, np.float32)),
        ("free device memory (the last reference dropped, deallocations run)",
         lambda: [cuda.device_array(n, np.float32)], free),
        ("cuda.pinned_array: allocate pinned host memory", lambda: None,
         lambda _: cuda.pinned_array(n, np.float32)),
        ("free pinned host memory", lambda: [cuda.pinned_array(n, np.float32)], free),
        ("cuda.pinned(x): pin an existing array, then unpin it", lambda: host, register),
        ("d[:] = 0: fill a device array", lambda: d, fill),
        ("d.copy_to_device(x) with no stream (pinned x)", lambda: None,
         lambda _: d.copy_to_device(pinned)),
        ("d.copy_to_device(x, stream=another) (pinned x)", lambda: None,
         lambda _: d.copy_to_device(pinned, stream=other)),
        ("a kernel launch with no stream", lambda: None,
         lambda _: add_kernel[1, 32](d, d, d)),
        ("cuda.synchronize()", lambda: None, lambda _: cuda.synchronize()),
    ]


@experiment("streams_sync_calls", chapter="streams",
            title="Which host calls wait for a kernel running in another stream",
            units={"host_ms": "ms", "kernel_ms": "ms"})
def sync_calls_experiment(progress):
    """For each call of ``_sync_calls`` (64 MiB where it allocates, frees, pins or copies):
    issue a kernel of about 20 ms in a stream of its own, make the call, and time it on the
    host; then ask the kernel's end event whether the kernel had finished when the call
    returned. The median of 5 tries (after one more that warms up); ``waited`` counts the
    tries in which the kernel had finished."""
    n = SYNC_MIB * 2**20 // 4
    launch, k_ms = _long_kernel(SYNC_KERNEL_MS)
    progress(f"kernel alone: {k_ms:.2f} ms")
    s = cuda.stream()
    ctx = cuda.current_context()
    rows = []
    for name, setup, call in _sync_calls(n):
        held, finished = [], 0
        for attempt in range(6):
            state = setup()
            ctx.deallocations.clear()  # frees queued earlier must not run inside the call
            cuda.synchronize()
            done = cuda.event()
            launch(s)
            done.record(s)
            t = time.perf_counter()
            call(state)
            ms = 1e3 * (time.perf_counter() - t)
            over = done.query()
            cuda.synchronize()
            if attempt:
                held.append(ms)
                finished += bool(over)
        rows.append({"call": name, "host_ms": float(np.median(held)), "kernel_ms": k_ms,
                     "waited": finished, "tries": len(held), "mib": SYNC_MIB})
        progress(f"{name}: host {rows[-1]['host_ms']:.3f} ms, kernel finished on return in "
                 f"{finished} of {len(held)}")
    return rows


def sync_calls_summary(res) -> list[dict]:
    """The ``streams_sync_calls`` rows with ``verdict``: "waits for the kernel" where the
    kernel had finished when the call returned every time, "returns at once" where never,
    "varies" otherwise; and ``held_pct``: the call's host time as a share of the kernel's."""
    _check_res(res, "call", "host_ms", "kernel_ms", "waited", "tries", "mib")
    out = []
    for r in res.rows:
        verdict = ("waits for the kernel" if r["waited"] == r["tries"] else
                   "returns at once" if r["waited"] == 0 else "varies")
        out.append({"call": r["call"], "host_ms": r["host_ms"],
                    "held_pct": 100 * r["host_ms"] / r["kernel_ms"], "verdict": verdict})
    return out


def show_sync_calls(res) -> list[dict]:
    """Show :func:`sync_calls_summary` as a table; return its rows."""
    rows = sync_calls_summary(res)
    k = res.rows[0]["kernel_ms"]
    print(f"On {res.gpu}: each call made while a kernel of {k:.1f} ms ran in another stream "
          f"({res.rows[0]['mib']} MiB where it allocates, frees, pins or copies); host time, "
          "the median of the tries:")
    waited = [r["call"].split(": ")[0] for r in rows if r["verdict"] == "waits for the kernel"]
    note = ("held_pct: the call's host time as a share of the kernel's. Waited for the kernel "
            f"every time: {'; '.join(waited) if waited else 'none'}.")
    Result("streams_sync_calls (summary)", rows, res.meta, res.source).show(note=note)
    return rows


def memory_kinds_summary(res) -> dict:
    """``streams_memory_kinds`` by method (``"pinned"``, ``"mapped"``, ``"managed, first"``,
    ``"managed, again"``): its row, with ``x_pinned``, its time as a multiple of the pinned
    version's."""
    _check_res(res, "method", "n", "ms", "gbps")
    keys = {"pinned": "pinned:", "mapped": "mapped:", "managed, first": "managed: first",
            "managed, again": "managed: the same"}
    out = {}
    for key, prefix in keys.items():
        match = [r for r in res.rows if r["method"].startswith(prefix)]
        if len(match) != 1:
            raise ValueError(f"res: expected one row whose method starts with {prefix!r}, "
                             f"found {len(match)}; pass the streams_memory_kinds result.")
        out[key] = dict(match[0])
    for r in out.values():
        r["x_pinned"] = r["ms"] / out["pinned"]["ms"]
    return out


def show_memory_kinds(res) -> dict:
    """Show ``streams_memory_kinds`` as a table, each time against the pinned version's
    under it; return :func:`memory_kinds_summary`."""
    s = memory_kinds_summary(res)
    print(f"On {res.gpu}: out = a + b over {res.rows[0]['n']:,} float32 that start and end on "
          "the host:")
    note = "; ".join(f"{key}: {r['x_pinned']:.2f}x the pinned version's time"
                     for key, r in s.items() if key != "pinned") + "."
    res.show(["method", "ms", "gbps", "spread"], note=note)
    return s


MEMORY_KINDS_N = 2**24  # 64 MiB per float32 array


@experiment("streams_memory_kinds", chapter="streams",
            title="out = a + b over host data: pinned copies, mapped (zero-copy) memory and "
                  "managed memory (2^24 float32)",
            units={"ms": "ms", "gbps": "GB/s"})
def memory_kinds_experiment(progress):
    """The same addition over 2^24 float32 that start and end on the host, three ways:
    pinned arrays copied in and out around the kernel (one stream); the kernel reading and
    writing mapped host memory directly over the link (``cuda.mapped_array``, no copies);
    managed memory (``cuda.managed_array``), written on the host and then used by the
    kernel, which moves the pages on demand, the first kernel after the host wrote and a
    second one right after it. ``gbps``: the 12 bytes per element that start or end on the
    host (or, for the second managed kernel, that it touches) over the time. Medians of 5."""
    n = MEMORY_KINDS_N
    blocks = device.sm_count(default=2) * BLOCKS_PER_SM
    rng = np.random.default_rng(17)
    a0, b0 = ex.random_array(n, rng), ex.random_array(n, rng)
    want = a0.astype(np.float64) + b0
    rows = []

    def add(method, times, out):
        t = float(np.median(times))
        err = ex.compare(np.asarray(out), want, rtol=1e-6, atol=1e-6)
        if err:
            raise AssertionError(f"{method}: {err}")
        rows.append({"method": method, "n": n, "ms": t, "gbps": 12 * n / t / 1e6,
                     "spread": bench.Timing(times).spread})
        progress(f"{method}: {t:.2f} ms")

    # pinned: copy in, kernel, copy out; one stream, events around the whole.
    pa, pb, pout = pinned_copy(a0), pinned_copy(b0), cuda.pinned_array(n, np.float32)
    d_a, d_b, d_out = (cuda.device_array(n, np.float32) for _ in range(3))
    s = cuda.stream()

    def pinned_run():
        d_a.copy_to_device(pa, stream=s)
        d_b.copy_to_device(pb, stream=s)
        add_kernel[blocks, 256, s](d_a, d_b, d_out)
        d_out.copy_to_host(pout, stream=s)

    add("pinned: copy in, kernel, copy out", _stream_times(pinned_run, s), pout)

    # mapped: the kernel reads and writes host memory over the link.
    ma, mb, mout = (cuda.mapped_array(n, np.float32) for _ in range(3))
    ma[:], mb[:] = a0, b0
    add("mapped: the kernel reads and writes host memory",
        _stream_times(lambda: add_kernel[blocks, 256, s](ma, mb, mout), s), mout)

    # managed: the host writes, the kernel's first touch moves the pages, then again.
    ua, ub, uout = (cuda.managed_array(n, np.float32) for _ in range(3))
    first, second = [], []
    for _ in range(6):
        ua[:], ub[:] = a0, b0  # the host writes: the pages are the host's again
        uout[:] = 0.0
        cuda.synchronize()
        first.append(_stream_times(lambda: add_kernel[blocks, 256, s](ua, ub, uout), s,
                                   repeats=1)[0])
        second.append(_stream_times(lambda: add_kernel[blocks, 256, s](ua, ub, uout), s,
                                    repeats=1)[0])
    add("managed: first kernel after the host wrote", first[1:], uout)
    add("managed: the same kernel again", second[1:], uout)
    return rows


def _stream_times(fn, stream, repeats: int = 5) -> list[float]:
    """``fn()`` issued in ``stream`` ``repeats`` times (after one warm-up unless
    ``repeats == 1``), each timed with events around it: ms."""
    times = []
    for i in range(repeats + (repeats > 1)):
        e0, e1 = cuda.event(), cuda.event()
        e0.record(stream)
        fn()
        e1.record(stream)
        e1.synchronize()
        if repeats == 1 or i:
            times.append(e0.elapsed_time(e1))
    return times


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


# --------------------------------------------------------------------------- figures

KIND_COLORS = {"h2d": "tab:blue", "kernel": "tab:green", "d2h": "tab:orange"}  # as plots.timeline
KIND_NAMES = {"h2d": "copy in (H2D)", "kernel": "kernel", "d2h": "copy out (D2H)"}


def timeline_spans(res, work: str, case: str, schedule: str = "measured") -> list[dict]:
    """The spans of one case of ``streams_timeline``, ready for ``plots.timeline``."""
    _check_res(res, "work", "case", "schedule", "stream", "start_ms", "end_ms")
    validate.choice(work, "work", res.values("work"))
    validate.choice(case, "case", res.values("case"))
    validate.choice(schedule, "schedule", res.values("schedule"))
    keys = ("stream", "kind", "start_ms", "end_ms", "label", "chunk")
    return [{k: r[k] for k in keys} for r in res.select(work=work, case=case, schedule=schedule)]


def busy_ms(res, work: str, case: str, kind: str = "kernel") -> float:
    """How long at least one ``kind`` operation was in flight in one measured case of
    ``streams_timeline``: the length of the union of those spans, in ms.

    A measured span runs from the moment its stream reached the operation to its end, so
    it contains the operation's own run: the union is at least the time the engine was
    busy with that kind. Overlapping spans of different streams count once."""
    from ..profiling import _union_ms  # the one union of intervals (also the CUPTI timeline's)

    validate.choice(kind, "kind", KINDS)
    return _union_ms([(s["start_ms"], s["end_ms"]) for s in timeline_spans(res, work, case)
                      if s["kind"] == kind])


def plot_timeline(res, work: str | None = None, *, cases=None):
    """Every case of ``streams_timeline`` for one work, one panel each, on one time axis.

    The pipelined case is drawn with the ideal schedule (hatched) below it, so that
    the overlap achieved and the overlap possible are read off together.
    """
    _check_res(res, "work", "case", "schedule")
    if work is not None:
        validate.choice(work, "work", res.values("work"))
    if cases is not None:
        for _i, _c in enumerate(validate.sequence(cases, "cases")):
            validate.choice(_c, f"cases[{_i}]", res.values("case"))
    import matplotlib.pyplot as plt

    from .. import plots

    work = work or res.values("work")[0]
    rows = res.select(work=work)
    shown = [c for c in dict.fromkeys(r["case"] for r in rows) if cases is None or c in cases]
    lanes = [len({r["stream"] for r in rows if r["case"] == c}) *
             (2 if c == "pipelined" else 1) for c in shown]
    end = max(r["end_ms"] for r in rows if r["case"] in shown) * 1.02
    fig, axes = plt.subplots(len(shown), 1, figsize=(plots.COLUMN_INCHES,
                                                     1.2 * len(shown) + 0.35 * sum(lanes)),
                             sharex=True, squeeze=False,
                             gridspec_kw={"height_ratios": [n + 1 for n in lanes]})
    for ax, case in zip(axes[:, 0], shown):
        spans = timeline_spans(res, work, case)
        ideal = timeline_spans(res, work, case, "ideal") or None
        total = max(s["end_ms"] for s in spans)
        title = f"{case}: {total:.2f} ms"
        if ideal:
            title += f" (ideal from the one-stream stage times: {max(s['end_ms'] for s in ideal):.2f} ms)"
        plots.timeline(spans, ideal=ideal, title=title, ax=ax)
        ax.set_xlim(0, end)
        if ax is not axes[-1, 0]:
            ax.set_xlabel("")
            legend = ax.get_legend()
            if legend is not None:
                legend.remove()
    # Each panel added the source label; keep one. Before the suptitle: removing a figure's
    # suptitle this way breaks tight_layout in matplotlib 3.10 (Colab's).
    for text in list(fig.texts):
        text.remove()
    iters = rows[0]["iters"]
    fig.suptitle(f"{work}, iters={iters}, 2^25 float32 in {rows[0]['n_chunks']} chunks",
                 fontsize=10)
    plots.source_label(fig, res.label)
    fig.tight_layout()
    return fig


def plot_default_stream(res):
    """Each case of ``streams_default_stream`` as a timeline, one axis per case."""
    _check_res(res, "case")
    import matplotlib.pyplot as plt

    cases = res.values("case")
    end = max(res.column("end_ms")) * 1.05
    from .. import plots

    fig, axes = plt.subplots(len(cases), 1, figsize=(plots.COLUMN_INCHES, 1.6 * len(cases) + 0.6),
                             sharex=True,
                             squeeze=False)
    for ax, case in zip(axes[:, 0], cases):
        spans = res.select(case=case)
        for s in spans:
            color = "#C44E52" if s["stream"] == 0 else KIND_COLORS["kernel"]
            ax.barh(s["stream"], max(s["end_ms"] - s["start_ms"], end * 0.004),
                    left=s["start_ms"], color=color, height=0.7)
        middle = [sp["label"] for sp in spans if sp["stream"] == 0]
        ax.set_yticks([0, 1, 2])
        ax.set_yticklabels(["per-thread" if middle and middle[0].startswith("per-thread")
                            else "default", "stream 1", "stream 2"])
        ax.invert_yaxis()
        ax.set_title(f"{case}: {spans[0]['makespan_ms']:.2f} ms", fontsize=10)
    axes[-1, 0].set_xlim(0, end)
    axes[-1, 0].set_xlabel("time since the reference event (ms)")
    fig.suptitle(res.label, fontsize=9)
    fig.tight_layout()
    return fig


def plot_speedup(res):
    """Speedup over serial against the number of streams: measured and ideal, per work."""
    _check_res(res)
    import matplotlib.pyplot as plt

    from .. import plots  # lazily: matplotlib only when drawing
    fig, ax = plt.subplots(figsize=(plots.COLUMN_INCHES, 4))
    for i, work in enumerate(res.values("work")):
        rows = res.select(work=work)
        x = [r["n_streams"] for r in rows]
        color = f"C{i}"
        ax.plot(x, [r["speedup"] for r in rows], "o-", color=color, label=f"{work}, measured")
        ax.plot(x, [r["ideal_speedup"] for r in rows], "--", color=color,
                label=f"{work}, ideal from stage times")
        bound = rows[0]["serial_ms"] / rows[0]["bound_ms"]
        ax.axhline(bound, color=color, lw=0.8, ls=":")
        ax.annotate(f"busiest engine bound {bound:.2f}x", (x[-1], bound), color=color,
                    fontsize=8, ha="right", va="bottom")
    plots.reference_curves(ax, res, x="n_streams", y="speedup", series="work", rows=res.rows,
                           colors={work: f"C{i}" for i, work in enumerate(res.values("work"))})
    ax.set_xlabel("streams")
    ax.set_ylabel("speedup over serial (x)")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    ax.set_title(f"{res.rows[0]['n_chunks']} chunks ({res.label})", fontsize=9)
    fig.tight_layout()
    return fig


def plot_host_bandwidth(res):
    """Copy bandwidth against size, pageable and pinned, each direction."""
    _check_res(res)
    import matplotlib.pyplot as plt

    from .. import plots  # lazily: matplotlib only when drawing
    fig, ax = plt.subplots(figsize=(plots.COLUMN_INCHES, 4))
    for memory, ls in (("pinned", "-"), ("pageable", "--")):
        for direction, color in (("h2d", KIND_COLORS["h2d"]), ("d2h", KIND_COLORS["d2h"])):
            rows = res.select(memory=memory, direction=direction)
            ax.plot([r["mib"] for r in rows], [r["gbps"] for r in rows], "o" + ls, color=color,
                    label=f"{memory}, {KIND_NAMES[direction]}")
        plots.reference_curves(ax, res, x="mib", y="gbps", series="direction",
                               rows=res.select(memory=memory), colors=KIND_COLORS)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("copy size (MiB)")
    ax.set_ylabel("GB/s")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    ax.set_title(res.label, fontsize=9)
    fig.tight_layout()
    return fig


def plot_explore(res, *, chunk_counts=(4, 8, 32)):
    """Speedup against streams for each arithmetic intensity, one panel per chunk count.

    Solid: measured; dotted: the ideal from the one-stream stage times.
    """
    _check_res(res, "n_chunks")
    for _i, _c in enumerate(validate.sequence(chunk_counts, "chunk_counts")):
        validate.choice(_c, f"chunk_counts[{_i}]", res.values("n_chunks"))
    import matplotlib.pyplot as plt

    from .. import plots

    # One panel per chunk count, side by side while they fit the column, else stacked.
    across = len(chunk_counts) <= 2
    fig, axes = plt.subplots(1 if across else len(chunk_counts), len(chunk_counts) if across else 1,
                             figsize=(plots.COLUMN_INCHES, 3.6 if across else 2.4 * len(chunk_counts)),
                             sharey=True, sharex=not across, squeeze=False)
    for ax, n_chunks in zip(axes.flat, chunk_counts):
        for i, iters in enumerate(res.values("iters")):
            rows = res.select(iters=iters, n_chunks=n_chunks)
            if not rows:
                continue
            x = [r["n_streams"] for r in rows]
            ax.plot(x, [r["speedup"] for r in rows], "o-", color=f"C{i}",
                    label=f"iters={iters} ({rows[0]['flop_per_byte']:.3g} FLOP/B)")
            ax.plot(x, [r["serial_ms"] / r["ideal_ms"] for r in rows], ":", color=f"C{i}")
        plots.reference_curves(ax, res, x="n_streams", y="speedup", series="iters",
                               rows=res.select(n_chunks=n_chunks),
                               colors={it: f"C{i}" for i, it in enumerate(res.values("iters"))})
        ax.axhline(1, color="0.5", lw=0.8)
        ax.set_title(f"{n_chunks} chunks", fontsize=10)
        ax.set_ylabel("speedup over serial (x)", fontsize=8)
    axes.flat[-1].set_xlabel("streams")
    axes[0, 0].legend(fontsize=7, title="solid: measured; dotted: ideal", title_fontsize=7)
    fig.suptitle(res.label, fontsize=9)
    fig.tight_layout()
    return fig


def explore(res=None):
    """Sliders over streams, chunks and arithmetic intensity (live on a GPU).

    Widgets are imported here, not at module import: a GPU box may lack ipywidgets.
    """
    if res is not None:
        _check_res(res, "n_streams", "n_chunks", "iters")
    from .. import records, widgets

    res = res or records.run("streams_explore", live=False if SIMULATOR else None)
    return widgets.explore(res, x="n_streams", y="speedup",
                           controls={"n_chunks": list(EXPLORE_CHUNKS),
                                     "iters": list(EXPLORE_ITERS)},
                           live=None if SIMULATOR else explore_measure)


# --------------------------------------------------------------------------- checkers


class _Op:
    """One piece of work issued to a stream: its stream's key, its place in that stream
    (``tick``), what it is ordered after (``clock``: stream key -> the last tick of that
    stream it follows), and, while it waits to run in the simulator, ``run``."""

    __slots__ = ("key", "tick", "clock", "run")

    def __init__(self, key, tick, clock, run):
        self.key, self.tick, self.clock, self.run = key, tick, clock, run


def _join(*clocks) -> dict:
    out: dict = {}
    for clock in clocks:
        for key, tick in clock.items():
            if tick > out.get(key, 0):
                out[key] = tick
    return out


class _HostCopyWatch:
    """Watches host<->device copies, kernel launches, device allocations and waits while a
    student's function runs.

    Records copies and launches made without a stream (they go to the legacy default
    stream, which waits for every other stream), copies whose host side is pageable, the
    streams used, and what orders what: each piece of work carries a vector clock (per
    stream, the last work it is ordered after), advanced by the order within a stream, by
    the host's waits (``cuda.synchronize()``, the context's ``synchronize()``,
    ``stream.synchronize()``, ``event.synchronize()`` after ``event.record(stream)``), by
    ``event.wait(stream)`` on the device, and by the legacy default stream. So a race
    between two streams is seen however the waits are chained, and a wait that stops the
    host from issuing the next chunk until the previous one is done can be told from one
    that only guards a reused buffer.

    In the simulator (``lazy=True``), work issued to a stream of its own is not run at
    once, as the simulator would, but as late as the waits allow: when the host waits for
    it, or when work that must follow it runs. As on a GPU, a host buffer rewritten before
    its copy in has run, or read before its copy back has landed, then gives wrong data.

    It patches classes, not the ``numba.cuda`` names, so that a name imported before
    (``from numba.cuda import device_array``) is seen too: the device-array class's copy
    methods and slice assignment, the kernel class's launch, the stream, event and context
    classes' waits, and where memory is allocated (the driver context's ``memalloc`` on a
    GPU, a new NumPy buffer behind a simulated device array).
    """

    LEGACY = "legacy"  # the clock key of the legacy default stream

    def __init__(self, *, lazy: bool = False):
        self.lazy = bool(lazy)
        self.no_stream = 0
        self.pageable = 0
        self.copies = 0
        self.to_host = 0
        self.launches = 0
        self.launches_no_stream = 0
        # ("in" | "out", stream key) for a copy; ("wait", stream key | "device") for a wait
        # of the host: the order the host issued them in.
        self.log: list[tuple] = []
        # Every access to device memory: (stream key, first byte, past the last byte,
        # writes?, what, the op).
        self.touches: list[tuple] = []
        self.allocated = 0  # bytes of device memory allocated
        self._streams: dict = {}  # stream key -> its clock (the work issued to it so far)
        self._host: dict = {}  # what the host has waited for
        self._floor: dict = {}  # what all later work follows (the legacy default stream's)
        self._last_copy: dict = {}  # stream key -> tick of its last copy
        self._pending: list[_Op] = []  # the simulator: work not run yet, in issue order
        self._recorded: dict = {}  # id(event) -> (event, stream key, clock)
        self._buffers: dict = {}  # the simulator: id -> buffers of new device arrays
        self._inside = False  # cuda.to_device calls copy_to_device on a GPU: count once

    @staticmethod
    def _key(stream):
        # None, 0 and the legacy default stream put the work on the legacy default stream;
        # the per-thread default stream is one stream, the same every call.
        if stream is None or (isinstance(stream, int) and stream == 0):
            return None
        name = repr(stream).lower()
        if "per-thread" in name:
            return "per-thread default"
        if "default" in name:
            return None
        return id(stream)

    def _everything(self) -> dict:
        return _join(self._floor, self._host, *self._streams.values())

    def _issue(self, stream, run) -> _Op:
        """Issue work to ``stream``: give it its clock, and run it now or (lazy) later."""
        key = self._key(stream)
        work = run

        def run():  # a copy or launch made inside this one is part of it: not seen again
            self._inside, outer = True, self._inside
            try:
                return work()
            finally:
                self._inside = outer

        if key is None:  # the legacy default stream follows all work issued before it
            clock = self._everything()
            key = self.LEGACY
        else:
            clock = _join(self._streams.get(key, {}), self._host, self._floor)
        clock[key] = clock.get(key, 0) + 1
        op = _Op(key, clock[key], clock, run)
        if key == self.LEGACY:
            self._floor = _join(self._floor, clock)  # and all later work follows it
        self._streams[key] = clock
        if self.lazy and key != self.LEGACY:
            self._pending.append(op)
        else:
            self._settle(clock)
            op.run, run = None, op.run
            run()
        return op

    def _settle(self, clock: dict) -> None:
        """Run the pending work that ``clock`` follows, in the order it was issued (which
        respects every order between them)."""
        due = [op for op in self._pending if clock.get(op.key, 0) >= op.tick]
        if not due:
            return
        self._pending = [op for op in self._pending if clock.get(op.key, 0) < op.tick]
        for op in due:
            run, op.run = op.run, None
            run()

    def _host_waits(self, clock: dict, key) -> None:
        self._host = _join(self._host, clock)
        self.log.append(("wait", key))
        self._settle(self._host)

    def _wait_stream(self, stream) -> None:
        key = self._key(stream)
        if key is None:
            self._host_waits(self._everything(), "device")
        else:
            self._host_waits(self._streams.get(key, {}), key)

    def _record(self, event, stream) -> None:
        key = self._key(stream)
        clock = self._everything() if key is None else dict(self._streams.get(key, {}))
        self._recorded[id(event)] = (event, key, clock)

    def _event_synchronized(self, event) -> None:
        if id(event) in self._recorded:
            _, key, clock = self._recorded[id(event)]
            # An event on the legacy default stream follows the work of every stream.
            self._host_waits(clock, "device" if key is None else key)

    def _event_waited(self, event, stream) -> None:
        """``event.wait(stream)``: the stream's later work follows what the event did."""
        if id(event) in self._recorded:
            clock = self._recorded[id(event)][2]
            key = self._key(stream)
            if key is None:
                self._floor = _join(self._floor, clock)
            else:
                self._streams[key] = _join(self._streams.get(key, {}), clock)

    def finish(self) -> None:
        """Run what is still pending (work a GPU would still do after the function
        returned)."""
        self._settle(self._everything())

    def _note(self, host, stream, direction) -> None:
        """Count a copy (the patched calls never reach here from inside another)."""
        self.copies += 1
        self.to_host += direction == "out"
        key = self._key(stream)
        if key is None:
            self.no_stream += 1
        if host is None or (isinstance(host, np.ndarray) and not is_pinned(host)):
            self.pageable += 1  # None: copy_to_host() makes a new, pageable array
        self.log.append((direction, key))

    def _copy(self, arr, stream, direction: str, host, run):
        """Issue a copy between ``arr`` and host memory; what it returns comes back."""
        result = []

        def go():
            result.append(run())

        self._note(host, stream, direction)
        pageable = isinstance(host, np.ndarray) and not is_pinned(host)
        if direction == "out" and (host is None or pageable):
            # A copy back into pageable (or new) memory returns once it has landed: the
            # host waits for it.
            op = self._issue(stream, go)
            self._settle(op.clock)
            self._host = _join(self._host, op.clock)
        else:
            op = self._issue(stream, go)
        self._touch(arr, op, direction == "in", "a copy in" if direction == "in"
                    else "a copy back")
        if op.key == self.LEGACY:  # a copy on the legacy default stream returns when done
            self._host = _join(self._host, op.clock)
        else:
            self._last_copy[op.key] = op.tick
        return result[0] if result else None

    def _touch(self, arr, op, writes: bool, what: str) -> None:
        lo, hi = _device_span(arr)
        if hi > lo:
            self.touches.append((op.key, lo, hi, writes, what, op))

    def unordered_sharing(self):
        """The first two accesses to the same device bytes from two different streams, one
        of them a write, with nothing ordering the first before the second: ``(first what,
        second what, stream numbers)``, or None. Streams run independently, so on a GPU the
        second may overwrite data the first still needs, or read data not written yet."""
        order: dict = {}
        for i, (key, lo, hi, writes, what, op) in enumerate(self.touches):
            order.setdefault(key, len(order))
            for fkey, flo, fhi, fwrites, fwhat, fop in self.touches[:i]:
                if fkey == key or not (fwrites or writes) or fhi <= lo or hi <= flo:
                    continue
                if op.clock.get(fkey, 0) < fop.tick:
                    return fwhat, what, (order[fkey], order[key])
        return None

    def unwaited_streams(self) -> int:
        """Streams whose last copy the host never waited for (nor for the whole device):
        the function may return before their last copy back has landed."""
        return sum(1 for key, tick in self._last_copy.items()
                   if self._host.get(key, 0) < tick)

    def streams_used(self) -> int:
        """How many distinct streams the copies went to."""
        return len({e[1] for e in self.log if e[0] != "wait" and e[1] is not None})

    def serializing_waits(self) -> int:
        """Waits after which the host issues more copies although nothing else is in flight.

        A device-wide wait in the middle of the copies, or a wait on the very stream that
        just received work, leaves no other stream busy while the host goes on: the next
        chunk's copies cannot overlap the last one's. A wait on another stream (before
        reusing that stream's buffers) is fine: the stream just used keeps working.
        """
        count = 0
        last = None  # the stream that received the latest copy
        for i, e in enumerate(self.log):
            if e[0] != "wait":
                last = e[1]
                continue
            more = any(f[0] != "wait" for f in self.log[i + 1:])
            if more and last is not None and (e[1] == "device" or e[1] == last):
                count += 1
        return count

    def _patch(self, cls, name, make):
        """Replace ``cls.name`` by ``make(original)``; put back exactly on exit."""
        self._own.setdefault((cls, name), cls.__dict__.get(name))
        setattr(cls, name, make(getattr(cls, name)))

    def __enter__(self):
        import numba.cuda as nc

        watch = self
        self._own: dict = {}  # what the classes themselves defined (None: inherited)
        array_cls = type(nc.device_array(1, dtype=np.float32))

        def copy_to_device(original):
            def patched(arr, ary, stream=0, *args, **kw):
                if not isinstance(ary, np.ndarray) or watch._inside:
                    return original(arr, ary, stream, *args, **kw)
                if watch.lazy and not is_pinned(ary):
                    ary = np.array(ary)  # pageable: the host's data is taken at once
                return watch._copy(arr, stream, "in", ary,
                                   lambda: original(arr, ary, stream, *args, **kw))
            return patched

        def copy_to_host(original):
            def patched(arr, ary=None, stream=0, *args, **kw):
                if watch._inside:
                    return original(arr, ary, stream, *args, **kw)
                return watch._copy(arr, stream, "out", ary,
                                   lambda: original(arr, ary, stream, *args, **kw))
            return patched

        def setitem(original, with_stream):
            # d[...] = host data: a copy in on the legacy default stream (or the one given
            # to setitem), an assignment kernel on a GPU.
            def patched(arr, key, value, *args, **kw):
                stream = (args[0] if args else kw.get("stream", 0)) if with_stream else 0
                if watch._inside:
                    return original(arr, key, value, *args, **kw)
                host = np.array(value) if isinstance(value, np.ndarray) else value
                return watch._copy(arr, stream, "in", host,
                                   lambda: original(arr, key, host, *args, **kw))
            return patched

        self._patch(array_cls, "copy_to_device", copy_to_device)
        self._patch(array_cls, "copy_to_host", copy_to_host)
        self._patch(array_cls, "__setitem__", lambda o: setitem(o, False))
        if hasattr(array_cls, "setitem"):
            self._patch(array_cls, "setitem", lambda o: setitem(o, True))
        if SIMULATOR:
            def init(original):
                def patched(arr, ary, *args, **kw):
                    original(arr, ary, *args, **kw)
                    watch._allocated_in_simulator(ary)
                return patched
            self._patch(array_cls, "__init__", init)
        else:
            def memalloc(original):
                def patched(ctx, size, *args, **kw):
                    watch.allocated += int(size)
                    return original(ctx, size, *args, **kw)
                return patched
            context_cls = type(nc.current_context())
            for name in ("memalloc", "memallocmanaged"):
                if hasattr(context_cls, name):
                    self._patch(context_cls, name, memalloc)

        def stream_synchronize(original):
            def patched(stream, *args, **kw):
                watch._wait_stream(stream)
                return original(stream, *args, **kw)
            return patched

        def context_synchronize(original):
            def patched(ctx, *args, **kw):
                watch._host_waits(watch._everything(), "device")
                return original(ctx, *args, **kw)
            return patched

        self._patch(type(nc.stream()), "synchronize", stream_synchronize)
        # cuda.synchronize() is current_context().synchronize() (the simulator's too, once
        # gpuperf.simwarp has installed it).
        self._patch(type(nc.current_context()), "synchronize", context_synchronize)

        event_cls = type(nc.event())

        def record(original):
            def patched(event, stream=0, *args, **kw):
                watch._record(event, stream)
                return original(event, stream, *args, **kw)
            return patched

        def event_synchronize(original):
            def patched(event, *args, **kw):
                watch._event_synchronized(event)
                return original(event, *args, **kw)
            return patched

        def event_wait(original):
            def patched(event, stream=0, *args, **kw):
                watch._event_waited(event, stream)
                return original(event, stream, *args, **kw)
            return patched

        self._patch(event_cls, "record", record)
        self._patch(event_cls, "synchronize", event_synchronize)
        self._patch(event_cls, "wait", event_wait)
        def query(original):
            # An event found done orders the host after its work, as a wait on it does. In
            # the simulator (lazy) its work runs now, so the answer is always yes.
            def patched(event, *args, **kw):
                if SIMULATOR:
                    watch._event_synchronized(event)
                    return original(event, *args, **kw)
                done = original(event, *args, **kw)
                if done:
                    watch._event_synchronized(event)
                return done
            return patched

        self._patch(event_cls, "query", query)

        def getitem(original):
            def patched(kernel, config):
                launcher = original(kernel, config)
                stream = config[2] if isinstance(config, tuple) and len(config) > 2 else 0
                writes = ex.written_arguments(kernel)

                def launch(*args):
                    if watch._inside:
                        return launcher(*args)
                    watch._launched(stream)
                    op = watch._issue(stream, lambda: launcher(*args))
                    for i, arg in enumerate(args):
                        if hasattr(arg, "copy_to_host"):
                            watch._touch(arg, op, writes is None or i in writes, "a kernel")
                return launch
            return patched

        self._patch(type(add_kernel), "__getitem__", getitem)
        return self

    def _launched(self, stream) -> None:
        self.launches += 1
        self.launches_no_stream += self._key(stream) is None

    def _allocated_in_simulator(self, ary) -> None:
        """A simulated device array wraps a NumPy array: one that owns its buffer (not a
        view of another) is new device memory (gpuperf.simwarp makes ``to_device``'s so),
        counted once (``bind`` wraps the same one again)."""
        if isinstance(ary, np.ndarray) and ary.base is None and id(ary) not in self._buffers:
            self._buffers[id(ary)] = ary  # held, so that its id is not reused
            self.allocated += int(ary.nbytes)

    def __exit__(self, *exc):
        for (cls, name), fn in self._own.items():
            if fn is None:
                delattr(cls, name)
            else:
                setattr(cls, name, fn)
        return False


def _device_span(arr) -> tuple[int, int]:
    """The device bytes ``[first, past the last)`` a device array (or a slice of one) spans."""
    cai = getattr(arr, "__cuda_array_interface__", None) if not SIMULATOR else None
    if cai is not None:
        start = int(cai["data"][0])
    else:  # the simulator's arrays wrap a NumPy array
        start = int(getattr(arr, "_ary", arr).ctypes.data)
    size = int(arr.size) * arr.dtype.itemsize
    return start, start + size


# (n, n_chunks, n_streams). The last has chunks longer than a block may be (1024 threads):
# a pipeline that launches one block per chunk fails there, as on a GPU.
PIPELINE_CASES = ((1, 1, 1), (31, 4, 2), (1000, 7, 3), (1000, 8, 4), (257, 16, 4),
                  (5, 8, 3), (999, 3, 8), (2601, 2, 2))


@ex.refuses_stubs(solved_by=("pipelined", "fixed_five_streams", "shared_buffer_pipeline"))
def check_pipeline(student_fn, *, sizes=PIPELINE_CASES) -> ex.Report:
    """Check ``student_fn(a, b, out, n_streams, n_chunks)``: a pipelined ``out = a + b``
    whose device memory holds one chunk per stream.

    Sizes that do not divide into the chunks, more chunks than elements, more streams
    than chunks; pinned inputs with random offset and scale; a NaN-filled output.
    The sums are read from ``out``, whatever the function returns. Each chunk is added by a
    kernel; every copy and launch must name a stream, and every copy have a pinned host
    side; the function must wait for its streams (any of the ways: device, context, stream
    or event). Device memory is bounded (``pipeline_memory_bound``), and no device bytes may
    be used by two streams unless a wait orders them: the copies and every kernel launch
    are watched for that (a kernel's written arguments read from its source), since the
    simulator runs streams one at a time. On a GPU it also times a large case against the
    chapter's pipeline.
    """
    for _i, _s in enumerate(validate.sequence(sizes, "sizes")):
        if not (isinstance(_s, (tuple, list)) and len(_s) == 3):
            raise TypeError(f"sizes[{_i}] must be (n, n_chunks, n_streams), not {_s!r}.")
        for _d in _s:
            validate.positive_int(_d, f"sizes[{_i}]")
    chk = ex.Checker("pipelined vector add")
    if SIMULATOR:
        chk.note("the simulator does not run streams at the same time: here each stream's "
                 "copies and kernels run as late as your waits allow, and the checker looks "
                 "at which device bytes each stream's work touches and what orders it.")
    for seed in ex.seeds():
        for n, n_chunks, n_streams in sizes:
            with chk.case(f"n={n}, {n_chunks} chunks, {n_streams} streams", seed=seed):
                rng = np.random.default_rng(1000 * seed + n)
                a = pinned_copy(ex.random_array(n, rng))
                b = pinned_copy(ex.random_array(n, rng))
                out = cuda.pinned_array(n, dtype=np.float32)
                out[:] = np.nan
                with _HostCopyWatch(lazy=SIMULATOR) as watch:
                    got = student_fn(a, b, out, n_streams, n_chunks)
                    seen = np.array(out)  # what the caller reads once the function returns
                    watch.finish()
                want = reference(a, b)
                why = ex.compare(seen, want, rtol=1e-6, atol=1e-6, what="out")
                if why:
                    _explain_wrong_out(chk, why, watch, got, out, want,
                                       lambda o, a=a, b=b, s=n_streams, c=n_chunks:
                                       student_fn(a, b, o, s, c))
                    continue
                per_chunk = -(-n // n_chunks)
                if watch.launches < -(-n // per_chunk):
                    chk.fail(f"{watch.launches} kernel launch(es) for {-(-n // per_chunk)} "
                             "chunks: add each chunk on the GPU, with a kernel launched on "
                             "the chunk's stream (add_kernel[blocks, threads, s](...)), "
                             "between its copies in and its copy back.")
                elif watch.launches_no_stream:
                    chk.fail(f"{watch.launches_no_stream} of {watch.launches} kernel launches "
                             "named no stream (kernel[blocks, threads](...)): they ran on the "
                             "default stream, which waits for all other streams and blocks "
                             "them, so nothing overlaps. Launch with "
                             "kernel[blocks, threads, s](...).")
                elif watch.copies == 0:
                    chk.fail("no host<->device copy was seen: copy the chunks with "
                             "d.copy_to_device(a[lo:hi], stream=s) and "
                             "d.copy_to_host(out[lo:hi], stream=s).")
                elif watch.no_stream:
                    chk.fail(f"{watch.no_stream} of {watch.copies} copies had no stream=: they "
                             "ran on the default stream, which waits for all other streams "
                             "and blocks them, so nothing overlaps (a slice assignment "
                             "d[...] = host data always does). Copy with "
                             "d.copy_to_device(a[lo:hi], stream=s).")
                elif watch.pageable:
                    chk.fail(f"{watch.pageable} of {watch.copies} copies used pageable host "
                             "memory (copy_to_host() with no destination makes a NumPy array; "
                             "so does a[lo:hi].copy()): such a copy holds the host thread until about "
                             "the whole copy is done, so the chunks' copies queue behind one "
                             "another. Copy "
                             "straight into slices of the pinned out, from slices of a and b.")
                elif watch.unwaited_streams():
                    chk.fail(f"the function returned without waiting for "
                             f"{watch.unwaited_streams()} of its streams after their last copy: "
                             "out may be read before the last copy back lands. Call "
                             "cuda.synchronize() (or s.synchronize() for each stream) before "
                             "returning.")
                elif _check_buffers(chk, watch, n, n_chunks, n_streams):
                    _check_overlap(chk, watch, n, n_chunks, n_streams)
    if not SIMULATOR and chk.report_.ok:
        _gpu_pipeline_case(chk, student_fn)
    return chk.report()


def _explain_wrong_out(chk, why: str, watch, got, out, want, call) -> None:
    """Say why ``out`` was wrong when the function returned: a returned array in its place,
    a stream not waited for, or (in the simulator, which ran each stream's work as late as
    the waits allowed) host buffers used before their copies had run, which running every
    copy at once (``call(out)`` again, eagerly) hides."""
    def close(arr):
        return ex.compare(arr, want, rtol=1e-6, atol=1e-6, what="out")
    if got is not None and got is not out and close(got) is None:
        chk.fail("the array you returned holds the sums, but out, the pinned array passed in, "
                 "does not: copy each chunk back into out[lo:hi], which the caller reads.")
        return
    if watch.unwaited_streams():
        chk.fail(f"the function returned without waiting for {watch.unwaited_streams()} of its "
                 "streams after their last copy, and out was read before the last copies "
                 f"back had landed ({why}). Call cuda.synchronize() (or s.synchronize() for "
                 "each stream) before returning.")
        return
    if watch.lazy:
        again = cuda.pinned_array(out.shape, dtype=out.dtype)
        again[:] = np.nan
        with _HostCopyWatch():
            call(again)
        if close(again) is None:
            chk.fail(f"out is wrong ({why}) when each stream's copies and kernels run as late "
                     "as your waits allow, as they may on a GPU, where the host goes on while "
                     "a stream works; it is right only if every copy runs the moment it is "
                     "issued. A host buffer was rewritten before the copy in from it had run, "
                     "or read before the copy back into it had landed: wait for that stream "
                     "(s.synchronize(), or an event recorded after the copy) first.")
            return
    chk.fail(why)


def pipeline_memory_bound(n: int, n_chunks: int, n_streams: int) -> int:
    """The device bytes the bounded pipeline may allocate: a buffer for a, b and out of the
    largest chunk, ceil(n / n_chunks) float32 (1 when there are more chunks than elements),
    for each stream."""
    n = validate.positive_int(n, "n")
    n_chunks = validate.positive_int(n_chunks, "n_chunks")
    n_streams = validate.positive_int(n_streams, "n_streams")
    return 3 * n_streams * -(-n // min(n_chunks, n)) * 4


def _check_buffers(chk, watch, n: int, n_chunks: int, n_streams: int) -> bool:
    """Device memory for one chunk per stream, allocated once; no device bytes shared by two
    streams with nothing ordering them. False (and a failure) if not."""
    bound = pipeline_memory_bound(n, n_chunks, n_streams)
    if watch.allocated > bound:
        per_chunk = -(-n // min(n_chunks, n))
        chk.fail(f"{watch.allocated:,} bytes of device memory were allocated for n={n:,}; the "
                 f"limit is {bound:,}: three buffers of {per_chunk:,} float32 (the largest "
                 f"chunk) for each of the {n_streams} streams. Allocate one set of chunk-sized "
                 "buffers per stream, once per call, and reuse it for every chunk of that "
                 "stream (not buffers the size of the arrays, nor new ones per chunk).")
        return False
    shared = watch.unordered_sharing()
    if shared:
        first, second, (s1, s2) = shared
        chk.fail(f"{first} (stream {s1}) and {second} (stream {s2}) use the same device "
                 "bytes, one of them writing, and nothing makes one wait for the other: on a "
                 "GPU streams run at the same time, so one chunk can overwrite data another "
                 "still needs. Give each stream buffers of its own (chunk i uses the buffers "
                 "of streams[i % n_streams]): work in one stream runs in order.")
        return False
    return True


def _check_overlap(chk, watch, n: int, n_chunks: int, n_streams: int) -> None:
    """What the copies' order says about overlap: chunked, spread over streams, no wait that
    holds the host until the GPU is idle. Timing cannot show this reliably where copies are
    fast and Python's per-chunk cost is not; the order of the calls always does."""
    # The fewest chunks a chunking can have whose chunks are no longer than ceil(n / n_chunks).
    per_chunk = -(-n // n_chunks)
    chunks = -(-n // per_chunk)
    if watch.to_host < chunks:
        chk.fail(f"{watch.to_host} copies back for {chunks} chunks of at most {per_chunk} "
                 "elements: copy each chunk of out back on its own stream, right after its "
                 "kernel, so that it overlaps the next chunks' copies in.")
        return
    if n_streams < 2 or chunks < 2:
        return
    want = min(n_streams, chunks)
    used = watch.streams_used()
    if used < want:
        chk.fail(f"the copies went to {used} stream(s), not {want}: chunk i belongs on "
                 "streams[i % n_streams], or the chunks run one after another.")
    elif watch.serializing_waits():
        chk.fail(f"{watch.serializing_waits()} wait(s) inside the loop leave the GPU idle "
                 "before the next chunk is issued (cuda.synchronize(), or synchronizing the "
                 "stream that just got work): nothing overlaps. Issue every chunk, then wait "
                 "once at the end.")


def _gpu_pipeline_case(chk, student_fn, n: int = 2**24, n_chunks: int = 16, n_streams: int = 4):
    """Time the student's whole call against the chapter's ``pipelined()`` on the same data.

    Both allocate their device buffers and streams inside the call, and the two are timed
    alternately, so that neither gets a warmer GPU or an emptier host. Where the copies are
    fast, Python's per-chunk cost decides much of either time, so the bound is loose: it
    catches a pipeline that does far more work per call (a device allocation per chunk, a
    copy of the whole array), while the order of the calls (above) catches lost overlap.
    """
    with chk.case(f"GPU: n=2^24, {n_chunks} chunks, {n_streams} streams, timed"):
        a, b, out = _host_inputs(n, seed=11)
        legacy = cuda.legacy_default_stream()

        def timed(fn):
            start, end = cuda.event(), cuda.event()
            start.record(legacy)
            fn()
            end.record(legacy)
            end.synchronize()
            return start.elapsed_time(end)

        mine, chapter, one_stream = [], [], []
        for rep in range(4):
            out[:] = np.nan
            mine.append(timed(lambda: student_fn(a, b, out, n_streams, n_chunks)))
            if rep == 0 and not chk.compare(out, reference(a, b), rtol=1e-6, atol=1e-6):
                return
            chapter.append(timed(lambda: pipelined(a, b, out, n_streams=n_streams,
                                                   n_chunks=n_chunks)))
            one_stream.append(timed(lambda: serial(a, b, out)))
        # The first call of each compiles or allocates for the first time: leave it out.
        mine_ms, chapter_ms, serial_ms = (float(np.median(t[1:])) for t in (mine, chapter,
                                                                            one_stream))
        chk.note(f"on this GPU your pipeline takes {mine_ms:.2f} ms per call, the chapter's "
                 f"pipelined() {chapter_ms:.2f} ms, and the same work without overlap "
                 f"(serial()) {serial_ms:.2f} ms (medians of three calls, each allocating its "
                 "buffers).")
        chk.expect(mine_ms <= PIPELINE_SLACK * chapter_ms,
                   f"your pipeline takes {mine_ms:.2f} ms, more than {PIPELINE_SLACK}x the "
                   f"chapter's {chapter_ms:.2f} ms for the same call: allocate the device "
                   "buffers once per call (not per chunk), and copy only each chunk's slices.")


# How much slower than the chapter's pipelined() a correct pipeline may be per call. Measured
# on an H100 (2^24 floats, 16 chunks, 4 streams): the exercise's reference solution, which
# slices the device arrays inside its loop, took 1.2x the chapter's, which slices them once.
PIPELINE_SLACK = 2.0


PREDICT_CASES = [
    # (h2d, kernel, d2h per chunk, streams): equal chunks, an uneven tail, one stream,
    # too few streams to hide the copy back, more streams than chunks, kernel-bound.
    ([1.0] * 4, [0.5] * 4, [1.0] * 4, 4),
    ([2.0, 2.0, 2.0, 1.1], [0.2, 0.2, 0.2, 0.11], [1.0, 1.0, 1.0, 0.55], 3),
    ([0.7, 0.3, 0.9], [0.4, 1.2, 0.1], [0.5, 0.5, 0.5], 1),
    ([1.0] * 6, [0.3] * 6, [1.0] * 6, 2),
    ([0.4] * 3, [0.1] * 3, [0.2] * 3, 8),
    ([0.1] * 8, [1.5] * 8, [0.1] * 8, 4),
    ([3.0], [1.0], [2.0], 2),
]


@ex.refuses_stubs(solved_by=("ideal_ms", "ideal_schedule"))
def check_predict(student_fn) -> ex.Report:
    """Check ``student_fn(h2d_ms, kernel_ms, d2h_ms, n_streams) -> float``: the ideal time."""
    chk = ex.Checker("ideal pipeline time from stage times")
    rng = ex.case_rng(42)
    cases = list(PREDICT_CASES)
    for _ in range(6):
        chunks = int(rng.integers(2, 12))
        cases.append(tuple(list(np.round(rng.uniform(0.05, 2.0, chunks), 3)) for _ in range(3))
                     + (int(rng.integers(1, 6)),))
    for h, k, d, s in cases:
        with chk.case(f"{len(h)} chunks, {s} stream{'s' if s > 1 else ''}"):
            got = student_fn(list(h), list(k), list(d), s)
            want = ideal_ms(h, k, d, s)
            if not isinstance(got, (int, float, np.floating, np.integer)):
                chk.fail(f"return a number of milliseconds, not {type(got).__name__}.")
                continue
            if not math.isclose(float(got), want, rel_tol=1e-6, abs_tol=1e-9):
                hint = ""
                if math.isclose(float(got), overlap_bound_ms(h, k, d), rel_tol=1e-6):
                    hint = (" That is the busiest engine's total: it leaves out filling and "
                            "draining the pipeline.")
                elif math.isclose(float(got), sum(h) + sum(k) + sum(d), rel_tol=1e-6):
                    hint = " That is the serial time: nothing overlaps in it."
                elif s < len(h) and math.isclose(float(got), ideal_ms(h, k, d, len(h)),
                                                 rel_tol=1e-6):
                    hint = (" That would be right with one stream per chunk: with fewer, a "
                            "chunk's copy in waits for the copy out of the chunk before it in "
                            "the same stream.")
                chk.fail(f"predicted {float(got):.4g} ms, the ideal in-order pipeline takes "
                         f"{want:.4g} ms.{hint}")
    return chk.report()
