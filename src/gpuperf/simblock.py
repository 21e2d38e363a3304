"""A faster way for Numba's CUDA simulator to run a block: its threads as greenlets.

Numba's simulator runs every CUDA thread of a block as an operating-system thread and polls
them from the launching thread until all have finished or wait at ``syncthreads``. Most of its
time goes to the operating system (creating threads, handing the interpreter lock around):
about 50 ms for a block of 256 threads that does nothing, over 100 ms with one barrier.

Here a block's threads are greenlets (``greenlet``, the coroutine package SQLAlchemy and
gevent use) in the launching thread. A scheduler runs each thread until it finishes or waits
(at ``syncthreads``, or at a warp intrinsic of ``gpuperf.simwarp``), then releases a barrier
when every live thread waits at one, and a warp meeting when every lane of its mask has
arrived. The order is fixed (thread 0, 1, 2, ... in every round), so a launch does the same
thing every time: a race shows, or does not, on every run alike.

A wait that can never end is found at once, not after a timeout: when every live thread waits
and no barrier or meeting can open, the launch raises ``simwarp.WarpSyncError`` naming the
lanes that never arrived. ``syncthreads`` keeps the simulator's rule: it opens when every
thread that has not finished waits at one (threads that returned early do not count).

Installed by ``simwarp.install()`` when ``greenlet`` can be imported (``requirements.txt``
lists it); without it, the simulator's own threads run, as before. ``GPUPERF_SIM_THREADS=1``
keeps the simulator's threads too (to compare the two).
"""

from __future__ import annotations

import sys
import threading
import types

import numpy as np

try:  # optional: without it, the simulator's own thread per CUDA thread runs
    import greenlet
except ImportError:  # pragma: no cover - exercised where greenlet is not installed
    greenlet = None

_local = threading.local()  # the green thread running now, per launching OS thread


class Stopped(RuntimeError):
    """A simulated launch stopped at the CPU-time limit that ``limit_cpu`` set."""


_limit = types.SimpleNamespace(until=None, seconds=None)


class limit_cpu:
    """``with simblock.limit_cpu(seconds, since):`` a simulated launch inside raises
    ``Stopped`` (between two of its threads) once this process has used ``seconds`` of CPU
    time since ``since`` (a ``time.process_time()``): a checker's bound on a slow wrong
    kernel. CPU time, not wall time: a machine shared with other work does not stop a
    right kernel."""

    def __init__(self, seconds: float, since: float):
        self.seconds, self.since = float(seconds), float(since)

    def __enter__(self):
        self._old = (_limit.until, _limit.seconds)
        _limit.until, _limit.seconds = self.since + self.seconds, self.seconds
        return self

    def __exit__(self, *exc):
        _limit.until, _limit.seconds = self._old


def _check_limit(threads) -> None:
    import time

    if _limit.until is not None and time.process_time() > _limit.until:
        for t in threads:
            t.abort = True
        raise Stopped(f"stopped: the checker had used its {_limit.seconds:g} s of CPU time "
                      "and the kernel was still running in the simulator (far slower than "
                      "the exercise needs, or a loop that does not end).")


def current_thread():
    """The simulated CUDA thread running now (a ``GreenThread``), else the OS thread."""
    return getattr(_local, "current", None) or threading.current_thread()


def in_kernel() -> bool:
    """Whether the code running now is a simulated CUDA thread (green or the simulator's own),
    not the host."""
    return hasattr(current_thread(), "threadIdx")


def available() -> bool:
    """Whether blocks can run as greenlets here (``greenlet`` is installed)."""
    return greenlet is not None


def installed() -> bool:
    """Whether the simulator's blocks run as greenlets now (``install`` has replaced its
    scheduler); False where the simulator's own thread per CUDA thread runs."""
    if "numba.cuda.simulator.kernel" not in sys.modules:
        return False
    fake_kernel = sys.modules["numba.cuda.simulator.kernel"]
    return getattr(fake_kernel.BlockManager, "__name__", "") == "GreenBlockManager"


class _ThreadingView(types.ModuleType):
    """``threading`` as the simulator's kernel API sees it: ``current_thread()`` is the green
    thread running now (its ``threadIdx``, ``blockIdx``, ``syncthreads``)."""

    def __getattr__(self, name):
        return getattr(threading, name)

    @staticmethod
    def current_thread():
        return current_thread()


class GreenThread:
    """One CUDA thread of a block, run as a greenlet: what the simulator's kernel API and
    ``simwarp`` read of a thread (``threadIdx``, ``blockIdx``, ``thread_id``, ``_manager``)."""

    def __init__(self, manager, block_point, thread_point, target, dim3):
        self._manager = manager
        self.blockIdx = dim3(*block_point)
        self.threadIdx = dim3(*thread_point)
        bx, by, _ = manager._block_dim
        self.thread_id = self.threadIdx.x + bx * (self.threadIdx.y + by * self.threadIdx.z)
        self.exception = None
        self.abort = False
        self.waiting = None  # None: can run; "barrier": at syncthreads; else a warp meeting
        self.done = False
        self._target = target
        self.glet = greenlet.greenlet(self._run)

    def _run(self):
        try:
            self._target()
        except Exception as e:  # the simulator's message: which thread of which block
            msg = f"tid={list(self.threadIdx)} ctaid={list(self.blockIdx)}"
            if str(e):
                msg += f": {e}"
            try:
                error = type(e)(msg)
            except Exception:  # an exception type that takes other arguments
                error = e
            self.exception = (error, sys.exc_info()[2])
        finally:
            self.done = True

    def _wait(self, what) -> None:
        self.waiting = what
        self._manager._scheduler.switch()
        if self.abort:
            raise RuntimeError("abort flag set on syncthreads clear")

    def syncthreads(self):
        self._wait("barrier")

    def _block_state(self, value):
        idx = self.threadIdx.x, self.threadIdx.y, self.threadIdx.z
        self._manager.block_state[idx] = value
        self.syncthreads()
        state = self._manager.block_state.copy()
        self.syncthreads()
        return state

    def syncthreads_count(self, value):
        return int(np.count_nonzero(self._block_state(value)))

    def syncthreads_and(self, value):
        return 1 if np.all(self._block_state(value)) else 0

    def syncthreads_or(self, value):
        return 1 if np.any(self._block_state(value)) else 0

    def __str__(self):
        return f"Thread <<<{self.blockIdx}, {self.threadIdx}>>>"


class GreenMeeting:
    """Where the lanes of one warp named in one mask meet (a ``simwarp`` intrinsic)."""

    def __init__(self, lanes: list, warp: int, mask: int):
        self.lanes, self.warp, self.mask = lanes, warp, mask
        self.values = [None] * 32
        self.arrived: list = []
        self.op = ""

    def wait(self, op: str) -> None:
        t = current_thread()
        self.op = op
        self.arrived.append(t)
        t._wait(self)


def make_block_manager(original, stuck_error=RuntimeError):
    """A ``BlockManager`` class for the simulator's ``kernel`` module that runs greenlets;
    ``stuck_error`` is raised for a warp meeting that can never open."""
    from numba.cuda.simulator.kernelapi import Dim3

    class GreenBlockManager(original):
        def run(self, grid_point, *args):
            f, debug = self._f, self._debug

            def target():
                if debug:
                    np.seterr(divide="raise")
                f(*args)

            self._scheduler = greenlet.getcurrent()
            threads = [GreenThread(self, grid_point, point, target, Dim3)
                       for point in np.ndindex(*self._block_dim)]
            previous = getattr(_local, "current", None)
            try:
                self._schedule(threads)
            finally:
                _local.current = previous

        def _schedule(self, threads):
            _check_limit(threads)
            live = threads
            while live:
                for t in live:
                    if t.waiting is None and not t.done:
                        _local.current = t
                        t.glet.switch()
                        _local.current = None
                        if t.exception:
                            for other in threads:
                                other.abort = True
                            raise t.exception[0].with_traceback(t.exception[1])
                        _check_limit(threads)
                live = [t for t in live if not t.done]
                if not live:
                    return
                if self._open_meetings(live):
                    continue
                if all(t.waiting == "barrier" for t in live):
                    for t in live:
                        t.waiting = None
                    continue
                self._stuck(live)

        @staticmethod
        def _open_meetings(live) -> bool:
            opened = False
            for meeting in {id(t.waiting): t.waiting for t in live
                            if isinstance(t.waiting, GreenMeeting)}.values():
                if len(meeting.arrived) == len(meeting.lanes):
                    for t in meeting.arrived:
                        t.waiting = None
                    meeting.arrived = []
                    opened = True
            return opened

        @staticmethod
        def _stuck(live):
            meeting = next(t.waiting for t in live if isinstance(t.waiting, GreenMeeting))
            came = {t.thread_id % 32 for t in meeting.arrived}
            missing = [lane for lane in meeting.lanes if lane not in came]
            raise stuck_error(
                f"cuda.{meeting.op}: lanes {missing} of warp {meeting.warp} (in mask "
                f"{meeting.mask:#010x}) never reached this call: they returned early, took "
                "another branch or wait elsewhere, while lanes "
                f"{sorted(came)} wait here. On a GPU this hangs or is undefined. Make every "
                "lane in the mask execute the same call (move early returns below it), or "
                "pass a mask of only the lanes that reach it.")

    GreenBlockManager.__name__ = GreenBlockManager.__qualname__ = "GreenBlockManager"
    return GreenBlockManager


def install(stuck_error=RuntimeError) -> bool:
    """Run the simulator's blocks as greenlets (once); False where that cannot be done.
    ``stuck_error``: the exception for a warp meeting that can never open (``simwarp``'s)."""
    import os

    if greenlet is None or os.environ.get("GPUPERF_SIM_THREADS", "") == "1":
        return False
    from numba.cuda.simulator import kernel as fake_kernel
    from numba.cuda.simulator import kernelapi

    if getattr(fake_kernel.BlockManager, "__name__", "") != "GreenBlockManager":
        fake_kernel.BlockManager = make_block_manager(fake_kernel.BlockManager, stuck_error)
        kernelapi.threading = _ThreadingView("threading")
    return True
