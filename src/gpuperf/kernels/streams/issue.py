"""How a pipeline's copies and kernels are issued: ``IssuePipeline``.

``IssuePipeline(n, ..., issue="numba")`` is ``Pipeline`` with the host's time to issue each
run kept (``issue_times_ms``; ``Run``-wise, ``issue_ms(run_count)``). ``issue="driver"``
issues the same copies and kernels with a cheap path to the driver: each copy one
``cuMemcpyHtoDAsync`` / ``cuMemcpyDtoHAsync`` call with addresses worked out once, each
kernel a ``launch.PackedLaunch`` (one ``cuLaunchKernel``). Numba's ``copy_to_device`` spends
many times the driver's host time on each copy (``streams_copy_overhead``); the
``streams_chunking`` experiment compares the two. Under the simulator (no driver) both issue
through Numba.
"""

from __future__ import annotations

import time

import numpy as np

from gpuperf import validate

from .kernels import _launch, add_kernel, relax_kernel
from .pipeline import Pipeline

ISSUES = ("numba", "driver")


class IssuePipeline(Pipeline):
    """``Pipeline`` that times the host's issuing of each run, and can issue through the
    driver (``issue="driver"``). ``issue_times_ms``: the host's time to issue each run so
    far, in order; ``driver_path``: whether runs go through the driver."""

    def __init__(self, n: int, *, issue: str = "numba", **kw):
        super().__init__(n, **kw)
        self.issue = validate.choice(issue, "issue", ISSUES)
        self.issue_times_ms: list[float] = []
        self._driver = self._driver_calls() if issue == "driver" else None

    @property
    def driver_path(self) -> bool:
        return self._driver is not None

    def timed_issue_ms(self, warmup: int = 1, repeats: int = 5) -> float:
        """The median host issue time of the timed runs of the last ``time(...)`` call made
        with these ``warmup`` and ``repeats`` (its warm-up and its instrumented run left
        out)."""
        warmup = max(validate.positive_int(warmup, "warmup", minimum=0), 1)
        repeats = validate.positive_int(repeats, "repeats")
        if len(self.issue_times_ms) < warmup + repeats + 1:
            raise ValueError(f"only {len(self.issue_times_ms)} runs were issued: call "
                             f"time(..., repeats={repeats}) first.")
        runs = self.issue_times_ms[-(warmup + repeats + 1):]
        return float(np.median(runs[warmup:warmup + repeats]))

    def _driver_calls(self):
        """Per chunk: its stream as the driver sees it, the device addresses of its three
        slices, their byte count, its byte offset and its packed kernel launch; None where
        there is no driver (the simulator), so that runs issue through Numba."""
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

    def _enqueue(self, a, b, out, marks: list | None) -> None:
        t = time.perf_counter()
        if self._driver is None:
            super()._enqueue(a, b, out, marks)
        else:
            self._enqueue_driver(a, b, out, marks)
        self.issue_times_ms.append(1e3 * (time.perf_counter() - t))

    def _enqueue_driver(self, a, b, out, marks: list | None) -> None:
        """``Pipeline._enqueue`` with one driver call per copy and per kernel."""
        for name, arr in (("a", a), ("b", b), ("out", out)):
            if arr.dtype != np.float32 or not arr.flags.c_contiguous:
                raise ValueError(f"issue='driver' copies raw bytes: {name} must be a contiguous "
                                 f"float32 array (it is {arr.dtype}, "
                                 f"{'' if arr.flags.c_contiguous else 'not '}contiguous).")
        if marks is not None and self._events is None:
            from numba import cuda

            self._events = [[cuda.event() for _ in range(4)] for _ in self.chunks]
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
