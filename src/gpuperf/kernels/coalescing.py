"""Memory coalescing: what a warp's addresses turn into, and kernels that respect it.

A warp executes one load instruction for 32 threads at once. The memory system
serves it in 32-byte *sectors* (four to a 128-byte cache line): the instruction
costs as many sectors as its 32 addresses touch, whether the threads use all of
their bytes or four of them. This module makes that visible and measurable.

The model (no GPU needed)
-------------------------
``warp_access(stride, offset, elem_bytes)``: the sectors and lines one warp's load
touches, and its efficiency (bytes used / bytes moved). ``draw_warp_access`` draws
it, ``draw_warp_access_gallery`` draws the cases the chapter discusses, and
``explore_warp_access()`` is the interactive version (ipywidgets, imported lazily).

``trace(kernel, grid, block, *args)`` runs a kernel in the course's thread emulator
(``gpuperf.emulator``, the same with or without a GPU) and records every global and
shared access, warp by warp: the sectors each load and store touched and the
shared-memory bank conflicts. The exercises' checkers use it to tell a coalesced
kernel from an uncoalesced one, on a GPU and off it.

Kernels
-------
``make_copy_ilp(ilp)``: grid-stride copy, ``ilp`` independent loads in flight per thread.
``make_copy_vec4(ilp)``: the same with 16-byte loads and stores (``load_float4``/``store_float4``).
``matmul_naive`` / ``matmul_naive_bcol``: the textbook's traversals, B[k, col] against B stored
column-major (element ``col * K + k``).
``make_matmul_bcol(tile, mode, pad)``: tiled matmul with B column-major: ``"uncoalesced"``
(the chapter-4 loading), ``"corner"`` (corner turning), and ``"rowmajor"`` (B row-major, the
reference).
``transpose_naive``, ``make_transpose(tile, block_rows, pad)``: the transpose ladder.

Experiments (all prefixed ``coalescing_``)
------------------------------------------
``coalescing_stride``, ``coalescing_offset``, ``coalescing_traversal``,
``coalescing_matmul_bcol``, ``coalescing_transpose``, ``coalescing_copy_ladder``,
``coalescing_copy_tuning``.

Exercises
---------
``check_remap(kernel)``: fix an uncoalesced kernel by remapping threads to data.
``check_padded_transpose(kernel)``: the tiled transpose with padding.
"""

from __future__ import annotations

import functools
import numbers
from dataclasses import dataclass

import numpy as np
from numba import cuda, float32, float64  # noqa: E402,I001  (after gpuperf: the mode is chosen first)

from .. import bench, device, emulator, validate
from .. import exercises as ex
from ..mode import SIMULATOR
from ..records import experiment
from ..simwarp import MAX_GRID_DIM
from ..vector import load4, load_float4, store4, store_float4

SECTOR_BYTES = 32  # the unit DRAM and L2 deliver to an SM
LINE_BYTES = 128  # an L1 cache line: four sectors
WARP = 32
BANKS = 32  # shared memory: 32 banks, 4 bytes wide

_DTYPES = {"float32": (np.float32, float32), "float64": (np.float64, float64)}


# =========================================================================== the model


@dataclass(frozen=True)
class WarpAccess:
    """The memory transactions of one warp-wide load or store.

    ``addresses`` are the byte addresses of the active lanes' elements, relative to a
    256-byte-aligned allocation (``cudaMalloc`` aligns at least that much).
    """

    addresses: tuple[int, ...]
    elem_bytes: int
    description: str = ""

    def __post_init__(self):
        if not isinstance(self.addresses, tuple):
            raise TypeError(f"addresses must be a tuple of byte addresses, not "
                            f"{type(self.addresses).__name__}; use WarpAccess.from_addresses.")
        # The tracer makes one per warp request: check fast, explain slowly.
        if not all(type(a) is int and a >= 0 for a in self.addresses):
            for i, a in enumerate(self.addresses):
                validate.positive_int(a, f"addresses[{i}]", minimum=0)
        if self.elem_bytes not in (1, 2, 4, 8, 16):
            validate.choice(self.elem_bytes, "elem_bytes", (1, 2, 4, 8, 16))
        if type(self.description) is not str:
            validate.string(self.description, "description", empty=True)

    @classmethod
    def from_addresses(cls, addresses, elem_bytes: int, description: str = "") -> WarpAccess:
        addresses = validate.sequence(addresses, "addresses")
        for _i, _a in enumerate(addresses):
            if not (isinstance(_a, numbers.Integral) and _a >= 0):  # fast: called per request
                validate.positive_int(_a, f"addresses[{_i}]", minimum=0)
        if elem_bytes not in (1, 2, 4, 8, 16):
            validate.choice(elem_bytes, "elem_bytes", (1, 2, 4, 8, 16))
        if type(description) is not str:
            validate.string(description, "description", empty=True)
        return cls(tuple(int(a) for a in addresses), int(elem_bytes), description)

    @property
    def lanes(self) -> int:
        return len(self.addresses)

    @property
    def sectors(self) -> tuple[int, ...]:
        """Indices (address // 32) of the sectors touched, sorted."""
        touched = set()
        for a in self.addresses:
            first, last = a // SECTOR_BYTES, (a + self.elem_bytes - 1) // SECTOR_BYTES
            touched.update(range(first, last + 1))
        return tuple(sorted(touched))

    @property
    def lines(self) -> tuple[int, ...]:
        return tuple(sorted({s * SECTOR_BYTES // LINE_BYTES for s in self.sectors}))

    @property
    def bytes_used(self) -> int:
        """Distinct bytes the lanes asked for."""
        used = set()
        for a in self.addresses:
            used.update(range(a, a + self.elem_bytes))
        return len(used)

    @property
    def bytes_moved(self) -> int:
        return SECTOR_BYTES * len(self.sectors)

    @property
    def efficiency(self) -> float:
        """Bytes used / bytes moved: 1.0 is a perfectly coalesced access."""
        return self.bytes_used / self.bytes_moved if self.addresses else 1.0

    def summary(self) -> str:
        return (f"{self.lanes} lanes use {self.bytes_used} B; the memory system moves "
                f"{self.bytes_moved} B in {len(self.sectors)} sectors of {len(self.lines)} "
                f"line{'s' if len(self.lines) != 1 else ''}: {self.efficiency:.0%} efficient")


def warp_access(stride: int = 1, offset: int = 0, elem_bytes: int = 4,
                lanes: int = WARP) -> WarpAccess:
    """The sectors one warp's load touches when lane ``i`` reads element ``offset + i * stride``.

    ``stride`` and ``offset`` count elements of ``elem_bytes`` bytes each (1, 2, 4, 8 or
    16: a 16-byte element is a float4 vector load). ``stride=0`` is a broadcast.
    """
    stride = validate.positive_int(stride, "stride", minimum=0, maximum=4096)
    offset = validate.positive_int(offset, "offset", minimum=0, maximum=4096)
    elem_bytes = validate.choice(elem_bytes, "elem_bytes", (1, 2, 4, 8, 16))
    lanes = validate.positive_int(lanes, "lanes", maximum=WARP)
    addrs = [(offset + lane * stride) * elem_bytes for lane in range(lanes)]
    desc = f"stride {stride}, offset {offset}, {elem_bytes}-byte elements"
    return WarpAccess.from_addresses(addrs, elem_bytes, desc)


def stride_efficiency(stride: int, elem_bytes: int = 4) -> float:
    """The model's efficiency of a warp reading every ``stride``-th element (aligned)."""
    validate.positive_int(stride, "stride", minimum=0, maximum=4096)
    validate.choice(elem_bytes, "elem_bytes", (1, 2, 4, 8, 16))
    return warp_access(stride, 0, elem_bytes).efficiency


_USED, _MOVED, _IDLE = "#1f5fa8", "#a9c8ec", "#f4f4f4"


def draw_warp_access(access: WarpAccess | None = None, *, stride: int = 1, offset: int = 0,
                     elem_bytes: int = 4, ax=None, max_lines: int = 8, title: bool = True):
    """Draw the 128-byte lines one warp touches: sectors moved (light), bytes used (dark).

    Pass a ``WarpAccess`` (from ``warp_access`` or a trace) or the three parameters.
    Each row is one touched line; lane numbers sit on the bytes each lane reads.
    Returns the matplotlib Figure.
    """
    if access is not None and not isinstance(access, WarpAccess):
        raise TypeError(f"access must be a WarpAccess (from warp_access(...)) or None, not "
                        f"{type(access).__name__}.")
    if access is None:
        warp_access(stride, offset, elem_bytes)  # checks the three parameters
    validate.positive_int(max_lines, "max_lines", maximum=64)
    validate.boolean(title, "title")
    if ax is not None and not hasattr(ax, "figure"):
        raise TypeError(f"ax must be a matplotlib Axes or None, not {type(ax).__name__}.")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    from .. import plots

    acc = access if access is not None else warp_access(stride, offset, elem_bytes)
    lines = acc.lines
    shown = lines[:max_lines]
    if ax is None:
        fig, ax = plt.subplots(figsize=(plots.COLUMN_INCHES, 0.45 * len(shown) + 1.3))
    else:
        fig = ax.figure
    sectors = set(acc.sectors)
    lanes_at: dict[int, list[tuple[int, int]]] = {}
    for lane, a in enumerate(acc.addresses):
        lanes_at.setdefault(a // LINE_BYTES, []).append((lane, a))
    for row, line in enumerate(shown):
        y = len(shown) - 1 - row
        base = line * LINE_BYTES
        for s in range(LINE_BYTES // SECTOR_BYTES):
            sector = base // SECTOR_BYTES + s
            ax.add_patch(Rectangle((s * SECTOR_BYTES, y), SECTOR_BYTES, 0.8,
                                   facecolor=_MOVED if sector in sectors else _IDLE,
                                   edgecolor="#333333", linewidth=1.0))
        for lane, a in lanes_at.get(line, []):
            x0 = a - base
            width = min(acc.elem_bytes, LINE_BYTES - x0)
            ax.add_patch(Rectangle((x0, y + 0.1), width, 0.6, facecolor=_USED,
                                   edgecolor="white", linewidth=0.4))
            if width >= 4:
                ax.text(x0 + width / 2, y + 0.4, str(lane), ha="center", va="center",
                        fontsize=5.5 if width < 8 else 7, color="white")
        ax.text(-2, y + 0.4, f"line @ {base:#06x}", ha="right", va="center", fontsize=8)
    if len(lines) > len(shown):
        ax.text(LINE_BYTES / 2, -0.45, f"... and {len(lines) - len(shown)} more lines like these",
                ha="center", va="center", fontsize=8, style="italic")
    ax.set_xlim(-34, LINE_BYTES + 1)
    ax.set_ylim(-0.8 if len(lines) > len(shown) else -0.2, len(shown))
    ax.set_xticks([0, 32, 64, 96, 128])
    ax.set_xlabel("byte within the 128-byte line (boxes: 32-byte sectors)", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.set_yticks([])
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    if title:
        head = acc.description or "one warp's access"
        ax.set_title(f"{head}\n{acc.summary()}", fontsize=9)
    return fig


GALLERY_CASES = (
    dict(stride=1, offset=0, elem_bytes=4),
    dict(stride=1, offset=1, elem_bytes=4),
    dict(stride=2, offset=0, elem_bytes=4),
    dict(stride=8, offset=0, elem_bytes=4),
    dict(stride=1, offset=0, elem_bytes=8),
    dict(stride=1, offset=0, elem_bytes=16),
)


def draw_warp_access_gallery(cases=GALLERY_CASES):
    """The static figure for the book: several strides, offsets and element sizes."""
    for _i, _c in enumerate(validate.sequence(cases, "cases")):
        validate.mapping(_c, f"cases[{_i}]")
        for _k in _c:
            validate.choice(_k, f"cases[{_i}] key", ("stride", "offset", "elem_bytes", "lanes"))
    import matplotlib.pyplot as plt

    from .. import plots

    accesses = [warp_access(**c) for c in cases]
    rows = [min(len(a.lines), 4) + (len(a.lines) > 4) for a in accesses]
    fig, axes = plt.subplots(len(cases), 1, figsize=(plots.COLUMN_INCHES, 0.5 * sum(rows) + 1.0 * len(cases)),
                             gridspec_kw={"height_ratios": [r + 1.2 for r in rows]})
    for ax, acc in zip(np.atleast_1d(axes), accesses):
        draw_warp_access(acc, ax=ax, max_lines=4)
    fig.tight_layout()
    return fig


def draw_stride_efficiency(max_stride: int = 32, elem_sizes=(4, 8)):
    """The model's efficiency against stride, for each element size (a line plot)."""
    validate.positive_int(max_stride, "max_stride", maximum=4096)
    for _i, _e in enumerate(validate.sequence(elem_sizes, "elem_sizes")):
        validate.choice(_e, f"elem_sizes[{_i}]", (1, 2, 4, 8, 16))
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 3.2))
    strides = list(range(1, max_stride + 1))
    for eb in elem_sizes:
        ax.plot(strides, [100 * stride_efficiency(s, eb) for s in strides], marker="o",
                markersize=3, label=f"{eb}-byte elements")
    ax.set_xlabel("stride (elements)")
    ax.set_ylabel("bytes used / bytes moved (%)")
    ax.set_ylim(0, 105)
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title("The sector model: efficiency of one warp's load against stride", fontsize=10)
    fig.tight_layout()
    return fig


def explore_warp_access():
    """Sliders for stride, offset and element size over the warp-access figure.

    Uses ``gpuperf.widgets`` (ipywidgets), imported only when called.
    """
    from .. import widgets

    def show(stride, offset, elem_bytes):
        draw_warp_access(stride=stride, offset=offset, elem_bytes=elem_bytes)

    return widgets.interact(show, start={"elem_bytes": 4}, stride=(1, 33, 1), offset=(0, 32, 1),
                            elem_bytes=[1, 2, 4, 8, 16])


# =========================================================================== tracing (the emulator)


@dataclass(frozen=True)
class Request:
    """One warp executing one memory instruction (one source line, one loop iteration)."""

    space: str  # "global" or "shared"
    kind: str  # "load" or "store"
    array: str
    line: int
    source: str
    block: tuple
    warp: int
    access: WarpAccess

    def __post_init__(self):
        if self.space not in ("global", "shared"):  # fast path: one per traced request
            validate.choice(self.space, "space", ("global", "shared"))
        if self.kind not in ("load", "store"):
            validate.choice(self.kind, "kind", ("load", "store"))
        if type(self.array) is not str or type(self.source) is not str:
            validate.string(self.array, "array")
            validate.string(self.source, "source", empty=True)
        if not (type(self.line) is int and type(self.warp) is int and self.line >= 0
                and self.warp >= 0):
            validate.positive_int(self.line, "line", minimum=0)
            validate.positive_int(self.warp, "warp", minimum=0)
        if not isinstance(self.access, WarpAccess):
            raise TypeError(f"access must be a WarpAccess, not {type(self.access).__name__}.")

    @property
    def bank_conflict(self) -> int:
        """Shared memory: the most distinct 4-byte words any one bank must serve (1 = none)."""
        words_per_bank: dict[int, set] = {}
        for a in self.access.addresses:
            for w in range(a // 4, (a + self.access.elem_bytes - 1) // 4 + 1):
                words_per_bank.setdefault(w % BANKS, set()).add(w)
        return max((len(ws) for ws in words_per_bank.values()), default=1)


def _check_trace_filters(filters: dict) -> None:
    """Filters of an AccessTrace: space, kind and array, with values a trace can hold."""
    for key, val in filters.items():
        validate.choice(key, "filter", ("space", "kind", "array"))
        if val is None:
            continue
        if key == "space":
            validate.choice(val, "space", ("global", "shared"))
        elif key == "kind":
            validate.choice(val, "kind", ("load", "store"))
        else:
            validate.string(val, "array")


def _check_launch_shape(shape, name):
    items = shape if isinstance(shape, tuple) else (shape,)
    if not 1 <= len(items) <= 3:
        raise ValueError(f"{name} must be an int or a tuple of 1 to 3 ints, not {shape!r}.")
    for i, d in enumerate(items):
        validate.positive_int(d, name if len(items) == 1 else f"{name}[{i}]")


class AccessTrace:
    """Every warp-level request an emulated kernel made, with per-instruction summaries."""

    def __init__(self, requests: list[Request], run=None):
        if not isinstance(requests, list) or not all(isinstance(r, Request) for r in requests):
            raise TypeError("requests must be a list of Request (what trace(...) records), not "
                            f"{type(requests).__name__}.")
        self.requests = requests
        self.run = run  # the emulator's Run (every access, ``run.races()``), when traced

    def select(self, *, space=None, kind=None, array=None) -> list[Request]:
        _check_trace_filters({"space": space, "kind": kind, "array": array})
        return [r for r in self.requests
                if (space is None or r.space == space) and (kind is None or r.kind == kind)
                and (array is None or r.array == array)]

    def efficiency(self, **filters) -> float | None:
        """Bytes used / bytes moved over the selected global requests (None if there are none)."""
        _check_trace_filters(filters)
        reqs = self.select(space=filters.pop("space", "global"), **filters)
        moved = sum(r.access.bytes_moved for r in reqs)
        return sum(r.access.bytes_used for r in reqs) / moved if moved else None

    def sectors_per_request(self, **filters) -> float | None:
        _check_trace_filters(filters)
        reqs = self.select(space=filters.pop("space", "global"), **filters)
        return sum(len(r.access.sectors) for r in reqs) / len(reqs) if reqs else None

    def max_bank_conflict(self, **filters) -> int:
        _check_trace_filters(filters)
        reqs = self.select(space="shared", **filters)
        return max((r.bank_conflict for r in reqs), default=0)

    def instructions(self) -> list[dict]:
        """One row per (space, kind, array, source line): what its warp requests cost."""
        groups: dict[tuple, list[Request]] = {}
        for r in self.requests:
            groups.setdefault((r.space, r.kind, r.array, r.line), []).append(r)
        rows = []
        for (space, kind, array, line), reqs in sorted(groups.items(), key=lambda g: g[0][3]):
            moved = sum(r.access.bytes_moved for r in reqs)
            row = {
                "line": line, "source": reqs[0].source, "space": space, "kind": kind,
                "array": array, "requests": len(reqs),
                "sectors_per_request": sum(len(r.access.sectors) for r in reqs) / len(reqs),
                "efficiency": sum(r.access.bytes_used for r in reqs) / moved,
            }
            if space == "shared":
                row["bank_conflict"] = max(r.bank_conflict for r in reqs)
            rows.append(row)
        return rows

    def table(self) -> str:
        out = [f"{'line':>4}  {'access':<22} {'requests':>8} {'sectors/req':>11} "
               f"{'used/moved':>10} {'banks':>6}  source"]
        for r in self.instructions():
            what = f"{r['space']} {r['kind']} {r['array']}"
            if r["space"] == "shared":
                sectors, eff = "-", "-"
                conflict = f"{r['bank_conflict']}-way" if r["bank_conflict"] > 1 else "none"
            else:
                sectors, eff, conflict = f"{r['sectors_per_request']:.1f}", \
                    f"{r['efficiency']:.0%}", ""
            out.append(f"{r['line']:>4}  {what:<22} {r['requests']:>8} {sectors:>11} {eff:>10} "
                       f"{conflict:>6}  {r['source']}")
        return "\n".join(out)

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        return self.table()

    def first(self, **filters) -> Request:
        _check_trace_filters(filters)
        reqs = self.select(**filters)
        if not reqs:
            raise LookupError(f"no request matches {filters}.")
        return reqs[0]

    def draw(self, **filters):
        """Draw the first selected request's sectors (warp 0 of block 0, first time through)."""
        _check_trace_filters(filters)
        req = self.first(**filters)
        acc = WarpAccess(req.access.addresses, req.access.elem_bytes,
                         f"{req.space} {req.kind} of {req.array}, line {req.line}: "
                         f"`{req.source}` (warp {req.warp}, block {req.block})")
        return draw_warp_access(acc)


def trace(kernel, grid, block, *args) -> AccessTrace:
    """Run ``kernel[grid, block](*args)`` in the thread emulator and record every access.

    Works the same on a GPU, on the simulator and without either: the kernel's Python
    source runs over emulated threads (``gpuperf.emulator``), never on the device. NumPy
    arguments are used in place (the kernel's writes land in them); device arrays are
    copied in and back. Returns an ``AccessTrace``: print it for a table of sectors per
    request and bank conflicts. A kernel that breaks a rule of the hardware raises a plain
    error (``IndexError`` out of bounds, a misaligned 16-byte access, a barrier not reached
    by every thread). On a GPU, Nsight Compute measures the same thing for a real launch
    (``ncu --section MemoryWorkloadAnalysis``).
    """
    validate.kernel(kernel)
    _check_launch_shape(grid, "grid")
    _check_launch_shape(block, "block")
    run = emulator.launch(kernel, grid, block, *args, record=True)
    reqs = []
    for r in run.warp_requests():
        acc = WarpAccess.from_addresses([a for _, a, _ in r.lanes], r.lanes[0][2])
        reqs.append(Request(r.space, r.kind, r.array, r.line,
                            emulator.source_line(r.file, r.line), tuple(r.block), r.warp, acc))
    reqs.sort(key=lambda q: (q.block, q.warp, q.line))
    return AccessTrace(reqs, run)


# =========================================================================== copies


@functools.lru_cache(maxsize=None, typed=True)
def make_copy_ilp(ilp: int = 4, dtype: str = "float32"):
    """Grid-stride copy with ``ilp`` independent loads in flight per thread.

    Each round a thread loads ``ilp`` elements, one grid apart (so each warp's load is
    128 contiguous bytes), into registers, and only then stores them. Stores never
    wait, so the loads of one round overlap; a plain ``out[i] = x[i]`` loop cannot
    overlap them, because the compiler may not move the next load above a store to
    an array that might alias the source.
    """
    ilp = validate.positive_int(ilp, "ilp", maximum=16)
    _, nb_type = _DTYPES[validate.choice(dtype, "dtype", tuple(_DTYPES))]
    ILP = ilp

    @cuda.jit
    def copy_ilp(src, dst):
        n = src.size
        threads = cuda.gridsize(1)
        i = cuda.grid(1)
        regs = cuda.local.array(ILP, nb_type)
        round_elems = threads * ILP
        base = 0
        while base + round_elems <= n:  # full rounds: no bounds tests
            for k in range(ILP):
                regs[k] = src[base + k * threads + i]
            for k in range(ILP):
                dst[base + k * threads + i] = regs[k]
            base += round_elems
        for k in range(ILP):  # the last, partial round
            j = base + k * threads + i
            if j < n:
                dst[j] = src[j]

    return copy_ilp


@functools.lru_cache(maxsize=None, typed=True)
def make_copy_vec4(ilp: int = 2):
    """Grid-stride float32 copy with 16-byte vector loads, ``ilp`` of them in flight.

    ``src`` and ``dst`` must be 16-byte aligned (fresh allocations are); the last
    ``n % 4`` elements are copied one by one.
    """
    ilp = validate.positive_int(ilp, "ilp", maximum=16)
    ILP = ilp

    @cuda.jit
    def copy_vec4(src, dst):
        n = src.size
        vectors = n // 4
        threads = cuda.gridsize(1)
        i = cuda.grid(1)
        regs = cuda.local.array((ILP, 4), float32)
        round_vectors = threads * ILP
        base = 0
        while base + round_vectors <= vectors:
            for k in range(ILP):
                v = load_float4(src, 4 * (base + k * threads + i))
                regs[k, 0] = v[0]
                regs[k, 1] = v[1]
                regs[k, 2] = v[2]
                regs[k, 3] = v[3]
            for k in range(ILP):
                store_float4(dst, 4 * (base + k * threads + i),
                             (regs[k, 0], regs[k, 1], regs[k, 2], regs[k, 3]))
            base += round_vectors
        for k in range(ILP):
            j = base + k * threads + i
            if j < vectors:
                store_float4(dst, 4 * j, load_float4(src, 4 * j))
        tail = vectors * 4 + i  # at most 3 elements that do not fill a vector
        if tail < n:
            dst[tail] = src[tail]

    return copy_vec4


@functools.lru_cache(maxsize=None, typed=True)
def make_copy_strided(ilp: int = 4, dtype: str = "float32"):
    """Copy every ``stride``-th element: ``dst[j * stride] = src[j * stride]`` for
    ``j < count``, ``ilp`` loads in flight per thread. Lane ``j`` of a warp reads
    element ``j * stride``: the access the sector model (``warp_access``) describes."""
    ilp = validate.positive_int(ilp, "ilp", maximum=16)
    _, nb_type = _DTYPES[validate.choice(dtype, "dtype", tuple(_DTYPES))]
    ILP = ilp

    @cuda.jit
    def copy_strided(src, dst, count, stride):
        threads = cuda.gridsize(1)
        i = cuda.grid(1)
        regs = cuda.local.array(ILP, nb_type)
        base = 0
        while base + threads * ILP <= count:
            for k in range(ILP):
                regs[k] = src[(base + k * threads + i) * stride]
            for k in range(ILP):
                dst[(base + k * threads + i) * stride] = regs[k]
            base += threads * ILP
        for k in range(ILP):
            j = base + k * threads + i
            if j < count:
                dst[j * stride] = src[j * stride]

    return copy_strided


# The strided copy's two halves, for the profiler: which DRAM reads the loads cause and
# which the strided stores cause (a store that covers part of a sector may make the L2 read
# the rest of it from DRAM). Each touches exactly the elements copy_strided touches.
@functools.lru_cache(maxsize=None, typed=True)
def make_read_strided(ilp: int = 4):
    """The loads of ``make_copy_strided(ilp)`` alone: each thread sums the float32 elements
    ``src[j * stride]`` it would copy and writes its sum to ``sums[thread]`` (one contiguous
    store per thread, whole sectors: no store covers part of a sector)."""
    ilp = validate.positive_int(ilp, "ilp", maximum=16)
    ILP = ilp

    @cuda.jit
    def read_strided(src, sums, count, stride):
        threads = cuda.gridsize(1)
        i = cuda.grid(1)
        regs = cuda.local.array(ILP, float32)
        acc = float32(0)
        base = 0
        while base + threads * ILP <= count:
            for k in range(ILP):
                regs[k] = src[(base + k * threads + i) * stride]
            for k in range(ILP):
                acc += regs[k]
            base += threads * ILP
        for k in range(ILP):
            j = base + k * threads + i
            if j < count:
                acc += src[j * stride]
        if i < sums.shape[0]:
            sums[i] = acc

    return read_strided


@cuda.jit
def write_strided(dst, count, stride):
    """The stores of the strided copy alone: ``dst[j * stride] = j`` for ``j < count``, in
    the elements each thread of the copy stores, with no loads from memory."""
    threads = cuda.gridsize(1)
    j = cuda.grid(1)
    while j < count:
        dst[j * stride] = j
        j += threads


# ------------------------------------------------------------------ arrays of structures
# A particle of AOS_FIELDS float32 fields is a 32-byte struct: one sector. Stored as an array
# of structures (AoS, shape (n, AOS_FIELDS)), field f of consecutive particles is AOS_FIELDS
# elements apart: a strided access. Stored as a structure of arrays (SoA, shape
# (AOS_FIELDS, n)), each field is contiguous.
AOS_FIELDS = 8
AOS_USED = (1, 2, 4, 8)  # fields a kernel reads
N_AOS = 2**24  # particles
AOS_LAYOUTS = ("AoS", "SoA")


@functools.lru_cache(maxsize=None, typed=True)
def make_sum_fields(layout: str, used: int):
    """A kernel that adds up the first ``used`` fields of each particle into ``out[i]``, one
    thread per particle, for particles stored as ``layout``: "AoS" (``particles[i, f]``,
    shape (n, AOS_FIELDS)) or "SoA" (``particles[f, i]``, shape (AOS_FIELDS, n))."""
    validate.choice(layout, "layout", AOS_LAYOUTS)
    USED = validate.positive_int(used, "used", maximum=AOS_FIELDS)

    if layout == "AoS":
        @cuda.jit
        def sum_fields_aos(particles, out):
            i = cuda.grid(1)
            if i < out.shape[0] and i < particles.shape[0]:
                acc = float32(0)
                for f in range(USED):
                    acc += particles[i, f]  # lanes 32 bytes apart: one sector each
                out[i] = acc

        return sum_fields_aos

    @cuda.jit
    def sum_fields_soa(particles, out):
        i = cuda.grid(1)
        if i < out.shape[0] and i < particles.shape[1]:
            acc = float32(0)
            for f in range(USED):
                acc += particles[f, i]  # lanes 4 bytes apart: 4 sectors per warp
            out[i] = acc

    return sum_fields_soa


def _layout_read_bytes(layout: str, fields: int, used: int, elem_bytes: int) -> int:
    """The sector model's DRAM bytes per particle when a warp's 32 threads read fields
    0 to used - 1 of 32 consecutive particles of ``fields`` fields of ``elem_bytes`` bytes
    (every array starts on a sector). The answer to ``ex-coalescing-layout-bytes``."""
    if elem_bytes not in (1, 2, 4, 8):  # an element then never straddles two sectors
        raise ValueError(f"elem_bytes={elem_bytes!r}: the model takes 1, 2, 4 or 8.")
    if layout == "SoA":  # each field: 32 contiguous elements, whole sectors
        return used * elem_bytes
    sectors = {(lane * fields + f) * elem_bytes // SECTOR_BYTES
               for lane in range(WARP) for f in range(used)}
    return len(sectors) * SECTOR_BYTES // WARP


def aos_model_bytes(layout: str, used: int) -> int:
    """The sector model's DRAM bytes per particle for ``make_sum_fields(layout, used)``: AoS
    moves the whole 32-byte struct whatever it uses (every sector holds fields of one
    particle only); SoA moves only the fields it reads. Both write 4 bytes of output."""
    validate.choice(layout, "layout", AOS_LAYOUTS)
    used = validate.positive_int(used, "used", maximum=AOS_FIELDS)
    return _layout_read_bytes(layout, AOS_FIELDS, used, 4) + 4


COPY_VERSIONS = ("one_per_thread", "grid_stride", "ilp", "vec4")


def copy_launch(n: int, *, version: str = "vec4", block: int = 256,
                blocks_per_sm: int | None = 8, ilp: int = 2) -> tuple[int, int]:
    """Blocks and threads for copying ``n`` elements with ``version``.

    ``blocks_per_sm=None`` sizes the grid to the data (each thread one round);
    otherwise the grid is ``blocks_per_sm`` blocks per SM, never more than the data needs.
    """
    n = validate.positive_int(n, "n")
    ilp = validate.positive_int(ilp, "ilp", maximum=16)
    validate.choice(version, "version", COPY_VERSIONS)
    block = validate.block_size(block, multiple_of=WARP)
    per_thread = {"one_per_thread": 1, "grid_stride": 1, "ilp": ilp, "vec4": 4 * ilp}[version]
    needed = max(1, -(-n // (block * per_thread)))
    if version == "one_per_thread" or blocks_per_sm is None:
        return needed, block
    blocks_per_sm = validate.positive_int(blocks_per_sm, "blocks_per_sm", maximum=64)
    return min(needed, blocks_per_sm * device.sm_count(default=2)), block


def copy(src, dst=None, *, version: str = "vec4", block: int = 256,
         blocks_per_sm: int | None = None, ilp: int = 1):
    """Copy the float32 vector ``src`` into ``dst`` (allocated if None); return ``dst``.

    ``version``: ``"one_per_thread"``, ``"grid_stride"`` (chapter 1's kernels),
    ``"ilp"`` (``ilp`` loads in flight per thread) or ``"vec4"`` (16-byte loads, ``ilp``
    of them in flight: the one that reaches the copy ceiling). The defaults are the
    fastest measured: 16-byte loads, one per thread, a grid sized to the data.
    """
    validate.choice(version, "version", COPY_VERSIONS)
    validate.positive_int(ilp, "ilp", maximum=16)
    src = validate.array(src, name="src")
    if dst is None:
        dst = np.empty_like(src) if isinstance(src, np.ndarray) else cuda.device_array_like(src)
    dst = validate.array(dst, name="dst")
    validate.same_shape(src, dst, ("src", "dst"))
    grid, block = copy_launch(src.size, version=version, block=block,
                              blocks_per_sm=blocks_per_sm, ilp=ilp)
    if version == "vec4":
        for name, arr in (("src", src), ("dst", dst)):
            validate.aligned16(arr, name, "use version='ilp', or copy from a fresh allocation.")
    from . import gridstride

    kernel = {"one_per_thread": gridstride.copy_one_per_thread,
              "grid_stride": gridstride.copy_grid_stride,
              "ilp": make_copy_ilp(ilp), "vec4": make_copy_vec4(ilp)}[version]
    kernel[grid, block](src, dst)
    return dst


# =========================================================================== traversal


@cuda.jit
def matmul_naive(A, B, C):
    """C = A @ B, one thread per C element, B row-major: the warp reads B[k, col]
    (element ``k * N + col``), consecutive threads, consecutive addresses."""
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@cuda.jit
def matmul_naive_bcol(A, Bt, C):
    """The same product with B stored column-major (``Bt`` is B's transpose, row-major):
    the warp reads Bt[col, k] (element ``col * K + k``), consecutive threads K elements apart."""
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * Bt[col, k]
        C[row, col] = acc


MATMUL_MODES = ("rowmajor", "uncoalesced", "corner")


@functools.lru_cache(maxsize=None, typed=True)
def make_matmul_bcol(tile: int = 32, mode: str = "corner", pad: int = 0):
    """Tiled C = A @ B (``tile`` x ``tile`` blocks) with B's tiles loaded by ``mode``.

    ``"rowmajor"``: B given row-major (``B[k, j]``), the chapter-4 kernel, the reference.
    ``"uncoalesced"``: B given column-major as ``Bt`` (``Bt[j, k]`` is B[k, j]) and loaded
    with the chapter-4 mapping: thread (ty, tx) loads B[k0+ty, col], so consecutive tx
    read addresses K apart.
    ``"corner"``: corner turning: thread (ty, tx) loads B[k0+tx, j0+ty] = Bt[j0+ty, k0+tx],
    so consecutive tx read consecutive addresses; it stores into the tile transposed.
    ``pad`` extra columns in B's shared tile keep that transposed store free of bank conflicts.
    """
    tile = validate.positive_int(tile, "tile", maximum=32)
    validate.choice(mode, "mode", MATMUL_MODES)
    pad = validate.positive_int(pad, "pad", minimum=0, maximum=4)
    validate.shared_bytes(4 * (tile * tile + tile * (tile + pad)), what=f"tile={tile}, pad={pad}")
    TILE = tile
    A_SHAPE = (tile, tile)
    B_SHAPE = (tile, tile + pad)
    CORNER = mode == "corner"
    ROWMAJOR = mode == "rowmajor"

    @cuda.jit
    def matmul_tiled_bcol(A, B, C):
        As = cuda.shared.array(A_SHAPE, float32)
        Bs = cuda.shared.array(B_SHAPE, float32)  # Bs[kk, jj] holds B[k0 + kk, j0 + jj]
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        j0 = cuda.blockIdx.x * TILE
        row = cuda.blockIdx.y * TILE + ty
        col = j0 + tx
        M, K = A.shape
        N = C.shape[1]
        acc = float32(0.0)
        for k0 in range(0, K, TILE):
            # A's tile: consecutive tx read consecutive elements of one row of A.
            if row < M and k0 + tx < K:
                As[ty, tx] = A[row, k0 + tx]
            else:
                As[ty, tx] = 0.0
            if ROWMAJOR:
                if k0 + ty < K and col < N:
                    Bs[ty, tx] = B[k0 + ty, col]
                else:
                    Bs[ty, tx] = 0.0
            elif CORNER:
                # Swap the roles of tx and ty: tx now walks along k, down one column
                # of B, which is contiguous in column-major storage.
                if j0 + ty < N and k0 + tx < K:
                    Bs[tx, ty] = B[j0 + ty, k0 + tx]
                else:
                    Bs[tx, ty] = 0.0
            else:
                # The chapter-4 mapping on column-major B: tx walks along a row of B,
                # and B's rows are strided by K in memory.
                if k0 + ty < K and col < N:
                    Bs[ty, tx] = B[col, k0 + ty]
                else:
                    Bs[ty, tx] = 0.0
            cuda.syncthreads()
            for kk in range(TILE):
                acc += As[ty, kk] * Bs[kk, tx]
            cuda.syncthreads()
        if row < M and col < N:
            C[row, col] = acc

    return matmul_tiled_bcol


def matmul(A, B, *, layout: str = "col", version: str = "corner", tile: int = 32,
           pad: int = 1):
    """C = A @ B for float32 matrices, with B stored column-major (``layout="col"``).

    With ``layout="col"``, pass B as its transpose ``Bt`` (shape N x K, C-contiguous):
    ``Bt[j, k]`` is B's element (k, j), i.e. B in column-major order. ``version``:
    ``"naive"`` or the tiled ``"uncoalesced"`` / ``"corner"``. With ``layout="row"``,
    B is K x N row-major and ``version`` is ``"naive"`` or ``"rowmajor"``.
    """
    validate.positive_int(tile, "tile", maximum=32)
    validate.positive_int(pad, "pad", minimum=0, maximum=4)
    validate.choice(layout, "layout", ("row", "col"))
    allowed = ("naive", "rowmajor") if layout == "row" else ("naive", "uncoalesced", "corner")
    validate.choice(version, "version", allowed)
    A = validate.array(A, name="A", ndim=2)
    B = validate.array(B, name="Bt" if layout == "col" else "B", ndim=2)
    M, K = A.shape
    if layout == "col":
        N, Kb = B.shape
    else:
        Kb, N = B.shape
    if Kb != K:
        raise ValueError(
            f"A is {M} x {K}, so B must have {K} rows; with layout={layout!r} pass "
            + ("Bt of shape (N, K), B's transpose stored row-major." if layout == "col"
               else "B of shape (K, N)."))
    if isinstance(A, np.ndarray) and isinstance(B, np.ndarray):
        C = np.empty((M, N), np.float32)
    else:
        C = cuda.device_array((M, N), np.float32)
    if version == "naive":
        block = (16, 16)
        grid = (-(-N // 16), -(-M // 16))
        kernel = matmul_naive if layout == "row" else matmul_naive_bcol
    else:
        grid = (-(-N // tile), -(-M // tile))
        block = (tile, tile)
        kernel = make_matmul_bcol(tile, version, pad if version == "corner" else 0)
    kernel[grid, block](A, B, C)
    return C


# =========================================================================== transpose


@cuda.jit
def transpose_naive(a, out):
    """out = a.T, one element per thread: reads along a row (coalesced), writes down a
    column of ``out`` (each lane a different line)."""
    x, y = cuda.grid(2)
    if y < a.shape[0] and x < a.shape[1]:
        out[x, y] = a[y, x]


@functools.lru_cache(maxsize=None, typed=True)
def make_transpose(tile: int = 32, block_rows: int = 8, pad: int = 1, staged: bool = True,
                   swizzle: bool = False):
    """Tiled transpose: a ``tile`` x ``tile`` tile through shared memory per block.

    The block is ``(min(tile, 32), block_rows)`` threads; each thread moves
    ``tile * tile / (32 * block_rows)`` elements. Both the read of ``a`` and the write
    of ``out`` go along rows (coalesced); the turn happens in shared memory, where
    reading a column of an unpadded tile puts all 32 lanes on one bank. ``pad=1``
    shifts each row by one bank.

    ``staged=True``: in tiles away from the edges, every thread issues all its loads
    into registers before it stores any of them to shared memory, so its loads are in
    flight together. Written the plain way (load, store, load, store), each load waits
    for the previous one: the compiler keeps a load and the shared store that follows
    it in order inside each bounds test.

    ``swizzle=True`` (with ``pad=0``): element ``(r, c)`` of the tile is kept at column
    ``c ^ (r % 32)``. Along a row the XOR permutes the 32 banks; down a column each row
    flips different bits, so the 32 lanes again land on 32 banks: no conflicts, and no
    padding column.
    """
    validate.positive_int(pad, "pad", minimum=0, maximum=4)
    validate.boolean(staged, "staged")
    validate.boolean(swizzle, "swizzle")
    if swizzle and pad:
        raise ValueError(f"swizzle=True replaces the padding: pass pad=0 with it, not pad={pad}.")
    tile = validate.positive_int(tile, "tile", maximum=64)
    block_rows = validate.positive_int(block_rows, "block_rows", maximum=tile)
    if tile % block_rows or (tile > 32 and tile % 32):
        raise ValueError(f"block_rows={block_rows} must divide tile={tile}, and a tile over "
                         "32 must be a multiple of 32.")
    bx = min(tile, WARP)
    validate.block_size(bx * block_rows, name="min(tile, 32) * block_rows")
    pad = validate.positive_int(pad, "pad", minimum=0, maximum=4)
    validate.shared_bytes(4 * tile * (tile + pad), what=f"tile={tile}, pad={pad}")
    TILE, ROWS, BX = tile, block_rows, bx
    ROWS_PER, COLS_PER = tile // block_rows, tile // bx
    PER = ROWS_PER * COLS_PER
    SHAPE = (tile, tile + pad)
    STAGED = bool(staged)
    SWZ = WARP - 1 if swizzle else 0  # column c of row r lives at c ^ (r & SWZ)

    @cuda.jit
    def transpose_tiled(a, out):
        t = cuda.shared.array(SHAPE, float32)
        regs = cuda.local.array(PER, float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        rows, cols = a.shape
        r0 = cuda.blockIdx.y * TILE  # the tile's first row of a
        c0 = cuda.blockIdx.x * TILE  # and first column
        interior = r0 + TILE <= rows and c0 + TILE <= cols  # the same for the whole block
        if STAGED and interior:
            for i in range(ROWS_PER):  # all loads first: they are in flight together
                for j in range(COLS_PER):
                    regs[i * COLS_PER + j] = a[r0 + ty + i * ROWS, c0 + tx + j * BX]
            for i in range(ROWS_PER):
                for j in range(COLS_PER):
                    tr = ty + i * ROWS
                    t[tr, (tx + j * BX) ^ (tr & SWZ)] = regs[i * COLS_PER + j]
        else:
            for i in range(ROWS_PER):
                for j in range(COLS_PER):
                    r = r0 + ty + i * ROWS
                    c = c0 + tx + j * BX
                    if r < rows and c < cols:
                        tr = ty + i * ROWS
                        t[tr, (tx + j * BX) ^ (tr & SWZ)] = a[r, c]
        cuda.syncthreads()
        # out's tile (bx, by) is a's tile (by, bx): write it along out's rows, reading
        # a column of t (lanes TILE + pad words apart: distinct banks when that is odd).
        for i in range(ROWS_PER):
            for j in range(COLS_PER):
                orow = c0 + ty + i * ROWS  # a column of a
                ocol = r0 + tx + j * BX  # a row of a
                if orow < cols and ocol < rows:
                    tr = tx + j * BX
                    out[orow, ocol] = t[tr, (ty + i * ROWS) ^ (tr & SWZ)]

    return transpose_tiled


VEC_TILE = 64  # the 16-byte transpose's tile: 64 x 64 floats, rows of 16 vectors


@functools.lru_cache(maxsize=None, typed=True)
def make_transpose_vec4(block_rows: int = 8, flip: bool = True):
    """A 64 x 64 tiled transpose whose global loads and stores move 16 bytes each.

    The block is ``(16, block_rows)`` threads. Thread ``(tx, ty)`` reads ``a[r, 4tx:4tx+4]``
    of the tile's rows ``r = ty, ty + block_rows, ...`` (one ``load4`` each, all issued
    before any is stored), and writes ``out[c, 4tx:4tx+4]``: four neighbouring rows of the
    tile at tile column ``c``, gathered from shared memory with four 4-byte reads, in one
    ``store4``. A warp then moves two rows of 256 bytes per instruction instead of one of 128.

    The shared tile is padded to 64 x 65, and bit 1 of the column is flipped where the row's
    half (``r >= 32``) and the column's half differ. With padding alone, lanes ``tx`` and
    ``tx + 8`` of a half-warp (columns 32 apart on the way in, rows 32 apart on the way out)
    fall on one bank: a 2-way conflict on every shared access. The flip moves one of them
    two banks on. ``flip=False`` keeps the padding alone (the ablation).

    Tiles at the edges, and matrices whose row lengths are not multiples of 4 (16-byte
    accesses would be misaligned), go one element at a time with bounds tests, in the same
    layout, neighbouring lanes on neighbouring columns (coalesced 64-byte half-warp segments).
    A direct launch needs C-contiguous ``a`` and ``out`` that start 16-byte aligned (fresh
    allocations do); ``transpose()`` checks that.
    """
    validate.boolean(flip, "flip")
    block_rows = validate.positive_int(block_rows, "block_rows", minimum=2, maximum=VEC_TILE)
    if VEC_TILE % block_rows:
        raise ValueError(f"block_rows={block_rows} must divide the tile's {VEC_TILE} rows "
                         "(2, 4, 8, 16, 32 or 64).")
    R, PER = block_rows, VEC_TILE // block_rows
    SHAPE = (VEC_TILE, VEC_TILE + 1)
    FLIP = 2 if flip else 0  # the column bit flipped across halves

    @cuda.jit
    def transpose_vec4(a, out):
        t = cuda.shared.array(SHAPE, float32)
        regs = cuda.local.array((PER, 4), float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        rows, cols = a.shape
        r0 = cuda.blockIdx.y * VEC_TILE  # the tile's first row of a
        c0 = cuda.blockIdx.x * VEC_TILE  # and first column
        wide = (r0 + VEC_TILE <= rows and c0 + VEC_TILE <= cols
                and rows % 4 == 0 and cols % 4 == 0)  # the same for the whole block
        if wide:
            for i in range(PER):  # all loads first: they are in flight together
                v0, v1, v2, v3 = load4(a, r0 + ty + i * R, c0 + 4 * tx)
                regs[i, 0] = v0
                regs[i, 1] = v1
                regs[i, 2] = v2
                regs[i, 3] = v3
            for i in range(PER):
                r = ty + i * R
                for k in range(4):
                    j = 4 * tx + k
                    t[r, j ^ (((r ^ j) >> 5) & 1) * FLIP] = regs[i, k]
        else:  # one float at a time, neighbouring lanes on neighbouring columns (coalesced)
            for i in range(PER):
                r = ty + i * R
                for m in range(4):
                    j = tx + 16 * m
                    if r0 + r < rows and c0 + j < cols:
                        t[r, j ^ (((r ^ j) >> 5) & 1) * FLIP] = a[r0 + r, c0 + j]
        cuda.syncthreads()
        r = 4 * tx  # four rows of the tile: four neighbouring columns of out
        if wide:
            for i in range(PER):
                c = ty + i * R  # a column of the tile: a row of out
                store4(out, c0 + c, r0 + r,
                       t[r, c ^ (((r ^ c) >> 5) & 1) * FLIP],
                       t[r + 1, c ^ ((((r + 1) ^ c) >> 5) & 1) * FLIP],
                       t[r + 2, c ^ ((((r + 2) ^ c) >> 5) & 1) * FLIP],
                       t[r + 3, c ^ ((((r + 3) ^ c) >> 5) & 1) * FLIP])
        else:
            for i in range(PER):
                c = ty + i * R
                for m in range(4):
                    q = tx + 16 * m  # a row of the tile: a column of out, neighbours on lanes
                    if c0 + c < cols and r0 + q < rows:
                        out[c0 + c, r0 + q] = t[q, c ^ (((q ^ c) >> 5) & 1) * FLIP]

    return transpose_vec4


TRANSPOSE_VERSIONS = {
    # name: (tile, block_rows, pad); None is the naive kernel, "vec4" make_transpose_vec4()
    "naive": None,
    "tiled": (32, 32, 0),
    "tiled_padded": (32, 32, 1),
    "tiled_padded_4x": (32, 8, 1),
    "tiled_padded_64": (64, 4, 1),  # 64 x 64 tiles: 32 per thread, 256-byte row segments
    "vec4_64": "vec4",  # make_transpose_vec4(8): the same tiles moved with 16-byte accesses
}


MAX_GRID_Y = MAX_GRID_DIM[1]  # blocks in a grid's y dimension, on every CUDA GPU


def transpose(a, out=None, *, version: str = "vec4_64"):
    """``a.T`` as a new C-contiguous float32 matrix, with one of ``TRANSPOSE_VERSIONS``.

    ``"vec4_64"`` (the default) moves whole tiles with 16-byte accesses where both of a's
    dimensions are multiples of 4, and otherwise runs ``"tiled_padded_64"`` (no row of a or of
    out would then start on a 16-byte boundary)."""
    validate.choice(version, "version", TRANSPOSE_VERSIONS)
    a = validate.array(a, name="a", ndim=2)
    rows, cols = a.shape
    params = TRANSPOSE_VERSIONS[version]
    wide = params == "vec4" and rows % 4 == 0 and cols % 4 == 0  # 16-byte accesses fit
    rows_per_block = 8 if params is None else 64 if params == "vec4" else params[0]
    if -(-rows // rows_per_block) > MAX_GRID_Y:  # before allocating anything
        raise ValueError(
            f"a has {rows} rows: version {version!r} launches one block per {rows_per_block} "
            f"rows in the grid's y dimension, which allows at most {MAX_GRID_Y} blocks "
            f"({MAX_GRID_Y * rows_per_block} rows). Transpose it in slabs of rows, or give "
            f"a wide matrix ({cols} column{'s' if cols != 1 else ''} go in x, which has no "
            "such limit).")
    if out is None:
        out = np.empty((cols, rows), np.float32) if isinstance(a, np.ndarray) else \
            cuda.device_array((cols, rows), np.float32)
    out = validate.array(out, name="out", ndim=2)
    if tuple(out.shape) != (cols, rows):
        raise ValueError(f"out must have shape {(cols, rows)} (a's shape reversed), "
                         f"not {tuple(out.shape)}.")
    validate.disjoint(out, "out", a=a)
    if wide:
        for name, arr in (("a", a), ("out", out)):
            validate.aligned16(arr, name, f"version {version!r} needs them; use "
                               "version='tiled_padded_64', or a fresh allocation.")
    if params is None:
        transpose_naive[(-(-cols // 32), -(-rows // 8)), (32, 8)](a, out)
    elif wide:
        make_transpose_vec4()[(-(-cols // VEC_TILE), -(-rows // VEC_TILE)), (16, 8)](a, out)
    elif params == "vec4":  # no 16-byte access fits: the staged 4-byte kernel, same tiles
        make_transpose(64, 4, 1)[(-(-cols // 64), -(-rows // 64)), (32, 4)](a, out)
    else:
        tile, block_rows, pad = params
        make_transpose(tile, block_rows, pad)[(-(-cols // tile), -(-rows // tile)),
                                              (min(tile, WARP), block_rows)](a, out)
    return out


# =========================================================================== PTX targets

_V = "float32[::1]"
_M = "float32[:, ::1]"
PTX_TARGETS = [
    (make_copy_ilp(4), f"void({_V}, {_V})"),
    (make_copy_strided(4), f"void({_V}, {_V}, int64, int64)"),
    (make_copy_strided(4, "float64"), "void(float64[::1], float64[::1], int64, int64)"),
    (make_read_strided(4), f"void({_V}, {_V}, int64, int64)"),
    (write_strided, f"void({_V}, int64, int64)"),
    (make_sum_fields("AoS", 4), f"void({_M}, {_V})"),
    (make_sum_fields("SoA", 4), f"void({_M}, {_V})"),
    (make_copy_vec4(2), f"void({_V}, {_V})"),
    (matmul_naive, f"void({_M}, {_M}, {_M})"),
    (matmul_naive_bcol, f"void({_M}, {_M}, {_M})"),
    (make_matmul_bcol(32, "rowmajor", 0), f"void({_M}, {_M}, {_M})"),
    (make_matmul_bcol(32, "uncoalesced", 0), f"void({_M}, {_M}, {_M})"),
    (make_matmul_bcol(32, "corner", 1), f"void({_M}, {_M}, {_M})"),
    (transpose_naive, f"void({_M}, {_M})"),
    (make_transpose(32, 32, 0), f"void({_M}, {_M})"),
    (make_transpose(32, 8, 1), f"void({_M}, {_M})"),
    (make_transpose(64, 4, 0, True, True), f"void({_M}, {_M})"),
    (make_transpose(32, 8, 1, staged=False), f"void({_M}, {_M})"),
    (make_transpose(64, 8, 1), f"void({_M}, {_M})"),
    (make_transpose_vec4(8), f"void({_M}, {_M})"),
    (make_transpose_vec4(8, False), f"void({_M}, {_M})"),
]


# =========================================================================== experiments


@cuda.jit
def fill_pseudorandom(x, seed):
    """Fill ``x`` with values in [-1, 2) from a cheap integer hash of the index: data on
    the device without a slow host-side random generator and transfer."""
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < x.size:
        h = (i * 2654435761 + seed * 40503) % 1000003
        x[i] = h * (3.0 / 1000003.0) - 1.0
        i += stride


def _device_data(n: int, dtype=np.float32, seed: int = 1):
    x = cuda.device_array(n, dtype)
    fill_pseudorandom[4 * device.sm_count(default=2), 256](x, seed)
    return x


def _time_launch(kernel, grid, block, *args, **options) -> bench.Timing:
    """Time ``kernel[grid, block](*args)`` with the bench protocol."""
    return bench.time_kernel(lambda: kernel[grid, block](*args), **options)


def _copy_row(nbytes, timing, **extra):
    return {**extra, **bench.bandwidth_row(nbytes, timing)}


_BW_UNITS = {"ms": "ms", "gbps": "GB/s", "pct_copy": "% of copy", "pct_peak": "% of peak"}

N_STRIDE = 2**23  # elements each strided copy moves
STRIDES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32)
# The span of the arrays the strided copies read: the fixed-count sweep's widest, at stride 32.
STRIDE_SPAN = N_STRIDE * max(STRIDES)


@experiment("coalescing_stride", chapter="coalescing",
            title="Copying every s-th element (2^23 of them): useful GB/s against stride",
            units={**_BW_UNITS, "model_pct": "% (sector model)", "moved_gbps": "GB/s"})
def stride_experiment(progress):
    rows = []
    for dtype in ("float32", "float64"):
        rows += _stride_sweep(dtype, progress)
    return rows


@experiment("coalescing_stride_span", chapter="coalescing",
            title="Copying every s-th element of one span (2^28 elements): useful GB/s "
                  "against stride, the footprint fixed",
            units={**_BW_UNITS, "model_pct": "% (sector model)", "moved_gbps": "GB/s",
                   "span_bytes": "B"})
def stride_span_experiment(progress):
    """``coalescing_stride`` with the footprint held: every stride's copy walks the same
    STRIDE_SPAN elements and copies STRIDE_SPAN / stride of them (the fixed-count sweep's
    footprint grows with the stride, from 2^23 elements to STRIDE_SPAN). At stride 32 the two
    sweeps run the same copy."""
    rows = []
    for dtype in ("float32", "float64"):
        rows += _stride_sweep(dtype, progress, fixed_span=True)
    return rows


def _stride_sweep(dtype, progress, *, fixed_span: bool = False):
    np_type, _ = _DTYPES[dtype]
    size = np.dtype(np_type).itemsize
    src = _device_data(STRIDE_SPAN, np_type)
    dst = cuda.device_array_like(src)
    kernel = make_copy_strided(4, dtype)

    def measure(stride):
        count = STRIDE_SPAN // stride if fixed_span else N_STRIDE
        grid, block = copy_launch(count, version="ilp", ilp=4)
        # (Strided views src[::stride] would do the same, but Numba launches kernels on
        # non-contiguous device arrays through a slow path: milliseconds per launch.)
        t = _time_launch(kernel, grid, block, src, dst, count, stride, min_time=0.1)
        for first in (0, count - 4096):  # spot-check the head and the tail
            span = slice(first * stride, (first + 4096) * stride)
            if not np.array_equal(dst[span].copy_to_host()[::stride],
                                  src[span].copy_to_host()[::stride]):
                raise AssertionError(f"the strided copy (stride {stride}) is wrong")
        eff = stride_efficiency(stride, size)
        row = _copy_row(2 * size * count, t, dtype=dtype, elem_bytes=size)
        row.update(model_pct=100 * eff, moved_gbps=row["gbps"] / eff)
        if fixed_span:
            row.update(count=count, span_bytes=size * count * stride)
        return row

    return bench.sweep(measure, {"stride": list(STRIDES)}, label=dtype, progress=progress)


def stride_footprint(count_res, span_res) -> list[dict]:
    """``coalescing_stride`` (a fixed count of elements, the footprint growing with the
    stride) beside ``coalescing_stride_span`` (a fixed footprint, the count falling with the
    stride), same GPU: per element type and stride, the useful GB/s of each and each one's
    ratio to its own stride 1, with the sector model. Shown as a table; rows returned."""
    from ..records import Result

    for res, name in ((count_res, "coalescing_stride"), (span_res, "coalescing_stride_span")):
        if getattr(res, "name", None) != name:
            raise ValueError(f"pass the Result of {name!r} (gp.records.run({name!r})), not "
                             f"{getattr(res, 'name', type(res).__name__)!r}.")
    if count_res.gpu != span_res.gpu:
        raise ValueError(f"coalescing_stride is from {count_res.gpu}, coalescing_stride_span from "
                         f"{span_res.gpu}: compare the two sweeps of one GPU.")
    rows = []
    for dtype in count_res.values("dtype"):
        fixed = {r["stride"]: r for r in count_res.select(dtype=dtype)}
        span = {r["stride"]: r for r in span_res.select(dtype=dtype)}
        strides = sorted(set(fixed) & set(span))
        if not strides:
            continue
        one_c, one_s = fixed[strides[0]]["gbps"], span[strides[0]]["gbps"]
        for s in strides:
            c, w = fixed[s], span[s]
            rows.append({"dtype": dtype, "stride": s, "count_us": 1e3 * c["ms"],
                         "span_us": 1e3 * w["ms"], "count_gbps": c["gbps"],
                         "span_gbps": w["gbps"], "span_over_count": w["gbps"] / c["gbps"],
                         "count_ratio": c["gbps"] / one_c, "span_ratio": w["gbps"] / one_s,
                         "model": c["model_pct"] / 100})
    Result("coalescing_stride against coalescing_stride_span", rows, span_res.meta,
           span_res.source).show(
        ["dtype", "stride", "count_us", "span_us", "count_gbps", "span_gbps", "count_ratio",
         "span_ratio", "model"],
        note="count_*: a fixed 2^23 elements copied (footprint grows with the stride); span_*: "
             "one fixed span, STRIDE_SPAN / stride elements copied. *_ratio: useful GB/s over "
             "the same sweep's stride 1. model: the sector model's useful fraction.")
    return rows


N_OFFSET = 2**26
OFFSETS = tuple(range(0, 33))


@experiment("coalescing_offset", chapter="coalescing",
            title="Copying 2^26 float32 starting `offset` elements into the arrays",
            units=_BW_UNITS)
def offset_experiment(progress):
    src = _device_data(N_OFFSET + max(OFFSETS))
    dst = cuda.device_array_like(src)
    kernel = make_copy_ilp(4)
    grid, block = copy_launch(N_OFFSET, version="ilp", ilp=4)

    def measure(misaligned, offset):
        xs = src[offset:offset + N_OFFSET]
        ys = dst[offset:offset + N_OFFSET] if misaligned == "both" else dst[:N_OFFSET]
        t = _time_launch(kernel, grid, block, xs, ys, min_time=0.05)
        return _copy_row(8 * N_OFFSET, t, offset_bytes=4 * offset)

    return bench.sweep(measure, {"misaligned": ["both", "source"], "offset": list(OFFSETS)},
                       label="offset", progress=progress)


@cuda.jit
def _aos_to_soa(aos, soa):
    """soa[f, i] = aos[i, f], one grid-stride pass over the particles (set-up, not timed)."""
    i = cuda.grid(1)
    while i < aos.shape[0]:
        for f in range(aos.shape[1]):
            soa[f, i] = aos[i, f]
        i += cuda.gridsize(1)


@experiment("coalescing_aos_soa", chapter="coalescing",
            title="Reading some fields of 2^24 particles of eight float32 fields: AoS against SoA",
            units={**_BW_UNITS, "model_gbps": "GB/s", "moved_gbps": "GB/s"})
def aos_soa_experiment(progress):
    """Each layout, each number of fields read: the useful GB/s (bytes of the fields read
    and of the output, over the time), the bytes the sector model says moved per particle,
    and the GB/s the model says the memory system carried (``moved_gbps``)."""
    data = _device_data(N_AOS * AOS_FIELDS, seed=3)
    aos = data.reshape(N_AOS, AOS_FIELDS)
    soa = cuda.device_array((AOS_FIELDS, N_AOS), np.float32)
    _aos_to_soa[4 * device.sm_count(default=2), 256](aos, soa)  # the same particles
    head = aos[:4096].copy_to_host().astype(np.float64)
    tail = aos[-4096:].copy_to_host().astype(np.float64)
    out = cuda.device_array(N_AOS, np.float32)
    block = 256
    grid = -(-N_AOS // block)

    def measure(layout, used):
        kernel = make_sum_fields(layout, used)
        t = _time_launch(kernel, grid, block, aos if layout == "AoS" else soa, out,
                         min_time=0.05)
        if not (np.allclose(out[:4096].copy_to_host(), head[:, :used].sum(axis=1), rtol=1e-5)
                and np.allclose(out[-4096:].copy_to_host(), tail[:, :used].sum(axis=1),
                                rtol=1e-5)):
            raise AssertionError(f"the {layout} kernel reading {used} fields is wrong")
        useful = N_AOS * (4 * used + 4)
        row = _copy_row(useful, t)
        moved = N_AOS * aos_model_bytes(layout, used)
        row.update(model_bytes=aos_model_bytes(layout, used),
                   moved_gbps=row["gbps"] * moved / useful)
        return row

    return bench.sweep(measure, {"layout": list(AOS_LAYOUTS), "used": list(AOS_USED)},
                       label="fields", progress=progress)


@experiment("coalescing_traversal", chapter="coalescing",
            title="Naive matmul: B read as B[k, col] (row-major) or B[col, k] (column-major)",
            units={"ms": "ms", "tflops": "TFLOP/s", "slowdown": "x"})
def traversal_experiment(progress):
    rows = []
    for n in (512, 1024, 2048):
        A = _device_data(n * n, seed=1).reshape(n, n)
        B = _device_data(n * n, seed=2).reshape(n, n)
        C = cuda.device_array((n, n), np.float32)
        grid, block = (-(-n // 16), -(-n // 16)), (16, 16)
        base = None
        for layout, kernel in (("row-major B[k, col]", matmul_naive),
                               ("column-major B[col, k]", matmul_naive_bcol)):
            t = _time_launch(kernel, grid, block, A, B, C, min_repeat=5, min_time=0.1)
            base = base or t.median_ms
            rows.append({"layout": layout, "n": n, "ms": t.median_ms,
                         "tflops": bench.tflops(2 * n**3, t.median_ms),
                         "slowdown": t.median_ms / base})
            progress(f"traversal n={n} {layout}: {t.median_ms:.2f} ms")
    return rows


MATMUL_VARIANTS = (
    # label, mode, pad
    ("B row-major (chapter 4)", "rowmajor", 0),
    ("B column-major, uncoalesced", "uncoalesced", 0),
    ("corner turning", "corner", 0),
    ("corner turning + padding", "corner", 1),
)


@experiment("coalescing_matmul_bcol", chapter="coalescing",
            title="Tiled matmul with B column-major: uncoalesced against corner turning",
            units={"ms": "ms", "tflops": "TFLOP/s"})
def matmul_experiment(progress):
    rows = []
    for n in (2048, 4096):
        A = _device_data(n * n, seed=1).reshape(n, n)
        B = _device_data(n * n, seed=2).reshape(n, n)
        C = cuda.device_array((n, n), np.float32)
        for tile in (16, 32):
            grid, block = (-(-n // tile), -(-n // tile)), (tile, tile)
            for label, mode, pad in MATMUL_VARIANTS:
                kernel = make_matmul_bcol(tile, mode, pad)
                t = _time_launch(kernel, grid, block, A, B, C, min_repeat=5, min_time=0.1)
                rows.append({"version": label, "mode": mode, "pad": pad, "tile": tile, "n": n,
                             "ms": t.median_ms, "tflops": bench.tflops(2 * n**3, t.median_ms)})
                progress(f"matmul n={n} tile={tile} {label}: {rows[-1]['tflops']:.2f} TFLOP/s")
    # Spot check: corner turning computes A @ B for column-major B (= A @ Bt.T).
    n = 256
    A = _device_data(n * n, seed=3).reshape(n, n)
    Bt = _device_data(n * n, seed=4).reshape(n, n)
    got = matmul(A, Bt, layout="col", version="corner").copy_to_host()
    ref = A.copy_to_host().astype(np.float64) @ Bt.copy_to_host().T
    if not np.allclose(got, ref, rtol=1e-3, atol=1e-3):
        raise AssertionError("corner-turning matmul produced a wrong result")
    return rows


# 16384^2 float32 is 1 GiB, the size the copy ceiling is measured at: transposes and the
# ceiling then move the same bytes. (At 8192^2 the best transpose measured 74% of the
# ceiling on an H200 and a copy of the same 256 MiB only 84%; at 16384^2, 86%.)
N_TRANSPOSE = 16384
TRANSPOSE_SWEEP = (
    # label, tile, block_rows, pad, staged (tile None: the naive kernel)
    ("naive", None, None, None, None),
    ("tiled", 32, 32, 0, True),
    ("tiled + padding", 32, 32, 1, True),
    ("tiled + padding, 4 per thread, loads one at a time", 32, 8, 1, False),
    ("tiled + padding, 4 per thread", 32, 8, 1, True),
    ("tiled + padding, 8 per thread", 32, 4, 1, True),
    ("64x64 tiles + padding, 8 per thread", 64, 16, 1, True),
    ("64x64 tiles + padding, 16 per thread", 64, 8, 1, True),
    ("64x64 tiles + padding, 32 per thread", 64, 4, 1, True),
)
# The same 64 x 64 tiles and 128-thread blocks, 32 per thread, moved with 16-byte global
# accesses (make_transpose_vec4): label, block_rows, flip (flip=False: padding alone, 2-way
# bank conflicts, the ablation).
TRANSPOSE_VEC4_SWEEP = (
    ("64x64 tiles, 16-byte accesses, padding only", 8, False),
    ("64x64 tiles, 16-byte accesses, padding + flip", 8, True),
)


@experiment("coalescing_transpose", chapter="coalescing",
            title="Transposing a 16384 x 16384 float32 matrix (1 GiB), against copying the same bytes",
            units=_BW_UNITS)
def transpose_experiment(progress):
    n = N_TRANSPOSE
    a = _device_data(n * n).reshape(n, n)
    out = cuda.device_array((n, n), np.float32)
    nbytes = 2 * 4 * n * n
    host = a.copy_to_host()
    # Rows of out to verify after each variant: the edges and every tile boundary of a
    # 64-wide tile, plus random rows. out[r] must equal column r of a. (Comparing all of the
    # 1 GiB result against a host transpose took most of this experiment's time.)
    check_rows = sorted({0, n - 1, *range(31, n, 4096), *range(32, n, 4096),
                         *np.random.default_rng(1).integers(0, n, 24).tolist()})
    expected = {r: host[:, r].copy() for r in check_rows}
    rows = []
    flat_out = out.reshape(n * n)
    sweep = [(label, tile, block_rows, pad, staged, None)
             for label, tile, block_rows, pad, staged in TRANSPOSE_SWEEP]
    sweep += [(label, VEC_TILE, block_rows, 1, True, flip)
              for label, block_rows, flip in TRANSPOSE_VEC4_SWEEP]
    for label, tile, block_rows, pad, staged, flip in sweep:
        # Other values in out first, so that a variant that skips some elements is caught.
        fill_pseudorandom[4 * device.sm_count(default=2), 256](flat_out, 99)
        if tile is None:
            kernel, grid, block = transpose_naive, (n // 32, n // 8), (32, 8)
        elif flip is None:
            kernel = make_transpose(tile, block_rows, pad, staged)
            grid, block = (-(-n // tile), -(-n // tile)), (min(tile, WARP), block_rows)
        else:
            kernel = make_transpose_vec4(block_rows, flip)
            grid, block = (-(-n // tile), -(-n // tile)), (16, block_rows)
        t = _time_launch(kernel, grid, block, a, out, min_time=0.1)
        rows.append(_copy_row(nbytes, t, version=label, kind="transpose",
                              elements_per_thread=1 if tile is None else
                              tile * tile // (block[0] * block[1]),
                              tile=tile, pad=pad or 0, staged=staged,
                              access_bytes=4 if flip is None else 16))
        progress(f"transpose {label}: {rows[-1]['gbps']:.0f} GB/s "
                 f"({rows[-1]['pct_copy']:.0f}% of copy)")
        bad = [r for r in check_rows if not np.array_equal(out[r].copy_to_host(), expected[r])]
        if bad:
            raise AssertionError(f"transpose {label!r} produced a wrong result (row {bad[0]} "
                                 "of out is not the matching column of a)")
    flat_a = a.reshape(n * n)
    grid, block = copy_launch(n * n, version="vec4", ilp=1, blocks_per_sm=None)
    t = _time_launch(make_copy_vec4(1), grid, block, flat_a, flat_out, min_time=0.1)
    rows.append(_copy_row(nbytes, t, version="copy of the same bytes (16-byte loads)",
                          kind="copy", elements_per_thread=4, tile=None, pad=None, staged=None,
                          access_bytes=16))
    return rows


VEC4_ONLY, VEC4_FLIP = (label for label, _, _ in TRANSPOSE_VEC4_SWEEP)
BEST_SCALAR = TRANSPOSE_SWEEP[-1][0]  # the last 4-byte rung: same tiles, blocks and work


def vec4_transpose_summary(tp, hw=None) -> str:
    """What the 16-byte rungs of ``coalescing_transpose`` (``tp``) say, printed from its rows:
    each against the last 4-byte rung and the copy ceiling, and the flip against padding alone
    (within the run's spread or not). ``hw``: ``profiling_transpose``, for the shared-memory
    passes per access and the store requests Nsight Compute counted. Prints and returns it."""
    validate.result(tp, "tp")
    if tp.name != "coalescing_transpose":
        raise ValueError(f"tp: give gp.records.run(\"coalescing_transpose\"), not {tp.name!r}.")
    if hw is not None:
        validate.result(hw, "hw")
        if hw.name != "profiling_transpose":
            raise ValueError(f"hw: give gp.records.run(\"profiling_transpose\"), not "
                             f"{hw.name!r}.")
    rows = {r.get("version"): r for r in tp.rows}
    gpu = getattr(tp, "gpu", None) or "this GPU"
    for label in (BEST_SCALAR, VEC4_ONLY, VEC4_FLIP):
        g = rows.get(label, {}).get("gbps", 1.0)
        if not isinstance(g, numbers.Real) or not g > 0 or g == float("inf"):
            raise ValueError(f"tp: the row {label!r} has gbps={g!r}, not a positive number: "
                             "record coalescing_transpose again.")
    if VEC4_FLIP not in rows or VEC4_ONLY not in rows or BEST_SCALAR not in rows:
        text = (f"The record of {gpu} has no 16-byte rows (recorded before they existed): "
                "run coalescing_transpose again on that GPU to see them.")
        print(text)
        return text
    copy = tp.ceilings.get("copy_gbps") if isinstance(tp.ceilings, dict) else None
    copy = copy if isinstance(copy, numbers.Real) and copy > 0 else None
    base, only, flip = rows[BEST_SCALAR], rows[VEC4_ONLY], rows[VEC4_FLIP]
    pct = (lambda r: f" = {100 * r['gbps'] / copy:.1f}% of the copy ceiling") if copy else (lambda r: "")
    lines = [f"On {gpu}, 16384 x 16384 float32:",
             f"  4-byte accesses ({BEST_SCALAR}): {base['gbps']:,.0f} GB/s{pct(base)}",
             f"  16-byte accesses, padding only: {only['gbps']:,.0f} GB/s{pct(only)} "
             f"({only['gbps'] / base['gbps']:.2f}x)",
             f"  16-byte accesses, padding + flip: {flip['gbps']:,.0f} GB/s{pct(flip)} "
             f"({flip['gbps'] / base['gbps']:.2f}x)"]
    diff = flip["gbps"] / only["gbps"] - 1
    spreads = [r.get("spread") for r in (only, flip)]
    if all(isinstance(x, numbers.Real) and x > 0 for x in spreads):
        noise = max(spreads)
        verdict = ("no change beyond the run's spread" if abs(diff) <= noise else
                   "faster" if diff > 0 else "slower")
        lines.append(f"  flip against padding only: {diff:+.1%} (spread {noise:.1%}): {verdict}")
    else:  # without the spread a small difference cannot be told from noise
        lines.append(f"  flip against padding only: {diff:+.1%} (the run's spread is not "
                     "recorded: repeat the measurement before reading a small difference)")
    if hw is not None:
        h = {r.get("version"): r for r in hw.rows}
        scalar = BEST_SCALAR if BEST_SCALAR in h else "tiled + padding"
        needed = ("n", "shared_load_wavefronts_per_load", "shared_store_wavefronts_per_store",
                  "global_store_requests", "store_sectors_per_request")
        if all(v in h and all(isinstance(h[v].get(k), numbers.Real) for k in needed)
               for v in (VEC4_ONLY, VEC4_FLIP, scalar)):
            lines.append(
                f"  Nsight Compute ({hw.gpu}, {h[VEC4_FLIP]['n']} x {h[VEC4_FLIP]['n']}): passes "
                "per shared load / store: padding only "
                f"{h[VEC4_ONLY]['shared_load_wavefronts_per_load']:.2f} / "
                f"{h[VEC4_ONLY]['shared_store_wavefronts_per_store']:.2f}, with the flip "
                f"{h[VEC4_FLIP]['shared_load_wavefronts_per_load']:.2f} / "
                f"{h[VEC4_FLIP]['shared_store_wavefronts_per_store']:.2f}; global store "
                f"requests {h[VEC4_FLIP]['global_store_requests']:,.0f} against "
                f"{h[scalar]['global_store_requests']:,.0f} for {scalar!r} "
                f"({h[VEC4_FLIP]['store_sectors_per_request']:.0f} sectors each against "
                f"{h[scalar]['store_sectors_per_request']:.0f})")
            if all(isinstance(h[v].get(k), numbers.Real) for v in (VEC4_ONLY, VEC4_FLIP)
                   for k in ("shared_pipe_pct", "dram_pct")):
                lines.append("  busy, % of peak over the kernel's time: shared memory's data pipe "
                             + ", ".join(f"{name} {h[v]['shared_pipe_pct']:.0f}%" for name, v in
                                         (("padding only", VEC4_ONLY), ("flip", VEC4_FLIP)))
                             + "; DRAM " + ", ".join(f"{name} {h[v]['dram_pct']:.0f}%" for name, v in
                                                     (("padding only", VEC4_ONLY), ("flip", VEC4_FLIP))))
                pipe, dram = h[VEC4_ONLY]["shared_pipe_pct"], h[VEC4_ONLY]["dram_pct"]
                # read from the conflicted layout: if DRAM is the busier unit even there, the
                # conflicts were not the bound, and removing them can only free shared memory
                lines.append(
                    f"  with the conflicts (padding only) DRAM was the busier unit ({dram:.0f}% "
                    f"against {pipe:.0f}%): DRAM bounds this kernel, not shared memory"
                    if dram > pipe else
                    f"  with the conflicts (padding only) shared memory's data pipe was the "
                    f"busier unit ({pipe:.0f}% against DRAM's {dram:.0f}%): the conflicts are "
                    "on the kernel's critical path")
        else:
            lines.append(f"  The Nsight Compute record of {hw.gpu} has no complete 16-byte rows "
                         "(record profiling_transpose again on that GPU).")
    text = "\n".join(lines)
    print(text)
    return text


N_COPY = 2**28  # 1 GiB of float32, the size of the device-to-device ceiling's copy
COPY_LADDER = (
    # label, version, ilp, blocks_per_sm (None: as many blocks as the data needs)
    ("one element per thread", "one_per_thread", 1, None),
    ("grid-stride, 1 load in flight", "grid_stride", 1, 8),
    ("grid-stride, 2 loads in flight", "ilp", 2, 8),
    ("grid-stride, 4 loads in flight", "ilp", 4, 8),
    ("grid-stride, 8 loads in flight", "ilp", 8, 8),
    ("16-byte loads, grid-stride", "vec4", 1, 8),
    ("16-byte loads, 2 in flight, grid-stride", "vec4", 2, 8),
    ("16-byte loads, grid sized to the data", "vec4", 1, None),
    ("16-byte loads, 2 in flight, grid sized to the data", "vec4", 2, None),
)


def _copy_kernel(version: str, ilp: int):
    from . import gridstride

    return {"one_per_thread": gridstride.copy_one_per_thread,
            "grid_stride": gridstride.copy_grid_stride,
            "ilp": make_copy_ilp(ilp), "vec4": make_copy_vec4(ilp)}[version]


@experiment("coalescing_copy_ladder", chapter="coalescing",
            title="Copying 1 GiB of float32: from one element per thread to the copy ceiling",
            units={**_BW_UNITS, "bytes_per_thread_in_flight": "B"})
def copy_ladder_experiment(progress):
    src = _device_data(N_COPY)
    dst = cuda.device_array_like(src)
    rows = []
    for label, version, ilp, per_sm in COPY_LADDER:
        grid, block = copy_launch(N_COPY, version=version, ilp=ilp, blocks_per_sm=per_sm)
        # The kernel itself, not the host wrapper: its checks would add ~50 us per call.
        t = _time_launch(_copy_kernel(version, ilp), grid, block, src, dst, min_time=0.2)
        per_load = 16 if version == "vec4" else 4
        rows.append(_copy_row(8 * N_COPY, t, version=label, kernel=version, ilp=ilp,
                              blocks=grid, block=block,
                              bytes_per_thread_in_flight=ilp * per_load))
        progress(f"copy {label}: {rows[-1]['gbps']:.0f} GB/s ({rows[-1]['pct_copy']:.0f}%)")
        if not np.array_equal(dst[-4096:].copy_to_host(), src[-4096:].copy_to_host()):
            raise AssertionError(f"the copy {label!r} produced a wrong result")
    t = bench.time_kernel(lambda: dst.copy_to_device(src), min_time=0.2)
    rows.append(_copy_row(8 * N_COPY, t, version="Numba copy_to_device (cuMemcpyDtoD)",
                          kernel="memcpy", ilp=None, blocks=None, block=None,
                          bytes_per_thread_in_flight=None))
    try:  # the runtime's cudaMemcpy, through CuPy when it is installed
        import cupy
    except ImportError:
        return rows
    a, b = cupy.asarray(src), cupy.asarray(dst)  # zero-copy views of the same memory
    nbytes = 4 * N_COPY
    t = bench.time_kernel(lambda: cupy.cuda.runtime.memcpyAsync(
        b.data.ptr, a.data.ptr, nbytes, cupy.cuda.runtime.memcpyDeviceToDevice, 0),
        min_time=0.2)  # stream 0: the legacy default stream, where the events are recorded
    rows.append(_copy_row(8 * N_COPY, t, version="cudaMemcpyAsync (CuPy)", kernel="memcpy",
                          ilp=None, blocks=None, block=None, bytes_per_thread_in_flight=None))
    return rows


@experiment("coalescing_copy_tuning", chapter="coalescing",
            title="16-byte-load copy of 1 GiB: loads in flight x block size x blocks per SM",
            units=_BW_UNITS)
def copy_tuning_experiment(progress):
    src = _device_data(N_COPY)
    dst = cuda.device_array_like(src)

    def measure(ilp, block, blocks_per_sm):
        grid, blk = copy_launch(N_COPY, version="vec4", ilp=ilp, block=block,
                                blocks_per_sm=blocks_per_sm or None)
        kernel = make_copy_vec4(ilp)
        t = _time_launch(kernel, grid, blk, src, dst, min_time=0.05)
        return _copy_row(8 * N_COPY, t, blocks=grid)

    # blocks_per_sm=0 means "as many blocks as the data needs" (one round per thread).
    return bench.sweep(measure, {"ilp": [1, 2, 4], "block": [128, 256, 512, 1024],
                                 "blocks_per_sm": [1, 2, 4, 8, 16, 0]},
                       label="vec4 copy", progress=progress)


PTX_TARGETS.append((fill_pseudorandom, "void(float32[::1], int64)"))
PTX_TARGETS.append((fill_pseudorandom, "void(float64[::1], int64)"))


# =========================================================================== exercises

REMAP_BLOCK = 128  # the launch the remap exercise uses: 1-D, ceil(rows * cols / 128) blocks
# The remap exercise's speed bar on a GPU: this share of a device-to-device copy measured in
# the same check. One element per thread and a division each keep even the right answer
# well below a plain copy: on an H100 the chapter's solution read 55% of the copy and the
# uncoalesced kernel 11% (one run, 2026-11-26); a GPU with more bandwidth per SM reads less.
REMAP_SPEED_TARGET = 0.35


@cuda.jit
def scale_rows_uncoalesced(x, w, out):
    """out[r, c] = x[r, c] * w[r], one thread per element, threads numbered down the
    columns (i -> r = i % rows): consecutive threads are a whole row apart in memory."""
    i = cuda.grid(1)
    rows, cols = x.shape
    if i < rows * cols:
        r = i % rows
        c = i // rows
        out[r, c] = x[r, c] * w[r]


# The chapter hands this wrong kernel to the remap checker to show what it rejects; a
# course example, so the checker judges it on its accesses, not on where it came from.
scale_rows_uncoalesced.course_example = True


def _remap_launch(kernel, x, w, out):
    n = x.shape[0] * x.shape[1]
    kernel[-(-n // REMAP_BLOCK), REMAP_BLOCK](x, w, out)


def _time_on_gpu(kernel, grid, block, *args) -> float:
    return _time_launch(kernel, grid, block, *args, min_time=0.05).median_ms


_LAYOUT_MISTAKES = {  # (layout, fields, used, elem_bytes) -> a slip's answer, and its name
    "an array of structures is fetched in sectors, not in the bytes a warp uses: count the "
    "distinct 32-byte sectors that hold a field the warp reads":
        lambda lay, F, u, E: u * E if lay == "AoS" else None,
    "the sector model counts only the sectors that hold a field the warp reads: a struct "
    "larger than a sector is not read whole":
        lambda lay, F, u, E: F * E if lay == "AoS" else None,
    "a structure of arrays reads only the fields used, each one contiguous":
        lambda lay, F, u, E: F * E if lay == "SoA" else None,
    "that is the warp's bytes: divide by its 32 particles":
        lambda lay, F, u, E: WARP * _layout_read_bytes(lay, F, u, E),
    "lanes whose fields share a sector share its fetch: count each of the warp's sectors once":
        lambda lay, F, u, E: SECTOR_BYTES * len({(f * E) // SECTOR_BYTES for f in range(u)})
        if lay == "AoS" else None,
}


@ex.refuses_stubs(solved_by=("_layout_read_bytes", "aos_model_bytes"))
def check_layout_bytes(fn) -> ex.Report:
    """Check ``fn(layout, fields, used, elem_bytes)``: the sector model's DRAM bytes per
    particle when a warp reads fields 0 to used - 1 of 32 consecutive particles stored as
    ``layout`` ("AoS" or "SoA"), for structs smaller than, equal to and larger than a sector."""
    chk = ex.Checker("bytes per particle that a layout moves, by the sector model")
    if not callable(fn):
        chk.fail(f"expected a function fn(layout, fields, used, elem_bytes), got "
                 f"{type(fn).__name__}.")
        return chk.report()
    rng = ex.case_rng(12)
    cases = [("AoS", 8, 1, 4), ("AoS", 8, 8, 4), ("SoA", 8, 3, 4), ("AoS", 16, 1, 4),
             ("AoS", 16, 9, 4), ("AoS", 2, 1, 4), ("AoS", 3, 2, 4), ("SoA", 4, 2, 8),
             ("AoS", 4, 3, 8), ("AoS", 64, 1, 2), ("SoA", 5, 5, 1), ("AoS", 5, 5, 1)]
    fields = int(rng.integers(1, 40))
    cases.append((str(rng.choice(AOS_LAYOUTS)), fields, int(rng.integers(1, fields + 1)),
                  int(rng.choice([1, 2, 4, 8]))))
    for layout, F, u, E in cases:
        with chk.case(f'layout="{layout}", fields={F}, used={u}, elem_bytes={E}'):
            got = fn(layout, F, u, E)
            want = _layout_read_bytes(layout, F, u, E)
            if isinstance(got, (bool, np.bool_)) or not isinstance(
                    got, (int, float, np.integer, np.floating)):
                chk.fail(f"returned {type(got).__name__}; return a number of bytes.")
                continue
            if abs(got - want) > 1e-9 * want:
                named = [h for h, f in _LAYOUT_MISTAKES.items()
                         if f(layout, F, u, E) is not None and f(layout, F, u, E) != want
                         and abs(got - f(layout, F, u, E)) <= 1e-9 * want]
                hint = named[0] if len(named) == 1 else None
                chk.fail(f"got {got:g} bytes per particle, expected {want:g}"
                         + (f": {hint}." if hint else "."))
    return chk.report()


def compare_layout_bytes(fn, res) -> list[dict]:
    """The predict-then-measure half of ``ex-coalescing-layout-bytes``: for every field
    count of ``res`` (``coalescing_aos_soa``), the AoS-to-SoA ratio of bytes per particle
    that ``fn(layout, fields, used, elem_bytes)`` predicts (plus the 4-byte output both
    write) beside the ratio of the times measured. Prints one line per count; returns the
    rows."""
    validate.function(fn, "fn", what="your model fn(layout, fields, used, elem_bytes)")
    validate.result(res, "res")
    for c in ("layout", "used", "ms"):
        validate.column(res, c, "res column")
    print(f"AoS against SoA on {res.gpu}: the ratio your model predicts (bytes per particle, "
          "with the 4-byte output), and the ratio of the times")
    rows = []
    for used in res.values("used"):
        nbytes = {}
        for layout in AOS_LAYOUTS:
            got = fn(layout, AOS_FIELDS, used, 4)
            if isinstance(got, (bool, np.bool_)) or not isinstance(
                    got, (int, float, np.integer, np.floating)) or not got >= 0:
                raise ValueError(f'fn("{layout}", {AOS_FIELDS}, {used}, 4) returned {got!r}: '
                                 "return a number of bytes (check it with "
                                 "co.check_layout_bytes first).")
            nbytes[layout] = float(got) + 4
        predicted = nbytes["AoS"] / nbytes["SoA"]
        measured = res.one(layout="AoS", used=used)["ms"] / res.one(layout="SoA", used=used)["ms"]
        rows.append({"used": used, "predicted": predicted, "measured": measured})
        print(f"{used} of {AOS_FIELDS} fields: predicted {predicted:.2f}x, measured {measured:.2f}x "
              f"(measured / predicted {measured / predicted:.2f})")
    return rows


@ex.refuses_stubs
def check_remap(kernel) -> ex.Report:
    """Check a coalesced ``kernel(x, w, out)`` computing ``out[r, c] = x[r, c] * w[r]``.

    Launched like ``scale_rows_uncoalesced``: 1-D, ``REMAP_BLOCK`` threads per block, one
    thread per element. First a dry run in the thread emulator (a kernel that would fault
    is never launched), then correct at awkward shapes, then, traced warp by warp in the
    emulator (with or without a GPU), the loads of ``x`` and the stores to ``out`` must be
    coalesced: 4 sectors per warp request. On a GPU it also times the kernel at 4096 x 4096:
    clearly faster than the uncoalesced one, and at least ``REMAP_SPEED_TARGET`` of a
    device-to-device copy measured in the same check.
    """
    chk = ex.Checker("remap threads to data (scale rows, coalesced)")
    if not chk.is_kernel(kernel):
        return chk.report()
    x, w = ex.random_array((7, 40), 20), ex.random_array(7, 21)
    if not ex.preflight(chk, kernel, -(-7 * 40 // REMAP_BLOCK), REMAP_BLOCK, x, w,
                        ex.poisoned((7, 40))):
        return chk.report()
    shapes = [(1, 1), (1, 33), (31, 1), (7, 40), (33, 31), (3, 257)]
    shapes += [tuple(ex.hidden_sizes(1, 300))] if ex.grading() else []  # unseen, graded
    for seed in ex.seeds():
        for rows, cols in shapes if seed == 0 else shapes[3:5]:
            with chk.case(f"{rows} x {cols}", seed):
                x = ex.random_array((rows, cols), seed)
                w = ex.random_array(rows, seed + 10)
                out = ex.poisoned((rows, cols))
                _remap_launch(kernel, x, w, out)
                chk.compare(out, x.astype(np.float64) * w[:, None].astype(np.float64))
    names = emulator._param_names(kernel)
    if len(names) == 3:
        with chk.case("coalescing, traced warp by warp in the emulator (32 x 32)"):
            x, w, out = ex.random_array((32, 32), 3), ex.random_array(32, 4), ex.poisoned((32, 32))
            tr = trace(kernel, -(-1024 // REMAP_BLOCK), REMAP_BLOCK, x, w, out)
            for name, what in ((names[0], f"loads of {names[0]}"),
                               (names[2], f"stores to {names[2]}")):
                eff = tr.efficiency(array=name)
                if eff is None:
                    chk.fail(f"your kernel never touches {name}.")
                elif eff < 0.99:
                    chk.fail(f"your {what} touch {tr.sectors_per_request(array=name):.1f} "
                             f"sectors per warp request ({eff:.0%} of the bytes moved are "
                             "used); a coalesced warp touches 4. Number the threads along "
                             "the rows: consecutive i must be consecutive elements of a row.")
    if not SIMULATOR:
        with chk.case("speed on this GPU (4096 x 4096)"):
            x = cuda.to_device(ex.random_array((4096, 4096), 5))
            w = cuda.to_device(ex.random_array(4096, 6))
            out = cuda.device_array((4096, 4096), np.float32)
            grid = -(-4096 * 4096 // REMAP_BLOCK)
            mine = _time_on_gpu(kernel, grid, REMAP_BLOCK, x, w, out)
            slow = _time_on_gpu(scale_rows_uncoalesced, grid, REMAP_BLOCK, x, w, out)
            chk.note(ex.bandwidth_line(mine, slow, 2 * 4 * 4096 * 4096,
                                       reference_name="the uncoalesced kernel"))
            chk.expect(mine < 0.6 * slow, "your kernel is not clearly faster than the "
                       "uncoalesced one: are consecutive threads reading consecutive elements?")
        ex.speed_against_copy(
            chk, lambda: _remap_launch(kernel, x, w, out), 2 * 4 * 4096 * 4096,
            target=REMAP_SPEED_TARGET, what="your kernel (4096 x 4096)",
            advice="number the threads along the rows, and keep the index arithmetic per "
                   "element small (one division by the row length, no more).")
    else:
        ex.speed_not_measured(chk, f"a clear lead over the uncoalesced kernel and "
                                   f"{REMAP_SPEED_TARGET:.0%} of a device-to-device copy at "
                                   f"4096 x 4096")
    return chk.report()


EXERCISE_TILE = 32  # the padded-transpose exercise: 32 x 32 tiles,
EXERCISE_BLOCK_ROWS = 8  # blocks of 32 x 8 threads (4 elements per thread)


def _transpose_launch(kernel, a, out):
    rows, cols = a.shape
    t = EXERCISE_TILE
    kernel[(-(-cols // t), -(-rows // t)), (t, EXERCISE_BLOCK_ROWS)](a, out)


def _check_tile_trace(chk, tr, accesses) -> None:
    """What a tiled transpose's trace must show: every (array, what) of ``accesses``
    coalesced, a shared tile, no bank conflict, no race."""
    t = EXERCISE_TILE
    for name, what in accesses:
        eff = tr.efficiency(array=name)
        if eff is not None and eff < 0.99:
            chk.fail(f"your {what} touch {tr.sectors_per_request(array=name):.1f} "
                     f"sectors per warp request ({eff:.0%} of the bytes moved are "
                     "used): both the read and the write must go along rows, with "
                     "the turn made in shared memory.")
    if not tr.select(space="shared"):
        chk.fail("your kernel never uses shared memory: without a tile, either the "
                 "read or the write of a transpose is strided.")
    conflict = tr.max_bank_conflict()
    if conflict > 1:
        chk.fail(f"a warp's shared-memory access hits one bank {conflict} times "
                 f"({conflict}-way bank conflict): reading a column of a "
                 f"{t}-wide tile puts every lane on the same bank. Pad each row "
                 f"by one element: shape ({t}, {t} + 1).")
    races = tr.run.describe_races(1)
    if races:
        chk.fail(f"a data race: {races[0]} On a GPU these threads run at the same "
                 "time: fill the whole tile, cuda.syncthreads(), then read it.")


@ex.refuses_stubs
def check_padded_transpose(kernel) -> ex.Report:
    """Check a tiled, padded transpose ``kernel(a, out)`` (``out = a.T``).

    Launched with ``EXERCISE_TILE`` x ``EXERCISE_TILE`` tiles, blocks of
    ``(EXERCISE_TILE, EXERCISE_BLOCK_ROWS)`` threads and grid ``(ceil(cols / TILE),
    ceil(rows / TILE))``. First a dry run in the thread emulator at 3 x 33 (out-of-bounds
    stores and barriers that threads leaving early never reach are refused before any GPU
    launch), then correct at awkward shapes; then, traced in the emulator (with or without
    a GPU), coalesced global loads and stores, a shared tile, and no bank conflicts. On a
    GPU it also times the kernel.
    """
    chk = ex.Checker("tiled transpose with padding", race_note=True)
    if not chk.is_kernel(kernel):
        return chk.report()
    chk.calls(kernel, "numba.cuda:syncthreads",
              why="the kernel never calls cuda.syncthreads(): threads would read the tile "
                  "before the others have written it.")
    t = EXERCISE_TILE
    # 3 rows: most threads of the block are below the matrix; 33 columns: a second block
    # with one column. A kernel that returns early for them misses the barrier.
    if not ex.preflight(chk, kernel, (2, 1), (t, EXERCISE_BLOCK_ROWS),
                        ex.random_array((3, 33), 30), ex.poisoned((33, 3))):
        return chk.report()
    shapes = [(1, 1), (32, 32), (31, 33), (33, 64), (65, 40)]
    shapes += [tuple(ex.hidden_sizes(1, 100))[::-1]] if ex.grading() else []  # unseen
    for seed in ex.seeds():
        for rows, cols in shapes if seed == 0 else shapes[2:4]:
            with chk.case(f"{rows} x {cols}", seed):
                a = ex.random_array((rows, cols), seed)
                out = ex.poisoned((cols, rows))
                _transpose_launch(kernel, a, out)
                chk.compare(out, a.T.astype(np.float64))
    names = emulator._param_names(kernel)
    if len(names) == 2:
        with chk.case("memory behaviour, traced warp by warp in the emulator (64 x 64)"):
            a, out = ex.random_array((64, 64), 7), ex.poisoned((64, 64))
            tr = trace(kernel, (64 // t, 64 // t), (t, EXERCISE_BLOCK_ROWS), a, out)
            _check_tile_trace(chk, tr, ((names[0], f"loads of {names[0]}"),
                                        (names[1], f"stores to {names[1]}")))
    if not SIMULATOR:
        with chk.case("speed on this GPU (8192 x 8192)"):
            n = 8192
            a = _device_data(n * n).reshape(n, n)
            out = cuda.device_array((n, n), np.float32)
            grid, block = (n // t, n // t), (t, EXERCISE_BLOCK_ROWS)
            mine = _time_on_gpu(kernel, grid, block, a, out)
            ref = _time_on_gpu(make_transpose(t, EXERCISE_BLOCK_ROWS, 1), grid, block, a, out)
            chk.note(ex.bandwidth_line(mine, ref, 8 * n * n,
                                       reference_name="the chapter's padded transpose"))
    return chk.report()


def _inplace_launch(kernel, a):
    t = EXERCISE_TILE
    n = a.shape[0]
    kernel[(-(-n // t), -(-n // t)), (t, EXERCISE_BLOCK_ROWS)](a)


@ex.refuses_stubs(solved_by=("make_transpose", "transpose", "transpose_naive"))
def check_inplace_transpose(kernel) -> ex.Report:
    """Check an in-place tiled transpose ``kernel(a)`` of a square float32 matrix.

    Launched with blocks of ``(EXERCISE_TILE, EXERCISE_BLOCK_ROWS)`` threads and a grid of
    ``(ceil(n / TILE), ceil(n / TILE))``: block (bx, by) with bx > by swaps tiles (by, bx) and
    (bx, by), a block on the diagonal turns its own tile, the others do nothing. A dry run
    in the emulator at n = 33, then correct at awkward sizes, then traced (64 x 64):
    coalesced loads and stores, a shared tile, no bank conflicts, no races.
    """
    chk = ex.Checker("in-place tiled transpose", race_note=True)
    if not chk.is_kernel(kernel):
        return chk.report()
    if not ex.uses(kernel, "numba.cuda:syncthreads"):
        chk.fail("the kernel never calls cuda.syncthreads(): threads would write a tile "
                 "back before the others have read it.")
    t = EXERCISE_TILE
    if not ex.preflight(chk, kernel, (2, 2), (t, EXERCISE_BLOCK_ROWS), ex.random_array((33, 33), 30)):
        return chk.report()
    sizes = [1, 31, 32, 33, 64, 65, 100, *ex.hidden_sizes(2, 130)]
    for seed in ex.seeds():
        for n in sizes if seed == 0 else sizes[2:5]:
            with chk.case(f"{n} x {n}", seed):
                a = ex.random_array((n, n), seed)
                want = a.T.astype(np.float64)
                _inplace_launch(kernel, a)
                chk.compare(a, want)
    if len(emulator._param_names(kernel)) == 1:
        name = emulator._param_names(kernel)[0]
        with chk.case("memory behaviour, traced warp by warp in the emulator (64 x 64)"):
            a = ex.random_array((64, 64), 7)
            tr = trace(kernel, (64 // t, 64 // t), (t, EXERCISE_BLOCK_ROWS), a)
            _check_tile_trace(chk, tr, ((name, f"accesses to {name}"),))
    if not SIMULATOR and chk.report_.ok:
        with chk.case("speed on this GPU (8192 x 8192)"):
            n = 8192
            a = _device_data(n * n).reshape(n, n)
            out = cuda.device_array((n, n), np.float32)
            grid, block = (n // t, n // t), (t, EXERCISE_BLOCK_ROWS)
            mine = _time_on_gpu(kernel, grid, block, a)
            ref = _time_on_gpu(make_transpose(t, EXERCISE_BLOCK_ROWS, 1), grid, block, a, out)
            chk.note(ex.bandwidth_line(mine, ref, 8 * n * n,
                                       reference_name="the chapter's padded transpose "
                                                      "(out of place)"))
    return chk.report()


PTX_TARGETS.append((scale_rows_uncoalesced, "void(float32[:, ::1], float32[::1], float32[:, ::1])"))
