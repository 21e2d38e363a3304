"""Input checks for host wrappers: fail early, in plain words, with the fix.

A wrong dtype or a strided view handed to a Numba kernel fails deep inside the
compiler (or silently reads the wrong elements). These checks run on the host
before any launch and raise ``TypeError``/``ValueError`` that say how to fix the call.
"""

from __future__ import annotations

import numbers

import numpy as np

MAX_THREADS_PER_BLOCK = 1024


def _is_device_array(x) -> bool:
    # Numba's device arrays (and the simulator's stand-ins) copy back with copy_to_host.
    return all(hasattr(x, a) for a in ("copy_to_host", "shape", "dtype"))


def array(x, *, name: str = "x", dtype=np.float32, ndim: int | None = 1,
          min_size: int = 1, contiguous: bool = True):
    """Check a NumPy or device array's type, dtype, rank, size and layout; return it.

    Lists are refused rather than converted, so that a silent float64 copy never
    hides in a benchmark.
    """
    if isinstance(x, np.ndarray):
        arr = x
    elif hasattr(x, "__cuda_array_interface__") or _is_device_array(x):
        arr = x
    else:
        raise TypeError(
            f"{name} must be a NumPy array or a device array, not {type(x).__name__}. "
            f"Convert it with np.asarray({name}, dtype=np.{np.dtype(dtype).name})"
            + (" or cuda.to_device(...)." if dtype is not None else ".")
        )
    if dtype is not None and np.dtype(arr.dtype) != np.dtype(dtype):
        want = np.dtype(dtype).name
        raise TypeError(
            f"{name} has dtype {np.dtype(arr.dtype).name}, but this function works on {want}. "
            f"Convert it first: {name}.astype(np.{want})."
        )
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(
            f"{name} must have {ndim} dimension{'s' if ndim != 1 else ''}, but its shape is "
            f"{tuple(arr.shape)}." + (f" Flatten it with {name}.ravel()." if ndim == 1 else "")
        )
    size = int(np.prod(arr.shape)) if arr.ndim else 1
    if size < min_size:
        raise ValueError(
            f"{name} is empty (shape {tuple(arr.shape)}); pass at least {min_size} element"
            f"{'s' if min_size != 1 else ''}."
        )
    if contiguous and not _c_contiguous(arr):
        raise ValueError(
            f"{name} is not C-contiguous (a strided view such as x[::2] or x.T); the kernels "
            f"assume consecutive elements. Pass np.ascontiguousarray({name})."
        )
    return arr


def _c_contiguous(arr) -> bool:
    if isinstance(arr, np.ndarray):
        return arr.flags.c_contiguous
    flags = getattr(arr, "flags", None)
    if flags is not None:
        try:
            return bool(flags["C_CONTIGUOUS"])
        except (KeyError, TypeError):
            pass
    cai = getattr(arr, "__cuda_array_interface__", None)
    if cai is not None:
        strides = cai.get("strides")
        if strides is None:
            return True
        itemsize = np.dtype(cai["typestr"]).itemsize
        expected = itemsize
        for dim, stride in zip(reversed(cai["shape"]), reversed(strides)):
            if dim > 1 and stride != expected:
                return False
            expected *= dim
    return True


def same_shape(a, b, names=("a", "b")):
    if tuple(a.shape) != tuple(b.shape):
        raise ValueError(
            f"{names[0]} and {names[1]} must have the same shape, but they are "
            f"{tuple(a.shape)} and {tuple(b.shape)}."
        )


def positive_int(value, name: str, *, minimum: int = 1, maximum: int | None = None) -> int:
    """An integer within ``[minimum, maximum]``; bools and floats are refused."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, not {type(value).__name__} ({value!r}).")
    value = int(value)
    if value < minimum or (maximum is not None and value > maximum):
        bounds = f"between {minimum} and {maximum}" if maximum is not None else f">= {minimum}"
        raise ValueError(f"{name} must be {bounds}, but it is {value}.")
    return value


def block_size(block, *, name: str = "block", power_of_two: bool = False,
               multiple_of: int | None = None, minimum: int = 1) -> int:
    """Threads per block: 1..1024, optionally a power of two or a multiple of a warp."""
    block = positive_int(block, name, minimum=minimum)
    if block > MAX_THREADS_PER_BLOCK:
        raise ValueError(
            f"{name}={block} threads is over CUDA's limit of {MAX_THREADS_PER_BLOCK} threads per "
            "block (the launch would fail on a GPU, though the simulator accepts it). Use "
            f"{name} <= 1024, e.g. 256."
        )
    if power_of_two and block & (block - 1):
        lower = 1 << (block.bit_length() - 1)
        raise ValueError(
            f"{name}={block} must be a power of two for this kernel (its tree halves the block "
            f"each step). Use {lower} or {lower * 2}."
        )
    if multiple_of and block % multiple_of:
        raise ValueError(
            f"{name}={block} must be a multiple of {multiple_of} (whole warps). "
            f"Use {(block // multiple_of + 1) * multiple_of}."
        )
    return block


def choice(value, name: str, options):
    options = list(options)
    if value not in options:
        shown = ", ".join(repr(o) for o in options)
        raise ValueError(f"{name}={value!r} is not one of the available options: {shown}.")
    return value


def shared_bytes(nbytes: int, *, what: str = "this configuration") -> int:
    """Refuse static shared memory over the 48 KiB a block gets without opting in."""
    limit = 48 * 1024
    if nbytes > limit:
        raise ValueError(
            f"{what} needs {nbytes} bytes of shared memory per block, over the {limit} bytes "
            "(48 KiB) of static shared memory CUDA allows. Use a smaller tile or block."
        )
    return nbytes
