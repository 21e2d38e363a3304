"""Input checks for host wrappers: fail early, in plain words, with the fix.

A wrong dtype or a strided view handed to a Numba kernel fails deep inside the
compiler (or silently reads the wrong elements). These checks run on the host
before any launch and raise ``TypeError``/``ValueError`` that say how to fix the call.
"""

from __future__ import annotations

import numbers

import numpy as np

MAX_THREADS_PER_BLOCK = 1024


def is_device_array(x) -> bool:
    """Whether ``x`` is a Numba device array (or the simulator's stand-in for one)."""
    # Numba's device arrays (and the simulator's stand-ins) copy back with copy_to_host.
    return all(hasattr(x, a) for a in ("copy_to_host", "shape", "dtype"))


def array(x, *, name: str = "x", dtype=np.float32, ndim: int | None = 1,
          min_size: int = 1, contiguous: bool = True, writes: bool = False):
    """Check a NumPy or device array's type, dtype, rank, size and layout; return it.

    Lists are refused rather than converted, so that a silent float64 copy never
    hides in a benchmark. A read-only NumPy array is refused where the function writes into it
    (``writes=True``) and, where it only reads it, returned as a writable copy: a kernel
    launched on a NumPy array copies every argument back to the host afterwards, which a
    read-only array would refuse.
    """
    if isinstance(x, np.ndarray):
        arr = x
    elif hasattr(x, "__cuda_array_interface__") or is_device_array(x):
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
            f"{name} has dtype {dtype_words(arr.dtype)}, but this function works on "
            f"{dtype_words(dtype)}. Convert it first: {name}.astype(np.{want})."
        )
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(
            f"{name} must have {ndim} dimension{'s' if ndim != 1 else ''}, but its shape is "
            f"{tuple(arr.shape)}." + (f" Flatten it with {name}.ravel()." if ndim == 1 else "")
        )
    size = int(np.prod(arr.shape)) if arr.ndim else 1
    if size < min_size:
        what = "is empty" if size == 0 else f"has {size} element{'s' if size != 1 else ''}"
        raise ValueError(
            f"{name} {what} (shape {tuple(arr.shape)}); pass at least {min_size} element"
            f"{'s' if min_size != 1 else ''}."
        )
    if contiguous and not _c_contiguous(arr):
        raise ValueError(
            f"{name} is not C-contiguous (a strided view such as x[::2] or x.T); the kernels "
            f"assume consecutive elements. Pass np.ascontiguousarray({name})."
        )
    if isinstance(arr, np.ndarray) and not arr.flags.writeable:
        if writes:
            raise ValueError(f"{name} is read-only, and this function writes its result into "
                             f"it; pass a writable array (e.g. np.empty_like({name})).")
        arr = arr.copy()
    return arr


def dtype_words(dtype) -> str:
    """A dtype as a reader tells it from another: ``float32``, or ``float32 in big-endian byte
    order ('>f4')`` where the byte order is not this machine's (both are "float32" by name)."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype={dtype!r} is not a NumPy dtype; pass one such as np.float32.") from None
    if dt.byteorder in ("=", "|") or dt.isnative:
        return dt.name
    order = "big" if dt.byteorder == ">" else "little"
    return f"{dt.name} in {order}-endian byte order ({dt.str!r})"


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


def _pointer(arr) -> int | None:
    """The device address of a device array's first element (None for NumPy arrays, which a
    launch copies to a fresh, aligned allocation)."""
    cai = getattr(arr, "__cuda_array_interface__", None)
    if cai is not None:
        return int(cai["data"][0])
    host = getattr(arr, "_ary", None)  # the simulator's device arrays wrap NumPy arrays
    return int(host.ctypes.data) if isinstance(host, np.ndarray) else None


def aligned16(arr, name: str, fix: str) -> None:
    """Refuse a device array whose first element is not on a 16-byte boundary (a view such as
    ``x[1:]``), where a kernel loads or stores 16 bytes at a time: a GPU would fault with a
    misaligned address and lose the CUDA context. NumPy arrays pass (a launch copies them to a
    fresh, aligned allocation). ``fix``: what the caller can do instead, ending in a period."""
    ptr = _pointer(arr)
    if ptr is not None and ptr % 16:
        raise ValueError(f"{name} starts {ptr % 16} bytes past a 16-byte boundary (a view such "
                         f"as x[1:]), so 16-byte loads and stores would fault: {fix}")


def disjoint(out, out_name: str, **inputs) -> None:
    """Refuse an output array that shares memory with an input: blocks would overwrite
    elements that other blocks have still to read (a silent wrong answer)."""
    for name, x in inputs.items():
        if isinstance(out, np.ndarray) and isinstance(x, np.ndarray):
            shared = np.shares_memory(out, x)
        else:
            po, px = _pointer(out), _pointer(x)
            shared = (po is not None and px is not None
                      and po < px + x.size * x.dtype.itemsize
                      and px < po + out.size * out.dtype.itemsize)
        if shared:
            raise ValueError(f"{out_name} overlaps {name} in memory, so the kernel would "
                             f"overwrite {name} while still reading it: pass a separate output "
                             "array.")


def positive_int(value, name: str, *, minimum: int = 1, maximum: int | None = None) -> int:
    """An integer within ``[minimum, maximum]``; bools and floats are refused."""
    return integer(value, name, minimum=minimum, maximum=maximum)


def compute_capability(cc, name: str = "cc") -> tuple[int, int]:
    """A compute capability ``(major, minor)`` such as ``(7, 5)`` (a T4) or ``(9, 0)`` (an H100 or
    H200), as a tuple; a list of two is accepted. The major version runs from 5 (the oldest that
    CUDA 12 compiles for) to 12, the minor from 0 to 9."""
    if isinstance(cc, str) or not isinstance(cc, (tuple, list)) or len(cc) != 2:
        raise TypeError(f"{name} must be a compute capability (major, minor) such as (7, 5) or "
                        f"(9, 0), not {_short(cc)}.")
    major = integer(cc[0], f"{name}[0] (the major version)", minimum=5, maximum=12)
    minor = integer(cc[1], f"{name}[1] (the minor version)", minimum=0, maximum=9)
    return major, minor


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
    """``value`` must be one of ``options``; the error lists them and suggests the nearest."""
    options = list(options)
    try:
        ok = value in options
    except TypeError:  # an unhashable or incomparable value
        ok = False
    if not ok:
        shown = ", ".join(repr(o) for o in options[:40]) + (", ..." if len(options) > 40 else "")
        raise ValueError(f"{name}={_short(value)} is not one of the available options: {shown}."
                         + _did_you_mean(value, options))
    return value


def _short(value, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _did_you_mean(value, options) -> str:
    import difflib

    if not isinstance(value, str):
        return ""
    words = [o for o in options if isinstance(o, str)]
    close = difflib.get_close_matches(value, words, n=3, cutoff=0.6)
    if not close:
        close = [o for o in words if value and (o.startswith(value) or value in o)][:3]
    return f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def integer(value, name: str, *, minimum: int | None = None,
            maximum: int | None = None) -> int:
    """An integer within ``[minimum, maximum]`` (either may be None); bools, floats and
    strings are refused, so that ``'8'`` never turns into string repetition."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        hint = f" Pass {name}={int(value)}." if _integral_float(value) else ""
        raise TypeError(f"{name} must be an integer, not {type(value).__name__} "
                        f"({_short(value)}).{hint}")
    value = int(value)
    low = minimum is not None and value < minimum
    high = maximum is not None and value > maximum
    if low or high:
        if minimum is not None and maximum is not None:
            bounds = f"between {minimum} and {maximum}"
        elif minimum is not None:
            bounds = f">= {minimum}"
        else:
            bounds = f"<= {maximum}"
        raise ValueError(f"{name} must be {bounds}, but it is {value}. "
                         f"Pass an integer {bounds}.")
    return value


def _integral_float(value) -> bool:
    return (isinstance(value, float) and value == value and abs(value) != float("inf")
            and value == int(value))


def number(value, name: str, *, minimum: float | None = None, maximum: float | None = None,
           positive: bool = False, finite: bool = True) -> float:
    """A real number (int or float, not bool or str), finite unless ``finite=False``,
    ``> 0`` if ``positive``, within ``[minimum, maximum]``; returned as float."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        hint = ""
        if isinstance(value, str):
            hint = f" Pass a number, e.g. {name}={value.strip()}, not a string."
        raise TypeError(f"{name} must be a number, not {type(value).__name__} "
                        f"({_short(value)}).{hint}")
    value = float(value)
    if finite and (value != value or value in (float("inf"), float("-inf"))):
        raise ValueError(f"{name} must be a finite number, but it is {value}. "
                         "Pass a finite value (check for a division by zero upstream).")
    if positive and not value > 0:
        raise ValueError(f"{name} must be > 0, but it is {value}. Pass a positive number.")
    if minimum is not None and value < minimum:
        if minimum == 0:
            raise ValueError(f"{name} must not be negative, but it is {value}. Pass a value "
                             ">= 0.")
        raise ValueError(f"{name} must be >= {minimum}, but it is {value}.")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, but it is {value}.")
    return value


def positive(value, name: str) -> float:
    """A finite number > 0 (a time, a bandwidth, a ratio)."""
    return number(value, name, positive=True)


def nonnegative(value, name: str) -> float:
    """A finite number >= 0."""
    return number(value, name, minimum=0)


def string(value, name: str, *, empty: bool = False) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, not {type(value).__name__} ({_short(value)}).")
    if not empty and not value.strip():
        raise ValueError(f"{name} must not be empty. Pass a non-empty string.")
    return value


def boolean(value, name: str) -> bool:
    import numpy as _np

    if not isinstance(value, (bool, _np.bool_)):
        raise TypeError(f"{name} must be True or False, not {type(value).__name__} "
                        f"({_short(value)}).")
    return bool(value)


def function(fn, name: str, *, what: str = "a function") -> object:
    """A callable (a function or a kernel); a string or a result of calling it is refused."""
    if not callable(fn):
        hint = " Pass the function itself, without quotes." if isinstance(fn, str) else (
            " Pass the function itself, not the result of calling it.")
        raise TypeError(f"{name} must be {what}, not {type(fn).__name__} ({_short(fn)}).{hint}")
    return fn


def kernel(obj, name: str = "kernel") -> object:
    """A ``@cuda.jit`` kernel (a CUDA dispatcher), launched as ``kernel[grid, block](...)``."""
    if not (hasattr(obj, "py_func") and hasattr(obj, "__getitem__")) and not (
            callable(obj) and hasattr(obj, "__getitem__")):
        hint = (" Decorate your function with @cuda.jit." if callable(obj) else
                " Pass the kernel object itself (decorated with @cuda.jit).")
        raise TypeError(f"{name} must be a CUDA kernel (a @cuda.jit function), not "
                        f"{type(obj).__name__} ({_short(obj)}).{hint}")
    return obj


def mapping(value, name: str, *, empty: bool = True) -> dict:
    if not isinstance(value, dict):
        raise TypeError(f"{name} must be a dict, not {type(value).__name__} ({_short(value)}).")
    if not empty and not value:
        raise ValueError(f"{name} is an empty dict; give at least one entry.")
    return value


def sequence(value, name: str, *, empty: bool = False) -> list:
    """A list or tuple (or array/range) of values, not a string or a lone scalar."""
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__") \
            or not hasattr(value, "__len__"):
        raise TypeError(f"{name} must be a list of values, not {type(value).__name__} "
                        f"({_short(value)}). Wrap a single value in a list: [{_short(value)}].")
    value = list(value)
    if not empty and not value:
        raise ValueError(f"{name} is empty; give at least one value.")
    return value


# The class of ``gp.records.run(...)``'s results. ``gpuperf.records`` sits above this module
# and registers it when it loads (before then no Result can exist), so that this bottom layer
# never imports the records.
_RESULT_TYPES: tuple = ()


def register_result_type(cls: type) -> type:
    """Called once by ``gpuperf.records`` with its ``Result`` class."""
    global _RESULT_TYPES
    if not isinstance(cls, type):
        raise TypeError(f"cls must be a class, not {type(cls).__name__}.")
    if cls not in _RESULT_TYPES:
        _RESULT_TYPES = (*_RESULT_TYPES, cls)
    return cls


def result(obj, name: str = "result"):
    """A ``gpuperf.records.Result`` (what ``gp.records.run(...)`` returns)."""
    if not isinstance(obj, _RESULT_TYPES):
        raise TypeError(f"{name} must be a Result from gp.records.run(name), not "
                        f"{type(obj).__name__} ({_short(obj)}).")
    return obj


def column(res, col, name: str = "column") -> str:
    """``col`` must be a column of the Result ``res`` (did-you-mean on a typo)."""
    if not isinstance(col, str):
        raise TypeError(f"{name} must be a column name (a string), not {type(col).__name__} "
                        f"({_short(col)}).")
    cols = res.columns
    if col not in cols:
        raise ValueError(f"{name}={col!r} is not a column of {res.name}; its columns are: "
                         f"{', '.join(cols)}.{_did_you_mean(col, cols)}")
    return col


def result_with(res, name: str, *columns) -> object:
    """``res`` must be a Result (named ``name`` in the message) with every one of ``columns``:
    the Result of the right experiment."""
    result(res, name)
    for c in columns:
        column(res, c, f"{name} column")
    return res


class Spec:
    """A reusable check for :func:`checks`: ``Spec(fn, **kw)(value, name)``; ``optional``
    lets ``None`` through."""

    def __init__(self, fn, *, optional: bool = False, **kw):
        function(fn, "fn", what="a check fn(value, name, **kw)")
        boolean(optional, "optional")
        self.fn, self.optional, self.kw = fn, optional, kw

    def __call__(self, value, name):
        if value is None and self.optional:
            return None
        return self.fn(value, name, **self.kw)


def _bound(value, name):
    if value is not None:
        number(value, name)


def Int(minimum=None, maximum=None, *, optional=False):  # noqa: N802 - reads as a type
    _bound(minimum, "minimum")
    _bound(maximum, "maximum")
    return Spec(integer, minimum=minimum, maximum=maximum, optional=optional)


def Num(minimum=None, maximum=None, *, positive=False, optional=False):  # noqa: N802
    _bound(minimum, "minimum")
    _bound(maximum, "maximum")
    boolean(positive, "positive")
    return Spec(number, minimum=minimum, maximum=maximum, positive=positive, optional=optional)


def Pos(optional=False):  # noqa: N802
    return Spec(number, positive=True, optional=optional)


def OneOf(options, *, optional=False):  # noqa: N802
    options = sequence(options, "options")
    return Spec(lambda v, n, options: choice(v, n, options), options=tuple(options),
                optional=optional)


def Str(optional=False):  # noqa: N802
    return Spec(string, optional=optional)


def Bool():  # noqa: N802
    return Spec(boolean)


def Fn(what="a function", optional=False):  # noqa: N802
    string(what, "what")
    return Spec(function, what=what, optional=optional)


def Kernel(optional=False):  # noqa: N802
    return Spec(kernel, optional=optional)


def Res(optional=False):  # noqa: N802
    return Spec(result, optional=optional)


def Dict(optional=False, empty=True):  # noqa: N802
    boolean(empty, "empty")
    return Spec(mapping, optional=optional, empty=empty)


def Seq(optional=False, empty=False):  # noqa: N802
    boolean(empty, "empty")
    return Spec(sequence, optional=optional, empty=empty)


def Arr(dtype=np.float32, ndim=1, min_size=1, *, optional=False, contiguous=True):  # noqa: N802
    if ndim is not None:
        integer(ndim, "ndim", minimum=0)
    integer(min_size, "min_size", minimum=0)
    boolean(contiguous, "contiguous")
    return Spec(lambda v, n, **kw: array(v, name=n, **kw), dtype=dtype, ndim=ndim,
                min_size=min_size, contiguous=contiguous, optional=optional)


def checks(**specs):
    """Decorator: check the named arguments before the call.

    Each spec is a callable ``(value, name) -> value`` (``Int(1)``, ``Pos()``,
    ``OneOf(VERSIONS)``, ...). Arguments left at their default are trusted. The wrapped
    function keeps its name, docstring and source (``inspect.getsource`` follows it).
    """
    import functools
    import inspect

    for pname, spec in specs.items():
        function(spec, pname, what="a check such as Int(1), Pos() or OneOf([...])")

    def wrap(fn):
        function(fn, "fn")
        sig = inspect.signature(fn)
        unknown = [k for k in specs if k not in sig.parameters]
        if unknown:
            raise TypeError(f"checks() names {unknown}, which {fn.__qualname__} does not take.")

        @functools.wraps(fn)
        def checked(*args, **kwargs):
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError as err:
                raise TypeError(f"{fn.__name__}(): {err}. Its signature is "
                                f"{fn.__name__}{sig}.") from None
            for pname, spec in specs.items():
                if pname in bound.arguments:
                    value = bound.arguments[pname]
                    if value is sig.parameters[pname].default:
                        continue
                    if sig.parameters[pname].kind is inspect.Parameter.VAR_POSITIONAL:
                        for i, item in enumerate(value):
                            spec(item, f"{pname}[{i}]")
                    else:
                        spec(value, pname)
            return fn(*args, **kwargs)

        checked.__gpuperf_checks__ = tuple(specs)
        return checked

    return wrap


def shared_bytes(nbytes: int, *, what: str = "this configuration") -> int:
    """Refuse static shared memory over the 48 KiB a block gets without opting in."""
    nbytes = integer(nbytes, "nbytes", minimum=0)
    string(what, "what")
    limit = 48 * 1024
    if nbytes > limit:
        raise ValueError(
            f"{what} needs {nbytes} bytes of shared memory per block, over the {limit} bytes "
            "(48 KiB) of static shared memory CUDA allows. Use a smaller tile or block."
        )
    return nbytes
