"""Tracing a kernel in the course's thread emulator (``gpuperf.emulator``, the same with or
without a GPU): ``trace(kernel, grid, block, *args)`` records every global and shared access,
warp by warp: the sectors each load and store touched and the shared-memory bank conflicts.
The exercises' checkers use it to tell a coalesced kernel from an uncoalesced one."""

from __future__ import annotations

from dataclasses import dataclass

from gpuperf import emulator, validate

from .figures import draw_warp_access, percent
from .models import BANKS, WarpAccess


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
                    percent(r['efficiency']), ""
            out.append(f"{r['line']:>4}  {what:<22} {r['requests']:>8} {sectors:>11} {eff:>10} "
                       f"{conflict:>6}  {r['source']}")
        return "\n".join(out)

    def show(self):
        """Display ``instructions()`` as an HTML table (headers in words); return its Result."""
        from gpuperf.records import Result

        rows = [{"line": r["line"], "access": f"{r['space']} {r['kind']} {r['array']}",
                 "requests": r["requests"],
                 "sectors": "-" if r["space"] == "shared" else round(r["sectors_per_request"], 1),
                 "efficiency": "-" if r["space"] == "shared" else percent(r['efficiency']),
                 "banks": (f"{r['bank_conflict']}-way" if r["bank_conflict"] > 1 else "none")
                 if r["space"] == "shared" else "",
                 "source": r["source"]} for r in self.instructions()]
        res = Result("trace", rows, {}, "live")
        res.show(headers={"line": "source line", "access": "access", "requests": "warp requests",
                          "sectors": "sectors per request", "efficiency": "bytes used / moved",
                          "banks": "bank conflict", "source": "source"})
        return res

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
