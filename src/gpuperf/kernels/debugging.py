"""Profiling, sanitizing and debugging: kernels with planted bugs, what the tools say, checkers.

Kernels
-------
``smooth_racy``: a three-point average (``out[i] = (x[i-1] + x[i] + x[i+1]) / 3``, the ends
clamped) through a shared tile with a halo, with the barrier between filling the tile and
reading it missing: a thread reads its neighbours' slots before they have written them.
``smooth``: the same with the barrier.
``copy_unguarded``: ``out[i] = x[i]`` with no bounds test, launched on whole blocks: the
threads past the end read and write out of bounds.

Experiments (``gpuperf.profiling`` runs the tools)
------------------------------------------------
``profiling_sanitizer``: compute-sanitizer's racecheck, memcheck and synccheck on the planted
bugs (and on the fixed smoothing kernel), with whether the result came out right anyway.
``profiling_speed_of_light``: Nsight Compute's Speed-of-Light percentages and the warp stall
reasons for eight course kernels: the data for "what limits this kernel?".
"""

from __future__ import annotations

import numpy as np
from numba import cuda, float32

from .. import exercises as ex
from .. import profiling
from .. import validate as v
from ..records import experiment

SMOOTH_BLOCK = 128  # threads per block of the smoothing kernels
SMOOTH_TILE = SMOOTH_BLOCK + 2  # the block's elements and a halo of one on each side


@cuda.jit
def smooth_racy(x, out):
    tile = cuda.shared.array(SMOOTH_TILE, float32)  # a shape must be a constant
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * SMOOTH_BLOCK + t
    n = x.size
    tile[t + 1] = x[min(i, n - 1)]  # past the end: the last element again (a clamped edge)
    if t == 0:
        tile[0] = x[max(i - 1, 0)]
    if t == SMOOTH_BLOCK - 1:
        tile[SMOOTH_BLOCK + 1] = x[min(i + 1, n - 1)]
    # BUG: no cuda.syncthreads() here. tile[t] and tile[t + 2] are written by other threads,
    # which may not have run yet.
    if i < n:
        out[i] = (tile[t] + tile[t + 1] + tile[t + 2]) / float32(3.0)


@cuda.jit
def smooth(x, out):
    tile = cuda.shared.array(SMOOTH_TILE, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * SMOOTH_BLOCK + t
    n = x.size
    tile[t + 1] = x[min(i, n - 1)]
    if t == 0:
        tile[0] = x[max(i - 1, 0)]
    if t == SMOOTH_BLOCK - 1:
        tile[SMOOTH_BLOCK + 1] = x[min(i + 1, n - 1)]
    cuda.syncthreads()  # every slot of the tile is written before any thread reads one
    if i < n:
        out[i] = (tile[t] + tile[t + 1] + tile[t + 2]) / float32(3.0)


@cuda.jit
def copy_unguarded(x, out):
    i = cuda.grid(1)
    out[i] = x[i]  # BUG: no `if i < x.size`: the last block's extra threads go out of bounds


_PAIR = "void(float32[::1], float32[::1])"
PTX_TARGETS = [(smooth_racy, _PAIR), (smooth, _PAIR), (copy_unguarded, _PAIR)]


def smooth_reference(x) -> np.ndarray:
    """The three-point average of ``x`` in float64, the ends clamped (x[-1] := x[0],
    x[n] := x[n-1])."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"x must be a non-empty 1-D array, not shape {x.shape}.")
    padded = np.concatenate([x[:1], x, x[-1:]])
    return (padded[:-2] + padded[1:-1] + padded[2:]) / 3


def smooth_grid(n: int) -> int:
    """Blocks of ``SMOOTH_BLOCK`` threads for ``n`` elements: one thread per element."""
    n = v.positive_int(n, "n")
    return -(-n // SMOOTH_BLOCK)


# --------------------------------------------------------------------------- experiments

# (label, tool, launch, args): each a process of its own under compute-sanitizer.
SANITIZED = (
    ("smooth_racy", "racecheck", "smooth", (1, 1000)),
    ("smooth", "racecheck", "smooth", (0, 1000)),
    ("copy_unguarded", "memcheck", "copy_unguarded", (1000,)),
    ("tiled_early_return", "synccheck", "matmul_early_return", (33,)),
    ("tiled_early_return", "racecheck", "matmul_early_return", (33,)),
)


@experiment("profiling_sanitizer", chapter="profiling",
            title="compute-sanitizer on planted bugs: a missing barrier, an unguarded tail, "
                  "an early return before a barrier")
def sanitizer_experiment(progress) -> list[dict]:
    rows = []
    for label, tool, launch, args in SANITIZED:
        progress(f"compute-sanitizer --tool {tool} on {label}")
        found = profiling.sanitize(tool, launch, *args)
        rows.append({"kernel": label, "tool": tool, "n": args[-1], **found})
        progress(f"   {found['errors']} error(s), {found['warnings']} warning(s); result "
                 f"{'right' if found['correct'] else 'WRONG'}")
    return rows


# (label, launch, args, kernel name): kernels of chapters 2 to 6, each a process of its own.
SPEED_OF_LIGHT_KERNELS = (
    ("copy, stride 1", "stride", (1, 1 << 26), "copy_strided"),
    ("copy, stride 32", "stride", (32, 1 << 23), "copy_strided"),
    ("naive transpose", "transpose", (-1, 4096), "transpose_naive"),
    ("sum, 1 load per thread, 8 warps per SM", "sum_loads", (1, 8), "sum_loads"),
    ("reduce v1", "reduce", ("v1", 256, 1 << 24), "reduce_v1"),
    ("reduce v8", "reduce", ("v8", 256, 1 << 26), "reduce_v8"),
    ("tiled matmul, tile 32", "matmul", ("tiled", 32, 1, 4096), "tiled"),
    ("register-tiled matmul", "matmul", ("regtile_pipelined", 0, 0, 4096), "regtile"),
)


@experiment("profiling_speed_of_light", chapter="profiling",
            title="Speed of Light and stall reasons of eight course kernels (Nsight Compute)",
            units={"sm_pct": "% of peak", "memory_pct": "% of peak", "dram_pct": "% of peak",
                   "l1_pct": "% of peak", "l2_pct": "% of peak", "fma_pct": "% of peak",
                   "occupancy_pct": "%", "duration_ns": "ns"})
def speed_of_light_experiment(progress) -> list[dict]:
    rows = []
    for label, launch, args, kernel in SPEED_OF_LIGHT_KERNELS:
        progress(f"ncu on {label}")
        m = profiling.profile(launch, *args, kernel=kernel, metrics=profiling.SOL_METRICS,
                              launch_count=3)  # the longest: a reduction's first stage
        rows.append({"kernel": label, **profiling.speed_of_light(m)})
    return rows



# --------------------------------------------------------------------------- the emulator

def find_races(kernel, n: int = 300, *, limit: int = 3) -> list[str]:
    """The course's own racecheck, with or without a GPU: run a smoothing ``kernel(x, out)``
    on ``n`` random floats in the thread emulator, recording every access, and return the
    data races it saw as plain sentences (an empty list: none)."""
    from .. import emulator

    v.kernel(kernel, "kernel")
    n = v.positive_int(n, "n", maximum=1 << 14)
    x, out = ex.random_array(n, 7), ex.poisoned(n)
    run = emulator.launch(kernel, smooth_grid(n), SMOOTH_BLOCK, x, out)
    return run.describe_races(limit)


# --------------------------------------------------------------------------- what limits it

LIMITERS = ("dram", "l2", "l1", "compute", "latency")
BUSY_PCT = 60.0  # Nsight Compute's own line: below it on both sides, look for latency


# The exercise's answer is a dict, so the checker cannot read how it was made: calls of
# limiter() from outside check_limiters are counted instead, and an answer given in a session
# that called it is refused (found by a reviewer playing a student).
_LIMITER_CALLS = {"outside": 0, "checking": False}


def _forget_limiter_calls() -> None:
    """Reset the count of limiter() calls made outside the checker (for the tests)."""
    _LIMITER_CALLS["outside"] = 0


def limiter(row: dict) -> str:
    """What limits a kernel, read off its Speed-of-Light row (``profiling_speed_of_light``):
    "latency" when neither the SM nor memory reaches ``BUSY_PCT`` % of its peak; otherwise
    "compute" when the SM is the busier side, or the busiest level of memory ("dram", "l2"
    or "l1", which includes shared memory).

    This is the answer to the chapter's first exercise: a session that calls it has its
    answer to that exercise refused by ``check_limiters``."""
    if not isinstance(row, dict):
        raise TypeError(f"row must be a dict (a row of profiling_speed_of_light), not "
                        f"{type(row).__name__}.")
    need = ("sm_pct", "memory_pct", "dram_pct", "l2_pct", "l1_pct")
    missing = [k for k in need if k not in row]
    if missing:
        raise ValueError(f"row has no {missing[0]}: give a row of profiling_speed_of_light "
                         f"(it needs {', '.join(need)}).")
    if not _LIMITER_CALLS["checking"]:
        _LIMITER_CALLS["outside"] += 1
    if max(row["sm_pct"], row["memory_pct"]) < BUSY_PCT:
        return "latency"
    if row["sm_pct"] > row["memory_pct"]:
        return "compute"
    return max(("dram", "l2", "l1"), key=lambda level: row[f"{level}_pct"])


_WHY = {
    "latency": "neither the SM ({sm_pct:.0f}%) nor memory ({memory_pct:.0f}%) reaches {busy:.0f}% "
               "of its peak: the warps are waiting, not the hardware busy",
    "compute": "the SM ({sm_pct:.0f}%) is busier than memory ({memory_pct:.0f}%)",
    "dram": "memory ({memory_pct:.0f}%) is the busier side, and of its levels DRAM "
            "({dram_pct:.0f}%) the busiest",
    "l2": "memory ({memory_pct:.0f}%) is the busier side, and of its levels the L2 "
          "({l2_pct:.0f}%) the busiest",
    "l1": "memory ({memory_pct:.0f}%) is the busier side, and of its levels L1 and shared "
          "memory ({l1_pct:.0f}%) the busiest",
}


def check_limiters(answer, res=None) -> ex.Report:
    """Check ``answer``: {kernel: limiter} for every kernel of ``profiling_speed_of_light``
    (the recorded reference GPU's, or ``res``), each one of ``LIMITERS``."""
    from .. import records

    chk = ex.Checker("what limits each kernel (Speed of Light)")
    res = records.run("profiling_speed_of_light", live=False) if res is None else res
    v.result(res)
    if not isinstance(answer, dict):
        chk.fail(f"answer must be a dict {{kernel name: limiter}}, not {type(answer).__name__}.")
        return chk.report()
    if not answer or all(val is None for val in answer.values()):
        return ex.not_implemented("what limits each kernel (Speed of Light)", "answer",
                                  "give every kernel of the table one of "
                                  + ", ".join(map(repr, LIMITERS)) + ".")
    if _LIMITER_CALLS["outside"]:
        return ex._one_line_failure(
            "what limits each kernel (Speed of Light)", "answer",
            "this session called gp.debugging.limiter, the course's own answer to this "
            "exercise: read the table yourself. Restart the kernel (Kernel > Restart) and run "
            "the chapter again without it.")
    names = [r["kernel"] for r in res.rows]
    unknown = [k for k in answer if k not in names]
    if unknown:
        chk.fail(f"answer names {unknown[0]!r}, which is not a kernel of the table; the "
                 f"kernels are: {', '.join(names)}.")
    for r in res.rows:
        with chk.case(r["kernel"]):
            got = answer.get(r["kernel"])
            _LIMITER_CALLS["checking"] = True
            try:
                want = limiter(r)
            finally:
                _LIMITER_CALLS["checking"] = False
            if got is None:
                chk.fail("no answer for this kernel.")
            elif not isinstance(got, str) or got.strip().lower() not in LIMITERS:
                chk.fail(f"{got!r} is not one of {', '.join(map(repr, LIMITERS))}.")
            elif got.strip().lower() != want:
                chk.fail(f"not {got.strip().lower()!r}: "
                         + _WHY[want].format(busy=BUSY_PCT, **r) + ".")
    return chk.report()


# --------------------------------------------------------------------------- the race exercise

def _tile_use(chk: ex.Checker, kernel, n: int) -> None:
    """Trace one launch in the emulator: the kernel must work through shared memory (device
    functions included) and read each element of ``x`` from global memory about once (its
    block's elements and a halo of two), not three times."""
    from .. import emulator

    x, out = ex.random_array(n, 4), ex.poisoned(n)
    try:
        run = emulator.launch(kernel, smooth_grid(n), SMOOTH_BLOCK, x, out)
    except Exception:  # noqa: BLE001 - the dry run above already judged the kernel's faults
        return
    names = emulator._param_names(kernel)
    x_name = names[0] if names else None
    shared_loads = sum(e.space == "shared" and e.kind == "load" for e in run.events)
    x_loads = sum(e.space == "global" and e.kind == "load" and e.array == x_name
                  for e in run.events)
    with chk.case(f"work through the tile (n={n}, traced in the emulator)"):
        if shared_loads == 0:
            chk.fail("your kernel never reads shared memory: the exercise is to fix the race in "
                     "the tiled kernel, not to read x three times from global memory.")
        elif x_loads > n + 4 * smooth_grid(n) + SMOOTH_BLOCK:
            chk.fail(f"your kernel reads x {x_loads} times for {n} elements: each element "
                     "should come from global memory about once (into the tile), and its "
                     "neighbours from the tile.")


@ex.refuses_stubs
def check_smooth(kernel) -> ex.Report:
    """Check a fixed smoothing ``kernel(x, out)``: ``out[i] = (x[i-1] + x[i] + x[i+1]) / 3``
    with the ends clamped, launched with ``SMOOTH_BLOCK`` threads per block and
    ``smooth_grid(n)`` blocks, through a shared tile. A dry run in the thread emulator
    first (races, barriers not reached by every thread, out-of-bounds accesses, and a
    compile for real GPUs), a trace of the shared-memory and global traffic, then sizes
    around the block size, two seeds; ``x`` must come back unchanged."""
    chk = ex.Checker("the smoothing kernel, its race fixed", race_note=True)
    if not chk.is_kernel(kernel):
        return chk.report()
    n0 = 2 * SMOOTH_BLOCK + 45
    if not ex.preflight(chk, kernel, smooth_grid(n0), SMOOTH_BLOCK, ex.random_array(n0, 3),
                        ex.poisoned(n0)):
        return chk.report()
    _tile_use(chk, kernel, n0)
    if chk.report_.failed:
        return chk.report()
    sizes = [1, 2, SMOOTH_BLOCK - 1, SMOOTH_BLOCK, SMOOTH_BLOCK + 1, 3 * SMOOTH_BLOCK + 7, 1000]
    sizes += list(ex.hidden_sizes(2, 5000)) if ex.grading() else []
    for seed in ex.seeds():
        for n in sizes if seed == 0 else sizes[3:]:
            with chk.case(f"n={n}", seed):
                x = ex.random_array(n, seed * 100 + n)
                before = x.copy()
                out = ex.poisoned(n)
                kernel[smooth_grid(n), SMOOTH_BLOCK](x, out)
                if not np.array_equal(x, before):
                    chk.fail("your kernel changed x: it is the input; write only to out.")
                    continue
                # Three float32 terms and a division: a few units in the last place of the
                # largest term, no more (so / 3 and * 0.33333 are told apart).
                scale = float(np.max(np.abs(before)))
                chk.compare(out, smooth_reference(before), rtol=1e-6, atol=2e-6 * scale)
    return chk.report()


def plot_speed_of_light(res, *, title: str = "Speed of Light: how busy each side was"):
    """Each kernel of ``profiling_speed_of_light`` as a point: memory throughput against SM
    throughput, in % of peak, with the ``BUSY_PCT`` lines that split the plane."""
    import matplotlib.pyplot as plt

    from .. import plots

    v.result(res)
    fig, ax = plt.subplots(figsize=(plots.COLUMN_INCHES, 5))
    ax.axvline(BUSY_PCT, color="0.6", ls="--", lw=1)
    ax.axhline(BUSY_PCT, color="0.6", ls="--", lw=1)
    ax.plot([0, 100], [0, 100], color="0.85", lw=1)
    for i, r in enumerate(res.rows):
        ax.plot(r["memory_pct"], r["sm_pct"], "o", color=plots.COLORS[i % len(plots.COLORS)])
        ax.annotate(r["kernel"], (r["memory_pct"], r["sm_pct"]), textcoords="offset points",
                    xytext=(5, 4), fontsize=7)
    ax.text(2, 2, "latency: neither side busy", fontsize=8, color="0.4")
    ax.text(BUSY_PCT + 1, 2, "memory-bound", fontsize=8, color="0.4")
    ax.text(2, 96, "compute-bound", fontsize=8, color="0.4", va="top")
    ax.set(xlim=(0, 100), ylim=(0, 100), xlabel="memory throughput (% of peak)",
           ylabel="SM (compute) throughput (% of peak)")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    plots.source_label(fig, res.label)
    return fig
