"""Chapter "Streams", last section: what a launch costs, the hardware queues, CUDA graphs.

A kernel launch is host work (Python, Numba's argument handling, the driver) and then a
command in one of a few hardware work queues. Two experiments measure each part:

``streams_launch_cost``: ``LAUNCHES`` launches of a kernel that does almost nothing, in one
stream, issued five ways, taking turns: Numba's ``kernel[grid, block, stream](...)``; the same with the
launch configuration made once; the same compiled kernel with its arguments packed once
(``PackedLaunch``: one driver call per launch); CuPy's launcher (where CuPy is installed); and
one CUDA graph holding all of the launches, captured from Numba's launches and replayed with one
driver call. For each: the host's time per kernel and the GPU's (CUDA events around all
of them, divided by their number). When the host is slower than the GPU, the GPU waits
between kernels, and its time per kernel is the host's.

``streams_hardware_queues``: ``QUEUE_STREAMS`` streams, two dependent one-block kernels in
each, issued stream by stream ("depth-first") or kernel by kernel ("breadth-first"), with
``CUDA_DEVICE_MAX_CONNECTIONS`` hardware queues (each count in a new process: the driver
reads it when it creates the context). Streams share the queues; a queue starts its
commands in order, so a kernel waiting for its stream's previous kernel holds back every
command behind it in the same queue. ``queue_model`` predicts the makespan in kernel
times; the experiment measures it.

The kernels: ``bump`` (adds one to a counter: every launch, captured or not, must run
exactly once) and the chapter's ``relax_kernel`` (``kernels.py``) on one block (a fixed time).
"""

from __future__ import annotations

import functools
import json
import math
import os
import subprocess
import sys
import time

import numpy as np
from numba import cuda

from gpuperf import bench, validate
from gpuperf import exercises as ex
from gpuperf.mode import SIMULATOR
from gpuperf.records import Result, experiment

from .kernels import relax_kernel
from .pipeline import _check_res

# --------------------------------------------------------------------------- kernels


@cuda.jit
def bump(counter):
    # Almost no work: the time per launch is the launch's own cost.
    if cuda.grid(1) == 0:
        counter[0] += 1


PTX_TARGETS = [(bump, "void(int64[::1])")]

# CuPy's launcher runs the same kernel, written in CUDA C++.
BUMP_CPP = r"""
extern "C" __global__ void bump(long long* counter) {
    if (blockIdx.x == 0 && threadIdx.x == 0) counter[0] += 1;
}
"""

LAUNCHES = 200  # kernels per timed batch
LAUNCH_REPEATS = 21  # timed batches per method, taking turns; the median is kept
METHODS = ("Numba: kernel[grid, block, stream](...)",
           "Numba: configuration made once",
           "CuPy: RawKernel",
           "CUDA graph of the Numba launches",
           "Numba's kernel, arguments packed once")  # launch.PackedLaunch: one driver call

# --------------------------------------------------------------------------- CUDA graphs
# Numba has no API for graphs; the driver has. Numba's launches into a stream that is
# being captured are recorded into a graph instead of run (cuStreamBeginCapture).


def _binding():
    from numba.cuda.cudadrv import driver as drv

    return drv.binding


def _ok(result, what):
    err = result[0] if isinstance(result, tuple) else result
    b = _binding()
    if err != b.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"{what} failed: {err}")
    return result[1] if isinstance(result, tuple) and len(result) > 1 else None


class CapturedGraph:
    """The launches made by ``issue(stream)``, captured once into a CUDA graph; ``launch()``
    replays all of them with one driver call in the graph's own (non-blocking) stream.

    ``stream`` is that stream as Numba sees it (for events); ``close()`` frees the driver's
    objects. GPU only (elsewhere it raises ``bench.NeedsGPU``).
    """

    def __init__(self, issue):
        validate.function(issue, "issue", what="a callable taking a Numba stream")
        bench.require_gpu("a CUDA graph")
        b = _binding()
        self._handle = _ok(b.cuStreamCreate(b.CUstream_flags.CU_STREAM_NON_BLOCKING.value),
                           "cuStreamCreate")
        self.stream = cuda.external_stream(int(self._handle))
        self._graph = self._exec = None
        mode = b.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED
        _ok(b.cuStreamBeginCapture(self._handle, mode), "cuStreamBeginCapture")
        try:
            issue(self.stream)
        finally:  # end the capture even when issue fails, or the stream stays unusable
            graph = _ok(b.cuStreamEndCapture(self._handle), "cuStreamEndCapture")
        self._graph = graph
        # CUDA 12's cuGraphInstantiate takes flags; older bindings name that form WithFlags.
        instantiate = getattr(b, "cuGraphInstantiateWithFlags", None) or b.cuGraphInstantiate
        self._exec = _ok(instantiate(graph, 0), "cuGraphInstantiate")

    def launch(self) -> None:
        b = _binding()
        _ok(b.cuGraphLaunch(self._exec, self._handle), "cuGraphLaunch")

    def close(self) -> None:
        b = _binding()
        if self._exec is not None:
            b.cuGraphExecDestroy(self._exec)
        if self._graph is not None:
            b.cuGraphDestroy(self._graph)
        cuda.synchronize()
        b.cuStreamDestroy(self._handle)
        self._exec = self._graph = None


# --------------------------------------------------------------------------- packed arguments
# Numba's kernel[grid, block](*args) types every argument and converts it to the kernel's
# parameters at every launch, in Python: most of the host time per launch that
# streams_launch_cost measures. Where the arguments never change, that can be done once.


class NotPackable(ValueError):
    """The launch cannot be packed here (the simulator, or an argument that is not a
    C-contiguous device array or an integer): launch through Numba instead."""


@functools.lru_cache(maxsize=None, typed=True)
def _numpy_dtype(ty) -> np.dtype:
    from numba.np.numpy_support import as_dtype

    return as_dtype(ty.dtype)


def _array_params(ty, arg) -> list:
    """The parameters of one array argument as Numba's array model lays them out:
    meminfo, parent, number of items, item size, data pointer, shape, strides."""
    import ctypes

    cai = getattr(arg, "__cuda_array_interface__", None)
    if cai is None or ty.layout != "C":
        raise NotPackable(f"an array argument of type {ty} is not a C-contiguous device array")
    shape = tuple(int(d) for d in cai["shape"])
    dtype = np.dtype(cai["typestr"])
    if len(shape) != ty.ndim or dtype != _numpy_dtype(ty):
        raise NotPackable(f"an array of {dtype} and shape {shape} does not match the type {ty}")
    strides, step = [], dtype.itemsize
    for d in reversed(shape):
        strides.append(step)
        step *= d
    strides = tuple(reversed(strides))
    if cai.get("strides") not in (None, strides):
        raise NotPackable(f"the array's strides {cai['strides']} are not C-contiguous")
    size = math.prod(shape)
    return ([ctypes.c_void_p(0), ctypes.c_void_p(0), ctypes.c_ssize_t(size),
             ctypes.c_ssize_t(dtype.itemsize), ctypes.c_void_p(int(cai["data"][0]))]
            + [ctypes.c_ssize_t(d) for d in shape] + [ctypes.c_ssize_t(s) for s in strides])


def _params_of(ty, arg) -> list:
    import ctypes

    from numba.core import types

    if isinstance(ty, types.Array):
        return _array_params(ty, arg)
    if isinstance(ty, types.Integer):
        info = np.iinfo(f"{'' if ty.signed else 'u'}int{ty.bitwidth}")
        if not info.min <= int(arg) <= info.max:  # ctypes would wrap it around silently
            raise NotPackable(f"{arg} does not fit the parameter's type {ty}")
        return [getattr(ctypes, f"c_{ty}")(int(arg))]
    raise NotPackable(f"an argument of type {ty} is not packed (arrays and integers only)")


def kernel_params(argtypes, args) -> list:
    """The ctypes values a compiled Numba kernel of parameter types ``argtypes`` receives for
    ``args``, in order (what Numba builds at each launch). Device arrays of the parameter's
    dtype, dimensions and C layout, and integers; anything else raises :class:`NotPackable`."""
    if len(argtypes) != len(args):
        raise NotPackable(f"{len(args)} arguments for {len(argtypes)} parameters")
    return [v for ty, arg in zip(argtypes, args) for v in _params_of(ty, arg)]


class PackedLaunch:
    """``kernel[grid, block, stream](*args)``, its arguments converted to the kernel's
    parameters once: each call is then one driver call (``cuLaunchKernel``). ``stream``:
    a Numba stream, or None for the default stream. ``set_argument(i, value)`` points one
    argument elsewhere (another array of the same type, another integer) in place.

    The kernel is compiled (not run) when this is built. Raises :class:`NotPackable` under
    the simulator or for arguments it does not pack; the caller then launches through Numba.
    It keeps the arrays' addresses, not the arrays: they must stay alive while it is called.
    """

    def __init__(self, kernel, grid: int, block: int, *args, stream=None):
        import ctypes

        validate.kernel(kernel, "kernel")
        grid = validate.positive_int(grid, "grid", maximum=2**31 - 1)
        block = validate.positive_int(block, "block", maximum=1024)
        if SIMULATOR:
            raise NotPackable("the simulator has no driver")
        try:
            argtypes = tuple(kernel.typeof_pyval(a) for a in args)
            # compile() of a kernel compiled ahead from a signature raises RuntimeError for
            # types it was not compiled for, where Numba's own launch would convert them.
            compiled = kernel.compile(argtypes)
            if getattr(compiled, "debug", False) or getattr(compiled, "cooperative", False) \
                    or getattr(compiled, "extensions", None) \
                    or getattr(compiled, "launch_config_sensitive", False):
                raise NotPackable("a debug, cooperative, extended or launch-configuration-"
                                  "sensitive kernel (Numba's launch does more for these)")
            cufunc = compiled._codelibrary.get_cufunc()
            self._argtypes = tuple(compiled.argument_types)
        except (AttributeError, TypeError, RuntimeError) as err:
            raise NotPackable(f"this kernel cannot be packed here: {err}") from err
        b = _binding()
        handle = cufunc.handle
        if type(handle).__name__ == "CUkernel":  # cuda.core loads kernels from a library
            handle = _ok(b.cuKernelGetFunction(handle), "cuKernelGetFunction")
        self._function = handle
        if len(self._argtypes) != len(args):
            raise NotPackable(f"{len(args)} arguments for {len(self._argtypes)} parameters")
        self._slots = [_params_of(ty, a) for ty, a in zip(self._argtypes, args)]
        values = [v for slot in self._slots for v in slot]
        self._pointers = (ctypes.c_void_p * max(1, len(values)))(
            *[ctypes.addressof(v) for v in values])
        self._address = ctypes.addressof(self._pointers)
        # None: Numba's default stream, so that events recorded the usual way bracket these
        # launches. A handle is a driver object in some numba-cuda versions, a ctypes pointer
        # in others.
        self._numba_stream = cuda.default_stream() if stream is None else stream  # kept alive
        handle = self._numba_stream.handle
        self._stream = b.CUstream(int(getattr(handle, "value", handle) or 0))
        self.grid, self.block = grid, block

    def set_argument(self, index: int, value) -> None:
        """Make argument ``index`` ``value`` for the next launches (same type as before)."""
        index = validate.positive_int(index, "index", minimum=0,
                                      maximum=len(self._argtypes) - 1)
        new = _params_of(self._argtypes[index], value)
        for slot, v in zip(self._slots[index], new):
            slot.value = v.value

    def __call__(self) -> None:
        _ok(_binding().cuLaunchKernel(self._function, self.grid, 1, 1, self.block, 1, 1, 0,
                                      self._stream, self._address, 0), "cuLaunchKernel")


# --------------------------------------------------------------------------- launch cost


def _cupy_bump():
    """(cupy, the compiled RawKernel), or None where CuPy cannot run here."""
    if SIMULATOR:
        return None
    try:
        import cupy as cp

        kernel = cp.RawKernel(BUMP_CPP, "bump")
        c = cp.zeros(1, cp.int64)
        kernel((1,), (32,), (c,))  # compiles now, outside any timing
        cp.cuda.runtime.deviceSynchronize()
        return cp, kernel
    except Exception:  # noqa: BLE001 - no CuPy, or none for this CUDA: the row is skipped
        return None


def _one_batch(issue, stream, launches: int) -> tuple[float, float]:
    """(host, GPU) microseconds per kernel of one call of ``issue()``, which launches
    ``launches`` kernels into ``stream``: the issuing call on the host clock, and events in
    ``stream`` around it."""
    start, end = cuda.event(), cuda.event()
    cuda.synchronize()
    start.record(stream)
    t = time.perf_counter()
    issue()
    host = 1e6 * (time.perf_counter() - t) / launches
    end.record(stream)
    end.synchronize()
    return host, 1e3 * start.elapsed_time(end) / launches


def launch_cost_rows(launches: int = LAUNCHES, repeats: int = LAUNCH_REPEATS,
                     progress=print) -> list[dict]:
    """The rows of ``streams_launch_cost`` (see the module's doc): one per method that runs
    here, each checked to have run every kernel exactly once (``counted``).

    The methods take turns: each repeat times one batch of every method, so that a slow
    moment of the host (another process, a clock change) falls on all of them alike; the
    garbage collector is off while they run. Medians of ``repeats`` batches, after one
    untimed batch of each."""
    validate.positive_int(launches, "launches")
    validate.positive_int(repeats, "repeats")
    bench.require_gpu("launch_cost_rows")
    methods = []  # (name, issue(), stream, read the counter, extra columns)
    stream = cuda.stream()

    plain_count = cuda.to_device(np.zeros(1, np.int64))

    def numba_launches():
        for _ in range(launches):
            bump[1, 32, stream](plain_count)

    configured = bump[1, 32, stream]
    configured_count = cuda.to_device(np.zeros(1, np.int64))

    def configured_launches():
        for _ in range(launches):
            configured(configured_count)

    methods.append((METHODS[0], numba_launches, stream,
                    lambda: int(plain_count.copy_to_host()[0]), {}))
    methods.append((METHODS[1], configured_launches, stream,
                    lambda: int(configured_count.copy_to_host()[0]), {}))

    packed_count = cuda.to_device(np.zeros(1, np.int64))
    try:
        packed = PackedLaunch(bump, 1, 32, packed_count, stream=stream)
    except NotPackable as err:
        progress(f"{METHODS[4]}: not available here, skipped: {err}")
    else:
        def packed_launches():
            for _ in range(launches):
                packed()

        methods.append((METHODS[4], packed_launches, stream,
                        lambda: int(packed_count.copy_to_host()[0]), {}))

    cupy = _cupy_bump()
    if cupy is None:
        progress(f"{METHODS[2]}: CuPy cannot run here, skipped")
    else:
        cp, kernel = cupy
        c = cp.zeros(1, cp.int64)
        cp_stream = cp.cuda.Stream()

        def cupy_launches():
            with cp_stream:
                for _ in range(launches):
                    kernel((1,), (32,), (c,))

        # the same stream seen by Numba, for the events
        methods.append((METHODS[2], cupy_launches, cuda.external_stream(cp_stream.ptr),
                        lambda: int(c.get()[0]), {}))

    graph_counter = cuda.to_device(np.zeros(1, np.int64))
    bump[1, 32](graph_counter)  # loads the kernel before the capture
    graph_counter = cuda.to_device(np.zeros(1, np.int64))
    cuda.synchronize()

    def capture(s):
        for _ in range(launches):
            bump[1, 32, s](graph_counter)

    graph = None
    t0 = time.perf_counter()
    try:
        graph = CapturedGraph(capture)
    except Exception as err:  # noqa: BLE001 - reported in the progress, the other rows stand
        progress(f"{METHODS[3]}: capture failed here, skipped: {type(err).__name__}: {err}")
    if graph is not None:
        methods.append((METHODS[3], graph.launch, graph.stream,
                        lambda: int(graph_counter.copy_to_host()[0]),
                        {"build_ms": 1e3 * (time.perf_counter() - t0)}))

    import gc

    was_enabled = gc.isenabled()
    samples = {name: [] for name, *_ in methods}
    try:
        for _name, issue, s, _read, _extra in methods:
            _one_batch(issue, s, launches)  # warms up
        gc.disable()
        for _ in range(repeats):
            for name, issue, s, _read, _extra in methods:
                samples[name].append(_one_batch(issue, s, launches))
    finally:
        if was_enabled:
            gc.enable()
        cuda.synchronize()
    rows = []
    for name, _issue, _s, read, extra in methods:
        host = [h for h, _ in samples[name]]
        gpu = [g for _, g in samples[name]]
        rows.append({"method": name, "launches": launches,
                     "host_us": float(np.median(host)), "gpu_us": float(np.median(gpu)),
                     "host_spread": bench.Timing(host).spread,
                     "gpu_spread": bench.Timing(gpu).spread,
                     "counted": read() == (repeats + 1) * launches, **extra})
        progress(f"{name}: host {rows[-1]['host_us']:.1f} us, GPU {rows[-1]['gpu_us']:.1f} us "
                 "per kernel")
    if graph is not None:
        graph.close()
    return rows


@experiment("streams_launch_cost", chapter="streams",
            title="What a kernel launch costs the host and the GPU, and a CUDA graph of them",
            units={"host_us": "us", "gpu_us": "us", "build_ms": "ms"})
def launch_cost_experiment(progress):
    return launch_cost_rows(progress=progress)


def launch_cost_summary(res) -> list[dict]:
    """One row per method of ``streams_launch_cost``: ``host_us`` and ``gpu_us`` per kernel,
    ``host_bound`` (the GPU's time per kernel within 20% of the host's or below it: the
    GPU waited for the host), and ``x_graph`` (the GPU's time per kernel as a multiple of the
    graph's; None without a graph row)."""
    _check_res(res, "method", "host_us", "gpu_us", "gpu_spread", "counted")
    graph = [r for r in res.rows if r["method"] == METHODS[3]]
    g = graph[0]["gpu_us"] if graph else None
    return [{"method": r["method"], "host_us": r["host_us"], "gpu_us": r["gpu_us"],
             "spread_pct": 100 * r["gpu_spread"],
             "host_bound": r["gpu_us"] <= 1.2 * r["host_us"],
             "x_graph": r["gpu_us"] / g if g else None, "counted": r["counted"]}
            for r in res.rows]


def show_launch_cost(res) -> list[dict]:
    """Show :func:`launch_cost_summary` as a table; return its rows."""
    rows = launch_cost_summary(res)
    n = res.rows[0]["launches"]
    print(f"On {res.gpu}: {n} launches of a kernel that adds one to a counter, in one stream; "
          "microseconds per kernel, the median of the batches.")
    graph = [r for r in res.rows if r.get("build_ms") is not None]
    note = ("spread: the GPU time's spread over the batches (interquartile range over "
            "the median). Host-bound: the GPU's time per kernel is within 20% of the host's, "
            "or below it (the GPU waited for the host). Over the graph: the GPU's time per "
            "kernel over the graph's. Every launch ran: the counter shows every launch ran "
            "exactly once.")
    if graph:
        note += (f" Capturing and instantiating the graph of {n} launches took "
                 f"{graph[0]['build_ms']:.1f} ms, once.")
    Result("streams_launch_cost (summary)", rows, res.meta, res.source).show(
        note=note, headers={"method": "method", "host_us": "host (µs)", "gpu_us": "GPU (µs)",
                            "spread_pct": "spread (%)", "host_bound": "host bound",
                            "x_graph": "over the graph (x)", "counted": "every launch ran"})
    by = {r["method"]: r for r in rows}
    numba, once, cupy, grf, packed = (by.get(m) for m in METHODS)
    ratios = []
    if numba and once:
        # A change within the repeats' spread (of either row's host time) is not a saving.
        spread = max((r.get("host_spread") or 0.0) for r in res.rows
                     if r["method"] in (numba["method"], once["method"]))
        x = once["host_us"] / numba["host_us"]
        ratios.append(f"the configuration made once: {x:.2f}x Numba's host time per launch"
                      + (f", within the {100 * spread:.0f}% spread of the repeats: no measurable "
                         "change" if abs(1 - x) <= spread else ""))
    if numba and packed:
        ratios.append(f"the arguments packed once: {packed['host_us'] / numba['host_us']:.2f}x "
                      "Numba's host time per launch")
    if numba and cupy:
        ratios.append(f"Numba's host time per launch: {numba['host_us'] / cupy['host_us']:.1f}x "
                      "CuPy's")
    if numba and grf:
        ratios.append(f"the GPU's time per kernel, Numba's launches against the graph: "
                      f"{numba['gpu_us'] / grf['gpu_us']:.1f}x")
        build = next((r["build_ms"] for r in res.rows if r.get("build_ms") is not None), None)
        if build is not None:
            batch_ms = numba["host_us"] * n / 1e3
            ratios.append(f"capturing the graph cost as much as {build / batch_ms:.1f} batches "
                          f"of {n} Numba launches")
    for line in ratios:
        print(line)
    return rows


# --------------------------------------------------------------------------- hardware queues

QUEUE_STREAMS = 16
QUEUE_KERNEL_MS = 10.0  # long beside the time to issue the 32 launches (a few ms in Numba)
QUEUE_REPEATS = 3
ORDERS = ("depth-first", "breadth-first")
DEFAULT_CONNECTIONS = 8  # CUDA's default for CUDA_DEVICE_MAX_CONNECTIONS
QUEUE_CONNECTIONS = (1, 2, DEFAULT_CONNECTIONS, 32)  # 32 is the most the driver accepts
CONNECTIONS_VAR = "CUDA_DEVICE_MAX_CONNECTIONS"


def queue_model(n_streams: int, connections: int, order: str, kernels_per_stream: int = 2,
                *, events: bool = False) -> int:
    """The makespan, in kernel times, of ``kernels_per_stream`` dependent kernels in each of
    ``n_streams`` streams spread round-robin over ``connections`` in-order hardware queues,
    when every kernel fits on the GPU beside the others. ``m`` is the number of streams in
    the fullest queue, ``k`` the kernels per stream.

    A queue starts its commands in order: a command waiting for its stream holds back every
    command behind it. Breadth-first, a queue holds every stream's first kernel before any
    second one: all first kernels start at once, and the makespan is ``k``. Depth-first,
    the next stream's first kernel cannot start before the previous stream's last kernel
    has started: ``(m - 1) (k - 1) + k``.

    ``events=True``: an event is also recorded after each stream's last kernel. An event is
    a command of its stream's queue that waits for its stream's work, so it holds back the
    queue until the kernel before it ends: depth-first, the streams of one queue run one
    after another (``m k``); breadth-first, all but the last kernels overlap, then the last
    kernels run one after another (``k - 1 + m``).
    """
    validate.positive_int(n_streams, "n_streams")
    validate.positive_int(connections, "connections")
    validate.positive_int(kernels_per_stream, "kernels_per_stream")
    validate.choice(order, "order", ORDERS)
    validate.boolean(events, "events")
    k, m = kernels_per_stream, math.ceil(n_streams / connections)
    if order == "breadth-first":
        return k - 1 + m if events else k
    return m * k if events else (m - 1) * (k - 1) + k


def issue_order(n_streams: int, order: str, kernels_per_stream: int = 2) -> list[tuple]:
    """The launches as (stream, kernel of that stream) pairs, in the order they are issued:
    depth-first, all of stream 0's kernels, then stream 1's, ...; breadth-first, every
    stream's kernel 0, then every stream's kernel 1, ..."""
    validate.positive_int(n_streams, "n_streams")
    validate.positive_int(kernels_per_stream, "kernels_per_stream")
    validate.choice(order, "order", ORDERS)
    if order == "depth-first":
        return [(s, j) for s in range(n_streams) for j in range(kernels_per_stream)]
    return [(s, j) for j in range(kernels_per_stream) for s in range(n_streams)]


TIMINGS = ("host clock", "an event in every stream")


def _queue_rows_here(n_streams: int, iters: int, repeats: int = QUEUE_REPEATS) -> list[dict]:
    """In this process (its connection count fixed when its context was made): per order and
    timing, the makespan (the median of ``repeats`` after one untimed run) and one kernel
    alone timed the same way (``kernel_ms``).

    Timings: "host clock", from just before the first launch until ``cuda.synchronize()``
    returns (it includes the time to issue the launches, ``issue_ms``); "an event in every
    stream", from an event recorded before the first launch to the last of the events
    recorded after each stream's last kernel. The events are commands in the queues too."""
    n = 32  # one warp of one block: every kernel fits beside the others
    rng = np.random.default_rng(11)
    a, b = (cuda.to_device(ex.random_array(n, rng)) for _ in range(2))
    outs = [cuda.device_array(n, np.float32) for _ in range(n_streams)]
    streams = [cuda.stream() for _ in range(n_streams)]

    def once(plan, timing):
        cuda.synchronize()
        with_events = timing == TIMINGS[1]
        if with_events:
            start = cuda.event()
            start.record(streams[0])
        ends = []
        t0 = time.perf_counter()
        for s, last in plan:
            relax_kernel[1, n, streams[s]](a, b, outs[s], iters)
            if with_events and last:
                e = cuda.event()
                e.record(streams[s])
                ends.append(e)
        issued = time.perf_counter()
        cuda.synchronize()
        t1 = time.perf_counter()
        if with_events:
            return max(start.elapsed_time(e) for e in ends), 1e3 * (issued - t0)
        return 1e3 * (t1 - t0), 1e3 * (issued - t0)

    def median_of(plan, timing):
        once(plan, timing)  # warms up
        runs = [once(plan, timing) for _ in range(repeats)]
        return (float(np.median([r[0] for r in runs])),
                float(np.median([r[1] for r in runs])))

    rows = []
    for timing in TIMINGS:
        kernel_ms, _ = median_of([(0, True)], timing)
        for order in ORDERS:
            plan = [(s, j == 1) for s, j in issue_order(n_streams, order)]
            ms, issue_ms = median_of(plan, timing)
            rows.append({"timing": timing, "order": order, "makespan_ms": ms,
                         "kernel_ms": kernel_ms, "issue_ms": issue_ms})
    return rows


def _queue_script(n_streams: int, iters: int, repeats: int) -> str:
    return ("import json\n"
            "from gpuperf.kernels.streams import launch\n"
            f"rows = launch._queue_rows_here({n_streams}, {iters}, {repeats})\n"
            "print(json.dumps(rows))\n")


def _queue_rows_in_new_process(connections: int, n_streams: int, iters: int,
                               repeats: int) -> list[dict]:
    env = dict(os.environ, **{CONNECTIONS_VAR: str(connections)})
    # src/gpuperf/kernels/streams/launch.py -> src
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    done = subprocess.run([sys.executable, "-c", _queue_script(n_streams, iters, repeats)],
                          capture_output=True, text=True, timeout=300, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"the process with {CONNECTIONS_VAR}={connections} failed: "
                           f"{done.stderr.strip()[-500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _queue_iters(target_ms: float) -> int:
    """The steps of ``relax_kernel`` on one warp that take about ``target_ms`` here."""
    n = 32
    rng = np.random.default_rng(11)
    a, b = (cuda.to_device(ex.random_array(n, rng)) for _ in range(2))
    out = cuda.device_array(n, np.float32)
    probe = 2**14
    t = bench.time_kernel(lambda: relax_kernel[1, n](a, b, out, probe), min_repeat=3,
                          min_time=0.01)
    return int(min(2**26, max(probe, probe * target_ms / t.median_ms)))


def hardware_queue_rows(connections=QUEUE_CONNECTIONS, n_streams: int = QUEUE_STREAMS,
                        kernel_ms: float = QUEUE_KERNEL_MS, repeats: int = QUEUE_REPEATS,
                        progress=print) -> list[dict]:
    """The rows of ``streams_hardware_queues``: per connection count and order, the measured
    makespan, one kernel alone, their ratio (``in_kernels``) and ``queue_model``'s
    prediction. Each count runs in a new process of its own: the driver reads the variable
    when it creates the process's context, so this process's count is whatever it was then,
    which the environment now need not say."""
    validate.positive_int(n_streams, "n_streams")
    validate.positive_int(repeats, "repeats")
    validate.positive(kernel_ms, "kernel_ms")
    counts = validate.sequence(connections, "connections")
    for i, c in enumerate(counts):  # the driver's range: 1 to 32
        validate.positive_int(c, f"connections[{i}]", maximum=32)
    bench.require_gpu("hardware_queue_rows")
    iters = _queue_iters(kernel_ms)
    rows = []
    for c in counts:
        got = _queue_rows_in_new_process(c, n_streams, iters, repeats)
        for r in got:
            rows.append({"connections": c, "timing": r["timing"], "order": r["order"],
                         "n_streams": n_streams, "makespan_ms": r["makespan_ms"],
                         "kernel_ms": r["kernel_ms"], "issue_ms": r["issue_ms"],
                         "in_kernels": r["makespan_ms"] / r["kernel_ms"],
                         "model": queue_model(n_streams, c, r["order"],
                                              events=r["timing"] == TIMINGS[1])})
        progress(f"{c} connections: " + ", ".join(
            f"{r['order']} {r['makespan_ms'] / r['kernel_ms']:.1f} kernel times "
            f"({r['timing']})" for r in got))
    return rows


@experiment("streams_hardware_queues", chapter="streams",
            title="Streams sharing CUDA_DEVICE_MAX_CONNECTIONS hardware queues: depth-first "
                  "against breadth-first issue",
            units={"makespan_ms": "ms", "kernel_ms": "ms"})
def hardware_queues_experiment(progress):
    return hardware_queue_rows(progress=progress)


def show_hardware_queues(res) -> list[dict]:
    """Show ``streams_hardware_queues`` as a table (measured against the model, in kernel
    times); return its rows."""
    _check_res(res, "connections", "timing", "order", "n_streams", "makespan_ms", "kernel_ms",
               "issue_ms", "in_kernels", "model")
    r0 = res.rows[0]
    print(f"On {res.gpu}: {r0['n_streams']} streams, two dependent one-block kernels in each "
          f"(one kernel alone: {r0['kernel_ms']:.2f} ms).")
    rows = [{"connections": r["connections"], "timing": r["timing"], "order": r["order"],
             "makespan_ms": r["makespan_ms"], "issue_ms": r["issue_ms"],
             "in_kernels": r["in_kernels"], "model": r["model"]} for r in res.rows]
    Result("streams_hardware_queues (summary)", rows, res.meta, res.source).show(
        headers={"connections": "hardware queues", "timing": "timing", "order": "issue order",
                 "makespan_ms": "makespan (ms)", "issue_ms": "issue (ms)",
                 "in_kernels": "in kernel times", "model": "model"},
        note="issue: the host's time to issue the 32 launches. In kernel times: the makespan "
             "over one kernel's time alone, both timed the same way. Model: the prediction of the "
             "round-robin queue model above, in the same unit (counting each event as a queue "
             "entry for the rows timed with an event in every stream).")
    return rows
