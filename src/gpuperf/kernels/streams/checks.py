"""The streams chapter's exercise checkers: ``check_pipeline`` (a chunked pipeline over
streams, watched copy by copy), ``check_predict`` (the ideal pipeline's time) and
``check_chunks`` (the same for one array in equal chunks, with the host's issue time)."""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

from gpuperf import exercises as ex
from gpuperf import validate
from gpuperf.mode import SIMULATOR

from .experiments import _host_inputs

# The checkers' solved_by names are looked up in this module: fixed_five_streams,
# shared_buffer_pipeline and ideal_schedule are imported for that alone.
from .kernels import add_kernel, fixed_five_streams, shared_buffer_pipeline  # noqa: F401
from .models import (
    chunked_ideal_ms,
    ideal_ms,
    ideal_schedule,  # noqa: F401
    overlap_bound_ms,
    reference,
)
from .pinned import is_pinned, pinned_copy
from .pipeline import pipelined, serial


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


@ex.refuses_stubs(solved_by=("pipelined", "fixed_five_streams", "shared_buffer_pipeline"),
                  judged_apart=True)
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
                chk.record(seen, want, rtol=1e-6, atol=1e-6)
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
    a, b, out = _host_inputs(n, seed=11)
    with chk.case(f"GPU: n=2^24, {n_chunks} chunks, {n_streams} streams"):
        out[:] = np.nan
        student_fn(a, b, out, n_streams, n_chunks)
        if not chk.compare(out, reference(a, b), rtol=1e-6, atol=1e-6):
            return
    # The time is a speed case: a right but slow pipeline keeps its output credit.
    with chk.case(f"speed on this GPU: n=2^24, {n_chunks} chunks, {n_streams} streams, timed",
                  kind="speed"):
        legacy = cuda.legacy_default_stream()

        def timed(fn):
            start, end = cuda.event(), cuda.event()
            start.record(legacy)
            fn()
            end.record(legacy)
            end.synchronize()
            return start.elapsed_time(end)

        mine, chapter, one_stream = [], [], []
        for _rep in range(1 + PIPELINE_TIMINGS):
            out[:] = np.nan
            mine.append(timed(lambda: student_fn(a, b, out, n_streams, n_chunks)))
            chapter.append(timed(lambda: pipelined(a, b, out, n_streams=n_streams,
                                                   n_chunks=n_chunks)))
            one_stream.append(timed(lambda: serial(a, b, out)))
        # The first call of each compiles or allocates for the first time: leave it out. The
        # best of the rest: another process on the GPU or the host (a class graded side by
        # side) only ever adds time, and it can land on either side of a pair.
        mine_ms, chapter_ms, serial_ms = (float(np.min(t[1:])) for t in (mine, chapter,
                                                                         one_stream))
        chk.note(f"on this GPU your pipeline takes {mine_ms:.2f} ms per call, the chapter's "
                 f"pipelined() {chapter_ms:.2f} ms, and the same work without overlap "
                 f"(serial()) {serial_ms:.2f} ms (best of {PIPELINE_TIMINGS} calls each, "
                 "taken in turn, each allocating its buffers).")
        chk.expect(mine_ms <= PIPELINE_SLACK * chapter_ms,
                   f"your pipeline takes {mine_ms:.2f} ms, more than {PIPELINE_SLACK}x the "
                   f"chapter's {chapter_ms:.2f} ms for the same call: allocate the device "
                   "buffers once per call (not per chunk), and copy only each chunk's slices.")


# How much slower than the chapter's pipelined() a correct pipeline may be per call, set between
# what the known answers measured on the H200 (tools/device/judge.py, 2026-12-04): the right
# pipelines (tests/right/streams) took 1.15x to 1.89x the chapter's alone and up to 2.24x with
# seven other checks sharing the GPU and the host (Python's per-chunk work decides much of
# either time); the one wrong answer only this case rejects (a host race that waits on every
# chunk's staging, tests/wrong/streams/pipeline_pinned_staging_host_race.py) took 6.43x.
PIPELINE_SLACK = 3.0
# Calls of each timed after a first one; the best counts.
PIPELINE_TIMINGS = 5


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
            chk.record(got, want, rtol=1e-6, atol=1e-9)
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


CHUNKS_CASES = [
    # (h2d, kernel, d2h totals, chunks, streams, issue per chunk): no issue cost; a host far
    # slower than the engines; one chunk; one stream; a host that falls behind partway.
    (4.0, 0.2, 4.0, 8, 4, 0.0),
    (4.0, 0.2, 4.0, 64, 4, 0.3),
    (5.0, 10.0, 5.0, 1, 2, 0.1),
    (3.0, 1.0, 2.0, 6, 1, 0.2),
    (5.0, 0.2, 5.0, 32, 4, 0.12),
    (1.0, 8.0, 1.0, 16, 3, 0.05),
]


@ex.refuses_stubs(solved_by=("chunked_ideal_ms", "ideal_ms", "ideal_schedule"))
def check_chunks(student_fn) -> ex.Report:
    """Check ``student_fn(h2d_total_ms, kernel_total_ms, d2h_total_ms, n_chunks, n_streams,
    issue_ms) -> float``: the ideal pipeline of one array in equal chunks, with the host
    issuing one chunk per ``issue_ms``."""
    chk = ex.Checker("the pipeline's time against the number of chunks")
    rng = ex.case_rng(7)
    cases = list(CHUNKS_CASES)
    for _ in range(6):
        cases.append(tuple(float(x) for x in np.round(rng.uniform(0.1, 6.0, 3), 3))
                     + (int(rng.integers(1, 40)), int(rng.integers(1, 6)),
                        float(np.round(rng.uniform(0.0, 0.4), 3))))
    for h, k, d, c, s, issue in cases:
        with chk.case(f"{c} chunks, {s} stream{'s' if s > 1 else ''}, {issue} ms to issue each"):
            got = student_fn(h, k, d, c, s, issue)
            want = chunked_ideal_ms(h, k, d, c, s, issue)
            chk.record(got, want, rtol=1e-6, atol=1e-9)
            if not isinstance(got, (int, float, np.floating, np.integer)):
                chk.fail(f"return a number of milliseconds, not {type(got).__name__}.")
                continue
            if not math.isclose(float(got), want, rel_tol=1e-6, abs_tol=1e-9):
                free = chunked_ideal_ms(h, k, d, c, s)
                hint = ""
                if issue and math.isclose(float(got), free, rel_tol=1e-6):
                    hint = " That leaves out the host's time to issue the chunks."
                elif math.isclose(float(got), free + c * issue, rel_tol=1e-6):
                    hint = (" That adds all the issue time after the pipeline: the engines "
                            "work on early chunks while the host issues later ones.")
                elif math.isclose(float(got), max(free, c * issue), rel_tol=1e-6):
                    hint = (" The host's issue time is not only a floor on the total: each "
                            "chunk's copy in waits until the host has issued that chunk.")
                chk.fail(f"predicted {float(got):.4g} ms, the ideal in-order pipeline takes "
                         f"{want:.4g} ms.{hint}")
    return chk.report()
