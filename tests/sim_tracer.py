"""The chapter's first tracer, kept for the tests only: it watched Numba's CUDA simulator
(monkeypatched device arrays and shared arrays). ``gpuperf.kernels.coalescing.trace`` now
uses the course's own thread emulator; the tests check that both see the same requests."""

import re
import sys
import threading

import numpy as np

from gpuperf import simblock
from gpuperf.kernels.coalescing import WARP, AccessTrace, Request, WarpAccess
from gpuperf.vector import load_float4, store_float4

SIMULATOR = True


def _byte_offset(ary: np.ndarray, idx) -> tuple[int, int] | None:
    """(byte offset from the allocation's start, bytes) of ``ary[idx]``.

    A single element, or a contiguous 1-D slice (a vector access); None otherwise.
    """
    if not isinstance(idx, tuple):
        idx = (idx,)
    if len(idx) != ary.ndim:
        return None
    off, nbytes = 0, ary.itemsize
    for i, n, st in zip(idx, ary.shape, ary.strides):
        if isinstance(i, slice) and ary.ndim == 1:
            start, stop, step = i.indices(n)
            if step != 1 or stop <= start:
                return None
            i, nbytes = start, (stop - start) * ary.itemsize
        elif not isinstance(i, (int, np.integer)):
            return None
        i = int(i)
        off += (i + n if i < 0 else i) * st
    root = ary
    while isinstance(root.base, np.ndarray):
        root = root.base
    start = ary.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return start + off, nbytes


class _Log:
    """What the traced arrays saw: one event per element access by a simulated thread."""

    def __init__(self):
        self.events: list[tuple] = []
        self.lines: dict[tuple, str] = {}

    def record(self, space, kind, name, ary, idx, skip_codes):
        t = simblock.current_thread()  # a greenlet of the simulator's block, or a thread
        if not hasattr(t, "threadIdx"):
            return  # host-side access, not a thread of the kernel
        where = _byte_offset(ary, idx)
        if where is None:
            return
        addr, nbytes = where
        f = sys._getframe(2)
        while f is not None and f.f_code in skip_codes:
            f = f.f_back
        site = (f.f_code.co_filename, f.f_lineno) if f is not None else ("?", 0)
        counts = t.__dict__.setdefault("_gp_trace_counts", {})
        key = (space, kind, name, site)
        occurrence = counts.get(key, 0)
        counts[key] = occurrence + 1
        if site not in self.lines:
            import linecache

            self.lines[site] = linecache.getline(site[0], site[1]).strip()
        self.events.append((space, kind, name, site, tuple(t.blockIdx), t.thread_id,
                            occurrence, addr, nbytes))

    def requests(self) -> list[Request]:
        groups: dict[tuple, list] = {}
        for space, kind, name, site, block, tid, occ, addr, size in self.events:
            key = (space, kind, name, site, block, tid // WARP, occ)
            groups.setdefault(key, []).append((tid, addr, size))
        reqs = []
        for (space, kind, name, site, block, warp, _occ), lanes in groups.items():
            lanes.sort()
            acc = WarpAccess.from_addresses([a for _, a, _ in lanes], lanes[0][2])
            reqs.append(Request(space, kind, name, site[1], self.lines.get(site, ""), block,
                                warp, acc))
        reqs.sort(key=lambda r: (r.block, r.warp, r.line))
        return reqs


def _traced_classes(log: _Log):
    from numba.cuda.simulator.cudadrv.devicearray import (
        FakeCUDAArray,
        FakeWithinKernelCUDAArray,
    )

    class TracedDeviceArray(FakeCUDAArray):
        def __init__(self, ary, name):
            super().__init__(ary)
            self._gp_name = name

        def __getitem__(self, idx):
            log.record("global", "load", self._gp_name, self._ary, idx, skip)
            return super().__getitem__(idx)

        def __setitem__(self, idx, val):
            log.record("global", "store", self._gp_name, self._ary, idx, skip)
            return super().__setitem__(idx, val)

    class TracedShared(np.ndarray):
        def __getitem__(self, idx):
            log.record("shared", "load", self._gp_name, self, idx, skip)
            return np.ndarray.__getitem__(self, idx)

        def __setitem__(self, idx, val):
            log.record("shared", "store", self._gp_name, self, idx, skip)
            return np.ndarray.__setitem__(self, idx, val)

    skip = {TracedDeviceArray.__getitem__.__code__, TracedDeviceArray.__setitem__.__code__,
            TracedShared.__getitem__.__code__, TracedShared.__setitem__.__code__,
            FakeWithinKernelCUDAArray.__getitem__.__code__,
            FakeWithinKernelCUDAArray.__setitem__.__code__,
            FakeCUDAArray.__getitem__.__code__, FakeCUDAArray.__setitem__.__code__}
    if SIMULATOR:  # the vector helpers are plain Python here: report their caller's line
        skip |= {load_float4.__code__, store_float4.__code__}
    return TracedDeviceArray, TracedShared


_trace_lock = threading.Lock()


def trace_numba_simulator(kernel, grid, block, *args) -> AccessTrace:
    """Run ``kernel[grid, block](*args)`` on the simulator and record every array access.

    NumPy arguments are used in place (the kernel's writes land in them). Returns an
    ``AccessTrace``: print it for a table of sectors per request and bank conflicts.
    Simulator only: a GPU does not let Python watch its loads (use Nsight Compute there).
    """
    if not SIMULATOR:
        raise RuntimeError(
            "trace() watches the simulated threads' loads and stores, so it needs the CUDA "
            "simulator; on a GPU, profile with Nsight Compute "
            "(ncu --section MemoryWorkloadAnalysis) instead. "
            "Start Python with GPUPERF_MODE=simulator to trace.")
    import inspect

    from numba.cuda.simulator import kernelapi
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    py = getattr(kernel, "py_func", kernel)
    try:
        names = list(inspect.signature(py).parameters)
    except (TypeError, ValueError):
        names = []
    names += [f"arg{i}" for i in range(len(names), len(args))]
    log = _Log()
    TracedDeviceArray, TracedShared = _traced_classes(log)
    wrapped = []
    for name, arg in zip(names, args):
        if isinstance(arg, np.ndarray) and arg.ndim > 0:
            wrapped.append(TracedDeviceArray(arg, name))
        elif isinstance(arg, FakeCUDAArray):
            wrapped.append(TracedDeviceArray(arg._ary, name))
        else:
            wrapped.append(arg)

    def shared_array(self, shape, dtype, alignment=None):
        if shape == 0:  # dynamic shared memory: untraced
            return original(self, shape, dtype, alignment)
        from numba.np import numpy_support

        if not isinstance(dtype, np.dtype) and hasattr(dtype, "bitwidth"):
            dtype = numpy_support.as_dtype(dtype)
        caller = sys._getframe(1)
        site = (caller.f_code.co_filename, caller.f_lineno)
        with alloc_lock:  # the block's threads arrive together: one allocation per line
            arr = self._allocations.get(site)
            if arr is None:
                arr = self._allocations[site] = new_shared(site, shape, dtype)
        return arr

    def new_shared(site, shape, dtype):
        # One allocation per source line and block, as the simulator keeps them,
        # filled with garbage like real shared memory, named after its variable.
        import linecache

        arr = np.empty(shape, dtype).view(TracedShared)
        m = re.match(r"\s*(\w+)\s*=", linecache.getline(*site))
        arr._gp_name = m.group(1) if m else f"shared@{site[1]}"
        if arr.dtype.kind == "f":
            np.ndarray.fill(arr, np.nan)
        return arr

    alloc_lock = threading.Lock()
    with _trace_lock:
        original = kernelapi.FakeCUDAShared.array
        kernelapi.FakeCUDAShared.array = shared_array
        try:
            kernel[grid, block](*wrapped)
        finally:
            kernelapi.FakeCUDAShared.array = original
    return AccessTrace(log.requests())


