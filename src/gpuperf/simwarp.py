"""Warp-level intrinsics for Numba's CUDA simulator.

The simulator runs every CUDA thread of a block (as a Python thread, or a greenlet:
``gpuperf.simblock``), but it has no
``syncwarp``, ``shfl_*_sync``, ``ballot_sync``, ``any_sync``, ``all_sync`` or
``activemask``. This module adds them to the simulator's fake ``cuda`` module so
that warp-shuffle kernels run, unchanged, on a laptop.

How it works: the lanes named in ``mask`` meet at a barrier of their own (one per
warp and mask). Each lane publishes its value, all wait, each reads the value it
asked for, and all wait again so the slots can be reused.

A lane named in ``mask`` that does not exist (a partial last warp) is an error at
once; a lane that exists but never arrives (it returned early, or took another
branch) is an error as soon as nothing else can run where the block's threads are
greenlets (``gpuperf.simblock``, the default), or after a timeout with the simulator's
own threads. Either way the kernel fails loudly instead of hanging, with a message that
names the lanes.

Shared arrays are also filled with garbage (NaN for floats) when they are created,
because real shared memory starts with whatever the last block left there: a
kernel that assumes zeros must fail here too. A launch a GPU refuses (a block of more
than 1024 threads, an empty grid) is refused here too (``LaunchError``), with the rule
it breaks, where the simulator would run any number of Python threads.

Installed by ``import gpuperf`` in simulator mode only; never on a real GPU.
"""

from __future__ import annotations

import contextlib
import os
import threading

import numpy as np

from . import simblock

FULL_MASK = 0xFFFFFFFF
WARP_SIZE = 32
# Seconds a lane waits for the others before declaring the warp broken. Simulated
# threads are slow, so this is generous; set GPUPERF_SIM_WARP_TIMEOUT to change it.
_TIMEOUT = float(os.environ.get("GPUPERF_SIM_WARP_TIMEOUT", "20"))

_installed = False
_registry_lock = threading.Lock()
_warps: dict = {}


class WarpSyncError(RuntimeError):
    """A warp-synchronous intrinsic was used in a way that would hang or be undefined."""


def _lanes(mask: int) -> list[int]:
    return [lane for lane in range(WARP_SIZE) if (mask >> lane) & 1]


class _WarpMeeting:
    def __init__(self, parties: int):
        self.barrier = threading.Barrier(parties, timeout=_TIMEOUT)
        self.values = [None] * WARP_SIZE


def _context(op: str, mask: int):
    """The calling thread's lane, and the meeting point for ``mask`` in its warp."""
    t = simblock.current_thread()
    manager = getattr(t, "_manager", None)
    if manager is None:
        raise WarpSyncError(f"cuda.{op} can only be called inside a kernel.")
    mask = int(mask) & FULL_MASK
    tid = t.thread_id
    lane, warp = tid % WARP_SIZE, tid // WARP_SIZE
    if not (mask >> lane) & 1:
        raise WarpSyncError(
            f"cuda.{op}: lane {lane} of warp {warp} (thread {tuple(t.threadIdx)}) called it "
            f"but its own bit is not set in mask {mask:#010x}. Every calling lane must be "
            "in the mask."
        )
    block_threads = int(np.prod(manager._block_dim))
    missing = [ln for ln in _lanes(mask) if warp * WARP_SIZE + ln >= block_threads]
    if missing:
        raise WarpSyncError(
            f"cuda.{op}: mask {mask:#010x} names lanes {missing[0]}..{missing[-1]} of warp "
            f"{warp}, but the block has only {block_threads} threads, so those lanes do "
            "not exist and the call would hang on a GPU. Use a block size that is a "
            "multiple of 32, or a mask with only the lanes that exist."
        )
    if isinstance(t, simblock.GreenThread):  # the block's threads are greenlets
        meetings = manager.__dict__.setdefault("_meetings", {})
        meeting = meetings.get((warp, mask))
        if meeting is None:
            meeting = meetings[(warp, mask)] = simblock.GreenMeeting(_lanes(mask), warp, mask)
        return lane, warp, mask, meeting
    key = (id(manager), tuple(t.blockIdx), warp, mask)
    with _registry_lock:
        meeting = _warps.get(key)
        if meeting is None or meeting.barrier.broken:
            meeting = _warps[key] = _WarpMeeting(len(_lanes(mask)))
    return lane, warp, mask, meeting


def _wait(meeting, op: str, warp: int, mask: int):
    if isinstance(meeting, simblock.GreenMeeting):
        meeting.wait(op)
        return
    try:
        meeting.barrier.wait()
    except threading.BrokenBarrierError:
        waiting = meeting.barrier.n_waiting
        raise WarpSyncError(
            f"cuda.{op}: not every lane in mask {mask:#010x} of warp {warp} reached this "
            f"call within {_TIMEOUT:g} s ({waiting} were waiting). A lane named in the mask "
            "returned early or took another branch; on a GPU this hangs or is undefined. "
            "Make every lane in the mask execute the same call (move early returns below "
            "it), or pass a mask of only the lanes that reach it."
        ) from None


def _exchange(op: str, mask: int, value, pick):
    """Publish ``value``; return ``pick(lane, values)`` once every lane has published."""
    lane, warp, mask, meeting = _context(op, mask)
    meeting.values[lane] = value
    _wait(meeting, op, warp, mask)
    result = pick(lane, meeting.values, mask)
    _wait(meeting, op, warp, mask)
    return result


def _from_lane(op: str, src: int, lane: int, values, mask: int):
    if not (0 <= src < WARP_SIZE):
        return values[lane]
    if not (mask >> src) & 1:
        raise WarpSyncError(
            f"cuda.{op}: lane {lane} reads lane {src}, which is not in mask {mask:#010x}; "
            "on a GPU the value is undefined. Include that lane in the mask."
        )
    return values[src]


def syncwarp(self, mask=FULL_MASK):
    _exchange("syncwarp", mask, None, lambda lane, values, m: None)


def shfl_sync(self, mask, value, src_lane):
    return _exchange(
        "shfl_sync", mask, value,
        lambda lane, v, m: _from_lane("shfl_sync", int(src_lane) % WARP_SIZE, lane, v, m),
    )


def shfl_up_sync(self, mask, value, delta):
    return _exchange(
        "shfl_up_sync", mask, value,
        lambda lane, v, m: _from_lane("shfl_up_sync", lane - int(delta), lane, v, m),
    )


def shfl_down_sync(self, mask, value, delta):
    return _exchange(
        "shfl_down_sync", mask, value,
        lambda lane, v, m: _from_lane("shfl_down_sync", lane + int(delta), lane, v, m),
    )


def shfl_xor_sync(self, mask, value, lane_mask):
    return _exchange(
        "shfl_xor_sync", mask, value,
        lambda lane, v, m: _from_lane("shfl_xor_sync", lane ^ int(lane_mask), lane, v, m),
    )


def _ballot_bits(values, mask):
    bits = 0
    for ln in _lanes(mask):
        if values[ln]:
            bits |= 1 << ln
    return bits


def ballot_sync(self, mask, predicate):
    return _exchange("ballot_sync", mask, bool(predicate), lambda lane, v, m: _ballot_bits(v, m))


def any_sync(self, mask, predicate):
    return _exchange(
        "any_sync", mask, bool(predicate), lambda lane, v, m: int(_ballot_bits(v, m) != 0)
    )


def all_sync(self, mask, predicate):
    return _exchange(
        "all_sync", mask, bool(predicate),
        lambda lane, v, m: int(_ballot_bits(v, m) == m),
    )


def activemask(self):
    """Lanes of the caller's warp that exist and have not finished.

    The simulator cannot see divergence inside a warp, so lanes that took another
    branch still count as active here.
    """
    t = simblock.current_thread()
    manager = t._manager
    warp = t.thread_id // WARP_SIZE
    block_threads = int(np.prod(manager._block_dim))
    first = warp * WARP_SIZE
    mask = 0
    for lane in range(WARP_SIZE):
        if first + lane < block_threads:
            mask |= 1 << lane
    return mask


_float_poison = np.nan  # what a new float shared array holds in the simulator


@contextlib.contextmanager
def shared_poison(value: float):
    """Inside the block, new float shared arrays in the simulator start full of ``value``
    instead of NaN: a checker of a max picks +inf (NaN is not absorbing for ``max``:
    ``max(x, nan)`` is ``x``), so a slot that nothing wrote still shows in the result."""
    global _float_poison
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)):
        raise TypeError(f"value must be a float (e.g. math.inf), not {type(value).__name__}.")
    old, _float_poison = _float_poison, float(value)
    try:
        yield
    finally:
        _float_poison = old


def _poisoned_shared_array(self, shape, dtype, alignment=None):
    """The simulator's ``cuda.shared.array``, with new allocations filled with garbage.

    The simulator's own logic keeps one allocation per calling source line, so two shared
    arrays declared on one line (``a = cuda.shared.array(...); b = cuda.shared.array(...)``)
    became one array. Here an allocation belongs to the calling instruction (its code
    object and bytecode offset): the same for every thread of the block, different for each
    declaration, as on a GPU. Creation and poisoning happen under a lock: otherwise a thread
    could write its element before the creating thread has poisoned the array.
    """
    import sys

    from numba.core import types
    from numba.np import numpy_support

    if alignment is not None:
        raise RuntimeError("Array alignment is not supported in cudasim")
    if isinstance(dtype, types.Type):
        dtype = numpy_support.as_dtype(dtype)
    if shape == 0:  # dynamic shared memory: one buffer shared by all such arrays
        count = self._dynshared_size // dtype.itemsize
        return np.frombuffer(self._dynshared.data, dtype=dtype, count=count)
    frame = sys._getframe(1)
    caller = (frame.f_code, frame.f_lasti)
    with _registry_lock:
        res = self._allocations.get(caller)
        if res is None:
            res = np.empty(shape, dtype)
            if res.dtype.kind == "f":
                res.fill(_float_poison)
            elif res.dtype.kind in "iu":
                res.fill(np.iinfo(res.dtype).max // 3)
            self._allocations[caller] = res
    return res


class LaunchError(ValueError):
    """A launch configuration a GPU refuses (``CUDA_ERROR_INVALID_VALUE`` there)."""


# What every GPU the course targets (compute capability 7.5 and newer) accepts in a launch.
MAX_BLOCK_THREADS = 1024
MAX_BLOCK_DIM = (1024, 1024, 64)
MAX_GRID_DIM = (2**31 - 1, 65535, 65535)
MAX_DYNAMIC_SHARED_BYTES = 48 * 1024  # without opting in to more, which Numba does not do


def check_launch(grid_dim, block_dim, dynamic_shared: int = 0) -> None:
    """Raise ``LaunchError`` for a launch a GPU would refuse: each of ``grid_dim`` and
    ``block_dim`` is a 3-tuple of integers (as Numba normalizes them)."""
    for dims, what in ((block_dim, "block"), (grid_dim, "grid")):
        for axis, size in zip("xyz", dims):
            if size < 1:
                raise LaunchError(
                    f"a launch with {what} size {tuple(dims)} fails on a GPU "
                    f"(CUDA_ERROR_INVALID_VALUE): every {what} dimension must be at least 1, "
                    f"and {axis} is {size}. Check the arithmetic that sizes the launch (a "
                    f"ceiling division of an empty range gives 0).")
    threads = block_dim[0] * block_dim[1] * block_dim[2]
    if threads > MAX_BLOCK_THREADS:
        raise LaunchError(
            f"a launch with blocks of {threads} threads {tuple(block_dim)} fails on a GPU "
            f"(CUDA_ERROR_INVALID_VALUE): a block has at most {MAX_BLOCK_THREADS} threads. "
            f"Launch more blocks (a grid of ceil(n / threads per block)) and index with "
            f"cuda.grid(1), or loop over the elements with a grid-stride loop.")
    for dims, limits, what in ((block_dim, MAX_BLOCK_DIM, "block"),
                               (grid_dim, MAX_GRID_DIM, "grid")):
        for axis, size, limit in zip("xyz", dims, limits):
            if size > limit:
                raise LaunchError(
                    f"a launch with {what} size {tuple(dims)} fails on a GPU "
                    f"(CUDA_ERROR_INVALID_VALUE): a {what}'s {axis} dimension is at most "
                    f"{limit}, not {size}.")
    if dynamic_shared > MAX_DYNAMIC_SHARED_BYTES:
        raise LaunchError(
            f"a launch asking for {dynamic_shared} bytes of dynamic shared memory fails on a "
            f"GPU: a block gets at most {MAX_DYNAMIC_SHARED_BYTES} bytes without opting in.")


def _checked_launches(getitem):
    """The simulator's ``kernel[grid, block, ...]``, refusing what a GPU refuses."""
    def patched(kernel, configuration):
        configured = getitem(kernel, configuration)
        check_launch(kernel.grid_dim, kernel.block_dim, int(kernel.dynshared_size or 0))
        return configured
    patched.__wrapped__ = getitem
    return patched


def install() -> None:
    """Add the warp intrinsics to the simulator's fake ``cuda`` module (once)."""
    global _installed
    if _installed:
        return
    from numba.cuda.simulator import kernelapi

    fake = kernelapi.FakeCUDAModule
    for fn in (syncwarp, shfl_sync, shfl_up_sync, shfl_down_sync, shfl_xor_sync,
               ballot_sync, any_sync, all_sync, activemask):
        setattr(fake, fn.__name__, fn)
    kernelapi.FakeCUDAShared.array = _poisoned_shared_array
    from numba.cuda.simulator import kernel as fake_kernel

    simblock.install(WarpSyncError)  # a block's threads as greenlets, where greenlet is installed

    fake_kernel.FakeCUDAKernel.__getitem__ = _checked_launches(
        fake_kernel.FakeCUDAKernel.__getitem__)
    _install_host_api()
    _installed = True


# NumPy's methods that a GPU's device array does not have: the simulator's forwards them to
# the NumPy array it wraps, so that d.max() would run on the host there and fail on a GPU.
HOST_ONLY_METHODS = frozenset((
    "all", "any", "argmax", "argmin", "argpartition", "argsort", "astype", "byteswap",
    "choose", "clip", "compress", "conj", "conjugate", "cumprod", "cumsum", "diagonal",
    "dot", "dump", "dumps", "fill", "flatten", "getfield", "item", "max", "mean", "min",
    "nonzero", "partition", "prod", "put", "repeat", "resize", "round", "searchsorted",
    "setfield", "sort", "std", "sum", "swapaxes", "take", "tobytes", "tofile", "tolist",
    "trace", "var"))

def _garbage(dtype):
    """What an uninitialized simulated device array holds: NaN, or 0x5A in every byte."""
    dtype = np.dtype(dtype)
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind in "iu":
        return np.frombuffer(b"\x5a" * dtype.itemsize, dtype)[0]
    if dtype.kind == "b":
        return True
    return np.zeros((), dtype)[()]


def _install_host_api() -> None:
    """Give the simulator's host API what a GPU's does, so that code written for a GPU runs
    and the course's checkers see every wait and copy: a context's ``synchronize()`` (which
    ``cuda.synchronize()`` calls, as on a GPU), a stream's ``auto_synchronize()``, which
    waits for the stream on leaving, and ``np.asarray(d)`` copying back through
    ``copy_to_host``. All streams run synchronously in the simulator, so each wait has
    nothing to wait for."""
    from contextlib import contextmanager

    import numba.cuda as nc
    from numba.cuda.simulator import api
    from numba.cuda.simulator.cudadrv import devicearray, devices

    def synchronize_context(self):
        """Wait for all work on this context (the simulator's work is already done)."""

    def synchronize():
        """Synchronize the current context."""
        return nc.current_context().synchronize()

    @contextmanager
    def auto_synchronize(self):
        yield self
        self.synchronize()

    original_to_device = devicearray.to_device

    def to_device(ary, stream=0, copy=True, to=None):
        """Numba's simulated ``to_device``, returning ``to`` when given (as on a GPU) and
        otherwise an array that owns its buffer, as every new device array does: the
        checkers count new device memory as simulated arrays over a buffer of their own."""
        made = original_to_device(ary, stream=stream, copy=copy, to=to)
        if to is not None:
            return to
        own = np.empty_like(made._ary)
        own[...] = made._ary
        return type(made)(own, stream=made.stream)

    def __array__(self, dtype=None, copy=None):
        """A NumPy array of the contents, copied to the host through ``copy_to_host``, as a
        GPU's device array does (where ``np.asarray(d)`` is a copy back, and is counted)."""
        host = self.copy_to_host()
        return host.astype(dtype) if dtype is not None else host

    forward = devicearray.FakeCUDAArray.__getattr__

    def __getattr__(self, name):
        # NumPy asks for these before __array__, and the simulated array would hand over the
        # NumPy array it wraps: no copy back, none counted. A GPU's device array has neither.
        if name in ("__array_interface__", "__array_struct__"):
            raise AttributeError(f"a device array has no {name}: NumPy copies it back "
                                 "through __array__")
        if name in HOST_ONLY_METHODS:
            raise AttributeError(
                f"a device array has no .{name}() on a GPU (the simulator's would run NumPy's "
                f"on the host): compute it in a kernel, or copy the array back with "
                f".copy_to_host() first and pay for the copy.")
        return forward(self, name)

    original_device_array = devicearray.device_array

    def device_array(*args, **kwargs):
        """Numba's simulated ``device_array``, filled with garbage as a GPU's may be (its
        memory is not cleared): NaN for floats, a large pattern for integers. Code that reads
        an element before writing it shows here, not only on a GPU."""
        made = original_device_array(*args, **kwargs)
        made._ary[...] = _garbage(made._ary.dtype)
        return made

    devicearray.device_array = nc.device_array = device_array
    devicearray.FakeCUDAArray.__array__ = __array__
    devicearray.FakeCUDAArray.__getattr__ = __getattr__
    devicearray.to_device = nc.to_device = to_device
    # What code sizing its grid to the GPU asks of the device. The simulator's device is a
    # small one: two multiprocessors, so that such grids stay small where every thread is
    # a Python thread; the other limits are those of every GPU the course targets.
    for name, value in (("MULTIPROCESSOR_COUNT", 2), ("MAX_THREADS_PER_BLOCK", 1024),
                        ("WARP_SIZE", 32), ("MAX_SHARED_MEMORY_PER_BLOCK", 48 * 1024),
                        ("MAX_BLOCK_DIM_X", 1024), ("MAX_BLOCK_DIM_Y", 1024),
                        ("MAX_BLOCK_DIM_Z", 64), ("MAX_GRID_DIM_X", 2**31 - 1),
                        ("MAX_GRID_DIM_Y", 65535), ("MAX_GRID_DIM_Z", 65535)):
        if not hasattr(devices.FakeCUDADevice, name):
            setattr(devices.FakeCUDADevice, name, value)
    # The default streams: one object each, named as a GPU's are, so that code (and the
    # checkers) can tell them from a stream of its own. The simulator's are new plain
    # streams on every call.
    class DefaultStream(api.stream):
        def __init__(self, name):
            self._name = name

        def __repr__(self):
            return self._name

    default, legacy, per_thread = (DefaultStream(f"<{name} CUDA stream>") for name in (
        "Default", "Legacy default", "Per-thread default"))
    api.default_stream = nc.default_stream = lambda: default
    api.legacy_default_stream = nc.legacy_default_stream = lambda: legacy
    api.per_thread_default_stream = nc.per_thread_default_stream = lambda: per_thread
    def query(self):
        """Whether the work recorded before the event is done: in the simulator, always."""
        return True

    if not hasattr(api.Event, "query"):
        api.Event.query = query
    devices.FakeCUDAContext.synchronize = synchronize_context
    api.stream.auto_synchronize = auto_synchronize
    api.synchronize = nc.synchronize = synchronize
