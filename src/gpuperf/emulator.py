"""The course's own CUDA thread emulator: run a kernel's Python source over emulated threads.

``launch(kernel, grid, block, *args)`` runs ``kernel.py_func`` (a ``@cuda.jit`` kernel in
any mode: on a GPU, on Numba's simulator, or compile-only) with one Python thread per CUDA
thread of a block, blocks one after another, and records every global and shared-memory
access. It does not use Numba's simulator, so it behaves the same everywhere:

    run = emulator.launch(kernel, grid, block, a, out)    # NumPy arrays are used in place
    run.accesses(space="global", array="out")             # one Access per thread and element
    run.warp_requests()                                   # grouped the way a warp issues them
    run.races()                                           # unordered conflicting accesses

What the emulated threads see
-----------------------------
The kernel's function is rebuilt with its globals and closure cells translated: ``cuda``
becomes this module's ``cuda`` (threadIdx, blockIdx, blockDim, gridDim, ``grid``,
``gridsize``, ``laneid``, ``warpsize``, ``shared.array``, ``local.array``,
``const.array_like``, ``syncthreads`` and its ``_count/_and/_or`` forms, ``syncwarp``,
``threadfence*``, ``atomic.*``, the warp intrinsics ``shfl_*_sync``, ``ballot_sync``,
``any_sync``, ``all_sync``, ``activemask``, and a few bit/float helpers); ``@cuda.jit``
device functions become their emulated Python versions (recursively), and
``gpuperf.vector``'s 16-byte intrinsics become Python versions that check alignment.
Anything else of ``cuda.*`` raises ``NotImplementedError`` naming it.

The hardware's rules are enforced, as plain errors instead of a dead CUDA context:

* an index out of range (in any dimension) raises ``OutOfBounds`` (an ``IndexError``);
* a 16-byte ``load_float4``/``store_float4``/``load4``/``store4`` at an address that is not a
  multiple of 16 raises ``MisalignedAccess`` (``CUDA_ERROR_MISALIGNED_ADDRESS`` on a GPU);
* every thread of a block must reach the same ``syncthreads``: a barrier that some threads
  exited before, or that others wait for at another line, raises ``BarrierError`` at once
  (never a hang); a warp intrinsic whose mask names lanes that exited, wait elsewhere, or do
  not exist raises ``WarpSyncError``, just as fast.

Shared arrays: the k-th ``cuda.shared.array`` call of a thread returns its block's k-th array
(created by the first thread to get there), filled with NaN (floats) or garbage (integers),
like real shared memory. Arrays passed as arguments may be NumPy arrays (used in place),
Numba device arrays (copied to the host, run, copied back) or the simulator's device arrays.
Addresses count bytes from the allocation's start (256-byte aligned, as ``cudaMalloc``'s); a
view such as ``x[1:]`` starts 4 bytes in.

Races (``Run.races()``): two accesses to the same bytes by different threads, at least one a
store, neither atomic, with no barrier between them (same block, same barrier epoch; lanes of
one warp are also ordered by a ``syncwarp`` or shuffle between them) or from different blocks
(global memory: nothing orders blocks).

Limits: blocks run one after another, so inter-block races are found by ``races()``, never
by a wrong result; ``activemask`` cannot see divergence inside a warp; integers computed in
Python do not overflow (array elements do wrap); negative indices wrap around, as Numba's
do; a kernel that loops forever hangs here as on a GPU. Device functions are found in the
kernel's globals, closure cells and module attributes (``red.warp_sum(v)``).
"""

from __future__ import annotations

import collections
import copy
import inspect
import linecache
import math
import operator
import re
import sys
import threading
import time
import types

import numpy as np

WARP = 32
FULL_MASK = 0xFFFFFFFF
MAX_BLOCK_THREADS = 1024

__all__ = ["launch", "emulate", "poison", "run_host", "host_view", "HostArray", "cuda", "Run", "Access", "Race",
           "EmulatorError",
           "OutOfBounds", "MisalignedAccess", "BarrierError", "WarpSyncError", "LaunchTimeout",
           "Unsupported", "ConstantWrite",
           "FAULTS"]


# =========================================================================== errors


class EmulatorError(RuntimeError):
    """A kernel broke a rule of the hardware (or the emulator cannot go on)."""


class OutOfBounds(EmulatorError, IndexError):
    """An element access outside an array: an ``IndexError``, and named so in messages."""


OutOfBounds.__name__ = OutOfBounds.__qualname__ = "IndexError"  # what students know it as


class MisalignedAccess(EmulatorError):
    """A 16-byte vector access at an address that is not a multiple of 16."""


class BarrierError(EmulatorError):
    """``syncthreads`` not reached by every thread of the block at the same line."""


class WarpSyncError(EmulatorError):
    """A warp intrinsic whose lanes do not all arrive (or do not exist)."""


class ConstantWrite(EmulatorError):
    """A kernel wrote to an array it reached as a global or closure variable, which on a GPU is
    a read-only constant copy (a write never reaches the host's array; an atomic on it faults
    and ends the CUDA session)."""


class Unsupported(NotImplementedError):
    """The kernel uses something of ``cuda.*`` the emulator does not implement."""


class LaunchTimeout(EmulatorError):
    """A block did not finish within ``launch``'s ``timeout`` (an endless loop?)."""


# What a GPU would turn into a fault or a hang: a checker refuses the kernel for these.
FAULTS = (OutOfBounds, MisalignedAccess, BarrierError, WarpSyncError, LaunchTimeout, ConstantWrite)


class _Abort(BaseException):
    """Raised in the other threads of a block when one thread failed: stop quietly."""


# =========================================================================== records

Dim3 = collections.namedtuple("Dim3", "x y z")

Access = collections.namedtuple(
    "Access", "space kind array file line block thread warp occurrence address nbytes "
              "epoch wepoch alloc")
Access.__doc__ = """One element access by one emulated thread.

``space``: "global" or "shared"; ``kind``: "load", "store" or "atomic"; ``array``: the
parameter's or shared variable's name; ``file``, ``line``: the kernel's source line;
``block``: the block index (x, y, z); ``thread``: the thread's linear id in its block;
``warp``: thread // 32; ``occurrence``: how many times this thread had made this access
(space, kind, array, line) before; ``address``, ``nbytes``: bytes from the allocation's start
(a device allocation's start is 256-byte aligned); ``epoch``: the barriers the thread had
passed; ``wepoch``: the barriers and warp synchronizations it had passed; ``alloc``: an id
of the allocation (shared: one per block and array).
"""

WarpRequest = collections.namedtuple(
    "WarpRequest", "space kind array file line block warp occurrence lanes")
WarpRequest.__doc__ = """The lanes of one warp making the same access (the same source line,
array, kind and occurrence): ``lanes`` is a sorted tuple of (thread, address, nbytes)."""


def _v():
    from . import validate  # late: validate imports numba.cuda helpers the emulator must not need

    return validate


def source_line(file: str, line: int) -> str:
    """The stripped text of a source line (empty when it cannot be found)."""
    _v().string(file, "file")
    _v().integer(line, "line", minimum=0)
    return linecache.getline(file, line).strip()


# =========================================================================== thread state


class _FakeCuda(threading.local):
    """The ``cuda`` an emulated kernel sees. Per-thread attributes: ``threadIdx`` & co."""

    warpsize = WARP

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name in ("threadIdx", "blockIdx", "blockDim", "gridDim", "laneid"):
            raise EmulatorError(f"cuda.{name} exists only inside a kernel run by the emulator.")
        raise Unsupported(f"cuda.{name} is not supported by gpuperf's thread emulator.")

    # ---------------------------------------------------------------- indexing
    def grid(self, ndim):
        t, b, d = self.threadIdx, self.blockIdx, self.blockDim
        x = b.x * d.x + t.x
        if ndim == 1:
            return x
        y = b.y * d.y + t.y
        if ndim == 2:
            return x, y
        return x, y, b.z * d.z + t.z

    def gridsize(self, ndim):
        d, g = self.blockDim, self.gridDim
        if ndim == 1:
            return d.x * g.x
        if ndim == 2:
            return d.x * g.x, d.y * g.y
        return d.x * g.x, d.y * g.y, d.z * g.z

    # ---------------------------------------------------------------- barriers
    def syncthreads(self):
        self._blk.barrier("syncthreads", None, sys._getframe(1))

    def syncthreads_count(self, predicate):
        return self._blk.barrier("syncthreads_count", bool(predicate), sys._getframe(1))

    def syncthreads_and(self, predicate):
        return self._blk.barrier("syncthreads_and", bool(predicate), sys._getframe(1))

    def syncthreads_or(self, predicate):
        return self._blk.barrier("syncthreads_or", bool(predicate), sys._getframe(1))

    def threadfence(self):
        pass

    def threadfence_block(self):
        pass

    def threadfence_system(self):
        pass

    # ---------------------------------------------------------------- warp intrinsics
    def syncwarp(self, mask=FULL_MASK):
        self._blk.warp_op("syncwarp", mask, None, None, _pick_none, sys._getframe(1))

    def shfl_sync(self, mask, value, src_lane):
        return self._blk.warp_op("shfl_sync", mask, value, int(src_lane) % WARP, _pick_idx,
                                 sys._getframe(1))

    def shfl_up_sync(self, mask, value, delta):
        return self._blk.warp_op("shfl_up_sync", mask, value, -int(delta), _pick_rel,
                                 sys._getframe(1))

    def shfl_down_sync(self, mask, value, delta):
        return self._blk.warp_op("shfl_down_sync", mask, value, int(delta), _pick_rel,
                                 sys._getframe(1))

    def shfl_xor_sync(self, mask, value, lane_mask):
        return self._blk.warp_op("shfl_xor_sync", mask, value, int(lane_mask), _pick_xor,
                                 sys._getframe(1))

    def ballot_sync(self, mask, predicate):
        return self._blk.warp_op("ballot_sync", mask, bool(predicate), None, _pick_ballot,
                                 sys._getframe(1))

    def any_sync(self, mask, predicate):
        return self._blk.warp_op("any_sync", mask, bool(predicate), None, _pick_any,
                                 sys._getframe(1))

    def all_sync(self, mask, predicate):
        return self._blk.warp_op("all_sync", mask, bool(predicate), None, _pick_all,
                                 sys._getframe(1))

    def activemask(self):
        """Lanes of the caller's warp that exist and have not exited (the emulator cannot
        see divergence inside a warp, so lanes in another branch still count)."""
        return self._blk.active_lanes(self._warp)

    # ---------------------------------------------------------------- scalar helpers
    @staticmethod
    def fma(a, b, c):
        return a * b + c

    @staticmethod
    def cbrt(x):
        return math.copysign(abs(x) ** (1.0 / 3.0), x)

    @staticmethod
    def selp(pred, a, b):
        return a if pred else b

    @staticmethod
    def popc(x):
        return bin(int(x) & 0xFFFFFFFFFFFFFFFF).count("1")

    @staticmethod
    def brev(x):
        return int(f"{int(x) & 0xFFFFFFFF:032b}"[::-1], 2)

    @staticmethod
    def clz(x):
        x = int(x) & 0xFFFFFFFF
        return 32 - x.bit_length()

    @staticmethod
    def ffs(x):
        x = int(x) & 0xFFFFFFFF
        return (x & -x).bit_length()


def _pick_none(lane, arg, values, mask):
    return None


def _from_lane(op, src, lane, values, mask):
    if not (mask >> src) & 1:
        raise WarpSyncError(
            f"cuda.{op}: lane {lane} reads lane {src}, which is not in mask {mask:#010x}; on "
            "a GPU the value is undefined. Include that lane in the mask.")
    return values[src]


def _pick_idx(lane, arg, values, mask):
    return _from_lane("shfl_sync", arg, lane, values, mask)


def _pick_rel(lane, arg, values, mask):
    src = lane + arg
    if not 0 <= src < WARP:
        return values[lane]
    return _from_lane("shfl_up_sync" if arg < 0 else "shfl_down_sync", src, lane, values, mask)


def _pick_xor(lane, arg, values, mask):
    src = lane ^ arg
    if not 0 <= src < WARP:
        return values[lane]
    return _from_lane("shfl_xor_sync", src, lane, values, mask)


def _ballot(values, mask):
    bits = 0
    for ln in range(WARP):
        if (mask >> ln) & 1 and values[ln]:
            bits |= 1 << ln
    return bits


def _pick_ballot(lane, arg, values, mask):
    return _ballot(values, mask)


def _pick_any(lane, arg, values, mask):
    return int(_ballot(values, mask) != 0)


def _pick_all(lane, arg, values, mask):
    return int(_ballot(values, mask) == mask)


cuda = _FakeCuda()
_ATOMIC_LOCK = threading.Lock()


def _as_dtype(dtype) -> np.dtype:
    """A NumPy dtype from a NumPy or Numba type (``float32``, ``np.int32``, "float64")."""
    try:
        return np.dtype(dtype)
    except TypeError:
        pass
    try:
        return np.dtype(str(dtype))
    except TypeError:
        from numba.np import numpy_support

        return numpy_support.as_dtype(dtype)


def _shape(shape) -> tuple:
    if isinstance(shape, (tuple, list)):
        return tuple(int(s) for s in shape)
    return (int(shape),)


# What memory that nobody wrote holds (shared and local arrays, a host function's fresh device
# arrays): "garbage" (NaN floats, large integers: an answer that reads it shows) or "zero"
# (what a GPU's registers and fresh allocations often happen to hold). A kernel whose output
# changes between the two reads memory it never wrote (exercises.preflight runs both).
# Module-wide, not per OS thread: the emulated threads that allocate are not the caller's.
_POISON = types.SimpleNamespace(kind="garbage")


class poison:
    """``with emulator.poison("zero"):``: memory nobody wrote reads as zero in the launches
    made inside (the default, "garbage", is NaN or a large integer)."""

    def __init__(self, kind: str):
        _v().choice(kind, "kind", ("garbage", "zero"))
        self.kind = kind

    def __enter__(self):
        self._old = _POISON.kind
        _POISON.kind = self.kind
        return self

    def __exit__(self, *exc):
        _POISON.kind = self._old


def _poison_kind() -> str:
    return _POISON.kind


def _garbage(shape, dtype, kind: str | None = None) -> np.ndarray:
    arr = np.empty(shape, dtype)
    if (kind or _poison_kind()) == "zero":
        arr.fill(0)
    elif arr.dtype.kind in "fc":
        arr.fill(np.nan)
    elif arr.dtype.kind in "iu":
        arr.fill(np.iinfo(arr.dtype).max // 3)
    return arr


class _Shared:
    def array(self, shape, dtype, alignment=None):
        """The block's k-th shared array for the thread's k-th call (NaN or garbage)."""
        return cuda._blk.shared_array(shape, dtype, sys._getframe(1))


class _Local:
    def array(self, shape, dtype, alignment=None):
        """A thread's own array (registers or local memory), uninitialized: NaN or garbage."""
        return _garbage(_shape(shape), _as_dtype(dtype))


class _Const:
    def array_like(self, ary):
        return np.array(getattr(ary, "_a", ary))


class _Atomic:
    """``cuda.atomic``: read-modify-write under one lock, recorded as kind "atomic"."""

    @staticmethod
    def _rmw(ary, idx, update, frame):
        if not isinstance(ary, EmuArray):  # a local array: nobody else sees it
            old = ary[idx]
            ary[idx] = update(old)
            return old
        i, addr = ary._locate(idx, "atomic")
        if i is None:
            raise EmulatorError(f"an atomic on {ary.name} needs one element, not {idx!r}.")
        a = ary._a
        with _ATOMIC_LOCK, np.errstate(over="ignore"):  # integers wrap, as on a GPU
            old = a[i]
            a[i] = update(old)
        if ary._log is not None:
            ary._record("atomic", addr, ary._itemsize, frame)
        return old

    def add(self, ary, idx, val):
        return self._rmw(ary, idx, lambda o: o + val, sys._getframe(1))

    def sub(self, ary, idx, val):
        return self._rmw(ary, idx, lambda o: o - val, sys._getframe(1))

    def max(self, ary, idx, val):
        return self._rmw(ary, idx, lambda o: val if val > o or o != o else o, sys._getframe(1))

    def min(self, ary, idx, val):
        return self._rmw(ary, idx, lambda o: val if val < o or o != o else o, sys._getframe(1))

    def nanmax(self, ary, idx, val):
        return self._rmw(ary, idx, lambda o: val if o != o or val > o else o, sys._getframe(1))

    def nanmin(self, ary, idx, val):
        return self._rmw(ary, idx, lambda o: val if o != o or val < o else o, sys._getframe(1))

    def exch(self, ary, idx, val):
        return self._rmw(ary, idx, lambda o: val, sys._getframe(1))

    def inc(self, ary, idx, val):
        return self._rmw(ary, idx, lambda o: 0 if o >= val else o + 1, sys._getframe(1))

    def dec(self, ary, idx, val):
        return self._rmw(ary, idx, lambda o: val if (o == 0 or o > val) else o - 1,
                         sys._getframe(1))

    def and_(self, ary, idx, val):
        return self._rmw(ary, idx, lambda o: o & val, sys._getframe(1))

    def or_(self, ary, idx, val):
        return self._rmw(ary, idx, lambda o: o | val, sys._getframe(1))

    def xor(self, ary, idx, val):
        return self._rmw(ary, idx, lambda o: o ^ val, sys._getframe(1))

    def cas(self, ary, idx, old, val):
        return self._rmw(ary, idx, lambda o: val if o == old else o, sys._getframe(1))

    def compare_and_swap(self, ary, old, val):
        return self._rmw(ary, 0, lambda o: val if o == old else o, sys._getframe(1))

    def __getattr__(self, name):
        raise Unsupported(f"cuda.atomic.{name} is not supported by gpuperf's thread emulator.")


_FakeCuda.shared = _Shared()
_FakeCuda.local = _Local()
_FakeCuda.const = _Const()
_FakeCuda.atomic = _Atomic()

# Names of cuda.* the emulator provides: a global bound to numba.cuda's object of the same
# name (``from numba.cuda import syncthreads``) is translated to ours.
_PROVIDED = ("grid", "gridsize", "syncthreads", "syncthreads_count", "syncthreads_and",
             "syncthreads_or", "threadfence", "threadfence_block", "threadfence_system",
             "syncwarp", "shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync",
             "ballot_sync", "any_sync", "all_sync", "activemask", "fma", "cbrt", "selp", "popc",
             "brev", "clz", "ffs", "shared", "local", "const", "atomic")


# =========================================================================== arrays


class EmuArray:
    """An array argument or shared array as an emulated thread sees it: every element access
    is bounds-checked and (when recording) logged."""

    __slots__ = ("_a", "name", "space", "shape", "ndim", "size", "dtype", "_strides", "_off",
                 "_itemsize", "_log", "_alloc")

    def __init__(self, a: np.ndarray, name: str, space: str, off: int, log, alloc):
        if not isinstance(a, np.ndarray):
            raise TypeError(f"a must be a NumPy array (the memory an emulated thread sees), not "
                            f"{type(a).__name__}.")
        _v().string(name, "name")
        _v().choice(space, "space", ("global", "shared", "local", "const"))
        _v().integer(off, "off", minimum=0)
        self._a = a
        self.name = name
        self.space = space
        self.shape = a.shape
        self.ndim = a.ndim
        self.size = a.size
        self.dtype = a.dtype
        self._strides = a.strides
        self._off = off
        self._itemsize = a.itemsize
        self._log = log
        self._alloc = alloc

    @property
    def strides(self):
        return self._strides

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return f"<emulated {self.space} array {self.name} {self.shape} {self.dtype}>"

    def _where(self) -> str:
        blk = getattr(cuda, "_blk", None)
        if blk is None:
            return "outside a kernel"
        tidx = blk.thread_idx(cuda._tid)
        shown = _fmt_idx(tidx) if len(tidx) > 1 else str(tidx[0])
        return f"thread {shown} of block {blk.block_name()}"

    def _oob(self, idx, kind):
        if cuda._blk.error is not None:
            raise _Abort()
        shown = ", ".join(str(int(i)) for i in idx) if isinstance(idx, tuple) else str(idx)
        return OutOfBounds(
            f"{kind} of {self.name}[{shown}] is out of bounds: {self.name} has shape "
            f"{self.shape} ({self._where()}). On a GPU this touches memory that is not "
            f"{self.name}'s: garbage, corruption, or an illegal-address fault.")

    def _locate(self, idx, kind):
        """(element index, byte address) of a single-element access, (None, None) otherwise."""
        shape = self.shape
        if type(idx) is tuple:
            if len(idx) != len(shape):
                return None, None
            addr = self._off
            out = []
            for i, n, st in zip(idx, shape, self._strides):
                try:
                    i = operator.index(i)
                except TypeError:
                    return None, None
                if i < 0:
                    i += n
                if not 0 <= i < n:
                    raise self._oob(idx, kind)
                addr += i * st
                out.append(i)
            return tuple(out), addr
        if len(shape) != 1:
            return None, None
        try:
            i = operator.index(idx)
        except TypeError:
            return None, None
        n = shape[0]
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise self._oob(idx, kind)
        return i, self._off + i * self._strides[0]

    def _record(self, kind, addr, nbytes, frame):
        t = cuda
        blk = t._blk
        if blk.error is not None:
            raise _Abort()
        code = frame.f_code
        line = frame.f_lineno
        key = (self.space, kind, self.name, code, line)
        counts = t._counts
        occ = counts.get(key, 0)
        counts[key] = occ + 1
        tid = t._tid
        self._log.append(Access(self.space, kind, self.name, code.co_filename, line, blk.idx,
                                tid, tid >> 5, occ, addr, nbytes, t._epoch, t._wepoch,
                                self._alloc))

    def __getitem__(self, idx):
        i, addr = self._locate(idx, "load")
        if i is None:
            return self._view(idx)
        if self._log is not None:
            self._record("load", addr, self._itemsize, sys._getframe(1))
        elif cuda._blk.error is not None:  # another thread failed, or the launch timed out
            raise _Abort()
        return self._a[i]

    def __setitem__(self, idx, value):
        i, addr = self._locate(idx, "store")
        if i is None:
            raise Unsupported(f"storing to a slice of {self.name} ({idx!r}) is not supported "
                              "by the emulator: store element by element.")
        if self._log is not None:
            self._record("store", addr, self._itemsize, sys._getframe(1))
        elif cuda._blk.error is not None:
            raise _Abort()
        self._a[i] = value

    def _view(self, idx):
        try:
            v = self._a[idx]
        except IndexError:
            raise self._oob(idx, "view") from None
        if not isinstance(v, np.ndarray) or (v.size and not np.shares_memory(v, self._a)):
            raise Unsupported(f"indexing {self.name} with {idx!r} is not supported by the "
                              "emulator (only elements and basic slices).")
        base = self._a.__array_interface__["data"][0]
        off = self._off + (v.__array_interface__["data"][0] - base) if v.size else self._off
        return EmuArray(v, self.name, self.space, off, self._log, self._alloc)

    def __getattr__(self, name):
        raise Unsupported(f"{self.name}.{name} is not supported by gpuperf's thread emulator.")


def _fmt_idx(d) -> str:
    return "(" + ", ".join(str(v) for v in d) + ")"


# =========================================================================== vector intrinsics


def _vec_check(x, what, addr, shown):
    if addr % 16:
        raise MisalignedAccess(
            f"misaligned 16-byte access: {what}({x.name}, {shown}) touches bytes {addr}..{addr + 15}"
            f" from the start of {x.name}'s allocation, and {addr} is not a multiple of 16 "
            f"({x._where()}). On a GPU this kills the CUDA context "
            "(CUDA_ERROR_MISALIGNED_ADDRESS): use element indices that are multiples of 4, on "
            "an array that starts 16-byte aligned (not a view such as x[1:]).")


def _as_emu(x, what):
    if isinstance(x, EmuArray):
        return x
    if isinstance(x, np.ndarray):
        return EmuArray(x, "a local array", "local", 0, None, None)
    raise TypeError(f"{what} needs an array, not {type(x).__name__}.")


def _vec1(x, i, what, kind, frame):
    x = _as_emu(x, what)
    if x.ndim != 1 or x.dtype != np.float32:
        raise TypeError(f"{what} needs a 1-D float32 array; {x.name} is {x.ndim}-D {x.dtype}.")
    i = operator.index(i)
    if i < 0 or i + 4 > x.shape[0]:
        raise OutOfBounds(f"{what}({x.name}, {i}) touches {x.name}[{i}:{i + 4}], out of bounds "
                          f"of shape {x.shape} ({x._where()}).")
    if x._strides[0] != 4:
        raise TypeError(f"{what} needs a contiguous array; {x.name} has a stride of "
                        f"{x._strides[0]} bytes.")
    addr = x._off + 4 * i
    _vec_check(x, what, addr, str(i))
    if x._log is not None:
        x._record(kind, addr, 16, frame)
    return x._a, i


def load_float4(x, i):
    """``x[i:i+4]`` as a tuple of four float32, in one 16-byte load."""
    a, i = _vec1(x, i, "load_float4", "load", sys._getframe(1))
    return (a[i], a[i + 1], a[i + 2], a[i + 3])


def store_float4(x, i, values):
    """Store the tuple ``values`` to ``x[i:i+4]`` in one 16-byte store."""
    a, i = _vec1(x, i, "store_float4", "store", sys._getframe(1))
    a[i:i + 4] = np.array([values[0], values[1], values[2], values[3]], np.float32)


def _vec2(arr, i, j, what, kind, frame):
    arr = _as_emu(arr, what)
    if arr.ndim != 2 or arr.dtype != np.float32:
        raise TypeError(f"{what} needs a 2-D float32 array; {arr.name} is {arr.ndim}-D "
                        f"{arr.dtype}.")
    i, j = operator.index(i), operator.index(j)
    rows, cols = arr.shape
    if not (0 <= i < rows and 0 <= j and j + 4 <= cols):
        raise OutOfBounds(f"{what}({arr.name}, {i}, {j}) touches {arr.name}[{i}, {j}:{j + 4}], "
                          f"out of bounds of shape {arr.shape} ({arr._where()}).")
    if arr._strides[1] != 4:
        raise TypeError(f"{what} needs rows of contiguous floats.")
    addr = arr._off + i * arr._strides[0] + 4 * j
    _vec_check(arr, what, addr, f"{i}, {j}")
    if arr._log is not None:
        arr._record(kind, addr, 16, frame)
    return arr._a, i, j


def load4(arr, i, j):
    """Four consecutive floats ``arr[i, j:j+4]`` in one 16-byte load."""
    a, i, j = _vec2(arr, i, j, "load4", "load", sys._getframe(1))
    return a[i, j], a[i, j + 1], a[i, j + 2], a[i, j + 3]


def store4(arr, i, j, a, b, c, d):
    """Store four floats at ``arr[i, j:j+4]`` in one 16-byte store."""
    m, i, j = _vec2(arr, i, j, "store4", "store", sys._getframe(1))
    m[i, j:j + 4] = np.array([a, b, c, d], m.dtype)


_VECTOR = {"load_float4": load_float4, "store_float4": store_float4, "load4": load4,
           "store4": store4}


# =========================================================================== blocks


class _Round:
    """One meeting (a barrier, or a warp intrinsic of one mask): who arrived, the result,
    and one locked gate per waiting thread, released when the meeting completes or fails."""

    __slots__ = ("arrivals", "done", "result", "gates")

    def __init__(self):
        self.arrivals = {}
        self.done = False
        self.result = None
        self.gates = []

    def open(self):
        for gate in self.gates:
            gate.release()
        self.gates.clear()

    def gate(self):
        gate = threading.Lock()
        gate.acquire()
        self.gates.append(gate)
        return gate


class _Block:
    """One block's threads: barrier, warp meetings, shared memory, and the first error."""

    def __init__(self, launch, idx: Dim3):
        self.launch = launch
        self.idx = idx
        self.n = launch.nthreads
        self.cond = threading.Lock()
        self.running = self.n
        self.status: list = [None] * self.n  # None: running; "exited"; (kind, op, line)
        self.bar = _Round()
        self.warp_rounds: dict = {}
        self.shared: list = []
        self.dynamic = None
        self.error: BaseException | None = None

    # ---------------------------------------------------------------- helpers
    def thread_idx(self, tid: int) -> tuple:
        bd = self.launch.block
        t = (tid % bd.x, (tid // bd.x) % bd.y, tid // (bd.x * bd.y))
        dims = 3 if bd.z > 1 else 2 if bd.y > 1 else 1
        return t[:dims]

    def who(self, tids, verb: str = "", limit: int = 4) -> str:
        """'thread (3, 0) waits' or '12 threads [(1, 0), (2, 0), ... 8 more] wait'."""
        tids = sorted(tids)
        items = [self.thread_idx(t) for t in tids[:limit]]
        shown = ", ".join(_fmt_idx(t) if len(t) > 1 else str(t[0]) for t in items)
        if len(tids) == 1:
            return f"thread {shown}" + (f" {verb}s" if verb else "")
        more = f", ... {len(tids) - limit} more" if len(tids) > limit else ""
        return f"{len(tids)} threads [{shown}{more}]" + (f" {verb}" if verb else "")

    def block_name(self) -> str:
        g = self.launch.grid
        dims = 3 if g.z > 1 else 2 if g.y > 1 or self.launch.block.y > 1 else 1
        return _fmt_idx(self.idx[:dims]) if dims > 1 else str(self.idx.x)

    def _fail(self, err: BaseException):
        """Record the block's error (under the lock), wake everybody, stop this thread."""
        if self.error is None:
            self.error = err
        self.wake_all()
        raise _Abort()

    def wake_all(self):
        """After an error (under the lock): let every waiting thread go (and abort)."""
        self.bar.open()
        for rnd in self.warp_rounds.values():
            rnd.open()

    def _stuck(self) -> EmulatorError:
        """Every live thread waits and nothing can complete: say who waits where."""
        exited = [t for t, s in enumerate(self.status) if s == "exited"]
        at_bar: dict = {}
        at_warp: dict = {}
        for t, s in enumerate(self.status):
            if isinstance(s, tuple):
                (at_bar if s[0] == "bar" else at_warp).setdefault((s[1], s[2]), []).append(t)
        parts = []
        if at_bar:
            (op, line), first = max(at_bar.items(), key=lambda kv: len(kv[1]))
            head = (f"barrier cuda.{op}() at line {line} not reached by all threads of block "
                    f"{self.block_name()}: {self.who(first, 'wait')} there")
            for (op2, line2), ts in at_bar.items():
                if (op2, line2) != (op, line):
                    parts.append(f"{self.who(ts, 'wait')} at cuda.{op2}() at line {line2}")
        else:
            (op, line), first = next(iter(at_warp.items()))
            head = (f"cuda.{op} at line {line} in block {self.block_name()} cannot complete: "
                    f"{self.who(first, 'wait')} there")
        for (op2, line2), ts in at_warp.items():
            if at_bar or (op2, line2) != (op, line):
                parts.append(f"{self.who(ts, 'wait')} at cuda.{op2} at line {line2}")
        if exited:
            parts.append(f"{self.who(exited)} exited (returned) without reaching it")
        cls = BarrierError if at_bar else WarpSyncError
        return cls(head + "".join("; " + p for p in parts) + ". On a GPU every thread of a block must "
                   "reach the same barrier (and every lane of a mask the same warp intrinsic), "
                   "or the block hangs or computes garbage: move early returns below the last "
                   "barrier and guard loads and stores with if-tests instead.")

    # ---------------------------------------------------------------- barrier
    def barrier(self, op, pred, frame):
        t = cuda
        tid = t._tid
        line = frame.f_lineno
        with self.cond:
            if self.error is not None:
                raise _Abort()
            rnd = self.bar
            rnd.arrivals[tid] = (line, frame.f_code, pred)
            self.status[tid] = ("bar", op, line)
            self.running -= 1
            if len(rnd.arrivals) == self.n:
                sites = {(ln, code) for ln, code, _ in rnd.arrivals.values()}
                if len(sites) > 1:
                    self._fail(self._stuck())
                preds = [p for _, _, p in rnd.arrivals.values()]
                rnd.result = (sum(preds) if op == "syncthreads_count" else
                              int(all(preds)) if op == "syncthreads_and" else
                              int(any(preds)) if op == "syncthreads_or" else None)
                rnd.done = True
                self.bar = _Round()
                for other in rnd.arrivals:
                    self.status[other] = None
                self.running += self.n
                rnd.open()
                gate = None
            else:
                if self.running == 0:
                    self._fail(self._stuck())
                gate = rnd.gate()
        if gate is not None:
            gate.acquire()
            if not rnd.done:
                raise _Abort()
        t._epoch += 1
        t._wepoch += 1
        return rnd.result

    # ---------------------------------------------------------------- warp intrinsics
    def active_lanes(self, warp: int) -> int:
        mask = 0
        for lane in range(WARP):
            tid = warp * WARP + lane
            if tid < self.n and self.status[tid] != "exited":
                mask |= 1 << lane
        return mask

    def warp_op(self, op, mask, value, arg, pick, frame):
        t = cuda
        tid, lane, warp = t._tid, t._lane, t._warp
        mask = int(mask) & FULL_MASK
        line = frame.f_lineno
        if not (mask >> lane) & 1:
            raise WarpSyncError(
                f"cuda.{op} at line {line}: lane {lane} of warp {warp} (thread "
                f"{_fmt_idx(t.threadIdx)}) called it but its own bit is not set in mask "
                f"{mask:#010x}. Every calling lane must be in the mask.")
        lanes = [ln for ln in range(WARP) if (mask >> ln) & 1]
        missing = [ln for ln in lanes if warp * WARP + ln >= self.n]
        if missing:
            raise WarpSyncError(
                f"cuda.{op} at line {line}: mask {mask:#010x} names lanes {missing[0]}.."
                f"{missing[-1]} of warp {warp}, but the block has only {self.n} threads, so "
                "those lanes do not exist and the call would hang on a GPU. Use a block size "
                "that is a multiple of 32, or a mask with only the lanes that exist.")
        with self.cond:
            if self.error is not None:
                raise _Abort()
            gone = [ln for ln in lanes if self.status[warp * WARP + ln] == "exited"]
            if gone:
                self._fail(WarpSyncError(
                    f"cuda.{op} at line {line} in warp {warp} of block {self.block_name()}: "
                    f"lanes {gone} of mask {mask:#010x} have exited (returned) and can never "
                    "reach it; on a GPU this hangs or is undefined. Move early returns below "
                    "the call, or pass a mask of only the lanes that reach it."))
            key = (warp, mask)
            rnd = self.warp_rounds.get(key)
            if rnd is None:
                rnd = self.warp_rounds[key] = _Round()
            rnd.arrivals[lane] = (op, line, value, arg)
            self.status[tid] = ("warp", op, line)
            self.running -= 1
            if len(rnd.arrivals) == len(lanes):
                ops = {a[0] for a in rnd.arrivals.values()}
                if len(ops) > 1:
                    self._fail(WarpSyncError(
                        f"lanes of warp {warp} (mask {mask:#010x}) meet at different warp "
                        f"intrinsics ({', '.join(sorted(ops))}) in block {self.block_name()}: "
                        "every lane in the mask must execute the same call."))
                values = [None] * WARP
                for ln, a in rnd.arrivals.items():
                    values[ln] = a[2]
                try:
                    rnd.result = {ln: pick(ln, a[3], values, mask)
                                  for ln, a in rnd.arrivals.items()}
                except WarpSyncError as err:
                    self._fail(err)
                rnd.done = True
                del self.warp_rounds[key]
                for ln in rnd.arrivals:
                    self.status[warp * WARP + ln] = None
                self.running += len(lanes)
                rnd.open()
                gate = None
            else:
                if self.running == 0:
                    self._fail(self._stuck())
                gate = rnd.gate()
        if gate is not None:
            gate.acquire()
            if not rnd.done:
                raise _Abort()
        t._wepoch += 1
        return rnd.result[lane]

    # ---------------------------------------------------------------- shared memory
    def shared_array(self, shape, dtype, frame):
        t = cuda
        dtype = _as_dtype(dtype)
        shape = _shape(shape)
        if shape in ((0,), ()):
            return self._dynamic_shared(dtype)
        k = t._nshared
        t._nshared = k + 1
        with self.cond:
            if k < len(self.shared):
                arr = self.shared[k]
                if arr.shape != shape or arr.dtype != dtype:
                    raise EmulatorError(
                        f"cuda.shared.array at line {frame.f_lineno}: this thread's call number "
                        f"{k + 1} asks for shape {shape} {dtype}, but another thread's call "
                        f"number {k + 1} created {arr.name} with {arr.shape} {arr.dtype}. "
                        "Every thread of a block must allocate the same shared arrays in the "
                        "same order.")
                return arr
            m = re.match(r"\s*(\w+)\s*=", linecache.getline(frame.f_code.co_filename,
                                                            frame.f_lineno))
            name = m.group(1) if m else f"shared@{frame.f_lineno}"
            launch = self.launch
            arr = EmuArray(_garbage(shape, dtype), name, "shared", 0, launch.log,
                           launch.new_alloc())
            self.shared.append(arr)
            return arr

    def _dynamic_shared(self, dtype):
        launch = self.launch
        with self.cond:
            if self.dynamic is None:
                buf = _garbage(launch.shared_bytes, np.uint8)
                self.dynamic = (buf, launch.new_alloc())
        buf, alloc = self.dynamic
        count = buf.size // dtype.itemsize
        return EmuArray(np.frombuffer(buf.data, dtype=dtype, count=count), "dynamic shared",
                        "shared", 0, launch.log, alloc)

    # ---------------------------------------------------------------- threads
    def thread_main(self, fn, args, tid):
        t = cuda
        launch = self.launch
        bd = launch.block
        t._blk = self
        t._tid = tid
        t._lane = tid % WARP
        t._warp = tid // WARP
        t._counts = {}
        t._epoch = 0
        t._wepoch = 0
        t._nshared = 0
        t.threadIdx = Dim3(tid % bd.x, (tid // bd.x) % bd.y, tid // (bd.x * bd.y))
        t.blockIdx = self.idx
        t.blockDim = bd
        t.gridDim = launch.grid
        t.laneid = tid % WARP
        try:
            fn(*args)
        except _Abort:
            pass
        except BaseException as err:  # noqa: BLE001  (handed to the launching thread)
            with self.cond:
                if self.error is None:
                    self.error = err
                self.wake_all()
        finally:
            with self.cond:
                self.status[tid] = "exited"
                self.running -= 1
                if self.error is None:
                    self._check_exit(tid)

    def _check_exit(self, tid):
        """A thread left: once no thread runs, fail the block if somebody still waits."""
        if self.running == 0 and any(isinstance(s, tuple) for s in self.status):
            self.error = self._stuck()
            self.wake_all()


# =========================================================================== rebuilding functions


def _numba_cuda():
    return sys.modules.get("numba.cuda")


def _code_names(code) -> set:
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _code_names(c)
    return names


_SCALARS = (int, float, bool, str, bytes, tuple, type(None), complex)


def _translations() -> dict:
    """id(object) -> replacement, for numba.cuda's and gpuperf.vector's objects."""
    table = {}
    nc = _numba_cuda()
    if nc is not None:
        table[id(nc)] = (nc, cuda)
        for name in _PROVIDED:
            obj = getattr(nc, name, None)
            if obj is not None and not isinstance(obj, _SCALARS):
                table[id(obj)] = (obj, getattr(cuda, name))  # obj kept alive: ids stay unique
    vec = sys.modules.get("gpuperf.vector")
    if vec is not None:
        for name, fn in _VECTOR.items():
            obj = getattr(vec, name, None)
            if obj is not None:
                table[id(obj)] = (obj, fn)
    return table


def _is_dispatcher(v) -> bool:
    if isinstance(v, (types.FunctionType, type, types.ModuleType, _FakeCuda)):
        return False
    try:
        return isinstance(getattr(v, "py_func", None), types.FunctionType)
    except Exception:  # noqa: BLE001  (an object whose attributes raise: not a kernel)
        return False


# Modules whose attributes are never kernels: used as they are (no proxy, no overhead).
_PLAIN_MODULES = ("numpy", "math", "cmath", "operator", "builtins", "random", "itertools",
                  "functools")


class _ModuleProxy:
    """A module a kernel reaches device functions through (``red.warp_sum(v)``,
    ``gp.reduce.warp_sum(v)``): its attributes are translated on first use."""

    def __init__(self, module, memo, table):
        self.__dict__["_module"] = module
        self.__dict__["_memo"] = memo
        self.__dict__["_table"] = table

    def __getattr__(self, name):
        value = _translate(getattr(self._module, name), self._memo, self._table)
        self.__dict__[name] = value
        return value

    def __repr__(self):
        return f"<emulated view of {self._module!r}>"


def _translate(v, memo, table):
    if isinstance(v, _SCALARS):
        return v
    hit = table.get(id(v))
    if hit is not None and hit[0] is v:
        return hit[1]
    if isinstance(v, types.ModuleType):
        name = v.__name__
        if name == "numba.cuda":
            return cuda
        if name.split(".")[0] in _PLAIN_MODULES:
            return v
        key = ("module", id(v))
        if key not in memo:
            memo[key] = _ModuleProxy(v, memo, table)
        return memo[key]
    if _is_dispatcher(v):
        return _emulate(v.py_func, memo, table)
    return v


class _Constant(np.ndarray):
    """A NumPy array a kernel reaches as a global or closure variable, as a GPU has it: Numba
    copies it into the kernel as a read-only constant. Reads work; a write raises
    ``ConstantWrite`` naming the array."""

    def __array_finalize__(self, obj):
        self._gp_name = getattr(obj, "_gp_name", "a global array")

    def __setitem__(self, idx, value):
        raise ConstantWrite(
            f"your kernel writes {self._gp_name}, a NumPy array it reaches as a global or "
            "closure variable: on a GPU Numba copies such an array into the kernel as a "
            "read-only constant, so the write never reaches the host's array (and an atomic "
            "on it faults, ending the CUDA session). Pass the array to the kernel as an "
            "argument (a device array).")


def _constant(value, name: str):
    """``value`` as a kernel sees a global: a NumPy array becomes a read-only ``_Constant``."""
    if isinstance(value, np.ndarray) and not isinstance(value, _Constant):
        view = value.view(_Constant)
        view._gp_name = name
        return view
    return value


def _rebuilt(py, memo, translate, *, fresh_cells: bool = False, constants: bool = False):
    """``py`` as a new function whose closure cells and globals pass through ``translate``
    (its own copy of the globals: the original module is untouched). Memoized in ``memo``
    before the globals are translated, so that recursion and mutual calls terminate.
    ``fresh_cells``: new closure cells even for unchanged values, so that a ``nonlocal``
    write in a dry run cannot reach the original function."""
    found = memo.get(id(py))
    if found is not None:
        return found
    closure = None
    if py.__closure__:
        cells = []
        for name, cell in zip(py.__code__.co_freevars, py.__closure__):
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                cells.append(cell)
                continue
            new = translate(_constant(value, name) if constants else value)
            cells.append(cell if new is value and not fresh_cells else types.CellType(new))
        closure = tuple(cells)
    glb = dict(py.__globals__)
    fn = types.FunctionType(py.__code__, glb, py.__name__, py.__defaults__, closure)
    fn.__kwdefaults__ = py.__kwdefaults__
    memo[id(py)] = fn
    for name in _code_names(py.__code__):
        if name in glb:
            glb[name] = translate(_constant(glb[name], name) if constants else glb[name])
    return fn


def _emulate(py, memo, table):
    # A kernel's or device function's global arrays are constants on a GPU: so here.
    fn = _rebuilt(py, memo, lambda value: _translate(value, memo, table), constants=True)
    fn.__wrapped_kernel__ = py
    return fn


def emulate(fn):
    """The Python function of a kernel, device function or plain function, rebuilt so that
    ``cuda``, device functions and the vector intrinsics are the emulator's."""
    py = getattr(fn, "py_func", fn)
    if not isinstance(py, types.FunctionType):
        raise TypeError(f"the emulator runs a @cuda.jit kernel or a Python function, not "
                        f"{type(fn).__name__}.")
    return _emulate(py, {}, _translations())


# =========================================================================== launching


def _dim3(v, what) -> Dim3:
    if isinstance(v, (int, np.integer)):
        v = (int(v),)
    v = tuple(int(x) for x in v)
    if not 1 <= len(v) <= 3 or any(x < 1 for x in v):
        raise ValueError(f"{what} must be 1 to 3 positive integers, not {v}.")
    return Dim3(*(v + (1,) * (3 - len(v))))


def param_names(kernel, n: int = 0) -> list[str]:
    """The names of a kernel's parameters (of a ``@cuda.jit`` kernel's Python function, or
    of a plain function), padded to ``n`` with ``arg<i>``; none where they cannot be read."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n={n!r} must be a count of parameters (0 or more).")
    try:
        names = list(inspect.signature(getattr(kernel, "py_func", kernel)).parameters)
    except (TypeError, ValueError):
        names = []
    return (names + [f"arg{i}" for i in range(len(names), n)])[:max(n, len(names))]


class _Launch:
    def __init__(self, grid, block, record, shared_bytes):
        self.grid = grid
        self.block = block
        self.nthreads = block.x * block.y * block.z
        self.log = [] if record else None
        self.shared_bytes = int(shared_bytes)
        self._allocs = 0
        self._alloc_lock = threading.Lock()

    def new_alloc(self) -> int:
        with self._alloc_lock:
            self._allocs += 1
            return self._allocs


def _host_offset(a: np.ndarray) -> int:
    """Where a host array starts, in bytes from its allocation's (256-byte aligned) start.

    A view such as ``x[1:]`` starts 4 bytes in, as the simulator's device arrays do (and as
    the course's host code that reads ``x.ctypes.data % 16`` in simulator mode assumes); a
    fresh array starts at 0 (NumPy aligns allocations to 16 bytes, cudaMalloc to 256).
    """
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    start = root.__array_interface__["data"][0]
    return a.__array_interface__["data"][0] - start + start % 16


def _wrap_arg(arg, name, launch, alloc):
    """(what the kernel sees, a function that copies results back or None)."""
    if isinstance(arg, np.ndarray):
        if arg.ndim == 0:
            return arg, None
        return EmuArray(arg, name, "global", _host_offset(arg), launch.log, alloc), None
    host = getattr(arg, "_ary", None)
    if isinstance(host, np.ndarray) and type(arg).__name__.startswith("FakeCUDA"):
        return EmuArray(host, name, "global", _host_offset(host), launch.log, alloc), None
    if hasattr(arg, "copy_to_host") and hasattr(arg, "__cuda_array_interface__"):
        data = arg.copy_to_host()
        ptr = int(arg.__cuda_array_interface__["data"][0])
        return (EmuArray(data, name, "global", ptr % 256, launch.log, alloc),
                lambda: arg.copy_to_device(data))
    if hasattr(arg, "__cuda_array_interface__"):
        raise TypeError(f"{name}: the emulator takes NumPy or Numba device arrays; convert "
                        f"this {type(arg).__name__} with numba.cuda.as_cuda_array first.")
    return arg, None


def _block_order(grid: Dim3, order):
    blocks = [Dim3(x, y, z) for z in range(grid.z) for y in range(grid.y) for x in range(grid.x)]
    if order is None:
        return blocks
    if order == "reverse":
        return blocks[::-1]
    if order == "random":
        rng = np.random.default_rng(0)
        return [blocks[i] for i in rng.permutation(len(blocks))]
    return [_dim3(b, "a block index") for b in order]


_LAUNCH_LOCK = threading.RLock()
_SWITCH_INTERVAL = 5e-3


def _thread_order(nthreads: int, order) -> list[int]:
    if order is None:
        return list(range(nthreads))
    if order == "reverse":
        return list(range(nthreads))[::-1]
    if order == "random":
        return [int(t) for t in np.random.default_rng(1).permutation(nthreads)]
    raise ValueError(f"thread_order must be None, \"reverse\" or \"random\", not {order!r}.")


def launch(kernel, grid, block, *args, record: bool = True, shared_bytes: int = 0,
           block_order=None, max_blocks: int | None = None,
           timeout: float | None = None, thread_order=None) -> Run:
    """Run ``kernel[grid, block](*args)`` over emulated threads; return a ``Run``.

    ``kernel``: a ``@cuda.jit`` kernel (GPU, simulator or compile mode) or a plain Python
    function written against ``gpuperf.emulator.cuda``. ``grid``, ``block``: as in a launch.
    NumPy arguments are used in place; device arrays are copied in and (after a successful
    run) back. ``record=False`` skips the access log (bounds, alignment and barrier rules
    are still enforced). ``shared_bytes``: dynamic shared memory per block.
    ``block_order``: None (x fastest), "reverse", "random", or a list of block indices;
    ``max_blocks`` runs only the first blocks of that order. ``timeout``: seconds for the
    whole launch, after which it raises ``LaunchTimeout`` (its threads stop at their next
    array access or barrier). ``thread_order``: None (thread 0 first), "reverse" or "random":
    the order in which each block's threads start, and so (as they hand over only at
    barriers and warp meetings) the order in which they run between barriers. A result that
    changes with it depends on a race.

    Raises the first error of a thread (the kernel's own exception, or one of ``FAULTS``).
    """
    v = _v()
    v.boolean(record, "record")
    v.integer(shared_bytes, "shared_bytes", minimum=0)
    if max_blocks is not None:
        v.integer(max_blocks, "max_blocks", minimum=1)
    if timeout is not None:
        v.positive(timeout, "timeout")
    grid, block = _dim3(grid, "grid"), _dim3(block, "block")
    nthreads = block.x * block.y * block.z
    starts = _thread_order(nthreads, thread_order)
    if nthreads > MAX_BLOCK_THREADS:
        raise ValueError(f"a block has at most {MAX_BLOCK_THREADS} threads, not {nthreads} "
                         f"({block.x} x {block.y} x {block.z}).")
    fn = emulate(kernel)
    names = param_names(fn.__wrapped_kernel__, len(args))
    run_ = _Launch(grid, block, record, shared_bytes)
    wrapped, copy_back = [], []
    for k, (name, arg) in enumerate(zip(names, args)):
        w, back = _wrap_arg(arg, name, run_, -(k + 1))
        wrapped.append(w)
        if back is not None:
            copy_back.append(back)
    order = _block_order(grid, block_order)
    if max_blocks is not None:
        order = order[:max_blocks]
    deadline = None if timeout is None else time.monotonic() + timeout
    with _LAUNCH_LOCK:
        switch = sys.getswitchinterval()
        # Emulated threads hand over at barriers (they block on a gate), never by being
        # preempted, so a long interval is faster: measured 0.57 s for 10 barriers of 4
        # blocks of 256 threads at 5 ms, 1.5 s at the simulator's 0.1 ms.
        sys.setswitchinterval(_SWITCH_INTERVAL)
        try:
            for idx in order:
                blk = _Block(run_, idx)
                threads = [threading.Thread(target=blk.thread_main, args=(fn, wrapped, tid),
                                            daemon=True, name=f"emulated {idx} {tid}")
                           for tid in starts]
                for th in threads:
                    th.start()
                for th in threads:
                    th.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
                    if th.is_alive():
                        with blk.cond:
                            if blk.error is None:
                                blk.error = LaunchTimeout(
                                    f"the kernel was stopped after {timeout:g} s in the "
                                    f"emulator (block {blk.block_name()} still running): an endless "
                                    "loop? On a GPU it would never finish either.")
                            blk.wake_all()
                        break
                if blk.error is not None:
                    raise blk.error
        finally:
            sys.setswitchinterval(switch)
    for back in copy_back:
        back()
    return Run(run_.log or [], grid, block, names)


# =========================================================================== results

Race = collections.namedtuple("Race", "space array kind first second count")
Race.__doc__ = """Conflicting accesses to the same bytes, not ordered by a barrier: ``kind``
is "write-write" or "read-write"; ``first``/``second`` are example ``Access`` records;
``count``: how many address pairs showed the same conflict (same lines and blocks' relation).
"""


class Run:
    """What one emulated launch did: its ``events`` (``Access`` records), block by block and
    thread by thread, each thread's in the order it made them: the same order on every run,
    whatever order the emulated threads ran in (so a checker's example of a fault is too)."""

    def __init__(self, events, grid, block, params):
        if not isinstance(events, list):
            raise TypeError(f"events must be a list of Access records (what launch() makes), not "
                            f"{type(events).__name__}.")
        # A stable sort: each thread's accesses keep their program order.
        self.events = sorted(events, key=lambda e: (tuple(e.block)[::-1], e.thread))
        self.grid = grid
        self.block = block
        self.params = params
        # (kernel, arguments) where a host dry run (run_host) made this launch, so that the
        # kernel can be compiled for real targets with those arguments' types.
        self.launched: tuple = (None, ())

    def accesses(self, *, space=None, kind=None, array=None) -> list:
        """The recorded accesses, filtered by space ("global"/"shared"), kind and array name."""
        if space is not None:
            _v().choice(space, "space", ("global", "shared"))
        if kind is not None:
            _v().choice(kind, "kind", ("load", "store", "atomic"))
        if array is not None:
            _v().string(array, "array")
        return [e for e in self.events
                if (space is None or e.space == space) and (kind is None or e.kind == kind)
                and (array is None or e.array == array)]

    def warp_requests(self) -> list:
        """The lanes of each warp that made the same access together, as ``WarpRequest``s,
        sorted by block, warp and line."""
        groups: dict = {}
        for e in self.events:
            key = (e.space, e.kind, e.array, e.file, e.line, e.block, e.warp, e.occurrence)
            groups.setdefault(key, []).append((e.thread, e.address, e.nbytes))
        out = [WarpRequest(*key, tuple(sorted(lanes))) for key, lanes in groups.items()]
        out.sort(key=lambda r: (r.block, r.warp, r.line, r.occurrence))
        return out

    def races(self) -> list:
        """Unordered conflicting accesses (neither atomic, at least one a store): between
        threads of a block with no barrier between them (lanes of one warp are ordered by a
        ``syncwarp`` or shuffle between them), and between blocks (global memory)."""
        by_word: dict = {}
        for e in self.events:
            if e.kind == "atomic":
                continue
            unit = 4 if e.address % 4 == 0 and e.nbytes % 4 == 0 else 1
            for a in range(e.address // unit, (e.address + e.nbytes) // unit):
                by_word.setdefault((e.space, e.alloc, unit, a), []).append(e)
        found: dict = {}
        for (space, _alloc, _unit, _a), evs in by_word.items():
            stores = [e for e in evs if e.kind == "store"]
            if not stores or len({(e.block, e.thread) for e in evs}) < 2:
                continue
            for s in stores:
                for o in evs:
                    if o is s or (o.block == s.block and o.thread == s.thread):
                        continue
                    if o.kind == "store" and (o.block, o.thread) < (s.block, s.thread):
                        continue  # each write-write pair once
                    if o.block == s.block:
                        if o.epoch != s.epoch:
                            continue
                        if o.warp == s.warp and o.wepoch != s.wepoch:
                            continue
                    kind = "write-write" if o.kind == "store" else "read-write"
                    key = (space, s.array, kind, s.line, o.line, o.block == s.block)
                    if key in found:
                        found[key][1] += 1
                    else:
                        found[key] = [(s, o), 1]
        return [Race(k[0], k[1], k[2], pair[0], pair[1], n) for k, (pair, n) in found.items()]

    def describe_races(self, limit: int = 5) -> list[str]:
        """Plain sentences for ``races()``, at most ``limit``."""
        _v().integer(limit, "limit", minimum=0)
        out = []
        for r in self.races()[:limit]:
            a, b = r.first, r.second
            where = ("in the same block with no cuda.syncthreads() between them"
                     if a.block == b.block else f"from blocks {_fmt_idx(a.block)} and "
                     f"{_fmt_idx(b.block)}, which nothing orders")
            out.append(f"{r.kind} race on {r.space} {r.array}: line {a.line} "
                       f"(`{source_line(a.file, a.line)}`) stores and line {b.line} "
                       f"(`{source_line(b.file, b.line)}`) {'stores' if b.kind == 'store' else 'loads'}"
                       f" the same element from different threads, {where} "
                       f"({r.count} time{'s' if r.count != 1 else ''}).")
        return out


# =========================================================================== host dry runs


class HostArray(np.ndarray):
    """A device array in a host dry run (:func:`run_host`): NumPy memory with the device
    array's methods, starting on a 256-byte boundary as ``cudaMalloc``'s do."""

    def copy_to_host(self, ary=None, stream=0):
        if ary is None:
            return np.array(self)
        if not isinstance(ary, np.ndarray) or ary.shape != self.shape:
            raise ValueError(f"ary must be a NumPy array of shape {self.shape} to copy into, "
                             f"not {_v()._short(ary)}.")
        ary[...] = self
        return ary

    def copy_to_device(self, ary, stream=0):
        if np.shape(ary) != self.shape:
            raise ValueError(f"ary must have this array's shape {self.shape}, not "
                             f"{np.shape(ary)}.")
        self[...] = np.asarray(ary)

    def is_c_contiguous(self) -> bool:
        return bool(self.flags.c_contiguous)


def _host_alloc(shape, dtype) -> HostArray:
    dtype = np.dtype(dtype)
    shape = _shape(shape)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(nbytes + 256, dtype=np.uint8)
    start = (-raw.ctypes.data) % 256
    arr = raw[start:start + nbytes].view(dtype).reshape(shape).view(HostArray)
    # like fresh device memory: nothing a kernel may rely on (or zero, under poison("zero"))
    arr[...] = _garbage((), dtype)
    return arr


class _HostEvent:
    def record(self, stream=0):
        pass

    def synchronize(self):
        pass

    def wait(self, stream=0):
        pass

    def query(self) -> bool:
        return True

    def elapsed_time(self, other) -> float:
        return 0.0


class _HostStream:
    def synchronize(self):
        pass

    def query(self) -> bool:
        return True

    def auto_synchronize(self):
        import contextlib

        return contextlib.nullcontext(self)


class _HostCuda:
    """``numba.cuda`` as a host function sees it in a dry run: allocations are NumPy arrays,
    copies are NumPy copies, streams and events do nothing, and kernels run in the emulator."""

    _PASS = ("jit", "float32", "float64", "int32", "int64", "uint32", "uint64", "boolean",
             "is_available", "detect", "get_current_device", "current_context", "gpus")

    def __init__(self, real):
        self._real = real

    def device_array(self, shape, dtype=np.float64, strides=None, order="C", stream=0):
        return _host_alloc(shape, dtype)

    def device_array_like(self, ary, stream=0):
        return _host_alloc(np.shape(ary), np.asarray(ary).dtype if not hasattr(ary, "dtype")
                           else ary.dtype)

    def to_device(self, obj, stream=0, copy=True, to=None):
        obj = np.asarray(obj)
        if to is not None:
            to[...] = obj
            return to
        arr = _host_alloc(obj.shape, obj.dtype)
        if copy:
            arr[...] = obj
        return arr

    def pinned_array(self, shape, dtype=np.float64, strides=None, order="C"):
        return np.empty(shape, dtype=dtype)

    def pinned(self, *arrays):
        import contextlib

        return contextlib.nullcontext()

    def synchronize(self):
        pass

    def stream(self):
        return _HostStream()

    default_stream = legacy_default_stream = per_thread_default_stream = stream

    def event(self, timing=True):
        return _HostEvent()

    def __getattr__(self, name):
        if name in self._PASS:
            return getattr(self._real, name)
        raise Unsupported(f"cuda.{name} in host code is not emulated")


class _HostKernel:
    """A kernel launched from a host dry run: ``kernel[grid, block](...)`` runs in the emulator."""

    def __init__(self, kernel, max_blocks, timeout, runs=None):
        self._kernel, self._max_blocks, self._timeout = kernel, max_blocks, timeout
        self._runs = runs  # a list: record every access and keep each launch's Run there

    def __getitem__(self, config):
        config = config if isinstance(config, tuple) else (config,)
        if len(config) < 2:
            raise TypeError("a launch needs [grid, block]")
        grid, block = config[0], config[1]
        shared = int(config[3]) if len(config) > 3 else 0

        def launch_(*args):
            run = launch(self._kernel, grid, block, *args, record=self._runs is not None,
                         shared_bytes=shared, max_blocks=self._max_blocks,
                         timeout=self._timeout)
            if self._runs is not None:
                run.launched = (self._kernel, args)  # for compiling it for real targets
                self._runs.append(run)

        return launch_

    def __getattr__(self, name):
        return getattr(self._kernel, name)


def _host_translate(value, module, memo, fake, limits):  # limits: (max_blocks, timeout, runs)
    if isinstance(value, _SCALARS):
        return value
    if id(value) in memo:
        return memo[id(value)]
    if isinstance(value, types.ModuleType) and value.__name__ == "numba.cuda":
        return fake
    if _is_dispatcher(value):
        memo[id(value)] = _HostKernel(value, *limits)
        return memo[id(value)]
    if isinstance(value, (dict, list, set)):
        # The student's caches (e.g. buffers kept between calls): a dry run must not leave
        # host arrays in them for the real run to find.
        memo[id(value)] = copy.copy(value)
        return memo[id(value)]
    if isinstance(value, types.FunctionType) and value.__module__ == module:
        return _host_function(value, memo, fake, limits)
    return value


def _host_function(py, memo, fake, limits):
    return _rebuilt(py, memo, lambda value: _host_translate(value, py.__module__, memo, fake,
                                                            limits), fresh_cells=True)


def run_host(fn, *args, max_blocks: int = 8, timeout: float = 60.0, runs: list | None = None):
    """Call the host function ``fn(*args)`` with every kernel it launches run in the emulator.

    A dry run for code that launches its own kernels (a student's ``my_sum(d_x)``): inside
    ``fn`` (and the functions of its module it calls), ``numba.cuda`` allocates NumPy
    arrays (:class:`HostArray`, 256-byte aligned like ``cudaMalloc``), copies are NumPy
    copies, streams and events do nothing, and each ``kernel[grid, block](...)`` runs its
    first ``max_blocks`` blocks in the emulator, where a fault (out of bounds, a misaligned
    16-byte access, a barrier or warp intrinsic not all threads reach, ``timeout`` seconds
    per launch) raises as in :func:`launch`. Lists, dicts and sets the code reaches are
    copied first, so a cache it fills stays empty for the real run. Pass host arrays (a
    ``HostArray`` view keeps a device array's alignment). Returns what ``fn`` returns.
    With a list as ``runs``, every access is recorded and each launch's :class:`Run` is
    appended to it, in launch order (for ``Run.races()``).
    """
    v = _v()
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"fn must be a plain Python function that launches kernels, not "
                        f"{type(fn).__name__}.")
    v.integer(max_blocks, "max_blocks", minimum=1)
    v.positive(timeout, "timeout")
    if runs is not None and not isinstance(runs, list):
        raise TypeError(f"runs must be a list (each launch's Run is appended), or None, not "
                        f"{type(runs).__name__}.")
    real = _numba_cuda()
    fake = _HostCuda(real)
    return _host_function(fn, {}, fake, (max_blocks, timeout, runs))(*args)


def host_view(values, offset: int = 0) -> HostArray:
    """``values`` copied into a fresh 256-byte-aligned :class:`HostArray`, then viewed from
    element ``offset``: what ``cuda.to_device(values)[offset:]`` is on a GPU."""
    values = np.asarray(values)
    _v().integer(offset, "offset", minimum=0, maximum=max(0, values.shape[0]))
    arr = _host_alloc(values.shape, values.dtype)
    arr[...] = values
    return arr[offset:]
