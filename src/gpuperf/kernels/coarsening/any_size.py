"""``FastMatmul``: ``C = A @ B`` for any shape, the fast kernel on the interior and the edge
kernels of ``fast.py`` beside it, on streams of its own; ``fast_matmul`` hands out one per
configuration."""

from __future__ import annotations

import functools
import numbers
import threading

import numpy as np
from numba import cuda  # noqa: E402,I001  (after gpuperf: the mode is chosen first)

from gpuperf import validate
from gpuperf.mode import SIMULATOR

from .fast import _add_k_tail, _pad_copy, _strip_direct, _strip_partials, _sum_partials, make_regtile_fast
from .kernels import _cdiv
from .regtile import make_regtile_double


def _numba_stream(stream):
    """``stream`` as what Numba launches on: 0, a Numba stream, or another library's stream
    (CuPy's, PyTorch's, or any with ``__cuda_stream__``) wrapped with ``cuda.external_stream``;
    a TypeError for anything else, before Numba would raise one from inside a launch."""
    if type(stream) is int and stream == 0:
        return 0
    numba_stream = cuda.stream if isinstance(cuda.stream, type) else None  # the simulator's
    if numba_stream is None:
        from numba.cuda.cudadrv.driver import Stream as numba_stream
    if isinstance(stream, numba_stream):
        return stream
    if not SIMULATOR:
        if hasattr(stream, "__cuda_stream__"):  # the CUDA stream protocol: (version, handle)
            return cuda.external_stream(int(stream.__cuda_stream__()[1]))
        for handle in ("ptr", "cuda_stream"):  # CuPy's, PyTorch's
            if isinstance(getattr(stream, handle, None), int):
                return cuda.external_stream(getattr(stream, handle))
    raise TypeError(f"stream must be 0 (the default stream), a Numba stream (cuda.stream()) or a "
                    f"CuPy or PyTorch stream, not {stream!r}.")


class FastMatmul:
    """``C = A @ B`` for any shape, with ``make_regtile_fast`` on the largest interior it can
    take and the edges computed beside it, so that no edge code sits in the fast kernel:

    * the interior, ``M // bm * bm`` x ``N // bn * bn`` over ``K // bk * bk``: the fast kernel;
    * K's last ``K % bk`` products for the interior: a small kernel that adds them;
    * the right strip (all rows) and the bottom strip (the interior's columns): K split
      ``splits`` ways, one partial per thread, then the partials added in order.

    The interior (fast kernel and k tail) and each strip are queued on three streams of the
    object's own, so that no launch on the legacy default stream sits between them: Numba's
    streams are blocking streams, which wait for earlier work on the legacy default stream, so
    strips queued there after the fast kernel would start only when it ends. A shape with no
    strips and no k tail is one launch of the fast kernel on the caller's stream.

    Where K or N is not a multiple of 4 (the fast kernel's 16-byte loads need whole vectors),
    A and B are first copied into buffers padded with zeros to the next multiple of 4 in K and
    N (products with zeros add nothing), and C is copied out of a padded one after: O(n^2)
    copies beside O(n^3) work. Where the matrix is smaller than one tile there is no interior,
    and ``make_regtile_double`` does the whole product.

    A call takes the stream to queue on (default: the default stream); the three streams wait
    for what was queued on it before the call, and it waits for them after (events), so that
    the call orders like one launch on that stream, with the legacy default stream or the
    per-thread one. Calls queued on different streams of the caller's still run one after
    the other on the object's streams, and one object belongs to one host thread.
    The padded buffers are filled, used and read on the object's interior stream, so that a
    call queued on another stream cannot refill them while an earlier call still reads them.
    The strips' partial sums and the padded buffers stay allocated for the latest shape only:
    a strip splits K into at most ``splits`` chunks of at least 8 products, and fewer where its
    partial sums would pass ``PARTIALS_BUDGET`` floats; a strip that cannot be split within it
    is computed in one pass over K, straight into C.
    """

    PARTIALS_BUDGET = 1 << 24  # floats of partial sums per strip (64 MiB)

    def __init__(self, bm: int = 128, bn: int = 128, bk: int = 8, tm: int = 8, tn: int = 8,
                 k_steps: int = 2, splits: int = 16):
        self.fast = make_regtile_fast(bm, bn, bk, tm, tn, k_steps, None, "uint32")  # the
        # same arguments as fast_kernel_variant's, so that lru_cache compiles it once
        self.general = make_regtile_double(bm, bn, bk, tm, tn, None, k_steps)
        self.splits = validate.positive_int(splits, "splits", maximum=256)
        self.bm, self.bn, self.bk = bm, bn, bk
        self.threads = (bm // tm) * (bn // tn)
        self._streams = None  # (interior, right strip, bottom strip), made on the first call
        self._events = None
        self._pad_events = None  # (begin, end) of a padded call, made with the streams
        self._partials = {}
        self._padded = None  # (A, B, C) padded to multiples of 4 in K and N, latest shape
        # fast_matmul() hands one object to every host thread: one call at a time orders its
        # events, streams and buffers (a wait captures the event when it is queued)
        self._lock = threading.Lock()

    def _general(self, A, B, C, stream=0):
        M, N = C.shape
        self.general[(_cdiv(N, self.bn), _cdiv(M, self.bm)), self.threads, stream](A, B, C)

    def strip_splits(self, K: int, rows: int, cols: int) -> int:
        """How many chunks of K a ``rows`` x ``cols`` strip is split into: ``splits``, fewer
        where chunks would hold under 8 products or the partial sums pass the budget."""
        for value, name in ((K, "K"), (rows, "rows"), (cols, "cols")):
            validate.positive_int(value, name)
        chunk = _cdiv(K, max(1, min(self.splits, K // 8, self.PARTIALS_BUDGET // (rows * cols))))
        return _cdiv(K, chunk)  # no empty chunk

    def _strip(self, A, B, C, r0, c0, rows, cols, stream):
        side = "right" if c0 else "bottom"  # each strip its own partials: they run at once
        K = A.shape[1]
        splits = self.strip_splits(K, rows, cols)
        blocks = _cdiv(rows * cols, 256)
        if splits == 1:
            self._partials.pop(side, None)
            _strip_direct[blocks, 256, stream](A, B, C, r0, c0, rows, cols)
            return
        if getattr(self._partials.get(side), "shape", None) != (splits, rows, cols):
            self._partials[side] = cuda.device_array((splits, rows, cols), np.float32)
        P = self._partials[side]
        _strip_partials[(blocks, splits), (256, 1), stream](A, B, P, r0, c0, _cdiv(K, splits))
        _sum_partials[blocks, 256, stream](P, C, r0, c0)

    def _split(self, A, B):
        (M, K), N = A.shape, B.shape[1]
        return M, N, K, M // self.bm * self.bm, N // self.bn * self.bn, K // self.bk * self.bk

    def _interior(self, A, B, C, stream):
        """The fast kernel on the interior, and the k tail where K has one."""
        M, N, K, mi, ni, ki = self._split(A, B)
        self.fast[(ni // self.bn, mi // self.bm), self.threads, stream](A, B, C)
        if ki < K:
            blocks = (_cdiv(ni // 4, 64), min(_cdiv(mi, 4), 65535))
            _add_k_tail[blocks, (64, 4), stream](A, B, C, mi, ni, ki)

    def _strips(self, A, B, C, right, bottom):
        """The right strip on ``right``, the bottom strip on ``bottom`` (where there are any)."""
        M, N, K, mi, ni, ki = self._split(A, B)
        if ni < N:
            self._strip(A, B, C, 0, ni, M, N - ni, right)
        if mi < M:
            self._strip(A, B, C, mi, 0, M - mi, ni, bottom)

    @staticmethod
    def _operand(x, name):
        """``x`` as a Numba device array (CuPy's and others' through their CUDA array
        interface), or a TypeError that says what to pass."""
        if not isinstance(x, np.ndarray) and not validate.is_device_array(x) \
                and hasattr(x, "__cuda_array_interface__") and not SIMULATOR:
            x = cuda.as_cuda_array(x)
        if isinstance(x, np.ndarray) or not validate.is_device_array(x):
            raise TypeError(f"{name} must be a device array: pass cuda.to_device({name}), or "
                            "use gp.matmul.run_variant(gp.coarsening.fast_variant(), A, B) "
                            "for NumPy arrays.")
        return x

    def __call__(self, A, B, C, stream=0) -> None:
        """Enqueue ``C = A @ B`` on ``stream`` (device arrays, float32, C-contiguous): work
        queued on ``stream`` after the call sees the whole product."""
        shapes = [getattr(x, "shape", ()) for x in (A, B, C)]
        if any(len(sh) != 2 for sh in shapes):
            raise TypeError("A, B and C must be 2-D float32 arrays (M x K, K x N and the M x N "
                            f"output); their shapes are {shapes[0]}, {shapes[1]}, {shapes[2]}.")
        A, B, C = (self._operand(x, name) for x, name in ((A, "A"), (B, "B"), (C, "C")))
        for x, name in ((A, "A"), (B, "B"), (C, "C")):
            validate.array(x, name=name, ndim=2)  # float32 and C-contiguous
            # both kernels load and store 16 bytes at a time
            validate.aligned16(x, name, f"copy it into a fresh allocation first "
                               f"({name}.copy_to_host(), then cuda.to_device).")
        validate.disjoint(C, "C", A=A, B=B)  # blocks write C while others still read A and B
        stream = _numba_stream(stream)
        M, K = A.shape
        N = B.shape[1]
        if B.shape[0] != K:
            raise ValueError(f"A is {M}x{K} and B {B.shape[0]}x{N}: A's columns and B's rows "
                             f"must match (B needs {K} rows).")
        if C.shape != (M, N):
            raise ValueError(f"C must have the shape ({M}, {N}) of A @ B, not {C.shape}.")
        if _cdiv(M, self.bm) > 65535:
            raise ValueError(f"M={M} needs {_cdiv(M, self.bm)} block rows, over the grid's limit "
                             "of 65535 in y: split A into row blocks of at most "
                             f"{65535 * self.bm} rows and call once per block.")
        *_, mi, ni, ki = self._split(A, B)
        with self._lock:
            self._dispatch(A, B, C, stream, mi and ni and ki)

    def _dispatch(self, A, B, C, stream, interior: bool):
        """The whole product of checked operands, on the path their shape allows."""
        (M, K), N = A.shape, B.shape[1]
        if not interior:  # smaller than one tile: no interior
            self._general(A, B, C, stream)
        elif K % 4 or N % 4:  # the fast kernel's vectors need K and N in multiples of 4
            K4, N4 = _cdiv(K, 4) * 4, _cdiv(N, 4) * 4
            shapes = [(M, K4), (K4, N4), (M, N4)]
            if self._padded is None or [x.shape for x in self._padded] != shapes:
                self._padded = [cuda.device_array(sh, np.float32) for sh in shapes]
            A4, B4, C4 = self._padded
            # All on the object's interior stream, after the caller's earlier work: a call
            # queued on another stream of the caller's must not refill the padded buffers
            # while an earlier call still reads them.
            interior = self.streams()[0]
            begin, end = self._pad_events
            begin.record(stream)
            begin.wait(interior)
            for src, dst in ((A, A4), (B, B4)):
                _pad_copy[_cdiv(dst.size, 256), 256, interior](src, dst)
            self._run(A4, B4, C4, interior)
            _pad_copy[_cdiv(C.size, 256), 256, interior](C4, C)  # crops
            end.record(interior)
            end.wait(stream)
        else:
            self._run(A, B, C, stream)

    def streams(self):
        """The object's three streams (interior, right strip, bottom strip), made on first use."""
        if self._streams is None:
            self._streams = (cuda.stream(), cuda.stream(), cuda.stream())
            # the events only order work; without timing they cost less to record
            events = [cuda.event() if SIMULATOR else cuda.event(timing=False) for _ in range(6)]
            self._events, self._pad_events = events[:4], events[4:]
        return self._streams

    def _strips_alone(self, A, B, C, stream=0):
        """The two strips alone, forked from ``stream`` and joined back to it (what
        ``fast_parts`` times): with the per-thread default stream too, ``stream`` waits for them."""
        interior, right, bottom = self.streams()
        start, _, *done = self._events
        start.record(stream)
        for s in (right, bottom):
            start.wait(s)
        self._strips(A, B, C, right, bottom)
        for event, s in zip(done, (right, bottom)):
            event.record(s)
            event.wait(stream)

    def _run(self, A, B, C, stream):
        """The product of checked operands whose K and N are multiples of 4."""
        M, N, K, mi, ni, ki = self._split(A, B)
        if (mi, ni, ki) == (M, N, K):  # the interior is everything: one launch
            self.fast[(ni // self.bn, mi // self.bm), self.threads, stream](A, B, C)
            return
        interior, right, bottom = self.streams()
        start, *done = self._events
        # fork: the three streams start after what was queued on ``stream`` before the call
        start.record(stream)
        for s in self._streams:
            start.wait(s)
        self._interior(A, B, C, interior)
        self._strips(A, B, C, right, bottom)
        for event, s in zip(done, self._streams):  # join: ``stream`` waits for all three
            event.record(s)
            event.wait(stream)


def fast_matmul(bm: int = 128, bn: int = 128, bk: int = 8, tm: int = 8, tn: int = 8,
                k_steps: int = 2, splits: int = 16) -> FastMatmul:
    """The ``FastMatmul`` of this configuration (one per configuration: it keeps its streams
    and its strips' partial sums between calls)."""
    # One cache key per configuration however it is spelled (fast_matmul(), fast_matmul(128),
    # fast_matmul(bm=128), NumPy integers); anything else reaches FastMatmul's checks as given.
    args = tuple(int(x) if isinstance(x, numbers.Integral) and not isinstance(x, bool) else x
                 for x in (bm, bn, bk, tm, tn, k_steps, splits))
    return _fast_matmul(*args)


@functools.lru_cache(maxsize=None, typed=True)
def _fast_matmul(*args) -> FastMatmul:
    return FastMatmul(*args)
