"""The checker engine every exercise uses.

A checker runs the student's code on inputs chosen to expose the usual mistakes
(sizes 1, 31, 32, 33, a block minus one, a block plus one, several blocks,
non-powers of two), with fresh random data (random offset and scale, never zeros or
``arange``), NaN-poisoned outputs, a float64 reference and a second seed. It says
what went wrong in plain words, one line per failed case, never a traceback wall.

    chk = Checker("sequential addressing")
    for n in sizes_around(256):
        with chk.case(f"n={n}"):
            ...
            chk.compare(got, ref)
    return chk.report()

Under the simulator some races pass by luck (a non-atomic ``out[0] += x`` may come
out right); the report says so, the thread emulator's race check (``preflight(...,
races=True)``) names them, and chapters check what a kernel calls (``Checker.calls``,
``Checker.avoids``, read from its compiled code, not its text).
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import os
import re
import textwrap
import time
import traceback
import types
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from . import simblock
from . import validate as v
from .emulator import Unsupported
from .mode import SIMULATOR

PASS, FAIL = "\u2713", "\u2717"  # check mark, cross


def sizes_around(block: int, *, blocks: int = 3) -> list[int]:
    """Sizes that expose tail, warp and block-boundary mistakes for ``block`` threads."""
    block = v.integer(block, "block", minimum=1)
    blocks = v.integer(blocks, "blocks", minimum=1)
    sizes = {1, 31, 32, 33, block - 1, block, block + 1, blocks * block + 7, 1000}
    sizes.update(hidden_sizes(2, max(blocks * block + block, 1000) * 2))  # while grading
    return sorted(s for s in sizes if s >= 1)


def random_array(shape, rng=None, dtype=np.float32) -> np.ndarray:
    """Random values with a random offset and scale (so zero-sums and unit ranges are rare).

    ``rng`` is a ``numpy.random.Generator`` or an integer seed.
    """
    _shape_arg(shape)
    if not (rng is None or isinstance(rng, np.random.Generator)):
        v.integer(rng, "rng", minimum=0)
    _dtype_arg(dtype, "if")
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    scale = rng.uniform(0.5, 4.0)
    offset = rng.uniform(-2.0, 2.0)
    data = offset + scale * (rng.random(shape) - 0.5)
    if np.dtype(dtype).kind in "iu":
        return np.round(data * 10).astype(dtype)
    return data.astype(dtype)


def poisoned(shape, dtype=np.float32) -> np.ndarray:
    """An output array full of NaN (or a sentinel for integers): unwritten elements show."""
    _shape_arg(shape)
    _dtype_arg(dtype, "if")
    if np.dtype(dtype).kind == "f":
        return np.full(shape, np.nan, dtype=dtype)
    return np.full(shape, np.iinfo(dtype).min, dtype=dtype)


def _shape_arg(shape, name="shape"):
    seq = isinstance(shape, (tuple, list))
    items = shape if seq else (shape,)
    for i, d in enumerate(items):
        v.integer(d, f"{name}[{i}]" if seq else name, minimum=0)
    return shape


def _dtype_arg(dtype, kinds, name="dtype"):
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{name}={dtype!r} is not a NumPy dtype; pass e.g. np.float32.") from None
    if dt.kind not in kinds:
        raise ValueError(f"{name}={dt.name} is not a float or integer dtype; pass e.g. np.float32.")
    return dt


# ``python -m gpuperf.grade`` sets these in the kernel it grades in, only while one of the
# course's checker cells runs: every verdict is appended to GRADE_LOG (a fresh, unguessable
# path each time) as one JSON line, with the checker cell it came from (GRADING_CELL).
GRADE_LOG = None
GRADING_CELL = None
# And, in the same cell only, the values the checker judged go to GRADE_VALUES (a fresh folder):
# the student's value at each comparison, under a key (the cell, the exercise, the case, the
# n-th comparison in it). The grader decides the output cases itself from them, against the
# values of its own run of the course's notebook (GRADE_REFERENCE: that run alone also writes
# the expected value and the tolerance), so a verdict forged in the student's kernel cannot
# pass wrong outputs (``gpuperf.grade``).
GRADE_VALUES = None
GRADE_REFERENCE = False
# The most elements of one array recorded; a larger array is recorded as this many elements
# taken at an even stride (the same ones in the student's run and the reference's) and its shape.
VALUE_CAP = 65536
# What a checker's case judges (``Checker.case(kind=...)``): the grader scores an exercise 0
# if an "output" case fails; "structure" and "speed" cases add credit on top of correct outputs.
CASE_KINDS = ("output", "structure", "speed")
# Case names that say what a case judges, for checkers that do not pass ``kind``: a speed
# bar, and how a kernel was traced in the emulator (its accesses, loads, conflicts).
_SPEED_NAMES = ("speed",)
_STRUCTURE_NAMES = ("traced", "recorded in the emulator", "bank conflicts", "global loads of")


def case_kind(name: str) -> str:
    """What a case named ``name`` judges when its checker does not say: ``"speed"`` for a
    speed bar, ``"structure"`` for what the emulator traced of how the kernel works (never a
    race or a dry run's fault: those are wrong outputs on a GPU), else ``"output"``."""
    v.string(name, "name")
    low = name.lower()
    if low.startswith(_SPEED_NAMES):
        return "speed"
    if any(k in low for k in _STRUCTURE_NAMES) and not re.search(r"\braces?\b|dry run", low):
        return "structure"
    return "output"
# While grading, checkers add cases the student never saw: a seed drawn afresh for each
# checker run (logged with the verdict, so a score can be reproduced) and sizes from it.
_hidden_seed: int | None = None


def grading() -> bool:
    """True while ``python -m gpuperf.grade`` runs one of the course's checker cells."""
    return bool(GRADE_LOG)


def _hidden() -> int:
    """The hidden seed of this grading run (drawn on first use, logged with the verdict)."""
    global _hidden_seed
    if _hidden_seed is None:
        import secrets

        _hidden_seed = 2 + secrets.randbelow(10**6)  # never a visible seed (0 or 1)
    return _hidden_seed


def seeds(visible=(0, 1)) -> tuple[int, ...]:
    """The data seeds a checker runs: ``visible`` (what the student's own run uses) and,
    while grading, one more the student never saw."""
    visible = tuple(v.integer(s, f"visible[{i}]", minimum=0) for i, s in enumerate(visible))
    if not visible:
        raise ValueError("visible=() has no seed; pass the seeds the student's run uses, "
                         "e.g. (0, 1).")
    return visible + ((_hidden(),) if grading() else ())


def case_rng(seed: int) -> np.random.Generator:
    """The generator of a checker's randomly drawn cases: seeded with ``seed`` (the cases
    the student sees), and while grading with the hidden seed too (cases never seen)."""
    seed = v.integer(seed, "seed", minimum=0)
    return np.random.default_rng([seed, _hidden()] if grading() else seed)


def hidden_sizes(low: int, high: int, count: int = 2) -> list[int]:
    """While grading, ``count`` sizes drawn from ``low..high`` with the hidden seed (none
    otherwise): a kernel written to the visible sizes meets sizes it was not fitted to."""
    low = v.integer(low, "low", minimum=1)
    high = v.integer(high, "high", minimum=low)
    count = v.integer(count, "count", minimum=0)
    if not grading():
        return []
    rng = np.random.default_rng(_hidden())
    sizes = sorted(int(n) for n in rng.integers(low, high + 1, size=count))
    _hidden_size_names.update(str(n) for n in sizes)
    return sizes


_hidden_size_names: set[str] = set()  # the sizes hidden_sizes drew, to name their cases


def _names_hidden_size(name: str) -> bool:
    return any(tok in _hidden_size_names for tok in re.findall(r"\d+", name))


def _where() -> str:
    """Where a verdict was reached: the GPU's name, or the simulator."""
    from . import device

    try:
        return device.info().name
    except Exception:  # noqa: BLE001 - a verdict is logged even if the driver is unwell
        return "unknown"


def _log_verdict(report) -> None:
    import json

    path = GRADE_LOG
    if not path:
        return
    entry = {"cell": GRADING_CELL, "title": report.title, "passed": len(report.passed),
             "failed": len(report.failed), "points": report.points,
             "possible": report.possible, "hidden_seed": _hidden_seed,
             "not_implemented": any("not implemented yet" in why for _, why in report.failed),
             "first_failure": (f"{report.failed[0][0]}: {report.failed[0][1]}"[:1000]
                               if report.failed else None),
             "report": report.text(max_failures=20)[:4000], "on": _where(),
             "cases": [[name, ok, report.weights.get(name, 1), report.kinds.get(name, "output")]
                       for name, ok in [(n, True) for n in report.passed]
                       + [(n, False) for n, _ in report.failed]][:500]}
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")


_value_counts: dict = {}  # (exercise, case) -> comparisons recorded so far in this cell


def plain_value(value):
    """``value`` as plain data the grader can read without running anything of the student's:
    None, a bool, an int, a float, a str, lists and dicts of them, or a NumPy array of numbers
    (a device array is copied to the host). Subclasses are read through their base type (an
    int whose ``__eq__`` lies is recorded as the int it holds); anything else is recorded as
    ``{"unreadable": type name}``, which matches no reference."""
    return _plain(value, 0)


def _plain(x, depth):
    if depth > 8:
        return {"unreadable": "nested too deep"}
    if hasattr(x, "copy_to_host") and not isinstance(x, np.ndarray):
        try:
            x = x.copy_to_host()
        except Exception:  # noqa: BLE001 - whatever the student handed in
            return {"unreadable": type(x).__name__}
    if x is None or type(x) is bool:
        return x
    if isinstance(x, np.bool_):
        return bool(x)
    if isinstance(x, int):
        return int.__int__(x)
    if isinstance(x, float):
        return float.__float__(x)
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, str):
        return str.__str__(x)[:10_000]
    if isinstance(x, np.ndarray):
        arr = np.array(x, copy=True).view(np.ndarray)
        if arr.dtype.kind not in "biuf":
            return {"unreadable": f"array of {arr.dtype}"}
        return arr
    if isinstance(x, (list, tuple)):
        if len(x) > 10_000:
            return _plain(np.asarray(x), depth + 1)
        return [_plain(i, depth + 1) for i in x]
    if isinstance(x, dict):
        return {str.__str__(k) if isinstance(k, str) else repr(_plain(k, depth + 1)):
                _plain(val, depth + 1) for k, val in list(x.items())[:1000]}
    return {"unreadable": type(x).__name__}


def _sampled(arr: np.ndarray) -> np.ndarray:
    """At most VALUE_CAP elements of ``arr``, flattened, at an even stride."""
    flat = arr.reshape(-1)
    if flat.size <= VALUE_CAP:
        return arr
    return flat[:: -(-flat.size // VALUE_CAP)][:VALUE_CAP]


def _record_value(title: str, case: str | None, got, want=None, *, rtol: float = 0.0,
                  atol: float = 0.0, allowed=None) -> None:
    """While grading, write ``got`` (and in the grader's reference run, ``want`` or the
    ``allowed`` values, and the tolerance) to GRADE_VALUES under this comparison's key."""
    import json
    import os

    folder = GRADE_VALUES
    if not folder or not grading():
        return
    key = [GRADING_CELL, title, case or "-"]
    k = _value_counts.get((title, case), 0)
    _value_counts[(title, case)] = k + 1
    entry = {"key": [*key, k]}

    def put(name, value):
        value = plain_value(value)
        if isinstance(value, np.ndarray):
            file = f"{os.urandom(8).hex()}.npy"
            np.save(os.path.join(folder, file), _sampled(value), allow_pickle=False)
            entry[name] = {"npy": file, "shape": list(value.shape)}
        else:
            entry[name] = {"json": value}

    try:
        os.makedirs(folder, exist_ok=True)
        put("got", got)
        if GRADE_REFERENCE:
            if allowed is not None:
                put("allowed", sorted(allowed, key=repr))
            else:
                put("want", want)
            entry["rtol"], entry["atol"] = float(rtol), float(atol)
        with open(os.path.join(folder, "values.jsonl"), "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")
    except OSError:
        pass  # the grader finds the value missing, and says so


def agrees(got, want, *, rtol: float = 0.0, atol: float = 0.0, allowed=None) -> str | None:
    """None if the recorded ``got`` matches: numbers and arrays of numbers within ``rtol`` and
    ``atol`` of ``want`` (as ``compare``), anything else equal to it, or (with ``allowed``)
    equal to one of ``allowed``; else a sentence saying how it differs. What the grader
    applies to the values a checker recorded (plain data, ``plain_value``)."""
    v.nonnegative(rtol, "rtol")
    v.nonnegative(atol, "atol")
    if allowed is not None:
        if not isinstance(allowed, (list, tuple, set, frozenset)):
            raise TypeError(f"allowed must be a list of the values accepted, not "
                            f"{type(allowed).__name__} ({v._short(allowed)}).")
        if any(agrees(got, a, rtol=rtol, atol=atol) is None for a in allowed):
            return None
        return f"got {_short_value(got)}, expected one of {_short_value(list(allowed))}"
    if _numeric(got) and _numeric(want):
        try:
            return compare(got, want, rtol=rtol, atol=atol, what="value")
        except TypeError:
            pass
    if isinstance(got, np.ndarray) or isinstance(want, np.ndarray):
        return f"got {_short_value(got)}, expected {_short_value(want)}"
    if isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        for i, (g, w) in enumerate(zip(got, want)):  # a tuple of a number and a word
            why = agrees(g, w, rtol=rtol, atol=atol)
            if why:
                return f"item {i}: {why}"
        return None
    if isinstance(got, dict) and isinstance(want, dict) and got.keys() == want.keys():
        for k in want:
            why = agrees(got[k], want[k], rtol=rtol, atol=atol)
            if why:
                return f"{k}: {why}"
        return None
    if _same(got, want):
        return None
    return f"got {_short_value(got)}, expected {_short_value(want)}"


def _numeric(x) -> bool:
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "biuf"
    if type(x) in (int, float):
        return True
    if isinstance(x, list) and x and len(x) <= 100_000:
        return all(_numeric(i) for i in x) and len({np.shape(i) for i in x}) == 1
    return False


def _same(a, b) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if type(a) in (int, float) and type(b) in (int, float):
        return a == b
    return type(a) is type(b) and a == b


def _short_value(x) -> str:
    if isinstance(x, np.ndarray):
        return f"an array of shape {x.shape}"
    text = repr(x)
    return text if len(text) <= 80 else text[:77] + "..."


# Each checker's exercise as the book titles it (the notebook's ``:::{exercise} Title``): the
# verdict and every one-line message name the exercise by it, never by the checker's function
# name (tests/test_exercises.py compares this table with the notebooks). A checker that
# serves several tasks gives the keyword arguments of the book's call beside the title.
BOOK_TITLES = {
    "check_channel_gbps": "What a channel delivers",
    "check_phase_channels": "Which channels does N reach?",
    "check_step_latency": "Latency from two chain lengths",
    "check_copy_loads_needed": "Loads in flight for a copy",
    "check_grid_rounds": "The rounds of a grid",
    "check_chunks": "How many chunks?",
    "check_profile_command": "The command line for a Numba kernel",
    "check_attainable": "The roofline of a GPU",
    "check_saxpy": "A grid-stride SAXPY",
    "check_bandwidth_formula": "Effective bandwidth of SAXPY",
    "check_call_time": "Predict the time of one call",
    "check_remap": "Fix an uncoalesced kernel by remapping threads to data",
    "check_layout_bytes": "Predict what a layout moves, then measure it",
    "check_inplace_transpose": "Transpose a square matrix in place",
    "check_bank_queue": "How long is the longest bank queue?",
    "check_loads_needed": "How many loads per thread?",
    "check_blocks_per_sm": "Occupancy by hand",
    "check_copy_in_flight": "A copy with few threads",
    "check_tiled": ("A tiled matmul whose A comes transposed", {"a_transposed": True}),
    "check_intensity": "Intensity and roofline bound of a tile size",
    "check_coarsened": ("Coarsen the tiled kernel along the rows", {"along": "rows"}),
    "check_best_factor": "The best factor on your GPU, explained",
    "check_tile_reuse": "What a register tile buys",
    "check_sequential_max": "Sequential addressing for the maximum",
    "check_absmax": "The largest magnitude at the bandwidth limit",
    "check_block_max": "The warp-shuffle block maximum",
    "check_pipeline": "A pipeline for data larger than the GPU",
    "check_predict": "Predict the best achievable time",
    "check_registers": "Algorithm 4: values in registers",
    "check_beta_grad": "The gradient for beta",
    "check_moved_bytes": "Count the bytes",
    "check_limiters": "What limits each kernel?",
    "check_smooth": "Fix the race",
    "check_private_histogram": "A privatized histogram",
}

_exercise_title = contextvars.ContextVar("gpuperf_exercise_title", default=None)


def exercise_title(fallback: str) -> str:
    """The book's title of the exercise whose checker is running (see ``titled``), else
    ``fallback`` (a checker called outside an exercise: the chapters' own examples)."""
    v.string(fallback, "fallback")
    return _exercise_title.get() or fallback


def titled(check):
    """Decorator: while ``check`` runs, every ``Checker`` and one-line report it makes is
    titled as the book titles its exercise (``BOOK_TITLES``), whatever title the code gives."""
    import functools

    v.function(check, "check", what="a checker function")
    title, when = BOOK_TITLES.get(check.__name__), {}
    if isinstance(title, tuple):
        title, when = title

    @functools.wraps(check)
    def wrapper(*args, **kwargs):
        mine = title if all(kwargs.get(k) == val for k, val in when.items()) else None
        token = _exercise_title.set(mine or _exercise_title.get())
        try:
            return check(*args, **kwargs)
        finally:
            _exercise_title.reset(token)

    wrapper.book_title = title
    return wrapper


@dataclass
class Report:
    """The outcome of a checker: truthy when everything passed."""

    title: str
    passed: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    weights: dict = field(default_factory=dict)  # a check's points, where not 1
    kinds: dict = field(default_factory=dict)  # a check's kind, where not "output"

    def __post_init__(self):
        v.string(self.title, "title")
        for name in ("passed", "failed", "notes"):
            if not isinstance(getattr(self, name), list):
                raise TypeError(f"{name} must be a list, not {type(getattr(self, name)).__name__}.")
        v.mapping(self.weights, "weights")

    @property
    def points(self) -> float:
        """Points earned: each passed check's weight (1 unless the checker says otherwise)."""
        return float(sum(self.weights.get(name, 1) for name in self.passed))

    @property
    def possible(self) -> float:
        """Points of every check that ran, passed or failed."""
        return self.points + float(sum(self.weights.get(name, 1) for name, _ in self.failed))

    @property
    def ok(self) -> bool:
        return not self.failed and bool(self.passed)

    def __bool__(self) -> bool:
        return self.ok

    def text(self, max_failures: int = 8) -> str:
        v.integer(max_failures, "max_failures", minimum=0)
        lines = []
        if self.ok:
            lines.append(f"{PASS} {self.title}: all {len(self.passed)} checks passed"
                         f"{self._points_text()}.")
        else:
            total = len(self.passed) + len(self.failed)
            lines.append(f"{FAIL} {self.title}: {len(self.failed)} of {total} checks failed"
                         f"{self._points_text()}.")
            for name, why in self.failed[:max_failures]:
                lines.append(f"  {FAIL} {name}: {why}")
            if len(self.failed) > max_failures:
                lines.append(f"  ... and {len(self.failed) - max_failures} more.")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    def _points_text(self) -> str:
        if not self.weights:  # every check worth 1: the counts say it all
            return ""
        return f" ({self.points:g} of {self.possible:g} points)"

    def __str__(self) -> str:
        return self.text()

    def _repr_pretty_(self, p, cycle):  # IPython shows the report, not the dataclass
        p.text(self.text())

    def __repr__(self) -> str:
        return self.text()


# The CPU seconds a checker's simulated launches may use in all (Numba's simulator; a GPU's
# launches are not stopped): past it the running launch stops and the remaining cases are
# not run, so that a slow wrong kernel gets its verdict within 30 s (issue 63).
CHECK_CPU_S = 20.0
# A student's host code (a formula, a pipeline) that never returns has no simulated launch to
# stop: past the limit and this grace a CPU-time timer interrupts it, where signals exist.
HOST_GRACE_S = 2.0


@contextmanager
def _host_time_limit(since: float):
    """Inside, the process's CPU time past ``since + CHECK_CPU_S + HOST_GRACE_S`` raises
    ``simblock.Stopped`` in host code (a simulated launch is left to ``limit_cpu``); the main
    thread only, a no-op elsewhere or while another such timer runs."""
    import signal
    import threading

    if (not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread()
            or signal.getitimer(signal.ITIMER_VIRTUAL)[0] > 0):
        yield
        return

    def stop(signum, frame):
        if simblock.in_kernel():  # a simulated launch: limit_cpu stops it between its threads
            signal.setitimer(signal.ITIMER_VIRTUAL, 0.5)
            return
        raise simblock.Stopped(f"stopped: your code was still running after the checker's "
                               f"{CHECK_CPU_S:g} s of CPU time (a loop that never ends?).")

    left = max(0.05, since + CHECK_CPU_S + HOST_GRACE_S - time.process_time())
    old = signal.signal(signal.SIGVTALRM, stop)
    signal.setitimer(signal.ITIMER_VIRTUAL, left)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, old)


class Checker:
    """Collects the cases of one exercise check; see the module docstring."""

    def __init__(self, title: str, *, race_note: bool = False):
        v.string(title, "title")
        v.boolean(race_note, "race_note")
        self.report_ = Report(exercise_title(title))
        self._cpu_start = time.process_time()
        self._stopped = 0  # cases not run after the checker's CPU limit
        self._current: str | None = None
        self._failed_current = False
        if race_note and SIMULATOR:
            from . import simblock

            how = ("runs a block's threads one after another, each until it waits at a "
                   "barrier or a warp intrinsic" if simblock.installed() else
                   "runs each thread of a block as a Python thread, switched by the interpreter")
            self.report_.notes.append(
                f"this ran on the CUDA simulator, which {how}: some races (a missing barrier, "
                "a non-atomic update) can pass here and still fail on a GPU."
            )

    @contextmanager
    def case(self, name: str, seed: int | None = None, *, points: float = 1,
             kind: str | None = None):
        """One named case worth ``points``; exceptions inside it become a one-line failure.

        A case on a seed or a size the student never saw (while grading) is named "hidden
        case". ``kind`` is what the case judges: ``"output"`` (what the student's code
        computes), ``"structure"`` (how it is written) or ``"speed"``; by default it is read
        from the name (``case_kind``). The grader scores an exercise 0 if an output case
        fails; structure and speed cases add credit only on top of correct outputs."""
        v.string(name, "name")
        if seed is not None:
            v.integer(seed, "seed")
        v.positive(points, "points")
        kind = case_kind(name) if kind is None else v.choice(kind, "kind", CASE_KINDS)
        if grading() and ((seed is not None and seed == _hidden_seed)
                          or _names_hidden_size(name)):
            self._current = f"{name} (hidden case)"
        else:
            self._current = name if seed is None else f"{name} (seed {seed})"
        if points != 1:
            self.report_.weights[self._current] = points
        if kind != "output":
            self.report_.kinds[self._current] = kind
        self._failed_current = False
        try:
            # Past the limit (the verdict settled), a case's first simulated launch stops.
            with simblock.limit_cpu(CHECK_CPU_S, self._cpu_start), \
                    _host_time_limit(self._cpu_start):
                yield self
        except simblock.Stopped as err:
            if self._stopped:
                self._failed_current = True  # neither passed nor failed: counted in a note
            else:
                self._record_fail(str(err))
            self._stopped += 1
        except Unsupported as err:  # the emulator lacks a feature: skip the case, say so
            self.report_.notes.append(f"{self._current}: not checked, {err}")
        except StoppedSlow as err:
            self._record_fail(str(err))
        except NotImplementedError:
            self._record_fail("not implemented yet: replace `raise NotImplementedError()` "
                              "with your code.")
        except Exception as err:  # report in one line; the student's code raised
            self._record_fail(describe_exception(err))
        else:
            if not self._failed_current:
                self.report_.passed.append(self._current)
        finally:
            self._current = None

    def _record_fail(self, why: str) -> None:
        if not self._failed_current:
            self.report_.failed.append((self._current or "check", why))
        self._failed_current = True

    def fail(self, why: str) -> None:
        """Mark the current case (or the whole check, outside a case) as failed."""
        v.string(why, "why")
        if self._current is None:
            self.report_.failed.append(("check", why))
        else:
            self._record_fail(why)

    def expect(self, condition: bool, why: str) -> bool:
        v.string(why, "why")
        if not condition:
            self.fail(why)
        return bool(condition)

    def compare(self, got, ref, *, rtol: float = 1e-5, atol: float = 1e-6,
                what: str = "output") -> bool:
        """Compare ``got`` with the float64 reference; explain the first kind of mistake.
        While grading, ``got`` is recorded for the grader to compare itself (``record``)."""
        self.record(got, ref, rtol=rtol, atol=atol)
        why = compare(got, ref, rtol=rtol, atol=atol, what=what)
        if why:
            self.fail(why)
            return False
        return True

    def record(self, got, want=None, *, rtol: float = 0.0, atol: float = 0.0,
               allowed=None) -> None:
        """Hand the value the current case judges to the grader: while grading, ``got`` is
        written with this comparison's key, and the grader passes the case only if it
        matches what its own run of the course's notebook expects at that key: ``want``
        within ``rtol``/``atol`` (numbers and arrays; other values equal), or one of
        ``allowed``. The rule must accept every answer the checker accepts (it may be
        looser); the checker still decides the case itself too. Outside grading: nothing.
        Call it with the student's value as received, before any check of its type."""
        v.nonnegative(rtol, "rtol")
        v.nonnegative(atol, "atol")
        _record_value(self.report_.title, self._current, got, want, rtol=rtol, atol=atol,
                      allowed=allowed)

    def is_kernel(self, obj, *, what: str = "kernel") -> bool:
        """Fail unless ``obj`` is a ``@cuda.jit`` kernel (a common first mistake)."""
        v.string(what, "what")
        if obj is None or not hasattr(obj, "__getitem__") or not callable(obj):
            self.fail(f"expected a @cuda.jit {what}, got {type(obj).__name__}. Decorate your "
                      "function with @cuda.jit.")
            return False
        return True

    def calls(self, fn, *names: str, why: str) -> bool:
        """Fail with ``why`` unless the code of ``fn`` uses one of ``names``
        (``"numba.cuda:syncthreads"``): read from the compiled code as ``uses`` does, so a
        comment or a string naming it does not count."""
        v.string(why, "why")
        found = uses(fn, *names) is not None
        if not found:
            self.report_.failed.append(("source", why))
            self.report_.kinds["source"] = "structure"
        return found

    def avoids(self, fn, *names: str, why: str) -> bool:
        """Fail with ``why`` if the code of ``fn`` uses any of ``names`` (as ``calls``)."""
        v.string(why, "why")
        found = uses(fn, *names) is not None
        if found:
            self.report_.failed.append(("source", why))
            self.report_.kinds["source"] = "structure"
        return not found

    def preflight(self, kernel, grid, block, *args, **options) -> bool:
        """``preflight(self, kernel, grid, block, *args)``: see the module function."""
        return preflight(self, kernel, grid, block, *args, **options)

    def note(self, text: str) -> None:
        v.string(text, "text")
        self.report_.notes.append(text)

    def report(self, *, show: bool = True) -> Report:
        v.boolean(show, "show")
        if self._stopped > 1:
            self.report_.notes.append(f"{self._stopped - 1} more case(s) not run: the checker "
                                      f"stopped at its limit of {CHECK_CPU_S:g} s of CPU time.")
            self._stopped = 1
        if show:
            print(self.report_.text())
        _log_verdict(self.report_)
        return self.report_


def rounded_up(q: float, *, rel: float = 1e-9) -> set[int]:
    """The whole numbers a correct rounding up of ``q`` may give when ``q`` is computed in
    floating point: ``{ceil(q)}``, and where ``q`` is within ``rel`` (relative) of a whole
    number ``k``, both ``k`` and ``k + 1`` (``4096 GB/s x 500 ns`` computed through 1e9 and
    1e-9 is 2,048,000.0000000005 bytes, whose ceiling is one more than the exact answer's)."""
    q = v.number(q, "q")
    rel = v.nonnegative(rel, "rel")
    import math

    return {math.ceil(q * (1 - rel) - rel), math.ceil(q * (1 + rel) + rel)}


def compare(got, ref, *, rtol: float = 1e-5, atol: float = 1e-6, what: str = "output") -> str | None:
    """``None`` if ``got`` matches ``ref``; otherwise a sentence saying what is wrong.

    NaN where the reference is NaN counts as right (NaN in, NaN out).
    """
    v.nonnegative(rtol, "rtol")
    v.nonnegative(atol, "atol")
    v.string(what, "what")
    if hasattr(got, "copy_to_host"):
        got = got.copy_to_host()
    try:
        ref = np.asarray(ref, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"ref must be numbers (an array, list or scalar), not {type(ref).__name__}"
                        f" ({v._short(ref)}).") from None
    try:
        got = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        return (f"{what} is {type(got).__name__} ({v._short(got)}), not numbers: return or "
                "fill an array of numbers.")
    if got.shape != ref.shape:
        if got.size == 1 and ref.size == 1:
            got = got.reshape(ref.shape)
        else:
            return f"{what} has shape {got.shape}, expected {ref.shape}."
    g = got.astype(np.float64)
    nan = np.isnan(g) & ~np.isnan(ref)
    if nan.any():
        idx = np.argwhere(nan)
        first = tuple(int(i) for i in idx[0]) if g.ndim > 1 else int(idx[0][0]) if g.ndim else 0
        return (f"{int(nan.sum())} of {g.size} {what} element(s) are NaN, first at index {first}: "
                "never written (outputs start as NaN), or computed from memory nothing wrote. "
                "Does every element get a thread, and is shared memory filled before use?")
    bad = ~np.isclose(g, ref, rtol=rtol, atol=atol, equal_nan=True)
    if bad.any():
        idx = np.argwhere(bad)
        first = tuple(int(i) for i in idx[0]) if g.ndim > 1 else int(idx[0][0]) if g.ndim else 0
        gv, rv = g[tuple(idx[0])], ref[tuple(idx[0])]
        rel = float(np.linalg.norm(g - ref) / max(np.linalg.norm(ref), 1e-300))
        return (f"{int(bad.sum())} of {g.size} {what} element(s) are wrong, first at index "
                f"{first}: got {gv:.7g}, expected {rv:.7g} (relative error of the whole "
                f"{what}: {rel:.2e}).")
    return None


def describe_exception(err: BaseException) -> str:
    """One line: the exception, and the student's line that raised it when we can find it."""
    if not isinstance(err, BaseException):
        raise TypeError(f"err must be an exception, not {type(err).__name__} ({v._short(err)}).")
    msg = str(err).strip().splitlines()
    text = msg[-1] if msg else ""
    text = re.sub(r"^tid=\[[^\]]*\] ctaid=\[[^\]]*\]:\s*", "", text)
    where = ""
    for frame in reversed(traceback.extract_tb(err.__traceback__)):
        if "gpuperf" not in frame.filename and "numba" not in frame.filename:
            where = f" (at line {frame.lineno}: `{(frame.line or '').strip()}`)"
            break
    hint = ""
    if isinstance(err, IndexError):
        hint = " A thread read or wrote outside the array: check the bounds test."
    return f"your code raised {type(err).__name__}: {text.rstrip('.')}{where}.{hint}"


def source_of(fn) -> str | None:
    v.function(fn, "fn")
    fn = getattr(fn, "py_func", fn)
    try:
        return textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return None


# Functions that read an array argument without writing it; a kernel that passes an array to
# any other function (a device function of its own, say) may write it.
_READS_ONLY = frozenset({"len", "range", "min", "max", "abs", "print", "float", "int", "bool",
                         "enumerate", "zip"})


def written_arguments(kernel) -> frozenset | None:
    """The positions of the arguments ``kernel`` may write: an argument (or a local name bound
    to it) stored into by subscript (``z[i] = ...``, ``z[i][j] += ...``), the first argument
    of a ``cuda.atomic`` call, or an argument passed to any function not known to only read
    it. Read from the kernel's source; None where there is none (then every argument may be
    written)."""
    import ast

    v.kernel(kernel, "kernel")
    source = source_of(kernel)
    if source is None:
        return None
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    func = next((node for node in tree.body
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if func is None:
        return None
    alias = {a.arg: i for i, a in enumerate(func.args.args)}
    changed = True
    while changed:  # x = z; y = x[2:]: both write z's bytes when stored into
        changed = False
        for node in ast.walk(func):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                    node.targets[0], ast.Name):
                base = _base_name(node.value)
                name = node.targets[0].id
                if base in alias and name not in alias:
                    alias[name] = alias[base]
                    changed = True

    written = set()

    def store(target):
        if isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                store(t)
        elif isinstance(target, (ast.Subscript, ast.Attribute, ast.Starred)):
            base = _base_name(target)
            if base in alias:
                written.add(alias[base])

    for node in ast.walk(func):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                store(target)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            store(node.target)
        elif isinstance(node, ast.Call):
            callee = node.func.id if isinstance(node.func, ast.Name) else None
            if callee in _READS_ONLY:
                continue
            for arg in node.args:
                # The array itself or a slice of it, not one element (math.sqrt(x[i])).
                view = isinstance(arg, ast.Name) or (isinstance(arg, ast.Subscript) and any(
                    isinstance(n, ast.Slice) for n in ast.walk(arg.slice)))
                if view and _base_name(arg) in alias:
                    written.add(alias[_base_name(arg)])
    return frozenset(written)


def _base_name(node) -> str | None:
    """``z`` for ``z``, ``z[i]``, ``z[i][j]``, ``z[2:]``, ``z.T``; None for anything else."""
    import ast

    while isinstance(node, (ast.Subscript, ast.Attribute, ast.Starred)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def race_times(mine, reference, *, rounds: int = 5, min_time: float = 0.04,
               hide_launch: bool = False) -> tuple:
    """``(mine_ms, reference_ms)``: times of two callables measured in interleaved rounds.

    Each round times both (a median over at least ``min_time`` seconds); each side keeps its
    best round. Interleaving spreads clock and neighbour noise over both sides, and the best
    round is what the kernel can do, so a speed threshold does not flip on one noisy window.
    Each call is timed whole, its launches and any wait for a result included: a student's
    function pays for its host work as the reference does (``hide_launch=True`` leaves the
    launch out, as ``bench.time_kernel`` does by default; for a callable that waits for its
    result that only slows the race down).
    """
    from . import bench

    v.function(mine, "mine", what="a callable that runs the student's GPU work")
    v.function(reference, "reference", what="a callable that runs the reference GPU work")
    v.integer(rounds, "rounds", minimum=1)
    v.positive(min_time, "min_time")
    v.boolean(hide_launch, "hide_launch")
    stop_if_slow(mine, what="your code", launches=2 * rounds * _LAUNCHES_PER_TIMING)
    best_mine = best_ref = float("inf")
    for _ in range(rounds):
        best_ref = min(best_ref, bench.time_kernel(reference, min_time=min_time,
                                                   hide_launch=hide_launch).median_ms)
        best_mine = min(best_mine, bench.time_kernel(mine, min_time=min_time,
                                                     hide_launch=hide_launch).median_ms)
    return best_mine, best_ref


@dataclass(frozen=True)
class _Bar:
    """How a speed bar is worded: the rate's ``unit`` and ``digits``, the ``verb`` before it
    ("moves", "runs at"), the reference measured now (``ceiling_name``) and, shorter, what
    the bar is a fraction of (``bar_name``)."""

    unit: str
    digits: int
    verb: str
    ceiling_name: str
    bar_name: str


_COPY_BAR = _Bar("GB/s", 0, "moves", "the device-to-device copy measured now",
                 "a device-to-device copy")
_CUBLAS_BAR = _Bar("TFLOP/s", 2, "runs at", "cuBLAS SGEMM measured now at the same size",
                   "cuBLAS")


SPEED_BUDGET_S = 15.0  # the most seconds a speed bar spends timing the student's kernel
_LAUNCHES_PER_TIMING = 12  # bench.time_kernel's 2 warm-up and 10 timed launches, at least


def _one_launch_s(run) -> float:
    """Seconds of one call of ``run()`` to its end on the GPU, after a first call (which may
    compile)."""
    import time

    from numba import cuda

    run()
    cuda.synchronize()
    start = time.perf_counter()
    run()
    cuda.synchronize()
    return time.perf_counter() - start


class StoppedSlow(Exception):
    """A kernel too slow to time within the checker's budget (its one launch said so): a
    case that raises it fails with its message, which says the timing was stopped."""


def stop_if_slow(run, *, what: str = "your kernel", launches: int = _LAUNCHES_PER_TIMING,
                 scale: float = 1.0) -> float:
    """Launch ``run()`` once (after a compiling call) and raise ``StoppedSlow`` if ``launches``
    of it, each ``scale`` times the work (``run`` at a smaller size, to try first), would take
    over ``SPEED_BUDGET_S``; else return the one launch's seconds. Call it before timing a
    student's kernel on a GPU: a wrong kernel can take minutes a launch, which no one can
    stop once it runs, so the smaller size goes first."""
    v.function(run, "run", what="a callable that launches the student's kernel")
    v.string(what, "what")
    v.integer(launches, "launches", minimum=1)
    v.number(scale, "scale", positive=True)
    once = _one_launch_s(run)
    if once * scale * launches > SPEED_BUDGET_S:
        at = "" if scale == 1 else f" at 1/{scale:g} of the size"
        raise StoppedSlow(f"stopped after one launch{at}: {what} took {once:.2g} s for it, so "
                          f"timing it ({launches} launches{' at the full size' if at else ''}) "
                          f"would take about {once * scale * launches:.0f} s, over the "
                          f"checker's {SPEED_BUDGET_S:.0f} s: far slower than the exercise "
                          "asks.")
    return once


def _speed_case(chk: Checker, run, ceiling, rate, bar: _Bar, *, target: float, advice: str,
                what: str, rounds: int, smaller=None) -> float | None:
    """The engine of the speed bars: ``run()`` (the student's launch) against ``ceiling()``,
    the reference's rate measured now on this GPU (a number in ``bar.unit``, or None where
    it cannot be measured), best of ``rounds`` interleaved rounds on each side, so that one
    noisy window does not decide. ``rate(ms)`` turns the student's time into the same unit.
    One case of ``chk``: the student's rate must reach ``target`` times the reference's.
    Returns the fraction reached, or None without a reference."""
    from . import bench

    if not isinstance(chk, Checker):
        raise TypeError(f"chk must be an exercises.Checker, not {type(chk).__name__}.")
    v.function(run, "run", what="a callable that launches the student's kernel")
    v.number(target, "target", positive=True, maximum=1.5)
    v.string(advice, "advice")
    v.string(what, "what")
    v.integer(rounds, "rounds", minimum=1)
    # A slow wrong kernel must not hold the verdict for minutes: one launch first (after one
    # that compiles it); if timing it in full would pass SPEED_BUDGET_S, its one launch is
    # the measurement, and the case says the timing was stopped.
    if smaller is not None:  # (run at a smaller size, how many times the work run does)
        try:
            stop_if_slow(smaller[0], what=what, scale=smaller[1],
                         launches=rounds * _LAUNCHES_PER_TIMING)
        except StoppedSlow as err:
            with chk.case(f"speed on this GPU: at least {target:.0%} of {bar.bar_name}"):
                chk.fail(f"{err} {advice}")
            return 0.0
    once_s = _one_launch_s(run)
    if once_s * rounds * _LAUNCHES_PER_TIMING > SPEED_BUDGET_S:
        reference = ceiling()
        if reference is None:
            return None
        mine = rate(once_s * 1e3)
        reached, needed = _percent_pair(mine / reference, target)
        with chk.case(f"speed on this GPU: at least {target:.0%} of {bar.bar_name}"):
            chk.fail(f"stopped after one launch: {what} took {once_s:.2g} s for it "
                     f"({mine:.{bar.digits}f} {bar.unit}, {reached} of {bar.ceiling_name}; the "
                     f"bar is {needed}), and timing it in full would take over "
                     f"{SPEED_BUDGET_S:.0f} s. {advice}")
        return mine / reference
    mine_ms, best = float("inf"), 0.0
    for _ in range(rounds):
        mine_ms = min(mine_ms, bench.time_kernel(run, min_time=0.05).median_ms)
        reference = ceiling()
        if reference is None:
            return None
        best = max(best, reference)
    mine = rate(mine_ms)
    unit, digits = bar.unit, bar.digits
    reached, needed = _percent_pair(mine / best, target)
    with chk.case(f"speed on this GPU: at least {target:.0%} of {bar.bar_name}", kind="speed"):
        chk.note(f"on this GPU {what} {bar.verb} {mine:.{digits}f} {unit}, {reached} "
                 f"of {bar.ceiling_name} ({best:.{digits}f} {unit}); the bar is {needed}.")
        chk.expect(mine >= target * best,
                   f"{what} reaches {reached} of {bar.bar_name}, under the "
                   f"{needed} bar: {advice}")
    return mine / best


def _percent_pair(value: float, bar: float) -> tuple[str, str]:
    """``value`` and ``bar`` as percentages, with as many decimals as it takes for a value
    under the bar not to read as equal to it ("7.9%" and "8.0%", never "8%" and "8%")."""
    for decimals in range(0, 4):
        a, b = f"{value:.{decimals}%}", f"{bar:.{decimals}%}"
        if (value < bar) == (float(a[:-1]) < float(b[:-1])):
            return a, b
    return a, b


def speed_against_copy(chk: Checker, run, nbytes: int, *, target: float, advice: str,
                       what: str = "your kernel", rounds: int = 2, smaller=None) -> float:
    """On a GPU, one case of ``chk``: ``run()`` (the student's launch, moving ``nbytes``) must
    reach ``target`` times the bandwidth of a device-to-device copy measured now, on this
    GPU: the ceiling of the student's own GPU, not a number recorded elsewhere. Best of
    ``rounds`` interleaved rounds on each side, so one noisy window does not decide. The
    copy moves about as many bytes (never under 256 MiB, past any L2). Returns the fraction
    reached; ``advice`` follows a miss. ``smaller``: ``(run_small, scale)``, the same launch
    on 1/scale of the data, launched first: a kernel whose full-size timing would pass
    ``SPEED_BUDGET_S`` is stopped there, before any full-size launch."""
    from . import bench

    v.positive_int(nbytes, "nbytes")
    copy_bytes = max(nbytes // 2, 2**27)  # a copy of b bytes moves 2b
    return _speed_case(
        chk, run, lambda: bench.gbps(2 * copy_bytes,
                                     bench.measure_copy(nbytes=copy_bytes).median_ms),
        lambda ms: bench.gbps(nbytes, ms), _COPY_BAR, target=target, advice=advice,
        what=what, rounds=rounds, smaller=smaller)


def speed_against_cublas(chk: Checker, run, n: int, *, target: float, advice: str,
                         what: str = "your kernel", rounds: int = 2) -> float | None:
    """On a GPU, one case of ``chk``: ``run()`` (the student's n x n x n float32 product)
    must reach ``target`` times the FLOP rate of cuBLAS SGEMM (CuPy) at the same size,
    measured now, on this GPU. Best of ``rounds`` interleaved rounds on each side. Without
    CuPy there is no ceiling to measure: a note says so and the result is None."""
    from . import bench

    v.positive_int(n, "n")
    flop = 2 * n**3

    def cublas():
        t = bench.measure_cublas_sgemm(n)
        if t is None:
            chk.note("speed against cuBLAS not measured: CuPy is not installed here.")
            return None
        return flop / t.median_ms / 1e9

    return _speed_case(
        chk, run, cublas, lambda ms: flop / ms / 1e9, _CUBLAS_BAR, target=target,
        advice=advice, what=what, rounds=rounds)


def speed_not_measured(chk: Checker, bar: str) -> None:
    """The note a checker with a speed bar leaves where it cannot measure (the simulator):
    ``bar`` says what a GPU would also ask, e.g. "60% of a device-to-device copy at 2^26
    elements"."""
    if not isinstance(chk, Checker):
        raise TypeError(f"chk must be an exercises.Checker, not {type(chk).__name__}.")
    v.string(bar, "bar")
    chk.note(f"speed not measured: this runs on the simulator. On a GPU the check also asks "
             f"for {bar}.")


def bandwidth_line(student_ms: float, reference_ms: float, nbytes: float, *,
                   reference_name: str = "the chapter's kernel") -> str:
    """A one-line GPU speed report: the student's GB/s against the reference's."""
    from .bench import gbps

    v.positive(student_ms, "student_ms")
    v.positive(reference_ms, "reference_ms")
    v.positive(nbytes, "nbytes")
    v.string(reference_name, "reference_name")
    s, r = gbps(nbytes, student_ms), gbps(nbytes, reference_ms)
    return (f"on this GPU your kernel moves {s:.0f} GB/s; {reference_name} moves {r:.0f} GB/s "
            f"({100 * s / r:.0f}%).")


# The longest a dry run in the emulator may take before the kernel is stopped (an endless
# loop, or a wrong kernel far slower than the exercise's): every verdict within 30 s.
DRY_RUN_TIMEOUT_S = 15.0


def preflight(chk: Checker, kernel, grid, block, *args, what: str | None = None,
              shared_bytes: int = 0, timeout: float = DRY_RUN_TIMEOUT_S, races: bool = True,
              compile_targets: bool = True, interleavings: bool = True) -> bool:
    """Run ``kernel[grid, block](*args)`` once in the thread emulator before any real launch.

    ``args`` are a small case's NumPy arrays (used in place). The emulator
    (``gpuperf.emulator``) runs the kernel's Python source, never the device, and enforces
    the rules a GPU punishes: an index out of bounds, a misaligned 16-byte access (each
    kills the CUDA context: every later launch in the session fails), a barrier that not
    every thread of a block reaches, a warp intrinsic whose lanes do not all arrive, or
    a kernel that does not finish within ``timeout`` seconds (each a hang). Such a fault
    becomes one failed case and the result is False: the checker should then return
    ``chk.report()`` without launching the kernel. Anything else
    (the kernel's own error, a feature the emulator lacks) is left to the real run: True.

    With ``races`` (the default) the run also records every access, and a data race (two
    threads touching the same bytes, one storing, neither atomic, nothing ordering them:
    ``Run.races()``, the emulator's ``compute-sanitizer --tool racecheck``) is one more
    failed case, whose result on this schedule may well be right. With ``compile_targets``
    (the default) the kernel is also compiled for sm_75 and sm_90 with these arguments'
    types (``gpuperf.targets``), even without a GPU: code the simulator runs as Python but
    no GPU compiler accepts fails here, and the result is False. With ``interleavings``
    (the default) the kernel runs a second time on copies of the arguments, its blocks in a
    random order and each block's threads started last first; outputs that differ from the
    first run's (beyond a float atomic's rounding) mean the result depends on which thread
    runs first: a race the access record missed, caught by its effect.

        if not ex.preflight(chk, kernel, grid, block, x, out):
            return chk.report()
    """
    from . import emulator

    if not isinstance(chk, Checker):
        raise TypeError(f"chk must be the exercise's Checker (ex.Checker(...)), not "
                        f"{type(chk).__name__}.")
    v.kernel(kernel)
    v.boolean(races, "races")
    v.boolean(compile_targets, "compile_targets")
    v.boolean(interleavings, "interleavings")
    if what is not None:
        v.string(what, "what")
    name = what or "a dry run in the thread emulator before launching"
    runs = []
    # Copies of the arguments as they are before the first run writes into them.
    again = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    zeroed = [a.copy() if isinstance(a, np.ndarray) else a for a in args]

    def run():
        runs.append(emulator.launch(kernel, grid, block, *args, record=races,
                                    shared_bytes=shared_bytes, timeout=timeout))

    ok = _dry_run(chk, name, run)
    raced = ok and races and runs and _fail_races(chk, runs)
    if ok and runs and not raced and interleavings and all(
            isinstance(a, np.ndarray) or np.isscalar(a) for a in args):
        if not _other_interleaving(chk, kernel, grid, block, args, again, shared_bytes,
                                   timeout, runs[0].params):
            _unwritten_memory(chk, kernel, grid, block, args, zeroed, shared_bytes, timeout,
                              runs[0].params)
    if ok and compile_targets:
        ok = _compiles(chk, kernel, args)
    return ok


def preflight_host(chk: Checker, fn, *args, what: str | None = None, max_blocks: int = 8,
                   timeout: float = DRY_RUN_TIMEOUT_S, races: bool = True,
                   runs: list | None = None) -> bool:
    """Call the student's host function ``fn(*args)`` once with its kernels in the emulator.

    For exercises where the student writes the launches too (``my_sum(d_x)``): see
    ``gpuperf.emulator.run_host``. Each launch runs its first ``max_blocks`` blocks; a fault
    becomes one failed case and the result is False, so that the checker returns before
    the real run (on a GPU, a fault kills the CUDA context). Pass host arrays made with
    ``emulator.host_view`` so that their alignment is a device array's. With ``races``
    (the default) a data race in any launch is one more failed case, and every kernel it
    launches is compiled for the course's targets, as in ``preflight``. ``runs``: a list that
    receives each launch's record (``emulator.Run``), for the structure rules below.
    """
    from . import emulator

    if not isinstance(chk, Checker):
        raise TypeError(f"chk must be the exercise's Checker (ex.Checker(...)), not "
                        f"{type(chk).__name__}.")
    v.function(fn, "fn", what="the student's host function")
    v.integer(max_blocks, "max_blocks", minimum=1)
    v.positive(timeout, "timeout")
    v.boolean(races, "races")
    if what is not None:
        v.string(what, "what")
    name = what or "a dry run of your function, its kernels in the thread emulator"
    if runs is not None and not isinstance(runs, list):
        raise TypeError(f"runs must be a list (the launches' records go into it), not "
                        f"{type(runs).__name__}.")
    runs = runs if runs is not None else ([] if races else None)
    zeroed = [_host_copy(a) for a in args]
    returned = []
    ok = _dry_run(chk, name, lambda: returned.append(emulator.run_host(
        fn, *args, max_blocks=max_blocks, timeout=timeout, runs=runs)))
    raced = ok and bool(runs) and _fail_races(chk, runs)
    if ok and returned and not raced:
        try:
            with emulator.poison("zero"):
                again = emulator.run_host(fn, *zeroed, max_blocks=max_blocks, timeout=timeout)
        except Exception:  # noqa: BLE001 - the first run's verdict stands
            pass
        else:
            names = [*emulator.param_names(fn, len(args))[:len(args)], "what it returns"]
            _first_difference(
                chk, names, [*args, _as_array(returned[0])], [*zeroed, _as_array(again)],
                "memory read before it is written",
                lambda name, where: (
                    f"{name} depends on memory your code reads before writing it: with "
                    "unwritten shared and local arrays and fresh device arrays "
                    "(cuda.device_array) reading NaN (or a large integer) it differs from a "
                    f"run where they read 0 ({where}). On a GPU they hold whatever was there, "
                    "often 0, so the result can look right by luck. Give every accumulator, "
                    "shared slot and allocated array its starting value before reading it."))
    if ok and runs:
        compiled = set()
        for run in runs:
            kernel, launch_args = getattr(run, "launched", (None, ()))
            if kernel is not None and id(kernel) not in compiled:
                compiled.add(id(kernel))
                ok = _compiles(chk, kernel, launch_args) and ok
    return ok


def _other_interleaving(chk: Checker, kernel, grid, block, first, again, shared_bytes,
                        timeout, names) -> bool:
    """Run the kernel again on ``again`` (the arguments before the first run), blocks in a
    random order and threads last first, and fail a case if any array comes out different
    from ``first`` (the first run's). Float atomics add in another order: their rounding is
    allowed, a race's effect is not. True if it failed."""
    from . import emulator

    try:
        emulator.launch(kernel, grid, block, *again, record=False, shared_bytes=shared_bytes,
                        timeout=timeout, block_order="random", thread_order="reverse")
    except Exception:  # noqa: BLE001 - a fault here, not in the first order, is a race too
        with chk.case("the same launch, blocks and threads in another order"):
            chk.fail("the kernel faults when its threads run in another order (blocks in a "
                     "random order, each block's threads last first), and not in the first: "
                     "its result depends on which thread runs first. Threads of one block are "
                     "ordered by cuda.syncthreads(); threads of different blocks only by "
                     "atomic updates.")
        return True
    return _first_difference(
        chk, names, first, again, "the same launch, blocks and threads in another order",
        lambda name, where: (
            f"{name} came out different when the blocks ran in a random order and each "
            f"block's threads last first: {where}. The result depends on which thread runs "
            "first: some thread reads what another writes (or both write) with nothing "
            "ordering them. Threads of one block are ordered by cuda.syncthreads(); threads "
            "of different blocks only by atomic updates."))


def _host_copy(a):
    from . import emulator

    if isinstance(a, emulator.HostArray) and a.ndim == 1:  # keep its offset from 16 bytes
        off = emulator._host_offset(a) % 256
        if off % a.itemsize == 0:
            pad = off // a.itemsize
            return emulator.host_view(np.concatenate([np.zeros(pad, a.dtype), np.asarray(a)]),
                                      pad)
    return a.copy() if isinstance(a, np.ndarray) else a


def _as_array(value):
    """What a host function returned, as an array to compare (a number, an array, a tuple of
    numbers); None where it cannot be compared."""
    try:
        out = np.asarray(getattr(value, "copy_to_host", lambda: value)(), dtype=float)
    except (TypeError, ValueError):
        return None
    return out if out.dtype.kind == "f" else None


def _unwritten_memory(chk: Checker, kernel, grid, block, first, again, shared_bytes, timeout,
                      names) -> bool:
    """Run the kernel again on ``again`` with the memory nobody wrote (shared and local
    arrays) reading as zero, what a GPU often happens to give, where the first run read NaN
    or a large integer; fail a case if an output differs: the kernel reads memory it never
    wrote (an accumulator never zeroed, a shared slot never filled), right on a GPU only by
    luck. True if it failed."""
    from . import emulator

    try:
        with emulator.poison("zero"):
            emulator.launch(kernel, grid, block, *again, record=False,
                            shared_bytes=shared_bytes, timeout=timeout)
    except Exception:  # noqa: BLE001 - the first run's verdict stands
        return False
    return _first_difference(
        chk, names, first, again, "memory read before it is written",
        lambda name, where: (
            f"{name} depends on memory your kernel reads before writing it: with unwritten "
            "shared and local arrays reading NaN (or a large integer) it differs from a run "
            f"where they read 0 ({where}). On a GPU they hold whatever was there, often 0, "
            "so the result can look right by luck. Give every accumulator and shared slot "
            "its starting value (0 for a sum, -inf for a max) before reading it."))


def _first_difference(chk: Checker, names, first, again, case: str, message) -> bool:
    """Fail ``case`` with ``message(name, where)`` at the first array of ``first`` that
    differs from ``again`` (float atomics' rounding allowed); True if one did."""
    for name, a, b in zip(names, first, again):
        if not isinstance(a, np.ndarray) or a.shape != b.shape:
            continue
        exact = a.dtype.kind not in "fc"
        same = (np.array_equal(a, b) if exact
                else np.allclose(a, b, rtol=1e-4, atol=1e-6, equal_nan=True))
        if not same:
            differ = np.flatnonzero(a != b if exact else ~np.isclose(
                a, b, rtol=1e-4, atol=1e-6, equal_nan=True))
            at = tuple(int(i) for i in np.unravel_index(differ[0], a.shape))
            at = ", ".join(map(str, at))
            where = (f"{len(differ)} element(s), first {name}[{at}] = "
                     f"{a.flat[differ[0]].item()!r} against {b.flat[differ[0]].item()!r}")
            with chk.case(case):
                chk.fail(message(name, where))
            return True
    return False


def _compiles(chk: Checker, kernel, args) -> bool:
    """The kernel compiles for the course's real targets with these arguments' types (see
    ``gpuperf.targets``); False, with a failed case, if not."""
    return check_compiles(chk, kernel, args)


def check_compiles(chk, kernel, args, ccs=None) -> bool:
    """One case of ``chk``: ``kernel`` compiles for every target in ``ccs`` with the types of
    ``args``. A compiler error fails the case (False); a kernel that cannot be written out,
    or a missing compiler, gives a note and True."""
    from . import targets

    if not isinstance(chk, Checker):
        raise TypeError(f"chk must be the exercise's Checker (ex.Checker(...)), not "
                        f"{type(chk).__name__}.")
    if not isinstance(getattr(kernel, "py_func", None), types.FunctionType):
        raise TypeError(f"kernel must be a @cuda.jit kernel, not {type(kernel).__name__}.")
    ccs = targets.TARGETS if ccs is None else ccs
    names = " and ".join(f"sm_{a}{b}" for a, b in targets.check_ccs(ccs))
    try:
        result = targets.compile_for_targets(kernel, args, ccs)
    except (targets.Unbundlable, RuntimeError) as err:
        chk.note(f"the kernel was not compiled for {names} here: {err}")
        return True
    failed = {cc: msg for cc, msg in result.items() if msg}
    if not failed:
        return True
    with chk.case(f"compiles for {names}"):
        cc, msg = next(iter(failed.items()))
        where = "any of them" if len(failed) == len(result) else f"sm_{cc.replace('.', '')}"
        chk.fail(f"the kernel does not compile for {where} (the simulator runs it as Python, "
                 f"but a GPU cannot): {targets.plain_words(msg)}")
    return False


def _fail_races(chk: Checker, runs) -> bool:
    """One failed case for the first data race in the emulator's ``runs``, if any (True)."""
    for run in runs:
        found = run.describe_races(1)
        if found:
            with chk.case("races in the thread emulator"):
                chk.fail(found[0] + " The result can come out right here (the emulator and the "
                         "simulator run threads in one order) and wrong on a GPU. Threads of one "
                         "block are ordered by cuda.syncthreads(); threads of different blocks "
                         "only by atomic updates (cuda.atomic.*).")
            return True
    return False


def _dry_run(chk: Checker, name: str, run) -> bool:
    from . import emulator

    with chk.case(name):
        try:
            run()
        except emulator.FAULTS as err:
            chk.fail(describe_exception(err) + (
                " On a GPU this would kill the CUDA context or hang." if SIMULATOR else
                " The kernel was not launched on the GPU, where this would kill the CUDA "
                "context (every later launch in the session fails) or hang."))
            return False
        except Unsupported as err:  # before NotImplementedError, its base
            chk.note(f"the dry run in the thread emulator was skipped: {err}")
        except NotImplementedError:
            pass  # the exercise's stub: the real run says "not implemented yet"
        except Exception as err:  # noqa: BLE001  (the real launch reports the kernel's own errors)
            chk.note(f"the dry run in the thread emulator stopped at: {describe_exception(err)}")
    return True


def is_stub(fn) -> bool:
    """True if ``fn`` (a function, a ``@cuda.jit`` kernel, or a factory that defines one) still
    raises ``NotImplementedError``: the student copy's placeholder, left untouched.

    Read from the source's syntax tree, so a comment or a string that mentions it does not
    count. On a GPU a kernel whose body raises compiles to one that silently writes nothing,
    so the checkers ask this before they launch anything.
    """
    import ast

    if not callable(fn):
        raise TypeError(f"fn must be the student's function or kernel, not {type(fn).__name__}.")
    src = source_of(fn)
    if src is None:
        return False
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(exc, ast.Name) and exc.id == "NotImplementedError":
                return True
    return False


def refuses_stubs(check=None, *, solved_by=(), judged_apart=False):
    """Decorator for a checker whose first argument is the student's code: an untouched stub
    gets one line, "not implemented yet", instead of a list of consequences (on a GPU, a
    stub kernel runs and writes nothing, so every case would report NaN).

    ``solved_by`` names the course's functions (and classes) that already compute the
    exercise's answer: ``"name"`` in the checker's own module, or ``"gpuperf.kernels.x:name"``.
    An answer whose code uses one of them (directly, through a name bound to it, or through
    another function of the student's) fails on one line, before any case runs. It is read
    from the compiled code, so a comment or a string that names the function counts for
    nothing; the course's helpers that the task names are not in the list.

    While the check runs, the same functions are tripwires (``_tripwires``): a call that the
    student's code makes, by whatever route (a ``functools.partial``, an object's ``__call__``,
    ``getattr``, a name built at run time), ends the check with the same failure; the
    checker's own calls, and those of the course's helpers the student may call, go through.

    ``judged_apart=True`` marks a checker whose answer is a host function and whose verdict
    rests on more than the values it hands the grader (a structure or speed case, a watch on
    launches and copies, or answers that are not recorded): the grader judges it again on the
    student's function alone, apart from the notebook (``gpuperf.grade.judged_exercises``).
    A checker given a kernel is judged again without it.

    Use as ``@refuses_stubs`` or ``@refuses_stubs(solved_by=("reduce_sum", ...))``."""
    import functools

    if check is None:
        if isinstance(solved_by, str) or not all(isinstance(n, str) and n.strip()
                                                  for n in solved_by):
            raise TypeError("solved_by must be a tuple of names (\"reduce_sum\" or "
                            f"\"gpuperf.kernels.reduce:reduce_sum\"), not {solved_by!r}.")
        v.boolean(judged_apart, "judged_apart")
        return lambda fn: refuses_stubs(fn, solved_by=tuple(solved_by),
                                        judged_apart=judged_apart)
    v.function(check, "check", what="a checker function")
    v.boolean(judged_apart, "judged_apart")

    @titled
    @functools.wraps(check)
    def wrapper(student, *args, **kwargs):
        title = exercise_title(_plain_first_line(check))
        name = getattr(student, "__name__", "your code")
        if callable(student) and is_stub(student):
            return not_implemented(title, name,
                                   "replace `raise NotImplementedError()` with your code.")
        owner = _course_module(student)
        if owner:  # e.g. `my_saxpy = gs.saxpy_grid_stride`: the course's code, not the answer
            return one_line_failure(title, name,
                                     f"this is the course's own code (from {owner}), not "
                                     "yours: write the function in your notebook.")
        used = _borrowed(student, _resolve_names(solved_by, check.__module__))
        if not used:
            # What reading the code cannot see (a name built at run time, an object made
            # elsewhere): the course's answers are tripwires while the check runs.
            with _tripwires(solved_by, check.__module__) as called:
                try:
                    result = check(student, *args, **kwargs)
                except CourseAnswerCalled as err:  # also one a check around this one set
                    result, called = None, [*called, err.label]
            used = called[0] if called else None
        if used:
            return one_line_failure(title, name,
                                     f"your code uses {used}, the course's own answer to this "
                                     "exercise: write that part yourself.")
        return result

    wrapper.solved_by = tuple(solved_by)
    wrapper.judged_apart = judged_apart
    return wrapper


def _plain_first_line(check) -> str:
    """A checker's docstring's first line without reStructuredText (a checker with no book
    title: no exercise of the book calls it)."""
    import re

    line = (check.__doc__ or check.__name__).strip().splitlines()[0].rstrip(".")
    return re.sub(r":\w+:`([^`]*)`|``([^`]*)``", lambda m: m.group(1) or m.group(2), line)


def _resolve_objects(names, module: str) -> list:
    """``[(object, "module.name")]`` for the names of ``solved_by``."""
    import importlib

    found = []
    for entry in names:
        mod_name, _, attr = entry.rpartition(":") if ":" in entry else (module, ":", entry)
        obj = importlib.import_module(mod_name)
        for part in attr.split("."):
            obj = getattr(obj, part)  # a misspelt name is the course's bug: let it raise
        found.append((obj, f"{mod_name}.{attr}"))
    return found


def _resolve_names(names, module: str) -> dict:
    """``{id(object): "module.name"}`` for the names of ``solved_by`` (kernels by their
    Python function too, so a kernel and its ``py_func`` are the same answer; a cached
    factory by the function it caches; a function by its compiled code too, so a copy made
    of that code is the same answer)."""
    found = {}
    for obj, label in _resolve_objects(names, module):
        for o in (obj, getattr(obj, "py_func", None), getattr(obj, "__wrapped__", None)):
            if o is not None:
                found.setdefault(id(o), label)
                if hasattr(o, "__code__"):
                    found.setdefault(id(o.__code__), label)
    return found


_LOADS = {"LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_FROM_DICT_OR_GLOBALS",
          "LOAD_FROM_DICT_OR_DEREF"}
_ATTRS = {"LOAD_ATTR", "LOAD_METHOD"}


def _cuda_names() -> dict:
    """``{id(object): "numba.cuda.name"}`` for the public names of ``numba.cuda``. On a GPU,
    ``from numba.cuda import syncthreads`` binds an object whose own module is
    ``numba.cuda.intrinsics`` (``atomic``, ``shared``: ``numba.cuda.stubs``); the source
    checks ask for it by the name the student imported it under."""
    import numba.cuda as nc

    key = (id(nc), hash(tuple(map(id, vars(nc).values()))))  # rebuilt when an attribute changes
    if _CUDA_NAMES.get("key") == key:
        return _CUDA_NAMES["names"]
    names = {}
    for attr in dir(nc):
        if attr.startswith("_"):
            continue
        try:
            obj = getattr(nc, attr)
        except Exception:  # noqa: BLE001  (a lazy attribute that cannot load here)
            continue
        if not isinstance(obj, (bool, int, float, str, bytes, type(None))):
            names.setdefault(id(obj), f"numba.cuda.{attr}")
    _CUDA_NAMES.update(key=key, names=names)
    return names


_CUDA_NAMES: dict = {}  # the last map of _cuda_names, with the module state it was made from


def _dotted(obj) -> str | None:
    """``"numba.cuda"`` for a module, ``"pkg.mod.func"`` for a function or class, else None
    (a public name of ``numba.cuda`` by that name: see :func:`_cuda_names`)."""
    import types

    if isinstance(obj, types.ModuleType):
        return obj.__name__
    cuda_name = _cuda_names().get(id(obj))
    if cuda_name is not None:
        return cuda_name
    module, qual = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    return f"{module}.{qual}" if isinstance(module, str) and isinstance(qual, str) else None


def _referenced(code, namespace: dict, cells: dict):
    """``(object, dotted name)`` for what ``code`` (and the code nested in it) names: globals,
    closure cells, imports and the attribute chains read from them (``red.reduce_sum``,
    ``cuda.shfl_down_sync``: the name even where the attribute exists only inside a kernel,
    as in the simulator). Names bound to local variables are not followed."""
    import builtins
    import dis
    import sys
    import types

    missing = object()
    stack = [code]
    while stack:
        c = stack.pop()
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
        current, dotted, imported, imported_name = missing, None, missing, None
        for ins in dis.get_instructions(c):
            op, arg = ins.opname, ins.argval
            if op in _LOADS and isinstance(arg, str):
                if arg in cells:
                    current = cells[arg]
                else:
                    current = namespace.get(arg, getattr(builtins, arg, missing))
                dotted = None if current is missing else _dotted(current)
            elif op in _ATTRS and isinstance(arg, str) and (current is not missing or dotted):
                current = missing if current is missing else getattr(current, arg, missing)
                dotted = f"{dotted}.{arg}" if dotted else None
            elif op == "IMPORT_NAME" and isinstance(arg, str):
                # Only modules already loaded: the course's answers are (their checker
                # loaded them), and nothing is imported on the student's behalf.
                imported = current = sys.modules.get(arg, missing)
                imported_name = dotted = arg
            elif op == "IMPORT_FROM" and isinstance(arg, str) and imported_name:
                current = getattr(imported, arg, missing) if imported is not missing else missing
                if current is missing:
                    current = sys.modules.get(f"{imported_name}.{arg}", missing)
                dotted = f"{imported_name}.{arg}"
            elif op in ("CACHE", "EXTENDED_ARG", "PRECALL", "PUSH_NULL"):
                continue
            else:  # the chain ends; a store keeps the module of `from m import a, b`
                current, dotted = missing, None
                if not op.startswith("STORE"):
                    imported, imported_name = missing, None
                continue
            yield (None if current is missing else current), dotted


def uses(fn, *names: str) -> str | None:
    """The first of ``names`` (``"numba.cuda:shfl_down_sync"``, ``"module:attr"``) that the
    code of ``fn`` uses, directly, through a name bound to it or through another function of
    the same notebook (a device function it calls); None if it uses none of them.

    Read from the compiled code, not the text: a comment or a string that names the function
    does not count, and neither does a function defined but never referenced."""
    if not callable(fn):
        raise TypeError(f"fn must be the student's function or kernel, not {type(fn).__name__}.")
    if not names:
        raise ValueError("names: give at least one \"module:attr\", e.g. "
                         "\"numba.cuda:syncthreads\".")
    for name in names:
        if not isinstance(name, str) or ":" not in name:
            raise ValueError(f"names: {name!r} is not \"module:attr\" (e.g. "
                             "\"numba.cuda:syncthreads\").")
    return _uses(fn, {}, {n.replace(":", "."): n.replace(":", ".") for n in names})


def _borrowed(student, forbidden: dict) -> str | None:
    """The first course answer of ``forbidden`` that the student's code uses, or None
    (what ``refuses_stubs(solved_by=...)`` asks; the tests' fixture lets course code pass)."""
    return _uses(student, forbidden)


def _uses(student, forbidden: dict, dotted_names: dict | None = None) -> str | None:
    """The first object of ``forbidden`` (by identity) or name of ``dotted_names`` (by the
    dotted name of what the code reads) that the student's code uses, or None.

    Follows the student's own functions (same module, nested factories, kernels' Python
    functions, closures) but not the course's or a library's code."""
    dotted_names = dotted_names or {}
    if not forbidden and not dotted_names:
        return None
    seen: set[int] = set()
    # (object, handed in): what the checker was given, and what a callable without code of
    # its own hands its calls to (a partial's function and arguments, a bound method's
    # function, a callable object's __call__ and attributes), is read whatever its module.
    todo = [(student, True)]
    home = None
    while todo:
        obj, handed = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if id(obj) in forbidden:
            return forbidden[id(obj)]
        fn = getattr(obj, "py_func", obj)
        fn = getattr(fn, "__func__", fn)
        fn = getattr(fn, "__wrapped__", fn)  # functools.lru_cache, functools.wraps
        if id(fn) in forbidden:
            return forbidden[id(fn)]
        code = getattr(fn, "__code__", None)
        if code is not None and id(code) in forbidden:  # a function made of the course's code
            return forbidden[id(code)]
        if code is None:
            if handed:
                todo.extend((part, True) for part in _handed_on(fn))
            continue
        if handed and home is None and not _library_file(code.co_filename):
            home = getattr(fn, "__module__", None)
        # The function handed in is always read (what a wrapper handed in calls, unless it is
        # the course's); what they call only if it is the student's.
        course = _course_module(fn)
        if obj is student or (handed and not course):
            pass
        elif getattr(fn, "__module__", None) != home or course:
            continue
        cells = {}
        for var, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or ()):
            try:
                cells[var] = cell.cell_contents
            except ValueError:  # a cell not filled yet
                pass
        for ref, dotted in _referenced(code, getattr(fn, "__globals__", {}), cells):
            if dotted in dotted_names:
                return dotted_names[dotted]
            if ref is None:
                continue
            if id(ref) in forbidden:
                return forbidden[id(ref)]
            todo.append((ref, False))
    return None


def _handed_on(obj) -> list:
    """What a callable without code of its own calls, or holds to call: a
    ``functools.partial``'s function and bound arguments, a bound method's function and
    object, a callable object's ``__call__`` and its attributes; nothing for anything else."""
    import functools
    import types

    if isinstance(obj, (type, types.ModuleType)) or not callable(obj):
        return []
    if isinstance(obj, (functools.partial, functools.partialmethod)):
        return [obj.func, *obj.args, *(obj.keywords or {}).values()]
    if isinstance(obj, types.MethodType):
        return [obj.__func__, obj.__self__]
    call = next((vars(k)["__call__"] for k in type(obj).__mro__ if "__call__" in vars(k)), None)
    if not isinstance(call, types.FunctionType):
        return []
    attrs = getattr(obj, "__dict__", None)
    return [call, *(attrs.values() if isinstance(attrs, dict) else ())]


class CourseAnswerCalled(BaseException):
    """Raised where the student's code calls one of the course's answers while its check runs
    (``refuses_stubs(solved_by=...)``): a BaseException, so that ``except Exception`` in the
    student's code or in a checker's case does not swallow it; the call is recorded anyway."""

    def __init__(self, label: str):
        super().__init__(f"the student's code called {label}")
        self.label = label


@contextmanager
def _tripwires(names, module: str):
    """While the block runs, the course's functions ``names`` (as ``solved_by`` names them)
    are tripwires: a call from the student's code is recorded (its label appended to the
    list the block gets) and raises ``CourseAnswerCalled``; a call from the course's code
    (the checker's own reference, a helper the exercise allows) runs the function.

    The function object itself is changed (its code is swapped, then put back), so every
    route to it is caught: a name bound before the check, a ``functools.partial``, a
    closure, a method, ``getattr`` on a module. Who calls is read from the stack: the first
    frame that is neither the standard library's nor an installed package's decides. A
    cached factory is watched through the function it caches (a call the cache answers is
    not seen: the compiled-code check covers those); kernels are not watched (on a GPU
    their code is compiled, not run)."""
    import sys

    called: list = []
    swapped = []
    try:
        for obj, label in _resolve_objects(names, module):
            fn = _watchable(obj)
            if fn is None or id(fn) in _WATCHED:
                continue
            copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__,
                                      fn.__defaults__, fn.__closure__)
            copy.__kwdefaults__ = fn.__kwdefaults__

            def tripped(args, kwargs, copy=copy, label=label):
                if _called_by_student(sys._getframe(2)):  # 1: the swapped code; 2: its caller
                    called.append(label)
                    raise CourseAnswerCalled(label)
                return copy(*args, **kwargs)

            key = f"_gpuperf_tripwire_{id(fn)}"
            fn.__globals__[key] = tripped
            swapped.append((fn, fn.__code__, key))
            _WATCHED.add(id(fn))
            fn.__code__ = _tripwire_code(key, fn.__code__)
        yield called
    finally:
        for fn, code, key in reversed(swapped):
            fn.__code__ = code
            fn.__globals__.pop(key, None)
            _WATCHED.discard(id(fn))


_WATCHED: set = set()  # ids of the functions that are tripwires now


def _watchable(obj):
    """The plain Python function whose code a tripwire on ``obj`` replaces, or None: the
    function itself, a cached factory's cached function, a class's own ``__init__``."""
    if getattr(obj, "py_func", None) is not None:
        return None  # a kernel
    if isinstance(obj, type):
        obj = vars(obj).get("__init__")
    elif not isinstance(obj, types.FunctionType):
        obj = getattr(obj, "__wrapped__", None)
    return obj if isinstance(obj, types.FunctionType) else None


def _tripwire_code(key: str, original):
    """Code that hands ``(args, kwargs)`` to the global ``key``, with as many free variables
    as ``original`` (a function's code is swapped only for code with as many) and its name,
    file and first line (so ``inspect.getsource`` still finds the function)."""
    free = [f"_free{i}" for i in range(len(original.co_freevars))]
    lines = ["def _outer():", *(f"    {v} = None" for v in free),
             "    def _tripwire(*args, **kwargs):",
             *([f"        {', '.join(free)}"] if free else []),
             f"        return {key}(args, kwargs)", "    return _tripwire"]
    namespace: dict = {}
    exec(compile("\n".join(lines), "<gpuperf tripwire>", "exec"), namespace)  # noqa: S102
    names = {"co_name": original.co_name, "co_filename": original.co_filename,
             "co_firstlineno": original.co_firstlineno}
    if hasattr(original, "co_qualname"):   # Python 3.11 and later; 3.10's code has none
        names["co_qualname"] = original.co_qualname
    return namespace["_outer"]().__code__.replace(**names)


def _called_by_student(frame) -> bool:
    """True if the first frame from ``frame`` outwards that is not the standard library's or
    an installed package's is not the course's: the student's code made the call."""
    while frame is not None:
        where = _whose_file(frame.f_code.co_filename)
        if where != "library":
            return where == "student"
        frame = frame.f_back
    return False


@functools.lru_cache(maxsize=4096, typed=True)
def _whose_file(filename: str) -> str:
    """``"course"`` (a file of this package), ``"library"`` (the standard library, an installed
    package, ``<frozen ...>``) or ``"student"`` (anything else: a notebook's cell, a test)."""
    import sys
    import sysconfig

    path = os.path.realpath(filename)
    if path.startswith(_PACKAGE_DIR + os.sep):
        return "course"
    if filename.startswith("<frozen "):
        return "library"
    paths = sysconfig.get_paths()
    dirs = {os.path.realpath(paths[k]) + os.sep for k in ("stdlib", "platstdlib", "purelib",
                                                          "platlib") if k in paths}
    # Packages installed elsewhere (pip --target, a folder on PYTHONPATH): an entry of sys.path
    # that holds installed distributions' metadata is a site folder too.
    dirs |= {os.path.realpath(d) + os.sep for d in sys.path if d and _holds_distributions(d)}
    return "library" if any(path.startswith(d) for d in dirs) else "student"


@functools.lru_cache(maxsize=256, typed=True)
def _holds_distributions(folder: str) -> bool:
    """True if ``folder`` holds an installed distribution's metadata (``*.dist-info``)."""
    try:
        return any(name.endswith(".dist-info") for name in os.listdir(folder))
    except OSError:
        return False


def _library_file(filename: str) -> bool:
    return _whose_file(filename) == "library"


_PACKAGE_DIR = os.path.dirname(os.path.realpath(__file__))


def _course_module(obj) -> str | None:
    """The course module ``obj`` was defined in (a kernel, a function, a factory), or None
    for the student's own code."""
    if getattr(obj, "course_example", False):  # a wrong kernel a chapter shows being judged
        return None
    fn = getattr(obj, "py_func", obj)
    fn = getattr(fn, "__func__", fn)
    module = getattr(fn, "__module__", None) or ""
    return module if module == "gpuperf" or module.startswith("gpuperf.") else None


def not_implemented(title: str, what: str, how: str) -> Report:
    """The one-line report for an exercise left as the student copy gave it: printed, failed."""
    v.string(title, "title")
    v.string(what, "what")
    v.string(how, "how")
    return one_line_failure(title, what, f"not implemented yet: {how}")


def one_line_failure(title: str, what: str, why: str) -> Report:
    """A report failed on one line before any case ran: printed and logged like any other."""
    for value, name in ((title, "title"), (what, "what"), (why, "why")):
        v.string(value, name)
    report = Report(exercise_title(title))
    report.failed.append((what, why))
    print(report.text())
    _log_verdict(report)
    return report



# --------------------------------------------------------------------------- structure
# What the outputs cannot show, judged from the emulator's record of one launch (issue 63):
# how each warp's global accesses fall into 32-byte sectors, how many loads a thread keeps
# in flight before it stores, whether a thread reads the same element again, and how many
# threads combine values at each barrier step of a tree. The same in every mode (the
# emulator runs the kernel's Python source, never the device); each rule names the line that
# breaks it.

SECTOR = 32


def _checker_arg(chk) -> None:
    if not isinstance(chk, Checker):
        raise TypeError(f"chk must be the Checker a checker builds its verdict with, not "
                        f"{type(chk).__name__} ({chk!r:.60}).")


def _run_arg(run, name: str = "run") -> None:
    from .emulator import Run

    if not isinstance(run, Run):
        raise TypeError(f"{name} must be the emulator's record of a launch (recorded_run's "
                        f"result), not {type(run).__name__} ({run!r:.60}).")



def emulator_param_names(kernel, n: int = 0) -> list[str]:
    """The kernel's parameter names as the emulator's record names its arrays."""
    if not callable(kernel):
        raise TypeError(f"kernel must be a kernel (a @cuda.jit function or its Python "
                        f"function), not {type(kernel).__name__}.")
    v.integer(n, "n", minimum=0)
    from . import emulator

    return emulator.param_names(kernel, n)


def recorded_run(chk: Checker, name: str, kernel, grid, block, *args, shared_bytes: int = 0,
                 timeout: float = 20.0):
    """One launch in the emulator with every access recorded, inside case ``name``: the
    ``emulator.Run``, or None (the case failed: a fault, or a kernel stopped after
    ``timeout`` seconds, which the failure says)."""
    from . import emulator

    v.string(name, "name")
    out = []
    with chk.case(name):
        try:
            out.append(emulator.launch(kernel, grid, block, *args, record=True,
                                       shared_bytes=shared_bytes, timeout=timeout))
        except emulator.LaunchTimeout as err:
            chk.fail(f"stopped: {err}")
        except emulator.FAULTS as err:
            chk.fail(describe_exception(err))
    return out[0] if out else None


def _where_line(e) -> str:
    from . import emulator

    text = emulator.source_line(e.file, e.line)
    return f"line {e.line}" + (f" (`{text}`)" if text else "")


def sector_use(run, array: str, kinds=("load", "store")) -> dict:
    """Per source line, for the global accesses of ``array``: ``requests`` (warp requests),
    ``sectors`` (32-byte sectors they touch), ``needed`` (the fewest sectors holding the
    bytes they use), and ``first`` (an example ``WarpRequest``)."""
    _run_arg(run)
    lines: dict = {}
    for r in run.warp_requests():
        if r.space != "global" or r.array != array or r.kind not in kinds:
            continue
        used = {(a, nb) for _, a, nb in r.lanes}
        sectors = {s for a, nb in used for s in range(a // SECTOR, (a + nb - 1) // SECTOR + 1)}
        row = lines.setdefault((r.kind, r.line), {"requests": 0, "sectors": 0, "needed": 0,
                                                  "first": r})
        row["requests"] += 1
        row["sectors"] += len(sectors)
        row["needed"] += -(-sum(nb for _, nb in used) // SECTOR)
    return lines


def expect_coalesced(chk: Checker, run, arrays, *, advice: str, slack: float = 1.5) -> bool:
    """Fail the current case unless every warp request to each of ``arrays`` (parameter
    names) touches at most ``slack`` times the sectors its bytes need: consecutive threads on
    consecutive elements. Names the worst line."""
    _checker_arg(chk)
    _run_arg(run)
    if run is None:
        return False
    for array in arrays:
        for (kind, _), row in sorted(sector_use(run, array).items(),
                                     key=lambda kv: -kv[1]["sectors"] / kv[1]["needed"]):
            if row["sectors"] > slack * row["needed"]:
                r = row["first"]
                per, need = row["sectors"] / row["requests"], row["needed"] / row["requests"]
                chk.fail(f"{_where_line(r)}: each warp's {kind}s of {array} touch "
                         f"{per:.1f} sectors of 32 bytes where the bytes they use fit in "
                         f"{need:.1f}, counted in the emulator (every mode): the accesses are "
                         f"not coalesced. {advice}")
                return False
    return True


def expect_loaded_once(chk: Checker, run, arrays, *, advice: str, most: int = 2) -> bool:
    """Fail the current case if one thread loads the same element of one of ``arrays`` from
    global memory more than ``most`` times: values the exercise holds in registers."""
    _checker_arg(chk)
    _run_arg(run)
    if run is None:
        return False
    counts: dict = {}
    for e in run.events:
        if e.space == "global" and e.kind == "load" and e.array in arrays:
            key = (tuple(e.block), e.thread, e.array, e.address)
            counts.setdefault(key, []).append(e)
    worst = max(counts.values(), key=len, default=[])
    if len(worst) > most:
        e = worst[-1]
        chk.fail(f"{_where_line(e)}: thread {e.thread} of block {tuple(e.block)} loads the same "
                 f"element of {e.array} from global memory {len(worst)} times, counted in the "
                 f"emulator. {advice}")
        return False
    return True


def loads_in_flight(run, array: str) -> list[int]:
    """For each load of ``array`` from global memory, how many of the thread's loads of it
    were made since its last global store (this one included): loads a thread issues
    before it stores, in flight together. Counted in elements (a 16-byte load of float32
    is four)."""
    _run_arg(run)
    out, since, last = [], 0, None
    for e in run.events:
        who = (tuple(e.block), e.thread)
        if who != last:
            since, last = 0, who
        if e.space != "global":
            continue
        if e.kind in ("store", "atomic"):
            since = 0
        elif e.array == array:
            since += max(1, e.nbytes // 4)
            out.append(since)
    return out


def expect_in_flight(chk: Checker, run, array: str, *, at_least: int, advice: str) -> bool:
    """Fail the current case unless most loads of ``array`` are made in batches of at least
    ``at_least`` before the thread's next store (several loads in flight per thread)."""
    _checker_arg(chk)
    _run_arg(run)
    if run is None:
        return False
    counts = loads_in_flight(run, array)
    if not counts:
        chk.fail(f"the kernel never loads {array}.")
        return False
    # A batch of k loads shows as counts 1..k: the loads that end a batch of at least
    # ``at_least``, times the batch, are the loads made in flight together.
    batched = sum(c for k, c in enumerate(counts)
                  if c >= at_least and (k + 1 == len(counts) or counts[k + 1] <= c))
    if batched < len(counts) / 2:
        e = next(e for e in run.events if e.space == "global" and e.array == array
                 and e.kind == "load")
        chk.fail(f"{_where_line(e)}: your threads keep at most {max(counts)} load(s) of "
                 f"{array} in flight before storing (most loads: {_common(counts)}), counted in "
                 f"the emulator; the exercise asks for at least {at_least}. {advice}")
        return False
    return True


def _common(counts) -> str:
    peaks = [c for k, c in enumerate(counts) if k + 1 == len(counts) or counts[k + 1] <= c]
    top = max(set(peaks), key=peaks.count)
    return f"{top} at a time"


def tree_steps(run, space: str = "shared") -> list[tuple[int, int]]:
    """The steps of a block's reduction: for each barrier epoch (of block 0) in which
    threads load two or more different elements of one ``space`` array, (how many threads
    load from it, the first line that does)."""
    _run_arg(run)
    steps: dict = {}
    first = run.events[0].block if run.events else None
    for e in run.events:
        if e.space == space and e.kind == "load" and e.block == first:
            steps.setdefault((e.array, e.epoch), []).append(e)
    out = []
    for _key, loads in sorted(steps.items(), key=lambda kv: kv[0][1]):
        if len({e.address for e in loads}) > 1:
            out.append((len({e.thread for e in loads}), min(e.line for e in loads)))
    return out


def expect_tree(chk: Checker, run, block: int, *, advice: str) -> bool:
    """Fail the current case unless the record shows a tree over the block in shared memory:
    a barrier step where half the block's threads combine values, then fewer."""
    _checker_arg(chk)
    _run_arg(run)
    if run is None:
        return False
    steps = tree_steps(run)
    half = block // 2
    if not steps:
        chk.fail(f"the threads' values never meet in shared memory (no barrier step where "
                 f"threads read each other's slots), counted in the emulator. {advice}")
        return False
    widest, line = max(steps)
    if widest < half:
        chk.fail(f"line {line}: at the widest step of your reduction {widest} thread(s) of "
                 f"the block of {block} read shared memory, counted in the emulator; a tree "
                 f"over the block starts with {half} (thread t < {half} combines slots t and "
                 f"t + {half}), then halves. {advice}")
        return False
    return True


def expect_few_atomics(chk: Checker, runs, elements: int, *, advice: str,
                       per_element: float = 1 / 8) -> bool:
    """Fail the current case if the launches in ``runs`` make more than ``per_element``
    atomic updates of global memory per element of the input (``elements``): an atomic per
    element (or per thread) serializes on one address, where a block's reduction first
    leaves one per block."""
    _checker_arg(chk)
    atomics = [e for run in runs for e in run.events if e.space == "global" and e.kind == "atomic"]
    if len(atomics) > per_element * elements:
        e = atomics[0]
        chk.fail(f"{_where_line(e)}: your kernels make {len(atomics)} atomic updates of "
                 f"{e.array} for {elements} elements, counted in the emulator: about one per "
                 f"{elements / len(atomics):.3g} elements. {advice}")
        return False
    return True
