"""The pinned memory rule of the streams chapter (the same on a GPU and in the simulator).

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
"""

from __future__ import annotations

import functools
import warnings
import weakref

import numpy as np
from numba import cuda

from gpuperf import validate
from gpuperf.mode import SIMULATOR


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

