"""The ladder's host side: the kernel of each rung, its launch, and the second stage.

``kernel_for(version, block)`` gives a rung's kernel; ``plan(version, n, ...)`` builds a
:class:`Plan` (launches and buffers fixed, for timing); ``reduce_sum(x, version="v8")``
sums a vector with one rung and returns a Python float.
"""

from __future__ import annotations

import numpy as np
from numba import cuda  # gpuperf/__init__ has already chosen the mode

from gpuperf import device, validate
from gpuperf.mode import SIMULATOR

from .kernels import (
    DEFAULT_BLOCK,
    DEFAULT_WAVES,
    GRID_CHOSEN,
    PROLOGUE,
    RACY,
    V8_UNROLL,
    VERSIONS,
    _check_block,
    _zero,
    make_shared_atomic,
    make_v0,
    make_v1,
    make_v1_5,
    make_v2,
    make_v3,
    reduce_block_atomic,
    reduce_grid_atomic,
    reduce_single_thread,
)
from .warps import make_v4, make_v4_1, make_v4_2, make_v5, make_v6, make_v7, make_v8

_FACTORIES = {
    "shared-atomic": make_shared_atomic, "v0": make_v0, "v1": make_v1, "v1.5": make_v1_5,
    "v2": make_v2, "v3": make_v3, "v4": make_v4, "v4.1": make_v4_1, "v4.2": make_v4_2,
    "v5": make_v5, "v6": make_v6, "v7": make_v7, "v8": make_v8,
}


def kernel_for(version: str, block: int = DEFAULT_BLOCK, unroll: int | None = None):
    """The compiled-on-demand kernel of ``version`` for ``block`` threads per block."""
    validate.choice(version, "version", VERSIONS)
    if unroll is not None:
        validate.choice(unroll, "unroll", (1, 2, 4))
    block = _check_block(version, None if version == "single-thread" else block)
    validate.choice(version, "version", VERSIONS)
    if version == "v8":
        return make_v8(block, V8_UNROLL if unroll is None else unroll)
    if version == "single-thread":
        return reduce_single_thread
    if version == "block-atomic":
        return reduce_block_atomic
    if version == "grid-atomic":
        return reduce_grid_atomic
    return _FACTORIES[version](block)


# The rungs' Numba signatures: x, partial, n, and per_thread (v6, v7) or head (v8).
_SIG3 = "void(float32[::1], float32[::1], int64)"
_SIG4 = "void(float32[::1], float32[::1], int64, int64)"


def signature(version: str) -> str:
    """The Numba signature string of ``version``'s kernel (for PTX and resource queries)."""
    validate.choice(version, "version", VERSIONS)
    return _SIG4 if version in ("v6", "v7", "v8") else _SIG3


def resident_blocks_per_sm(block: int) -> int:
    """Blocks of ``block`` threads one SM can hold at once, by its thread limit (max 32)."""
    block = validate.block_size(block)
    info = device.info()
    per_sm = info.max_threads_per_sm or 2048
    return max(1, min(32, per_sm // block))


def default_blocks(version: str, n: int, block: int) -> int:
    """The grid the host picks for rungs with a chosen grid: SMs x resident blocks x waves."""
    validate.choice(version, "version", VERSIONS)
    validate.positive_int(n, "n")
    block = validate.block_size(block)
    waves = DEFAULT_WAVES.get(version, 1)
    return device.sm_count(default=2) * resident_blocks_per_sm(block) * waves


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _device_address(d_x) -> int:
    cai = getattr(d_x, "__cuda_array_interface__", None)
    if cai is not None:
        return int(cai["data"][0])
    return int(d_x.ctypes.data)  # a NumPy array handed to the simulator


def head_elements(d_x, n: int) -> int:
    """Elements before the first 16-byte boundary (v8 reads them one at a time)."""
    validate.array(d_x, name="d_x", dtype=np.float32, ndim=1, min_size=0)
    n = validate.positive_int(n, "n", minimum=0)
    misalign = _device_address(d_x) % 16
    return min(n, ((16 - misalign) % 16) // 4)


# Above this many partial sums the second stage first runs a multi-block pass.
SECOND_STAGE_SPLIT = 8192
SECOND_STAGE_PER_BLOCK = 4 * 256 * 8  # partials per block of that pass: 8 vectors a thread


# Stand-ins in a Plan's launch arguments for what each call supplies: the input array and
# v8's head (elements before the input's first 16-byte boundary).
_INPUT, _HEAD = "input", "head"


class Plan:
    """One reduction, launches and scratch buffers fixed, ready to run many times.

    ``plan(d_x)`` enqueues every launch on the default stream and returns the
    one-element device array that will hold the sum (no synchronization), so that
    timing sees only GPU work. ``launches`` lists ``(name, grid, block)``.
    ``kernel`` (v8 only) launches another kernel of v8's signature in v8's place, named
    ``name`` in ``launches``: the ablation's loops (:func:`ablation_plan`, in ablation.py).

    On a GPU the launches' arguments are converted once per input array
    (:class:`~gpuperf.kernels.launch.PackedLaunch`): a call is then one driver call per
    kernel, not Numba's typing and conversion of every argument at every launch, which
    costs the host more than the GPU work of a small reduction. ``packed`` says whether
    the last call went that way (False under the simulator, where Numba launches, and with
    ``pack=False``, which keeps Numba's launch: a reference for code launched that way).
    """

    def __init__(self, version: str, n: int, block: int, blocks: int | None,
                 unroll: int | None = None, kernel=None, name: str | None = None,
                 pack: bool = True):
        validate.choice(version, "version", VERSIONS)
        n = validate.positive_int(n, "n")
        block = _check_block(version, block)
        if blocks is not None:
            blocks = validate.positive_int(blocks, "blocks", maximum=2**31 - 1)
        if unroll is not None:
            validate.choice(unroll, "unroll", (1, 2, 4))
        self.version, self.n, self.block = version, n, block
        self.unroll = (V8_UNROLL if unroll is None else unroll) if version == "v8" else None
        self.per_thread = None
        self.packed = False
        self._pack = bool(pack)
        self._packed = None  # the steps' packed launches, made at the first call
        self._bound = None  # the input (address, shape, strides) they are pointed at
        self.out = cuda.device_array(1, dtype=np.float32)
        self._steps = []  # (kernel, grid, block, arguments), or ("copy", source)
        self.launches = []
        if version == "single-thread":
            self.grid = 1
            self._launch("single-thread", reduce_single_thread, 1, 1, _INPUT, self.out, n)
            return
        if kernel is not None and version != "v8":
            raise ValueError(f"kernel= replaces v8's kernel only, not {version!r}'s.")
        kernel = kernel or kernel_for(version, block, self.unroll)
        if version in PROLOGUE:
            self.grid = 1 if version == "block-atomic" else min(blocks, _ceil_div(n, block))
            self._launch("zero", _zero, 1, 1, self.out)
            self._launch(version, kernel, self.grid, block, _INPUT, self.out, n)
            return
        if version in ("v6", "v7"):
            self.per_thread = max(1, _ceil_div(n, blocks * block))
            self.grid = _ceil_div(n, block * self.per_thread)
        elif version == "v8":
            self.grid = max(1, min(blocks, _ceil_div(n, 4 * block)))
        elif version in ("v0", "v1", "v1.5", "v2"):
            self.grid = _ceil_div(n, block)
        else:  # v3, v4, v4.1, v4.2, v5: two elements per thread
            self.grid = _ceil_div(n, 2 * block)
        partial = cuda.device_array(self.grid, dtype=np.float32)
        extra = ((self.per_thread,) if version in ("v6", "v7")
                 else (_HEAD,) if version == "v8" else ())
        self._launch(name or version, kernel, self.grid, block, _INPUT, partial, n, *extra)
        self._add_second_stage(partial, self.grid)

    def _launch(self, name: str, kernel, grid: int, block: int, *args) -> None:
        """Queue ``kernel[grid, block](*args)``, ``_INPUT`` and ``_HEAD`` filled in at each call."""
        self._steps.append((kernel, grid, block, args))
        self.launches.append((name, grid, block))

    def _add_second_stage(self, partial, m: int) -> None:
        """Partials -> one number: a multi-block v8 pass when there are many, then one block."""
        if m > SECOND_STAGE_SPLIT:
            grid = min(1024, _ceil_div(m, SECOND_STAGE_PER_BLOCK))
            mid = cuda.device_array(grid, dtype=np.float32)
            self._launch("second stage", make_v8(256), grid, 256, partial, mid, m, 0)
            partial, m = mid, grid
        if m == 1:
            # One block already produced the sum: copy it (device to device, no host trip).
            self._steps.append(("copy", partial))
            self.launches.append(("copy", 0, 0))
            return
        last_block = 32 if m <= 256 else 256 if m <= 8192 else 1024
        self._launch("second stage", make_v8(last_block), 1, last_block, partial, self.out, m, 0)

    def _arguments(self, args, d_x):
        head = head_elements(d_x, self.n) if any(a is _HEAD for a in args) else None
        return tuple(d_x if a is _INPUT else head if a is _HEAD else a for a in args)

    def _numba_calls(self, d_x) -> list:
        """The steps as calls through Numba's own launch (arguments converted every time)."""
        calls = []
        for step in self._steps:
            if isinstance(step[0], str):
                calls.append(self._copy_call(step[1]))
            else:
                kernel, grid, block, args = step
                args = self._arguments(args, d_x)
                calls.append(lambda k=kernel, g=grid, b=block, a=args: k[g, b](*a))
        return calls

    def _packed_calls(self, d_x, key) -> list | None:
        """The steps as packed launches pointed at ``d_x`` (its address, shape and strides are
        ``key``): made at the first call, pointed at another input in place (and v8's head
        recomputed) only when the input changes. None where they cannot be packed."""
        from gpuperf.kernels.launch import NotPackable, PackedLaunch

        if self._packed is None:
            try:
                self._packed = [
                    self._copy_call(step[1]) if isinstance(step[0], str)
                    else PackedLaunch(step[0], step[1], step[2], *self._arguments(step[3], d_x))
                    for step in self._steps]
            except NotPackable:
                self._pack = False  # not here (or not this input): Numba launches from now on
                return None
        elif key != self._bound:
            self._bound = None
            try:
                for step, call in zip(self._steps, self._packed):
                    if isinstance(step[0], str):
                        continue
                    for index, value in enumerate(self._arguments(step[3], d_x)):
                        if step[3][index] is _INPUT or step[3][index] is _HEAD:
                            call.set_argument(index, value)
            except NotPackable:  # say a strided view: this call goes through Numba
                return None
        self._bound = key
        return self._packed

    def _copy_call(self, source):
        """The one-block case's last step: the sum, device to device (no host trip)."""
        out = self.out
        return lambda: out.copy_to_device(source)

    def __call__(self, d_x):
        # Cheap checks only: this runs inside timed loops.
        shape = getattr(d_x, "shape", None)
        if getattr(d_x, "dtype", None) != np.float32 or shape is None or len(shape) != 1:
            raise TypeError(f"d_x must be a 1-D float32 device array (cuda.to_device(x)), not "
                            f"{type(d_x).__name__} of dtype {getattr(d_x, 'dtype', None)}.")
        if shape[0] < self.n:
            raise ValueError(f"d_x has {shape[0]} elements, but this plan sums {self.n}; build "
                             f"one with plan(version, {shape[0]}).")
        calls = None
        cai = (getattr(d_x, "__cuda_array_interface__", None) if self._pack and not SIMULATOR
               else None)
        if cai is not None:
            # The address fixes everything packed (v8's head included), so an array freed and
            # another made at the same place with the same shape needs no new packing.
            calls = self._packed_calls(d_x, (cai["data"][0], cai["shape"], cai["strides"]))
        self.packed = calls is not None
        for call in calls if calls is not None else self._numba_calls(d_x):
            call()
        return self.out

    def __repr__(self) -> str:
        steps = ", ".join(f"{name}[{g}, {b}]" for name, g, b in self.launches if g)
        extra = f", {self.per_thread} elements per thread" if self.per_thread else ""
        return f"Plan({self.version!r}, n={self.n}: {steps}{extra})"


def plan(version: str, n: int, *, block: int | None = None, blocks: int | None = None,
         unroll: int | None = None, pack: bool = True) -> Plan:
    """Validate a configuration and build its :class:`Plan` (buffers allocated once).

    ``unroll`` (v8 only): 16-byte loads per thread per loop trip, 1, 2 or 4.
    ``pack=False`` launches through Numba at every call instead of packed arguments.
    """
    if not isinstance(pack, bool):
        raise TypeError(f"pack must be True or False, not {pack!r}.")
    validate.choice(version, "version", VERSIONS)
    if unroll is not None:
        if version != "v8":
            raise ValueError(f"unroll= applies only to version='v8', not {version!r}.")
        validate.choice(unroll, "unroll", (1, 2, 4))
    n = validate.positive_int(n, "n")
    block = _check_block(version, block)
    if blocks is not None:
        if version not in GRID_CHOSEN:
            fixed = ("one block" if version == "block-atomic" else "one thread"
                     if version == "single-thread" else "one block per block-sized slice of x")
            raise ValueError(
                f"blocks= does not apply to version={version!r}, whose grid is fixed by the "
                f"data ({fixed}). It applies to {', '.join(GRID_CHOSEN)}; leave blocks=None.")
        blocks = validate.positive_int(blocks, "blocks", maximum=2**31 - 1)
    elif version in GRID_CHOSEN:
        blocks = default_blocks(version, n, block)
    return Plan(version, n, block, blocks, unroll, pack=pack)


def reduce_sum(x, version: str = "v8", *, block: int | None = None,
               blocks: int | None = None) -> float:
    """Sum the float32 vector ``x`` (NumPy or device array) on the GPU with one rung.

    ``block``: threads per block (default 256; a power of two for tree rungs).
    ``blocks``: the grid, for the rungs whose grid the host chooses
    (``grid-atomic``, ``shared-atomic``, ``v6``, ``v7``, ``v8``); by default every SM
    gets as many blocks as it can hold. Returns a Python float.
    """
    validate.choice(version, "version", VERSIONS)
    x = validate.array(x, name="x", dtype=np.float32, ndim=1, min_size=1)
    p = plan(version, int(x.shape[0]), block=block, blocks=blocks)
    if version in RACY:
        import warnings

        warnings.warn(f"version={version!r} is known to be racy (its last warp runs with no "
                      "barrier since Volta): the sum can differ from call to call. Use 'v4.1', "
                      "'v4.2' or 'v8' for a correct sum.", RuntimeWarning, stacklevel=2)
    d_x = cuda.to_device(x) if isinstance(x, np.ndarray) and not SIMULATOR else x
    return float(p(d_x).copy_to_host()[0])
