"""The chapter's exercise checkers: ``check_limiters`` (what limits each kernel, read off its
Speed-of-Light row; ``limiter`` is the course's answer) and ``check_smooth`` (the smoothing
kernel's race fixed), with the float64 reference ``smooth_reference``."""

from __future__ import annotations

import numpy as np

from gpuperf import exercises as ex
from gpuperf import validate as v

from .kernels import SMOOTH_BLOCK, smooth_grid


def smooth_reference(x) -> np.ndarray:
    """The three-point average of ``x`` in float64, the ends clamped (x[-1] := x[0],
    x[n] := x[n-1])."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"x must be a non-empty 1-D array, not shape {x.shape}.")
    padded = np.concatenate([x[:1], x, x[-1:]])
    return (padded[:-2] + padded[1:-1] + padded[2:]) / 3


# The record's row labels that do not say which kernel was profiled, in words for the page
# (the record keeps its label; the checker accepts either).
KERNEL_WORDS = {"register-tiled matmul": "register tile 8×8, 128×128 block, pipelined"}


def speed_of_light(res=None):
    """``profiling_speed_of_light`` (the recorded reference GPU's, or ``res``) with each
    kernel labelled as the page names it (:data:`KERNEL_WORDS`)."""
    from gpuperf import records

    res = records.run("profiling_speed_of_light", live=False) if res is None else res
    v.result(res)
    rows = [{**r, "kernel": KERNEL_WORDS.get(r["kernel"], r["kernel"])} for r in res.rows]
    return records.Result(res.name, rows, res.meta, res.source)


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
    "compute" when the SM is the busier side; otherwise the level of memory that sets Nsight
    Compute's memory figure (the highest of its own measures of each level): the one of "dram",
    "l2" and "l1" (which includes shared memory) whose own percentage is nearest that figure.
    Not simply the busiest: each level's own percentage comes from other counters, and the L2's
    reads a few points above the memory figure in streaming kernels set by DRAM.

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
    return min(("dram", "l2", "l1"), key=lambda level: abs(row[f"{level}_pct"] - row["memory_pct"]))


_WHY = {
    "latency": "neither the SM ({sm_pct:.0f}%) nor memory ({memory_pct:.0f}%) reaches {busy:.0f}% "
               "of its peak: the warps are waiting, not the hardware busy",
    "compute": "the SM ({sm_pct:.0f}%) is busier than memory ({memory_pct:.0f}%)",
    "dram": "memory ({memory_pct:.1f}%) is the busier side, and DRAM's own figure "
            "({dram_pct:.1f}%) is the level's nearest it: DRAM sets it",
    "l2": "memory ({memory_pct:.1f}%) is the busier side, and the L2's own figure "
          "({l2_pct:.1f}%) is the level's nearest it: the L2 sets it",
    "l1": "memory ({memory_pct:.1f}%) is the busier side, and the own figure of L1 and shared "
          "memory ({l1_pct:.1f}%) is the level's nearest it: they set it",
}


@ex.titled
def check_limiters(answer, res=None) -> ex.Report:
    """Check ``answer``: {kernel: limiter} for every kernel of ``profiling_speed_of_light``
    (the recorded reference GPU's, or ``res``), each one of ``LIMITERS``."""
    from gpuperf import records

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
        return ex.one_line_failure(
            "what limits each kernel (Speed of Light)", "answer",
            "this session called gp.debugging.limiter, the course's own answer to this "
            "exercise: read the table yourself. Restart the kernel (Kernel > Restart) and run "
            "the chapter again without it.")
    res = speed_of_light(res)   # the page's labels; the record's are accepted too
    back = {words: label for label, words in KERNEL_WORDS.items()}
    answer = {(k if k in [r["kernel"] for r in res.rows] else
               KERNEL_WORDS.get(k, back.get(k, k))): val for k, val in answer.items()}
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
            chk.record(got.strip().lower() if isinstance(got, str) else got, want)
            if got is None:
                chk.fail("no answer for this kernel.")
            elif not isinstance(got, str) or got.strip().lower() not in LIMITERS:
                chk.fail(f"{got!r} is not one of {', '.join(map(repr, LIMITERS))}.")
            elif got.strip().lower() != want:
                chk.fail(f"not {got.strip().lower()!r}: "
                         + _WHY[want].format(busy=BUSY_PCT, **r) + ".")
    return chk.report()


def _tile_use(chk: ex.Checker, kernel, n: int) -> None:
    """Trace one launch in the emulator: the kernel must work through shared memory (device
    functions included) and read each element of ``x`` from global memory about once (its
    block's elements and a halo of two), not three times."""
    from gpuperf import emulator

    x, out = ex.random_array(n, 4), ex.poisoned(n)
    try:
        run = emulator.launch(kernel, smooth_grid(n), SMOOTH_BLOCK, x, out)
    except Exception:  # noqa: BLE001 - the dry run above already judged the kernel's faults
        return
    names = emulator.param_names(kernel)
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


_NCU_FLAGS = {"-k": "--kernel-name"}  # the short spelling of a flag, and its long one


def _ncu_options(argv: list[str], n_program: int) -> dict:
    """``--flag value`` and ``--flag=value`` pairs of an ncu command line (before the program's
    ``n_program`` words), by the flag's long name; a flag given alone maps to ``None``."""
    opts, words, i = {}, argv[1:len(argv) - n_program], 0
    while i < len(words):
        word = words[i]
        if "=" in word and word.startswith("--"):
            flag, value = word.split("=", 1)
            i += 1
        elif i + 1 < len(words) and not words[i + 1].startswith("-"):
            flag, value = word, words[i + 1]
            i += 2
        else:
            flag, value = word, None
            i += 1
        opts[_NCU_FLAGS.get(flag, flag)] = value
    return opts


# Names Numba gives kernels (the Python name, then a mangled signature), to try a pattern on.
_NAME_PARTS = ("saxpy", "scan", "tile", "warp", "gemm", "hist", "copy2d", "stencil", "x")
_METRIC_POOL = ("dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum",
                "l1tex__t_bytes.sum", "smsp__inst_executed.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
                "gpu__time_duration.sum")
_NAMED = "{}[abi:v1,cw51cXTLSUwv1sDUaKthqKNjR2jH3fFBgQgyA](Array<float, 1, C, mutable, aligned>)"


@ex.refuses_stubs(solved_by=("gpuperf.nsight:ncu_command",), judged_apart=True)
def check_profile_command(fn) -> ex.Report:
    """Check ``fn(kernel, metrics, program)``: the ncu command line (a list of words) that
    profiles the second launch of the Numba kernel named ``kernel``, with the clocks left to the
    GPU, collecting ``metrics`` from ``program``."""
    import re

    # Not recorded for the grader (Checker.record): right answers differ (the pattern, the
    # order of the options), so the grader judges this exercise again on the student's
    # function alone (judged_apart), where nothing else of theirs runs.
    chk = ex.Checker("the Nsight Compute command for a Numba kernel")
    cases = [("reduce_v8", ["dram__bytes_read.sum"], ["python3", "run.py"]),
             ("smooth", ["smsp__inst_executed.sum", "l1tex__t_bytes.sum"],
              ["python3", "-m", "mypackage.bench", "--n", "4096"])]
    # One more drawn at random (while grading, from the hidden seed too): a kernel name, some
    # metrics and a program that a function written for the two above has not seen.
    rng = ex.case_rng(9)
    name = "_".join(str(rng.choice(_NAME_PARTS)) for _ in range(int(rng.integers(1, 4))))
    picked = rng.choice(len(_METRIC_POOL), size=int(rng.integers(1, 4)), replace=False)
    cases.append((name, [_METRIC_POOL[i] for i in sorted(picked)],
                  ["python3", f"{name}_bench.py", "--size", str(int(rng.integers(1, 1 << 20)))]))
    for kernel, metrics, program in cases:
        with chk.case(f"kernel {kernel}, {len(metrics)} metric(s), program {' '.join(program)}"):
            argv = fn(kernel, list(metrics), list(program))
            if not (isinstance(argv, (list, tuple)) and all(isinstance(w, str) for w in argv)):
                chk.fail(f"returned {type(argv).__name__}; return the command as a list of "
                         "strings, e.g. [\"ncu\", \"--launch-skip\", \"1\", ...].")
                continue
            argv = list(argv)
            if not argv or argv[0] != "ncu":
                chk.fail("the command starts with the profiler's program, \"ncu\".")
                continue
            if argv[len(argv) - len(program):] != program:
                chk.fail(f"the command ends with the program to profile, {program}, word for "
                         "word: ncu runs it.")
                continue
            opts = _ncu_options(argv, len(program))
            pattern = opts.get("--kernel-name")
            if not pattern or not pattern.startswith("regex:"):
                chk.fail("pick the kernel with -k regex:<pattern>: Numba appends a mangled "
                         "signature to the Python name, so the exact name never matches.")
            else:
                try:
                    found = re.compile(pattern[len("regex:"):])
                except re.error as err:
                    chk.fail(f"{pattern!r} is not a regular expression ({err}).")
                else:
                    others = [f"{kernel}_plan", f"my_{kernel}", f"{kernel}2"]
                    if not found.search(_NAMED.format(kernel)):
                        chk.fail(f"{pattern!r} does not find {_NAMED.format(kernel)!r}, the name "
                                 "Numba gives the kernel.")
                    elif any(found.search(_NAMED.format(o)) for o in others):
                        hit = next(o for o in others if found.search(_NAMED.format(o)))
                        chk.fail(f"{pattern!r} also picks a kernel named {hit!r}: anchor the "
                                 "name at its start (^) and end it at the '[' of the signature.")
            if opts.get("--launch-skip") != "1" or opts.get("--launch-count") != "1":
                chk.fail("profile the second launch: --launch-skip 1 (the first may include "
                         "loading the module) and --launch-count 1.")
            if opts.get("--clock-control") != "none":
                chk.fail("leave the clocks to the GPU, as the course's timings do: "
                         "--clock-control none (Nsight Compute locks them at base otherwise).")
            given = opts.get("--metrics")
            if given is None or sorted(given.split(",")) != sorted(metrics):
                chk.fail(f"collect exactly the metrics asked for, as one comma-separated "
                         f"--metrics list: {','.join(metrics)}.")
    return chk.report()
