"""``python -m gpuperf.grade submissions/ --out gradebook.csv``: grade a class's notebooks.

``submissions/`` holds one folder per student, each with the student's copies of the chapter
notebooks (``submissions/ada/03_dram.ipynb``), as collected from Colab or a course site.
Each notebook is run top to bottom in a fresh Jupyter kernel (on the GPU when there is one,
under the simulator otherwise), with every checker cell put back as the course's source
notebook has it, where the student's checker cell stood (after every cell the student placed
before it): a student who edits or deletes a checker cell cannot change the verdict.
A cell that runs longer than ``--cell-timeout`` is interrupted and the run goes on, so one
student's endless loop costs one timeout, not the class; a kernel that dies ends that
notebook only.

``--out gradebook.csv`` is the gradebook: one row per student (with a ``student_id`` from
``--roster``), one column per exercise (``notebook/checker``) with the points earned, the total,
the points possible and the notebooks missing, and a last row saying where speed was measured.
Beside it, ``gradebook-canvas.csv`` and ``gradebook-gradescope.csv`` to import into an LMS,
``gradebook-feedback/<student>.md`` with each student's checker reports, to hand back, and
their executed notebooks in ``gradebook-feedback/<student>/``, and ``gradebook-details.csv``
one row per student, notebook and checker: the checks passed and run, the points, the score,
where it was graded (the GPU, or the simulator) and a status: ``graded``, ``review``, ``not
implemented`` (the stub is untouched), ``no verdict`` (the checker never reported: the
detail says why, e.g. a timeout or an error in the student's code before it), ``missing``
(a notebook others handed in and this student did not) or ``not graded`` (a file that is no
course notebook). Colab's ``Copy of 03_dram.ipynb`` and a browser's ``03_dram (1).ipynb``
count as ``03_dram.ipynb``; of two files for one notebook the newest is graded, and the row
says so. Each file is written
whole or not at all, and existing ones are replaced only with ``--force``.

While grading, every checker adds cases the student never saw: a data seed drawn afresh for
each checker run, and sizes drawn from it (``exercises.seeds``, ``hidden_sizes``); they
show in the feedback as "hidden case".

Before each checker, the modules it calls are reloaded (a checker replaced in an earlier cell
is restored), and the verdicts go to a file named afresh for each notebook, set only while
the course's checker cell runs.

Scoring is correctness first: an exercise whose outputs are wrong on any case (a case of kind
"output", ``exercises.Checker.case``) scores 0; structure and speed cases add credit only on
top of correct outputs. An exercise is worth its checker cell's nbgrader ``points`` (1 by
default); ``--assigned`` names the notebooks every student is scored on (0 where missing).

Each notebook runs in its own throwaway folder, its kernel a child process contained by
``gpuperf.sandbox``: in bubblewrap where the machine has it (the system and the course
read-only, a private /tmp, no network, no home folders, submissions, solutions or gradebook
in sight) with memory, process, CPU and file-size limits, a cell's output capped. Without
bubblewrap, only the limits: the grader says so on stderr. ``--jobs`` grades several
notebooks at once.

The checker runs in the kernel beside the student's code (it compiles, emulates and times it),
but the output cases are decided here, in the grader's process: every value a checker judges
is recorded under a key (``exercises.Checker.record``), the grader runs the course's notebook
once per grading run with the class's hidden seed (``reference_run``), and a case passes only
if the student's checker passed it and every value it judged matches the reference's at the
same key (``decide_outputs``). Forging the verdict inside a submission no longer passes wrong
outputs (handing over the checker's own expected values as the student's still can: the
instructor guide lists what is left). An exercise whose checker is given one function of the
student's is judged again apart from the notebook (``rejudge``) where the function is a
kernel (or makes one), or a host function whose checker rests on more than the values it
records (``judged_exercises``: the reduction's ``my_absmax``, the streams pipeline, the best
coarsening factor, the profiler command): a fresh kernel runs the course's checker on the
student's function alone, rebuilt from the notebook's text through a whitelist
(``gpuperf.vetting``), and that verdict is the exercise's. A function the whitelist refuses
earns nothing for what only its notebook decided (structure and speed; for an exercise whose
answers the grader does not record, everything, with the status "review"). A row whose code
names the grader's machinery (``machinery_touched``) scores 0 with the status "review" for a
person to read.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import csv
import functools
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from . import records
from . import validate as v
from .nbtools import EXPECT_REJECT, checker_cells, default_file_mode, notebook_arg  # noqa: F401
from .nbtools import checker_name as _checker_name
from .vetting import parse_python

# The details file: one row per student, notebook and exercise.
COLUMNS = ("student", "student_id", "notebook", "exercise", "passed", "total", "points",
           "possible", "score", "worth", "earned", "status", "graded_on", "detail")


def _guarded(cid: str, source: str, log: str, hidden_seed: int | None = None,
             values: str | None = None, reference: bool = False) -> str:
    """A checker cell's code, run with fresh copies of the modules it calls (an earlier cell
    cannot have replaced the checker) and with its verdicts logged for the grader; with
    ``hidden_seed``, the hidden cases are drawn from it (the same for every student); with
    ``values``, the values it judges are recorded there (``reference``: the grader's own run
    of the course's notebook, which records the expected values too)."""
    import textwrap

    names = set()
    for node in ast.walk(parse_python(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr.startswith("check_") and isinstance(node.func.value, ast.Name):
            names.add(node.func.value.id)
    reloads = "".join(
        f"    if getattr({n}, '__name__', '').startswith('gpuperf.'):\n"
        f"        _il.reload({n})\n" for n in sorted(names))
    return ("import importlib as _il\nimport gpuperf.exercises as _gx\n"
            "_il.reload(_gx)\n"
            + (f"_gx._hidden_seed = {int(hidden_seed)}\n" if hidden_seed is not None else "")
            + "try:\n" + reloads + f"    _gx.GRADE_LOG, _gx.GRADING_CELL = {log!r}, {cid!r}\n"
            + (f"    _gx.GRADE_VALUES = {values!r}\n" if values else "")
            + ("    _gx.GRADE_REFERENCE = True\n" if reference else "")
            + textwrap.indent(source.rstrip() or "pass", "    ") + "\n"
            "finally:\n    _gx.GRADE_LOG = _gx.GRADING_CELL = _gx.GRADE_VALUES = None\n"
            "    _gx.GRADE_REFERENCE = False\n")


def grading_notebook(submission, source, log: str = "verdicts.jsonl",
                     hidden_seed: int | None = None, values: str | None = None,
                     reference: bool = False):
    """The student's notebook with every checker cell as ``source`` has it (restored where
    the student deleted it), each guarded and tagged so that its verdicts reach ``log``, its
    hidden cases drawn from ``hidden_seed`` (a fresh one per cell if None), and the values
    it judges recorded in the folder ``values`` (``reference``: with the expected values)."""
    import copy

    import nbformat

    notebook_arg(submission)
    notebook_arg(source)
    v.string(log, "log")
    if hidden_seed is not None:
        v.integer(hidden_seed, "hidden_seed", minimum=2)
    if values is not None:
        v.string(values, "values")
    v.boolean(reference, "reference")
    nb = copy.deepcopy(submission)
    checks = dict(checker_cells(source))
    order = [c.get("id") for c in source.cells]

    def tagged(cid):
        return nbformat.v4.new_code_cell(_guarded(cid, checks[cid], log, hidden_seed, values,
                                                  reference))

    course = set(order) - {None}
    cells, slots = [], {}
    for cell in nb.cells:
        cid = cell.get("id")
        if cid in checks:
            # The student's version of a checker cell: replaced below, where it stood.
            if cid not in slots:
                slots[cid] = _Slot(cid)
                cells.append(slots[cid])
            continue
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        cells.append(cell)
    # Each checker runs where the student's own notebook ran it: at the student's checker
    # cell, after every cell placed before it (an answer written in a new cell below the
    # stub, or below an abandoned attempt, included), but never before the nearest cell of
    # the course that comes before it in the source and survives (its answer). Where the
    # student deleted it: after that cell and the student's own cells that follow it, just
    # before the next cell of the course.
    for cid in checks:
        here = order.index(cid)
        anchor = next((order[j] for j in range(here - 1, -1, -1)
                       if order[j] in course and any(c.get("id") == order[j] for c in cells)),
                      None)
        floor = 0 if anchor is None else next(
            i for i, c in enumerate(cells) if c.get("id") == anchor) + 1
        slot = next((i for i, c in enumerate(cells) if c is slots.get(cid)), None)
        if slot is not None and slot >= floor:
            at = slot
        else:
            at = floor
            while at < len(cells) and not isinstance(cells[at], _Slot) \
                    and cells[at].get("id") not in course:
                at += 1  # the student's own cell after the answer: it ran before the checker
        new = tagged(cid)
        new.id = cid
        cells.insert(at, new)
    nb.cells = [c for c in cells if not isinstance(c, _Slot)]
    return nb


class _Slot(dict):
    """Where the student's version of checker cell ``cid`` stood (``grading_notebook``)."""

    def __init__(self, cid):
        super().__init__()
        self.cid = cid


# The most characters of output one cell keeps (the rest is dropped, with a line saying so).
OUTPUT_CAP = 200_000
# And one notebook, all its cells together (a course notebook's outputs under the simulator
# are about 1,000,000): 100 cells of 190,000 characters each kept 19 MB a notebook, 10,000
# would have kept 2 GB.
NOTEBOOK_OUTPUT_CAP = 5_000_000

# A whole notebook may run this many cell timeouts (30 min at the default 120 s): each cell
# under the cell timeout is not enough, a student's notebook of cells that each sleep just
# under it would hold a job for hours.
NOTEBOOK_TIMEOUTS = 15

# Seconds a cell may go on after it was interrupted for its timeout (a GPU kernel that never
# ends cannot be interrupted) before the notebook is stopped there.
INTERRUPT_GRACE_S = 10.0


def _grading_client():
    """nbclient's client (polled in slices, as the self-check's) that interrupts a cell past
    its timeout, and stops the notebook if the cell does not stop within the grace."""
    import asyncio

    from nbclient.exceptions import CellTimeoutError

    from .nbtools import client_class

    class GradingClient(client_class()):
        deadline = None  # time.monotonic() past which no cell starts (the notebook's budget)

        def _get_timeout(self, cell):
            t = super()._get_timeout(cell)
            if self.deadline is None:
                return t
            left = max(1.0, self.deadline - time.monotonic())
            return min(t, left) if t else left

        async def async_execute_cell(self, cell, cell_index, *args, **kw):
            if self.deadline is not None and cell.cell_type == "code" \
                    and time.monotonic() > self.deadline:
                raise _NotebookTimeout(cell_index)
            return await super().async_execute_cell(cell, cell_index, *args, **kw)

        def output(self, outs, msg, display_id, cell_index):
            # A cell's outputs are kept up to OUTPUT_CAP characters: a student's code that
            # prints megabytes costs the grader nothing and the kept notebook stays small.
            spent = self.__dict__.setdefault("_spent", {})
            size = len(str(msg.get("content", {})))
            used, total = spent.get(cell_index, 0), spent.get("all", 0)
            spent[cell_index] = used + size
            if used + size > OUTPUT_CAP or total + size > NOTEBOOK_OUTPUT_CAP:
                if used <= OUTPUT_CAP and not spent.get(("noted", cell_index)):
                    import nbformat

                    spent[("noted", cell_index)] = True
                    what = (f"{OUTPUT_CAP:,} characters" if used + size > OUTPUT_CAP else
                            f"{NOTEBOOK_OUTPUT_CAP:,} characters in this notebook")
                    out = nbformat.v4.new_output(
                        "stream", name="stderr",
                        text=f"[grader: output past {what} left out]\n")
                    outs.append(out)
                return None
            spent["all"] = total + size
            return super().output(outs, msg, display_id, cell_index)

        async def _async_handle_timeout(self, timeout, cell=None):
            first = getattr(self, "_interrupted", None)
            if first is None or first[0] is not cell:
                self._interrupted = (cell, time.monotonic())
                return await super()._async_handle_timeout(timeout, cell)
            if time.monotonic() - first[1] < INTERRUPT_GRACE_S:
                await asyncio.sleep(0.5)  # wait for the interrupted cell's reply
                return None
            raise CellTimeoutError.error_from_timeout_and_cell(
                "the cell did not stop when interrupted", timeout, cell)

    return GradingClient


class _NotebookTimeout(Exception):
    """The notebook ran past its ``NOTEBOOK_TIMEOUTS`` cell timeouts."""


def _run(nb, *, cell_timeout: int, cwd: Path, km=None) -> str | None:
    """Execute ``nb`` in a fresh kernel (``km``'s, e.g. ``sandbox.kernel_manager``); None, or
    why the run stopped early. The whole notebook may run ``NOTEBOOK_TIMEOUTS`` cell timeouts."""
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    client = _grading_client()(nb, timeout=cell_timeout, kernel_name="python3", km=km,
                               allow_errors=True, interrupt_on_timeout=True,
                               resources={"metadata": {"path": str(cwd)}})
    budget = NOTEBOOK_TIMEOUTS * cell_timeout
    client.deadline = time.monotonic() + budget
    try:
        client.execute()
    except _NotebookTimeout as stop:
        return (f"the notebook ran past {budget} s ({NOTEBOOK_TIMEOUTS} cell timeouts) and was "
                f"stopped before cell {stop.args[0] + 1} of {len(nb.cells)}")
    except DeadKernelError:
        return "the kernel died (the student's code crashed it)"
    except CellTimeoutError:
        return (f"a cell ran past the {cell_timeout} s cell timeout and did not stop when "
                "interrupted (a GPU kernel that never ends?): the notebook was stopped there")
    except Exception as err:  # noqa: BLE001 - nbclient's own failures end this notebook only
        return f"{RUNNER_FAILED} ({type(err).__name__}: {str(err)[:200]})"
    finally:
        if km is not None:  # nbclient ends only the kernels it started itself
            _shutdown(km)
    return None


def _kill(km) -> None:
    """End ``km``'s kernel at once from another thread (the disk watch): SIGKILL to its process
    (bubblewrap, whose sandbox dies with it); the runner then finds the kernel dead."""
    import signal

    process = getattr(getattr(km, "provisioner", None), "process", None)
    if process is not None:
        try:
            os.kill(process.pid, signal.SIGKILL)
        except OSError:  # gone already
            pass


def _shutdown(km) -> None:
    """End ``km``'s kernel (and the sandbox around it) now."""
    from jupyter_core.utils import run_sync

    try:
        run_sync(km.shutdown_kernel)(now=True)
    except Exception:  # noqa: BLE001 - a kernel that is gone already
        pass


# The runner (nbclient) itself failed, not the student's code: with allow_errors=True a cell's
# error is kept in its output, so an exception out of execute() is the runner's. Seen once in a
# class of seven on an H100 (an AssertionError from nbclient's kernel-alive poll); the
# notebook is run again once before this goes into the gradebook.
RUNNER_FAILED = "the notebook runner failed, not the student's code"
RUNNER_ATTEMPTS = 2


def _why_silent(nb, cid, cell_timeout) -> str:
    """Why the checker cell ``cid`` gave no verdict, read from the executed notebook: the
    checker's own error, and the first error of an earlier cell (often the cause: a syntax
    error in the answer, a deleted setup cell)."""
    idx = next((i for i, c in enumerate(nb.cells) if c.get("id") == cid), None)
    earlier = None
    for i, cell in enumerate(nb.cells[: (idx or 0) + 1]):
        for out in cell.get("outputs", []):
            if out.get("output_type") != "error":
                continue
            first = (cell.source.strip().splitlines() or [""])[0][:60]
            if out.get("ename") == "KeyboardInterrupt":
                if i == idx:
                    return (f"the checker ran past the {cell_timeout} s cell timeout (the "
                            "student's code did not finish) and was interrupted")
                return (f"an earlier cell (starting {first!r}) ran past the {cell_timeout} s "
                        "cell timeout and was interrupted")
            what = f"{out.get('ename')}: {out.get('evalue', '')[:200]}"
            if i == idx:
                return (f"the checker raised {what}"
                        + (f", after an earlier cell failed: {earlier}" if earlier else ""))
            if earlier is None and out.get("ename") != "NotImplementedError":
                earlier = f"the cell starting {first!r} raised {what}"
    return "the checker cell did not run to a verdict" + (f"; {earlier}" if earlier else "")


def exercise_points(nb) -> dict:
    """Points each checker cell of a source notebook is worth: its nbgrader ``points``
    metadata where it has one, else 1."""
    notebook_arg(nb)
    out = {}
    for cid, _ in checker_cells(nb):
        cell = next(c for c in nb.cells if c.get("id") == cid)
        pts = cell.get("metadata", {}).get("nbgrader", {}).get("points", 1)
        try:
            pts = float(pts)
        except (TypeError, ValueError):
            pts = 1.0
        out[cid] = pts if pts > 0 else 1.0
    return out


# What a student's answer has no need to touch, and a submission that forges its verdict does:
# a row whose code names one of these is flagged for the instructor to read ("review").
_MACHINERY = ("_log_verdict", "GRADE_LOG", "GRADING_CELL", "_hidden_seed", "gpuperf.exercises",
              "exercises.", "report_", "Report(", "sys._getframe", "currentframe", "gc.get_",
              "ctypes", "__import__", "importlib", "sys.modules", "builtins", "__builtins__",
              "setattr(", "__globals__", "f_back", "f_locals", "eval(", "exec(", "compile(",
              "globals(", "vars(", "__dict__", "inspect", "getattr(")
# Of these, the plain words a string may say as prose ("inspect each row"): read in the code
# only. The others are read in strings too (code run from a string names them there).
_MACHINERY_WORDS = ("inspect", "exercises.", "report_", "builtins")


def machinery_touched(submission, source) -> list[str]:
    """The grader's machinery that the student's own code names: a verdict forged from inside
    a submission goes through one of these, a right answer through none.

    Only what the student wrote is read: the statements of a code cell that the course's
    version of the cell (as the course or the student copy has it) does not have, so the
    course's own uses (the setup cell's Colab check, a checker's helpers) are not the
    student's when the student edits that cell (``MEASURE = False``, as the setup cell says).
    And in them, the code: a comment never counts, a string only for the names that are no
    prose (``_statements``); a name counts as a whole name (``inspected`` is not
    ``inspect``)."""
    notebook_arg(submission)
    notebook_arg(source)
    code_cells = {c.get("id") for c in source.cells if c.cell_type == "code"}
    versions = _course_versions(source)
    found = []
    for cell in submission.cells:
        cid = cell.get("id")
        if cell.cell_type != "code" or cell.source.strip() in (
                versions.get(cid, ()) if cid in code_cells else ()):
            continue
        course = {key for text in (versions.get(cid, ()) if cid in code_cells else ())
                  for key, _, _ in _statements(text)}
        for key, code, strings in _statements(cell.source):
            if key in course:
                continue  # the course's own statement, kept as it was
            found += [m for m in _MACHINERY if m not in found and (
                _names(code, m) or (m not in _MACHINERY_WORDS and _names(strings, m)))]
    return found


def _names(text: str, name: str) -> bool:
    """Whether ``text`` holds ``name`` as a whole (not inside a longer name: ``inspected``,
    ``retrieval(``), where its ends are letters or digits."""
    import re

    left = r"(?<!\w)" if name[0].isalnum() else ""
    right = r"(?!\w)" if name[-1].isalnum() else ""
    return re.search(left + re.escape(name) + right, text) is not None


def _statements(text: str) -> list[tuple[tuple, str, str]]:
    """Each statement (logical line) of a code cell, as ``(key, code, strings)``: its tokens
    without comments (the same statement has the same key, however it is spaced or
    commented), its code without comments and with each string left out (an f-string's
    expressions kept), and the text of its strings. A name is read as Python reads it
    (NFKC: ``ｇｅｔａｔｔｒ`` is ``getattr``). What cannot be read as tokens (a cell cut
    off in a string) is one statement, read whole, comments and all."""
    import re
    import tokenize
    import unicodedata

    skip = {tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    fstring = {getattr(tokenize, n) for n in ("FSTRING_START", "FSTRING_END") if
               hasattr(tokenize, n)}
    middle = getattr(tokenize, "FSTRING_MIDDLE", None)
    lines = text.splitlines(keepends=True)
    out, key, code, strings, first = [], [], [], [], 1

    def join(parts):
        joined = ""
        for part in parts:
            if joined and part and re.match(r"\w", part[0]) and re.match(r"\w", joined[-1]):
                joined += " "
            joined += part
        return joined

    def end():
        if key:
            out.append((tuple(key), join(code), "\n".join(strings)))
        key.clear(), code.clear(), strings.clear()

    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.NEWLINE:
                end()
                first = tok.end[0] + 1  # where the next statement starts, at the latest
            elif tok.type in skip:
                continue
            elif tok.type == tokenize.NAME:
                name = unicodedata.normalize("NFKC", tok.string)
                key.append((tok.type, name))
                code.append(name)
            elif tok.type == tokenize.STRING:
                key.append((tok.type, tok.string))
                inside = _fstring_code(tok.string)
                if inside is None:
                    code.append('""')
                    strings.append(tok.string)
                else:
                    code.append(inside[0])
                    strings.append(inside[1])
            elif tok.type == middle:
                key.append((tok.type, tok.string))
                strings.append(tok.string)
            elif tok.type in fstring:
                key.append((tok.type, tok.string))
            else:
                key.append((tok.type, tok.string))
                code.append(tok.string)
        end()
    except (tokenize.TokenError, SyntaxError):
        key.clear(), code.clear(), strings.clear()
        rest = "".join(lines[first - 1:])
        out.append((("raw", rest), rest, rest))
    return out


def _fstring_code(token: str):
    """``(code, text)`` of an f-string token (Python before 3.12 reads one as a single
    string): the code of its expressions, which run, and the text of its strings; None for
    a string that is no f-string."""
    prefix = token[: len(token) - len(token.lstrip("rRbBuUfF"))]
    if "f" not in prefix.lower():
        return None
    try:
        tree = parse_python(token.strip(), mode="eval")  # one thread at a time
    except SyntaxError:
        return token, token  # read whole
    code, text = [], []
    for node in ast.walk(tree):
        if isinstance(node, ast.FormattedValue):
            for _, c, t in _statements(ast.unparse(node.value)):
                code.append(c)
                text.append(t)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text.append(node.value)
    return " ".join(code), "\n".join(text)


def course_ids(submission, source):
    """``submission`` with the course's cell ids put back on the cells that lost them. Colab
    saves a notebook as nbformat 4.0, without cell ids (its own ids go into each cell's
    metadata), and so do older Jupyters: with no id to find them by, every checker cell was put
    back at the top, before the answers, and a right answer scored 0 (NameError).

    The cells that lost their ids are aligned with the course's cells that no cell claims, in
    order (``_align``): a cell takes the id of the course cell of the same type whose text it
    has (as the course or the student copy has it), else of the one it resembles most, by the
    names it defines, its lines and its first line (an answer the student wrote in place of
    the stub; two answers that both begin ``import math`` are told apart by the functions they
    define and by their order). A cell is matched to one course cell at most, a course cell
    to one cell; a cell takes a checker cell's id only if it calls that checker. A cell that
    matches nothing, in order, takes the id of a course cell with its exact text if one is
    left; the others are the student's own cells."""
    import copy

    notebook_arg(submission)
    notebook_arg(source)
    known = {c.get("id") for c in source.cells if c.get("id")}
    if all(c.get("id") in known for c in submission.cells):
        return submission
    nb = copy.deepcopy(submission)
    claimed = {c.get("id") for c in nb.cells if c.get("id") in known}
    lost = [c for c in nb.cells if c.get("id") not in known and c.source.strip()]
    free = [c for c in source.cells if c.get("id") and c.get("id") not in claimed]
    versions = _course_versions(source)
    checks = {cid: _checker_name(text) for cid, text in checker_cells(source)}
    nb.nbformat_minor = max(nb.get("nbformat_minor", 0), 5)  # ids are nbformat 4.5's
    for i, j in _align(lost, free, versions, checks):
        lost[i]["id"] = free[j].get("id")
        claimed.add(free[j].get("id"))
    texts = {}
    for c in free:
        for text in versions.get(c.get("id"), ()):
            texts.setdefault((c.cell_type, text), []).append(c.get("id"))
    for cell in lost:  # out of order (a moved cell), but the course's own text
        if cell.get("id") in known:
            continue
        same = [i for i in texts.get((cell.cell_type, cell.source.strip()), ())
                if i not in claimed]
        if same:
            cell["id"] = same[0]
            claimed.add(same[0])
    for k, cell in enumerate(nb.cells):  # the student's own cells: ids of their own
        if not cell.get("id"):
            cell["id"] = f"student-{k}"
    return nb


def _course_versions(source) -> dict:
    """``{cell id: the cell's stripped texts}``: as the course's notebook has it and as the
    student copy has it (the stub in place of the solution, an exercise as a heading)."""
    from . import assign

    out = {c.get("id"): {c.source.strip()} for c in source.cells if c.get("id")}
    try:
        copy = assign.student_copy(source)
    except assign.AssignError:
        return out
    for c in copy.cells:
        if c.get("id") in out:
            out[c.get("id")].add(c.source.strip())
    return out


# The lines a stub or the solution markers add, which say nothing of which cell it is.
_STUB_LINES = {"# YOUR CODE HERE", "raise NotImplementedError()"}

# The most pairs of cells ``_align`` weighs (a course notebook has about 100 cells, a
# student's about as many): beyond, a notebook made to be slow to match costs no minutes.
ALIGN_PAIRS = 250_000

# The least resemblance (``_resemblance``) for a cell to take a course cell's id by
# anything but its exact text.
MATCH_AT_LEAST = 0.4


@functools.lru_cache(maxsize=4096, typed=True)
def _cell_lines(text: str):
    from collections import Counter

    from .assign import _BEGIN, _END

    return Counter(ln.strip() for ln in text.splitlines() if ln.strip()
                   and ln.strip() not in _STUB_LINES and not _BEGIN.match(ln)
                   and not _END.match(ln))


@functools.lru_cache(maxsize=4096, typed=True)
def _defined_names(text: str) -> frozenset:
    """The names a cell defines at its top level (functions, classes, assigned names)."""
    import re

    try:
        tree = parse_python(text)
    except SyntaxError:  # IPython's syntax, or a half-written answer: read the lines
        return frozenset(m.group(1) or m.group(2) for m in re.finditer(
            r"^(?:async\s+)?(?:def|class)\s+(\w+)|^(\w+)\s*(?::[^=]*)?=(?!=)", text, re.M))
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return frozenset(names)


def _resemblance(cell, course_texts) -> float:
    """How much ``cell`` (the student's, without a course id) resembles a course cell whose
    texts are ``course_texts`` (``_course_versions``), from 0 to 1: half its lines (shared
    lines over all, the closer of the texts), three tenths the names both define (a cell
    that defines none of the course cell's names resembles it not at all), two tenths its
    first line."""
    mine = _cell_lines(cell.source)
    theirs = [_cell_lines(t) for t in course_texts]
    total = sum(mine.values())
    lines = max((2 * sum((mine & t).values()) / (total + sum(t.values()))
                 for t in theirs if total + sum(t.values())), default=0.0)
    first = float(next(iter(mine), None) in {next(iter(t), None) for t in theirs if t})
    if cell.cell_type != "code":
        return 0.7 * lines + 0.3 * first
    names = _defined_names(cell.source)
    course = set().union(*(_defined_names(t) for t in course_texts))
    if names and course:
        shared = len(names & course) / len(names | course)
        if not shared:
            return 0.0
    else:
        shared = lines
    return 0.5 * lines + 0.3 * shared + 0.2 * first


def _align(lost, free, versions, checks) -> list[tuple[int, int]]:
    """Pairs ``(i, j)``: ``lost[i]`` (a cell without a course id) is ``free[j]`` (a course
    cell no cell claims), in the order of both notebooks, each cell in one pair at most, the
    pairs chosen for the most resemblance in all (a cell with a course text's exact text
    counts most). Past ``ALIGN_PAIRS`` pairs to weigh (a notebook of thousands of cells),
    none: the cells keep to their exact texts."""
    if len(lost) * len(free) > ALIGN_PAIRS:
        return []
    weight = [[0.0] * len(free) for _ in lost]
    for i, cell in enumerate(lost):
        text = cell.source.strip()
        called = _checker_name(cell.source) if cell.cell_type == "code" else None
        for j, course in enumerate(free):
            cid = course.get("id")
            if course.cell_type != cell.cell_type or (cid in checks and called != checks[cid]):
                continue  # a checker's id goes only to a cell that calls that checker
            if text in versions.get(cid, ()):
                weight[i][j] = 3.0
            else:
                r = _resemblance(cell, versions.get(cid, ()))
                weight[i][j] = r if r >= MATCH_AT_LEAST else 0.0
    # The heaviest alignment that keeps both orders (a weighted longest common subsequence).
    best = [[0.0] * (len(free) + 1) for _ in range(len(lost) + 1)]
    for i in range(len(lost) - 1, -1, -1):
        for j in range(len(free) - 1, -1, -1):
            w = weight[i][j]
            best[i][j] = max(best[i + 1][j], best[i][j + 1],
                             best[i + 1][j + 1] + w if w else 0.0)
    pairs, i, j = [], 0, 0
    while i < len(lost) and j < len(free):
        w = weight[i][j]
        if w and best[i][j] == best[i + 1][j + 1] + w:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif best[i][j] == best[i + 1][j]:
            i += 1
        else:
            j += 1
    return pairs


def grade_notebook(path: Path, source_path: Path, *, student: str, cell_timeout: int = 120,
                   notebook: str | None = None, hidden_seed: int | None = None,
                   limits=None, hide=(), keep: Path | None = None,
                   reference: dict | None = None) -> list[dict]:
    """Gradebook rows for one submitted notebook (named ``notebook`` in the gradebook,
    by default the source's name), run in a throwaway folder by a kernel contained as
    ``gpuperf.sandbox`` says (``limits``; ``hide``: folders it must not see besides the
    home folders), the executed notebook written to ``keep`` if given.

    The output cases are decided here, not in the student's kernel: each passes only if the
    values the checker judged there match ``reference`` (``reference_run``: the course's
    notebook run with the same ``hidden_seed``; made here if not given, from a seed drawn
    now if ``hidden_seed`` is None)."""
    import nbformat

    from . import sandbox

    v.string(student, "student")
    v.positive_int(cell_timeout, "cell_timeout")
    path, source_path = Path(path), Path(source_path)
    if notebook is not None:
        v.string(notebook, "notebook")
    notebook = notebook or source_path.stem
    limits = limits or sandbox.Limits()
    if hidden_seed is None:
        import secrets

        hidden_seed = 2 + secrets.randbelow(10**6)  # one for the notebook and its reference
    v.integer(hidden_seed, "hidden_seed", minimum=2)

    source = nbformat.read(source_path, as_version=4)
    checks = checker_cells(source)
    worth = exercise_points(source)
    try:
        submission = nbformat.read(path, as_version=4)
    except Exception as err:  # noqa: BLE001 - an unreadable file is a row, not a crash
        return [_row(student, notebook, _checker_name(src), None, "no verdict",
                     f"not a readable notebook: {type(err).__name__}", worth[cid])
                for cid, src in checks]
    submission = course_ids(submission, source)
    if reference is None and checks:
        reference = reference_run(source_path, hidden_seed=hidden_seed,
                                  cell_timeout=cell_timeout, limits=limits, hide=hide)
    touched = machinery_touched(submission, source)
    hide = [*hide, source_path.parent, path.parent]
    entries, values, nb, stopped = _execute(
        submission, source, source_path.name, hidden_seed=hidden_seed,
        cell_timeout=cell_timeout, limits=limits, hide=hide)
    if keep is not None:
        _keep_notebook(nb, Path(keep))
    judged, judged_values, not_judged = rejudge(
        nb, source, source_path.name, hidden_seed=hidden_seed, cell_timeout=cell_timeout,
        limits=limits, hide=hide)
    rows = []
    for cid, _ in checks:
        mine = [e for e in entries if e.get("cell") == cid]
        exercise = _checker_name(dict(checks)[cid])
        again = ""
        if cid in judged:
            # An exercise judged again on the student's function alone: that verdict is the
            # one.
            own = mine[-1] if mine else None
            mine, cell_values = [judged[cid]], judged_values
            if own is None or (own.get("passed"), own.get("failed")) != (
                    judged[cid].get("passed"), judged[cid].get("failed")):
                j = judged[cid]
                again = (f"Judged again on your function's code alone, apart from your "
                         f"notebook: "
                         f"{j.get('passed')} of {j.get('passed', 0) + j.get('failed', 0)} "
                         f"checks passed (your notebook's own run: "
                         f"{'no verdict' if own is None else own.get('passed')}).")
        else:
            cell_values = values
        if not mine:
            rows.append(_row(student, notebook, exercise, None, "no verdict",
                             stopped or _why_silent(nb, cid, cell_timeout), worth[cid]))
            continue
        # One row per exercise: the checker cell's own verdict is the last it gives (any
        # other verdict logged meanwhile came from inside it).
        e = mine[-1]
        status = "not implemented" if e.get("not_implemented") else "graded"
        e, decided = decide_outputs(e, cid, reference or {}, cell_values)
        if status == "not implemented":
            decided = ""  # an untouched stub handed over no values: the status says it all
        elif cid in not_judged:
            # An exercise none of whose values the grader records (its answers are not one
            # value) was decided in the notebook alone: without the second judgement, its
            # output cases are unconfirmed too, and a person reads it.
            alone = cid in (reference or {}).get("verdicts", {}) and not any(
                k[0] == cid for k in (reference or {}).get("values", {}))
            e, unconfirmed = _without_unconfirmed(e, set() if alone else None)
            if unconfirmed:
                again = (f"Not judged again apart from your notebook ({not_judged[cid]}), so its "
                         f"{unconfirmed} passed check{'s' if unconfirmed > 1 else ''} that "
                         f"only your notebook decided ("
                         + ("its answers, which the grader does not record" if alone
                            else "structure and speed")
                         + ") earn nothing until your instructor reads the code.")
                if alone:
                    status = "review"
        row = _row(student, notebook, exercise, e, status,
                   " ".join(t for t in (again, decided, e.get("first_failure") or "") if t),
                   worth[cid])
        if touched:
            # The checker ran beside the student's code: a verdict forged from inside is
            # possible, so the row scores 0 until a person has read the code.
            row["detail"] = (f"scored 0 for review: the code names the grader's machinery "
                             f"({', '.join(touched)}), which a right answer has no need of; "
                             f"the checker's own verdict was {row['score']:.0%}. Read the "
                             f"notebook, then give the score by hand. " + row["detail"]).strip()
            row.update(status="review", points=0, score=0.0, earned=0.0)
        rows.append(row)
    return rows


def judged_exercises(source) -> dict:
    """``{checker cell: (module alias, its module, the answer's name, names left out)}`` for
    each checker cell of the course's notebook ``source`` that the grader judges again apart
    from the student's notebook (``rejudge``): a cell that gives the checker one function of
    the student's by name, where the course's answer is a kernel (``co.check_remap
    (scale_rows)``; a ``cuda.jit`` function or a function that makes one), or a host function
    whose checker is marked ``judged_apart`` (``red.check_absmax(my_absmax)``). Names the cell
    passes after the answer (``co.check_best_factor(read_sweep, sweep)``) are left out of the
    judging run, which takes the checker's defaults for them: a cell whose checker has no
    default there is not judged again."""
    from . import vetting

    notebook_arg(source)
    code = [(c.get("id"), c.source) for c in source.cells if c.cell_type == "code"]
    checks = dict(checker_cells(source))
    plan = {}
    for k, (cid, text) in enumerate(code):
        if cid not in checks:
            continue
        call = vetting.answer_checker_call(text)
        if call is None:
            continue
        alias, checker, name, extra = call
        before = [t for _, t in code[:k]]
        module = vetting.module_of_alias(before, alias)
        if not module:
            continue
        if not extra and vetting.is_kernel_definition(before, name):
            plan[cid] = (alias, module, name, 0)
        elif vetting.is_answer_definition(before, name) \
                and _judged_apart(module, checker, len(extra)):
            plan[cid] = (alias, module, name, len(extra))
    return plan


def kernel_exercises(source) -> dict:
    """The kernel exercises among ``judged_exercises(source)``: ``{checker cell: (module
    alias, its module, the kernel's name)}``."""
    from . import vetting

    plan = judged_exercises(source)
    code = [(c.get("id"), c.source) for c in source.cells if c.cell_type == "code"]
    out = {}
    for k, (cid, _) in enumerate(code):
        if cid in plan and vetting.is_kernel_definition([t for _, t in code[:k]], plan[cid][2]):
            out[cid] = plan[cid][:3]
    return out


def _judged_apart(module: str, checker: str, extra: int) -> bool:
    """Whether the course's checker ``module.checker`` is marked ``judged_apart`` and takes
    defaults for the ``extra`` arguments after the answer that the judging run leaves out."""
    import importlib
    import inspect

    fn = getattr(importlib.import_module(module), checker, None)
    if not getattr(fn, "judged_apart", False):
        return False
    params = [q for q in inspect.signature(fn).parameters.values()
              if q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD)]
    left_out = params[1:1 + extra]
    return len(left_out) == extra and all(q.default is not q.empty for q in left_out)


def judge_notebook(graded, source) -> tuple:
    """The notebook that judges ``graded``'s exercises again, apart from the student's
    notebook (``rejudge``): for each of ``judged_exercises(source)``, the student's function
    and what it needs as ``vetting.kernel_definitions`` (a kernel exercise) or
    ``vetting.answer_definitions`` (a host function) rebuild them, then the course's checker
    cell, and nothing else of the student's. ``(notebook or None, {checker cell: why it
    cannot be judged again})``."""
    import nbformat

    from . import vetting

    notebook_arg(graded)
    plan = judged_exercises(source)  # checks source
    kernels = kernel_exercises(source)
    by_id = {c.get("id"): c for c in source.cells}
    code = [(c.get("id"), c.source) for c in graded.cells if c.cell_type == "code"]
    cells, why = [], {}
    for cid, (alias, module, name, left_out) in plan.items():
        at = next((k for k, (i, _) in enumerate(code) if i == cid), len(code))
        rebuild = vetting.kernel_definitions if cid in kernels else vetting.answer_definitions
        try:
            defined = rebuild([t for _, t in code[:at]], name)
        except vetting.NotVetted as err:
            why[cid] = str(err)
            continue
        setup = nbformat.v4.new_code_cell(
            f"import importlib\n{alias} = importlib.import_module({module!r})\n{defined}")
        setup.id = f"judge-{len(cells)}"
        check = nbformat.v4.new_code_cell(
            vetting.without_arguments(by_id[cid].source, left_out))
        check.id, check.metadata = cid, dict(by_id[cid].get("metadata", {}))
        cells += [setup, check]
    if not cells:
        return None, why
    nb = nbformat.v4.new_notebook()
    nb.metadata = dict(source.metadata)
    nb.cells = cells
    return nb, why


def rejudge(graded, source, name: str, *, hidden_seed: int, cell_timeout: int, limits,
            hide) -> tuple[dict, dict, dict]:
    """Judge the kernel exercises of ``graded`` (the student's notebook as it was run) again
    in a fresh contained kernel that runs the course's checkers on the student's kernels and
    on nothing else of theirs (``judge_notebook``): its structure and speed cases, races and
    outputs are measured where no code of the student's but the vetted kernels ran, so
    nothing the notebook did can forge them. ``(verdicts by checker cell, their recorded
    values, {checker cell: why it was not judged again})``."""
    v.string(name, "name")
    nb, why = judge_notebook(graded, source)
    if nb is None:
        return {}, {}, why
    entries, values, _, stopped = _execute(nb, nb, name, hidden_seed=hidden_seed,
                                           cell_timeout=cell_timeout, limits=limits, hide=hide)
    judged = {}
    for e in entries:
        judged[e.get("cell")] = e
    for cell in nb.cells:
        if cell.id in judged or cell.id.startswith("judge-"):
            continue
        why[cell.id] = ("the grader's own run of your kernel gave no verdict"
                        + (f": {stopped}" if stopped else ""))
    return judged, values, why


def _without_unconfirmed(entry: dict, decided=None) -> tuple[dict, int]:
    """``entry`` with its passed structure and speed cases counted as failed (reported from
    inside the student's notebook, where they could be forged), and how many there were;
    given ``decided`` (the names of the cases whose values the grader compared with its
    reference), the passed output cases outside it too: nothing but the notebook decided
    them."""
    cases = [list(c) for c in entry.get("cases", []) if isinstance(c, list) and len(c) == 4]
    turned = [c for c in cases if c[1] is True and (
        c[3] in ("structure", "speed") or (decided is not None and c[0] not in decided))]
    if not turned:
        return entry, 0
    for c in turned:
        c[1] = False
    e = dict(entry, cases=cases)
    e["passed"] = entry.get("passed", 0) - len(turned)
    e["failed"] = entry.get("failed", 0) + len(turned)
    e["points"] = entry.get("points", 0) - sum(c[2] for c in turned)
    return e, len(turned)


def grading_env() -> dict:
    """Variables for every graded kernel. On a GPU a notebook's experiments show their records
    instead of measuring again (``GPUPERF_LIVE=0``), as a class does with its GPU minutes: a
    verdict needs the checker cells, which run the student's kernels and time the speed bars
    now, not the chapter's figures. (The 06_reduce chapter measured live took 52 s alone on
    the H200 and 100-170 s with 15 others on the GPU; its checkers, seconds.) An instructor
    who sets ``GPUPERF_LIVE`` chooses for the class."""
    return {records.ENV_LIVE: os.environ.get(records.ENV_LIVE, "0")}


def _execute(submission, source, name: str, *, hidden_seed: int, cell_timeout: int, limits,
             hide, reference: bool = False):
    """Run ``submission`` with ``source``'s checker cells in a fresh contained kernel, in a
    throwaway folder: ``(verdicts, recorded values, executed notebook, why it stopped early
    or None)``. ``reference``: the grader's own run of the course's notebook."""
    import nbformat

    from . import sandbox

    with tempfile.TemporaryDirectory(prefix="gpuperf-grade-") as box:
        # The student's throwaway folder (a copy of the notebook, the kernel's working folder)
        # and, apart from it, the kernel's sockets, the verdict log and the recorded values
        # under fresh names.
        work, rundir = Path(box) / "work", Path(box) / f"run-{os.urandom(6).hex()}"
        work.mkdir()
        rundir.mkdir()
        (work / name).write_text(nbformat.writes(submission), encoding="utf-8")
        for attempt in range(1, RUNNER_ATTEMPTS + 1):
            log = rundir / f"verdicts-{os.urandom(12).hex()}.jsonl"
            values = rundir / f"values-{os.urandom(12).hex()}"
            values.mkdir()
            nb = grading_notebook(submission, source, str(log), hidden_seed, str(values),
                                  reference)
            km = sandbox.kernel_manager(work=work, rundir=rundir, hide=list(hide),
                                        limits=limits, env=grading_env())
            watch = (sandbox.DiskWatch([work, rundir], limits.disk_bytes, lambda km=km: _kill(km))
                     if limits.disk_bytes else contextlib.nullcontext())
            try:
                with watch:
                    stopped = _run(nb, cell_timeout=cell_timeout, cwd=work, km=km)
            finally:
                sandbox.release(rundir)
            if getattr(watch, "tripped", None):
                stopped = f"the notebook was stopped: {watch.tripped}"
                break
            if not (stopped or "").startswith(RUNNER_FAILED):
                break
            if attempt == RUNNER_ATTEMPTS:
                stopped += f", {attempt} times: grade this student again"
        return _read_log(log), read_values(values, reference=reference), nb, stopped


def reference_run(source_path: Path, *, hidden_seed: int, cell_timeout: int = 120,
                  limits=None, hide=()) -> dict:
    """The grader's own run of the course's notebook ``source_path`` (trusted code: the
    reference solutions) with ``hidden_seed``, as a student's is run: ``{"values": the
    expected value of every comparison its checkers made, by key, "verdicts": {checker cell:
    its verdict}, "stopped": why the run stopped early, or None}``. Made once per grading run
    and notebook; ``decide_outputs`` judges each student's values against it."""
    import nbformat

    from . import sandbox

    if not isinstance(source_path, (str, os.PathLike)) or not str(source_path).strip():
        raise TypeError(f"source_path must be the course notebook's path, not "
                        f"{type(source_path).__name__} ({source_path!r:.60}).")
    source_path = Path(source_path)
    v.integer(hidden_seed, "hidden_seed", minimum=2)
    v.positive_int(cell_timeout, "cell_timeout")
    source = nbformat.read(source_path, as_version=4)
    entries, values, _, stopped = _execute(
        source, source, source_path.name, hidden_seed=hidden_seed, cell_timeout=cell_timeout,
        limits=limits or sandbox.Limits(), hide=[*hide, source_path.parent], reference=True)
    verdicts = {}
    for e in entries:
        verdicts[e.get("cell")] = e  # the cell's last verdict, as for a student
    return {"values": values, "verdicts": verdicts, "stopped": stopped}


_VALUES_CAP = 50_000  # comparisons read from one run's record
_VALUE_BYTES = 8 * (1 << 20)  # the largest .npy file read (VALUE_CAP float64 is 512 KiB)


def read_values(folder: Path, *, reference: bool = False) -> dict:
    """The values a run's checkers recorded in ``folder`` (``exercises.Checker.record``):
    ``{(cell, exercise, case, n): {"got": value}}``, and for a ``reference`` run the
    expected value (``want`` or ``allowed``), ``rtol`` and ``atol`` too. Only plain data is
    read: JSON, and ``.npy`` files without pickles, regular files of the folder itself; a
    line that is not a value (the student's code can write there) is skipped."""
    import re
    import stat

    import numpy as np

    if not isinstance(folder, (str, os.PathLike)) or not str(folder).strip():
        raise TypeError(f"folder must be the run's values folder (a path), not "
                        f"{type(folder).__name__} ({folder!r:.60}).")
    v.boolean(reference, "reference")
    folder = Path(folder)

    def regular(p: Path) -> bool:
        try:
            return stat.S_ISREG(os.lstat(p).st_mode)
        except OSError:
            return False

    def load(item):
        if not isinstance(item, dict):
            return None
        if "json" in item:
            return ("ok", item["json"])
        name, shape = item.get("npy"), item.get("shape")
        if not (isinstance(name, str) and re.fullmatch(r"[0-9a-f]{16}\.npy", name)
                and isinstance(shape, list) and all(type(d) is int and d >= 0 for d in shape)):
            return None
        p = folder / name
        if not regular(p) or p.stat().st_size > _VALUE_BYTES:
            return None
        try:
            arr = np.load(p, allow_pickle=False)
        except (OSError, ValueError):
            return None
        if not isinstance(arr, np.ndarray) or arr.dtype.kind not in "biuf":
            return None
        size = int(np.prod(shape)) if shape else 1
        if arr.size != size:  # recorded sampled: the shape is part of the value
            return ("ok", {"sampled": arr.astype(np.float64), "shape": shape})
        return ("ok", arr.reshape(shape))

    index = folder / "values.jsonl"
    out: dict = {}
    if not regular(index):
        return out
    with open(index, encoding="utf-8", errors="replace") as f:
        lines = f.read(_LOG_CAP).splitlines()[:_VALUES_CAP]
    for line in lines:
        try:
            e = json.loads(line)
        except ValueError:
            continue
        key = e.get("key") if isinstance(e, dict) else None
        if not (isinstance(key, list) and len(key) == 4 and all(isinstance(k, str)
                                                                  for k in key[:3])
                and type(key[3]) is int):
            continue
        got = load(e.get("got"))
        if got is None:
            continue
        rec = {"got": got[1]}
        if reference:
            want = load(e.get("want")) if "want" in e else None
            allowed = load(e.get("allowed")) if "allowed" in e else None
            if want is None and allowed is None:
                continue
            rec.update(want=want[1] if want else None,
                       allowed=allowed[1] if allowed else None,
                       rtol=float(e.get("rtol") or 0.0), atol=float(e.get("atol") or 0.0))
        if tuple(key) in out:  # a checker writes each key once: a second is not its own
            rec = {"got": {"unreadable": "two values for one key"}}
        out[tuple(key)] = rec
    return out


def _value_agrees(got, ref: dict) -> str | None:
    """None if a student's recorded value matches the reference's record, else how not."""
    from . import exercises as ex

    def unwrap(x):  # a sampled array: its shape, then its sampled elements
        return (x["shape"], x["sampled"]) if isinstance(x, dict) and "sampled" in x else \
            (None, x)

    (g_shape, got), (w_shape, want) = unwrap(got), unwrap(ref.get("want"))
    if g_shape != w_shape:
        return f"got an array of shape {g_shape}, expected {w_shape}"
    try:
        return ex.agrees(got, want, rtol=ref.get("rtol", 0.0), atol=ref.get("atol", 0.0),
                         allowed=ref.get("allowed"))
    except Exception as err:  # noqa: BLE001 - a value that cannot be compared is not a match
        return f"the value could not be compared ({type(err).__name__})"


def _trusted_weights(entry: dict, ref_cases: dict) -> dict:
    """``entry`` (a verdict from the student's kernel, whose code can append lines to the log)
    with each case's points and kind taken from the reference run's verdict, not from the
    line: a case the reference knows weighs and counts as the checker made it there, a passed
    case it does not know earns nothing, and the counts and points are recomputed from the
    cases (a forged line cannot mark an output case as speed, weigh it 0, or claim 50 points
    out of 1). The same entry, unchanged, where nothing differs."""
    raw = entry.get("cases")
    if not isinstance(raw, list):
        return entry
    cases = []
    for c in raw:
        if not (isinstance(c, list) and len(c) == 4 and isinstance(c[0], str)):
            continue
        name, ok = c[0], c[1] is True
        if name in ref_cases:
            weight, kind = ref_cases[name][2], ref_cases[name][3]
        elif ok:
            weight, kind = 0, c[3]
        else:
            weight, kind = c[2], c[3]
        if not isinstance(weight, (int, float)) or isinstance(weight, bool) or weight < 0:
            weight = 1
        if kind not in ("output", "structure", "speed"):
            kind = "output"
        cases.append([name, ok, weight, kind])
    e = dict(entry, cases=cases)
    if len(cases) == len(raw) and len(cases) < 500:  # the whole list (the log keeps 500)
        e.update(passed=sum(c[1] for c in cases), failed=sum(not c[1] for c in cases),
                 points=float(sum(c[2] for c in cases if c[1])),
                 possible=float(sum(c[2] for c in cases)))
    return entry if e == entry else e


def decide_outputs(entry: dict, cid: str, reference: dict, values: dict) -> tuple[dict, str]:
    """The verdict ``entry`` of checker cell ``cid`` with its cases decided by the grader:
    a case the child passed fails if a value it judged differs from ``reference``'s
    (``reference_run``) at the same key or was not handed over at all, and an output case
    the reference has and the verdict lacks is added, failed. Returns the entry and a
    sentence for the row ("" when nothing changed)."""
    v.mapping(entry, "entry")
    v.string(cid, "cid")
    v.mapping(reference, "reference")
    v.mapping(values, "values")
    refs = {k: r for k, r in (reference.get("values") or {}).items() if k[0] == cid}
    if cid not in (reference.get("verdicts") or {}):
        if not reference:
            return entry, ""
        return entry, ("outputs judged in the student's kernel only: the grader's own run of "
                       "the course's notebook gave no verdict for this exercise"
                       + (f" ({reference['stopped']})." if reference.get("stopped") else "."))
    ref_cases = {c[0]: c for c in reference["verdicts"][cid].get("cases", [])
                 if isinstance(c, list) and len(c) == 4}
    entry = _trusted_weights(entry, ref_cases)
    cases = [list(c) for c in entry.get("cases", []) if isinstance(c, list) and len(c) == 4]
    by_name = {c[0]: c for c in cases}
    wrong: dict = {}
    for key in refs:  # in the order the checker made them
        case = key[2]
        mine = by_name.get(case)
        if case in wrong or (mine is not None and mine[1] is not True):
            continue  # failed in the child already
        if mine is None and ref_cases.get(case, [0, 0, 0, "output"])[3] != "output":
            continue  # a speed or structure case the student's checker did not reach
        got = values.get(key)
        why = "no value was handed to the grader" if got is None else \
            _value_agrees(got["got"], refs[key])
        if why:
            wrong[case] = why
    if not wrong:
        return entry, ""
    e = dict(entry)
    for case in wrong:
        mine = by_name.get(case)
        if mine is not None:
            mine[1] = False
            e["passed"], e["failed"] = e["passed"] - 1, e["failed"] + 1
            e["points"] = e.get("points", 0) - mine[2]
        else:
            weight = ref_cases.get(case, [case, True, 1, "output"])[2]
            cases.append([case, False, weight, "output"])
            e["failed"] += 1
            e["possible"] = e.get("possible", 0) + weight
    e["cases"] = cases
    case, why = next(iter(wrong.items()))
    return e, (f"The outputs handed to the grader differ from the reference at "
               f"{len(wrong)} case{'s' if len(wrong) > 1 else ''} (first: {case}: {why}).")


_LOG_CAP = 20_000_000  # characters of a verdict log read (the student's code can write to it)


def _read_log(log: Path) -> list[dict]:
    """The verdicts of a log, skipping what is not one (a line the student's code wrote)."""
    import stat

    # A regular file of the run folder itself, not what the student's kernel made in its place:
    # a FIFO (opening it blocked the grader for good) or a link to a file of the grader's.
    try:
        fd = os.open(log, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return []
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return []
    entries = []
    with open(fd, encoding="utf-8", errors="replace") as f:
        for line in f.read(_LOG_CAP).splitlines():
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if isinstance(e, dict) and isinstance(e.get("passed"), int) \
                    and isinstance(e.get("failed"), int):
                entries.append(e)
    return entries


def _keep_notebook(nb, keep: Path) -> None:
    """The executed notebook, beside the student's feedback."""
    import nbformat

    keep.parent.mkdir(parents=True, exist_ok=True)
    _write_file(keep, nbformat.writes(nb))


def _row(student, notebook, exercise, entry, status, detail, worth: float = 1.0) -> dict:
    """A details row. Correctness first: if any case that judges outputs failed, the
    exercise scores 0 whatever its structure and speed cases earned."""
    passed = entry["passed"] if entry else 0
    total = entry["passed"] + entry["failed"] if entry else 0
    points = entry.get("points", passed) if entry else 0
    possible = entry.get("possible", total) if entry else 0
    # Never more than all of it, nor less than none (the entry comes from the student's kernel).
    possible = possible if isinstance(possible, (int, float)) and possible > 0 else 0
    points = min(max(points, 0), possible) if isinstance(points, (int, float)) else 0
    wrong = [c for c in (entry or {}).get("cases", [])
             if isinstance(c, list) and len(c) == 4 and c[1] is False and c[3] == "output"]
    if wrong and status == "graded":
        points = 0
        detail = (f"outputs wrong on {len(wrong)} case{'s' if len(wrong) > 1 else ''} "
                  f"(first: {wrong[0][0]}), so the exercise scores 0: structure and speed "
                  f"checks count only on top of correct outputs. {detail}").strip()
    score = round(points / possible, 3) if possible else 0.0
    return {"student": student, "student_id": student, "notebook": notebook,
            "exercise": exercise, "passed": passed, "total": total, "points": points,
            "possible": possible, "score": score, "worth": worth,
            "earned": round(score * worth, 3), "status": status,
            "graded_on": (entry or {}).get("on", ""), "detail": detail,
            "report": (entry or {}).get("report", "")}


def grade(submissions: Path, *, source: Path = Path("solutions"), cell_timeout: int = 120,
          progress=print, hidden_seed: int | None = None, jobs: int | None = None,
          assigned=None, limits=None, keep: Path | None = None, hide=()) -> list[dict]:
    """Gradebook rows for every student folder of ``submissions``.

    Every student meets the same hidden cases, drawn from ``hidden_seed`` (from a fresh seed
    if None, told through ``progress``): grading again with the same seed gives the same
    cases.

    ``jobs`` notebooks are graded at once (default: the CPUs), each in its own contained
    kernel. ``assigned`` names the notebooks of the assignment (``"03_dram"`` or
    ``"03_dram.ipynb"``; default: every course notebook someone handed in): each counts for
    every student, 0 where missing. ``keep``: a folder for each student's executed notebooks
    (``keep/<student>/<notebook>.ipynb``, ``<student>`` named by ``file_names``).
    ``limits`` and ``hide``: see ``grade_notebook``."""
    for name, val in (("submissions", submissions), ("source", source)):
        if not isinstance(val, (str, os.PathLike)) or not str(val).strip():
            raise TypeError(f"{name} must be a folder path, not {type(val).__name__} ({val!r}).")
    submissions, source = Path(submissions), Path(source)
    v.positive_int(cell_timeout, "cell_timeout")
    jobs = (os.cpu_count() or 1) if jobs is None else v.positive_int(jobs, "jobs")
    if hidden_seed is None:
        import secrets

        hidden_seed = 2 + secrets.randbelow(10**6)  # never a visible seed (0 or 1)
        if progress:
            progress(f"hidden cases drawn from seed {hidden_seed} (--seed {hidden_seed} grades "
                     "again with the same cases)")
    v.integer(hidden_seed, "hidden_seed", minimum=2)
    if not submissions.is_dir():
        raise FileNotFoundError(f"submissions={submissions} is not a folder: pass the folder "
                                "with one subfolder per student.")
    if not source.is_dir():
        raise FileNotFoundError(f"source={source} is not a folder: pass the course's "
                                "solutions/ (the chapters, with the checker cells).")
    students = sorted(p for p in submissions.iterdir() if p.is_dir()
                      and not p.name.startswith("."))
    if not students:
        raise FileNotFoundError(f"no student folders in {submissions}: expected "
                                f"{submissions}/<student>/<NN_chapter>.ipynb.")
    # Each student's files by the course notebook they are (Colab's "Copy of ...", a
    # browser's "... (1)"); of two files for one notebook the newest is graded.
    plan, strays = {}, []
    for st in students:
        for path in sorted(st.glob("*.ipynb")):
            name = course_name(path.name)
            if not (source / name).is_file():
                strays.append((st.name, path))
                continue
            plan.setdefault(st.name, {}).setdefault(name, []).append(path)
    expected = sorted({name for mine in plan.values() for name in mine})
    if assigned is not None:
        names = [a if str(a).endswith(".ipynb") else f"{a}.ipynb"
                 for a in v.sequence(assigned, "assigned")]
        unknown = [n for n in names if not (source / n).is_file()]
        if unknown:
            raise FileNotFoundError(f"assigned={unknown} are not notebooks of {source}; pass "
                                    "names such as 03_dram.")
        expected = sorted(dict.fromkeys(names))
        strays += [(st, p) for st, mine in plan.items() for n, files in mine.items()
                   if n not in expected for p in files]
    tasks = [(st.name, name) for st in students for name in expected]
    kept_as = file_names(st.name for st in students)  # x\y and x_y: never one folder
    # The grader's own run of each course notebook, with the class's hidden seed: made once,
    # by the first task that needs it (the others of that notebook wait for it).
    import threading

    references, locks = {}, {name: threading.Lock() for name in expected}

    def reference_for(name):
        with locks[name]:
            if name not in references:
                t0 = time.perf_counter()
                references[name] = reference_run(source / name, hidden_seed=hidden_seed,
                                                 cell_timeout=cell_timeout, limits=limits,
                                                 hide=[submissions, *hide])
                if progress:
                    progress(f"reference run of {name} (the course's solutions, the same "
                             f"hidden cases): {time.perf_counter() - t0:.1f} s")
            return references[name]

    def one(student, name):
        src = source / name
        files = sorted(plan.get(student, {}).get(name, []), key=lambda p: p.stat().st_mtime)
        t0 = time.perf_counter()
        nb = _read(src)
        checks, worth = checker_cells(nb), exercise_points(nb)
        if not checks:
            # A section without exercises (chapter 5.2): nothing to run or score, but the
            # student who handed it in keeps a row, with the reason, not silence.
            got = [_row(student, src.stem, "-", None, "not graded",
                        f"{name} has no exercises: nothing in it is graded"
                        if files else f"no {name} in {submissions / student} (it has no "
                        "exercises, so nothing is lost)")]
        elif not files:
            got = [_row(student, src.stem, _checker_name(code), None, "missing",
                        f"no {name} in {submissions / student}: it counts 0", worth[cid])
                   for cid, code in checks]
        else:
            got = grade_notebook(files[-1], src, student=student, cell_timeout=cell_timeout,
                                 hidden_seed=hidden_seed, limits=limits,
                                 reference=reference_for(name),
                                 hide=[submissions, source, *hide],
                                 keep=None if keep is None else
                                 Path(keep) / kept_as[student] / name)
            if len(files) > 1:
                also = ", ".join(p.name for p in files[:-1])
                for r in got:
                    r["detail"] = (f"graded {files[-1].name}, the newest; also handed in: "
                                   f"{also}. " + r["detail"]).strip()
        return got, time.perf_counter() - t0

    results = {}
    if jobs == 1 or len(tasks) <= 1:
        done = ((t, one(*t)) for t in tasks)
        for k, (t, (got, secs)) in enumerate(done, 1):
            results[t] = got
            if progress:
                progress(f"[{k}/{len(tasks)}] {t[0]}/{t[1]}: {secs:.1f} s")
    else:
        from concurrent.futures import ThreadPoolExecutor, as_completed

        # Each task waits on its own kernel process: threads are enough to keep `jobs` kernels
        # busy at once.
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = {pool.submit(one, *t): t for t in tasks}
            for k, fut in enumerate(as_completed(futures), 1):
                t = futures[fut]
                got, secs = fut.result()
                results[t] = got
                if progress:
                    progress(f"[{k}/{len(tasks)}] {t[0]}/{t[1]}: {secs:.1f} s")
    rows = [r for t in tasks for r in results[t]]  # in the class's order, whatever finished first
    for student, path in strays:
        rows.append(_row(student, path.stem, "-", None, "not graded",
                         f"{path.name} is not a notebook of the course ({source}); rename it "
                         "to the chapter's file name to have it graded"
                         if not (source / course_name(path.name)).is_file()
                         else f"{path.name} is not part of this assignment (--assigned)"))
    return rows


def course_name(filename: str) -> str:
    """The course notebook a submitted file is: ``Copy of 03_dram (2).ipynb`` is
    ``03_dram.ipynb``."""
    import re

    v.string(filename, "filename")
    stem = filename[:-6] if filename.lower().endswith(".ipynb") else filename
    stem = re.sub(r"^(copy of\s+)+", "", stem.strip(), flags=re.I)
    stem = re.sub(r"(\s*\(\d+\)|-checkpoint)+$", "", stem)
    return stem.strip() + ".ipynb"


def _read(path):
    import nbformat

    return nbformat.read(path, as_version=4)


def outputs(out: Path) -> tuple[Path, Path, Path]:
    """What a gradebook ``out`` comes with: ``(gradebook, details, feedback folder)``, e.g.
    ``gradebook.csv``, ``gradebook-details.csv`` and ``gradebook-feedback/`` (each
    student's ``<student>.md`` and executed notebooks ``<student>/<notebook>.ipynb``)."""
    if not isinstance(out, (str, os.PathLike)) or not str(out).strip():
        raise TypeError(f"out must be a file path such as gradebook.csv, not "
                        f"{type(out).__name__} ({out!r}).")
    out = Path(out)
    return out, out.with_name(f"{out.stem}-details.csv"), out.with_name(f"{out.stem}-feedback")


def lms_outputs(out: Path) -> dict:
    """The LMS imports beside a gradebook ``out``: ``{"canvas": gradebook-canvas.csv,
    "gradescope": gradebook-gradescope.csv}``."""
    out = outputs(out)[0]
    return {k: out.with_name(f"{out.stem}-{k}.csv") for k in ("canvas", "gradescope")}


def _refuse_existing(out: Path, force: bool) -> None:
    """Refuse a folder for ``out``, and (without ``force``) any output that exists already:
    checked before grading, so an hour of grading never ends in a refusal."""
    out, details, feedback = outputs(out)
    if out.is_dir():
        raise ValueError(f"out={out} is a folder; give the gradebook a file name such as "
                         f"{out / 'gradebook.csv'}.")
    if details.is_dir():
        raise ValueError(f"{details} is a folder; the gradebook's details go there: choose "
                         "another --out.")
    if feedback.exists() and not feedback.is_dir():
        raise ValueError(f"{feedback} is a file; the feedback folder goes there: choose "
                         "another --out.")
    there = [p for p in (out, details, feedback, *lms_outputs(out).values()) if p.exists()]
    if there and not force:
        raise FileExistsError(f"{', '.join(map(str, there))} exist{'s' if len(there) == 1 else ''}"
                              ": pass --force to replace, or another --out.")


def summary(rows: list[dict], roster: dict | None = None) -> tuple[list[str], list[dict]]:
    """The gradebook: one row per student (``student``, ``student_id`` from ``roster``, by
    default the folder's name), one column per exercise (``notebook/exercise``) with the
    points earned (its score times its worth; 0 where no verdict or no notebook), the total,
    the points possible over every assigned notebook (``out_of``) and the notebooks
    missing. A last row, ``speed measured on``, says per exercise where its speed checks ran
    (a GPU's name, or "not measured: no GPU"): it is told from a student's row by where it
    is and by its empty ``total``, never by its text (a student's folder may be named so)."""
    columns, people, speed = _summary(rows, roster)
    return columns, people + ([speed] if speed is not None else [])


def _summary(rows, roster=None) -> tuple[list[str], list[dict], dict | None]:
    """``summary`` in parts: ``(columns, one row per student, the speed row or None)``."""
    rows = v.sequence(rows, "rows", empty=True)
    roster = roster or {}
    exercises, students, worth, where = [], [], {}, {}
    for i, r in enumerate(rows):
        v.mapping(r, f"rows[{i}]")
        if r.get("student") not in students:
            students.append(r.get("student"))
        if r.get("status") != "not graded":
            key = f"{r['notebook']}/{r['exercise']}"
            if key not in exercises:
                exercises.append(key)
            worth[key] = float(r.get("worth", 1) or 1)
            on = r.get("graded_on") or ""
            if on:
                where.setdefault(key, set()).add(
                    "not measured: no GPU" if "simulator" in on.lower() else on)
    table = []
    for st in students:
        mine = {f"{r['notebook']}/{r['exercise']}": float(r.get("earned", r["score"]) or 0)
                for r in rows if r.get("student") == st and r.get("status") != "not graded"}
        missing = sorted({r["notebook"] for r in rows
                          if r.get("student") == st and r.get("status") == "missing"})
        line = {"student": st, "student_id": roster.get(st, {}).get("id", st),
                **{e: round(mine.get(e, 0.0), 3) for e in exercises}}
        line["total"] = round(sum(mine.get(e, 0.0) for e in exercises), 3)
        line["out_of"] = round(sum(worth[e] for e in exercises), 3)
        line["missing"] = " ".join(missing)
        table.append(line)
    speed = None
    if exercises:
        speed = {"student": SPEED_ROW, "student_id": "",
                 **{e: "; ".join(sorted(where.get(e, {"not run"}))) for e in exercises},
                 "total": "", "out_of": "", "missing": ""}
    return ["student", "student_id", *exercises, "total", "out_of", "missing"], table, speed


# The gradebook's last row: where each exercise's speed checks ran.
SPEED_ROW = "speed measured on"


def read_roster(path) -> dict:
    """A class list (CSV with a header): ``folder`` (the student's submission folder; or
    ``student``), and any of ``id``, ``name``, ``email``, ``sis_login_id``, ``section``:
    ``{folder: {column: value}}``."""
    if not isinstance(path, (str, os.PathLike)) or not str(path).strip():
        raise TypeError(f"roster must be a CSV file path, not {type(path).__name__} ({path!r}).")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"roster={path} is not a file: pass a CSV with a header row "
                                "naming folder,id,name,email,section.")
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        key = next((k for k in ("folder", "student") if k in (reader.fieldnames or [])), None)
        if key is None:
            raise ValueError(f"{path} has no 'folder' column (the name of each student's "
                             "submission folder); its columns: "
                             f"{', '.join(reader.fieldnames or [])}.")
        people, lines, ids = {}, {}, {}
        for line, r in enumerate(reader, 2):
            folder = (r.get(key) or "").strip()
            if not folder:
                continue
            # Two lines for one folder, or one id for two folders: one student's grade would
            # land on the other's row in the LMS, silently.
            if folder in people:
                raise ValueError(f"{path} lists folder {folder!r} twice (lines {lines[folder]} "
                                 f"and {line}): keep one line per student folder.")
            who = {k.strip().lower(): (val or "").strip() for k, val in r.items() if k}
            if who.get("id") and who["id"] in ids:
                raise ValueError(f"{path} gives id {who['id']!r} to two folders, "
                                 f"{ids[who['id']]!r} (line {lines[ids[who['id']]]}) and "
                                 f"{folder!r} (line {line}): give each student their own id.")
            people[folder], lines[folder] = who, line
            if who.get("id"):
                ids[who["id"]] = folder
        return people


def lms_tables(rows: list[dict], roster: dict | None = None, *,
               assignment: str = "gpuperf") -> dict:
    """The gradebook in the two shapes LMSs import: ``"canvas"`` (Canvas's gradebook CSV:
    ``Student``, ``ID``, ``SIS User ID``, ``SIS Login ID``, ``Section``, then one column per
    assignment, and a ``Points Possible`` row first) and ``"gradescope"`` (``Name``,
    ``SID``, ``Email``, ``Total Score``, ``Max Points``). Each is ``(columns, rows)``."""
    v.string(assignment, "assignment")
    roster = roster or {}
    _, people, _ = _summary(rows, roster)  # every student, whatever the folder's name
    possible = people[0]["out_of"] if people else 0
    canvas_cols = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", assignment]
    canvas = [{"Student": "    Points Possible", assignment: possible}]
    scope_cols = ["Name", "SID", "Email", "Total Score", "Max Points"]
    scope = []
    for t in people:
        who = roster.get(t["student"], {})
        canvas.append({"Student": who.get("name", t["student"]), "ID": who.get("canvas_id", ""),
                       "SIS User ID": who.get("id", t["student_id"]),
                       "SIS Login ID": who.get("sis_login_id", ""),
                       "Section": who.get("section", ""), assignment: t["total"]})
        scope.append({"Name": who.get("name", t["student"]),
                      "SID": who.get("id", t["student_id"]), "Email": who.get("email", ""),
                      "Total Score": t["total"], "Max Points": t["out_of"]})
    return {"canvas": (canvas_cols, canvas), "gradescope": (scope_cols, scope)}


# The scoring rule, said at the top of every student's feedback (and in the guide).
RULE = ("How it is scored: an exercise whose outputs are wrong on any case scores 0; checks of "
        "how the code is written and how fast it runs add credit only on top of correct "
        "outputs. Each exercise is worth the points shown (its fraction of checks passed "
        "times its worth).")


def feedback(rows: list[dict], student: str) -> str:
    """The Markdown feedback for ``student``: the scoring rule, each exercise's score and
    status, and the checker's report (or why there was none)."""
    v.string(student, "student")
    lines = [f"# Feedback for {student}", "", RULE, ""]
    for r in (r for r in rows if r.get("student") == student):
        lines.append(f"## {r['notebook']}: {r['exercise']}")
        lines.append("")
        worth = float(r.get("worth", 1) or 1)
        lines.append(f"Score {float(r['score']):.0%} ({float(r['points'] or 0):g} of "
                     f"{float(r['possible'] or 0):g} check points), "
                     f"{float(r.get('earned', r['score']) or 0):g} of {worth:g} "
                     f"point{'s' if worth != 1 else ''}, {r['status']}"
                     + (f", graded on {r['graded_on']}" if r.get("graded_on") else "") + ".")
        lines.append("")
        if r.get("report"):
            lines += ["```text", r["report"].rstrip(), "```", ""]
        if r.get("detail") and (r["status"] != "graded" or not r.get("report")
                                or str(r["detail"]).startswith("outputs wrong")):
            lines += [r["detail"], ""]  # why there is no report, or what the rows add
    return "\n".join(lines)


def _csv_text(columns, rows) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def _write_file(path: Path, text: str) -> None:
    """``text`` to ``path``, whole or not at all, with a new file's normal permissions."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # errors: a folder name that is not UTF-8 (a zip's Latin-1 "Jos\xe9") is written
        # as its escape, not refused after an hour of grading
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace", newline="") as f:
            f.write(text)
        os.chmod(tmp, default_file_mode())  # as readable as any new file, not private
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class OutputsNotWritten(OSError):
    """Some of a gradebook's outputs could not be written; every other one was.
    ``written``: the paths written; ``failed``: ``(path, reason)`` for each that was not."""

    def __init__(self, written, failed):
        self.written, self.failed = list(written), list(failed)
        super().__init__(
            "could not write " + "; ".join(f"{p}: {why}" for p, why in self.failed)
            + (". Written: " + ", ".join(map(str, self.written)) if self.written
               else ". Nothing else was written either") + ".")


def write_gradebook(rows: list[dict], out: Path, *, force: bool = False,
                    roster: dict | None = None, notebooks: Path | None = None) -> Path:
    """Write the gradebook ``out`` (one row per student, a column per exercise), its details
    (``<out>-details.csv``: one row per student, notebook and exercise), the LMS imports
    (``<out>-canvas.csv``, ``<out>-gradescope.csv``) and a feedback file per student
    (``<out>-feedback/<name>.md``, ``<name>`` from ``file_names``), with the student's
    executed notebooks beside it where ``notebooks`` holds them (``notebooks/<name>/``, as
    ``grade(keep=...)`` writes them). Each file is written whole or not at all, and nothing
    existing is replaced unless forced. One output that cannot be written costs no other:
    the rest are written, then ``OutputsNotWritten`` says which failed and why."""
    import shutil

    rows = v.sequence(rows, "rows", empty=True)
    for i, r in enumerate(rows):
        v.mapping(r, f"rows[{i}]")
    v.boolean(force, "force")
    _refuse_existing(out, force)
    out, details, feedback_dir = outputs(out)
    columns, table = summary(rows, roster)
    lms = lms_tables(rows, roster)
    students = list(dict.fromkeys(r["student"] for r in rows))
    names = file_names(students)
    out.parent.mkdir(parents=True, exist_ok=True)
    written, failed = [], []

    def attempt(path, write, record=True):
        try:
            write()
            if record:
                written.append(path)
        except Exception as err:  # noqa: BLE001 - said in OutputsNotWritten, never lost
            failed.append((path, f"{type(err).__name__}: {err}"))

    # The tables first, each on its own: they are the grading run.
    attempt(details, lambda: _write_file(details, _csv_text(COLUMNS, rows)))
    for kind, path in lms_outputs(out).items():
        attempt(path, lambda path=path, kind=kind: _write_file(path, _csv_text(*lms[kind])))
    attempt(out, lambda: _write_file(out, _csv_text(columns, table)))
    # The feedback folder is built apart and moved into place in one rename.
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{feedback_dir.name}.", dir=out.parent))
    except OSError as err:
        staging = None
        failed.append((feedback_dir, f"{type(err).__name__}: {err}"))
    if staging is not None:
        try:
            for student in students:
                name = names[student]
                attempt(staging / f"{name}.md", lambda s=student, n=name: _write_file(
                    staging / f"{n}.md", feedback(rows, s)), record=False)
                kept = Path(notebooks) / name if notebooks else None
                if kept is not None and kept.is_dir():
                    attempt(staging / name,
                            lambda k=kept, n=name: shutil.copytree(k, staging / n), record=False)
            old = None
            try:
                os.chmod(staging, default_file_mode(0o777))  # mkdtemp's folder is private
                if feedback_dir.exists():
                    old = feedback_dir.with_name(f".{feedback_dir.name}.old-{os.urandom(4).hex()}")
                    feedback_dir.rename(old)
                staging.rename(feedback_dir)
                written.append(feedback_dir)
            except OSError as err:
                where = f"; the feedback is in {staging}"
                if old is not None and not feedback_dir.exists():
                    try:
                        old.rename(feedback_dir)  # the earlier feedback back where it was
                    except OSError:
                        where += f", the earlier feedback in {old}"
                    old = None  # kept, whichever name it has
                failed.append((feedback_dir, f"{type(err).__name__}: {err}{where}"))
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
            if not staging.exists():  # a student's file that failed, named where it belonged
                failed = [(feedback_dir / p.relative_to(staging) if p.is_relative_to(staging)
                           else p, why) for p, why in failed]
        except BaseException:  # an interrupt: no half-built folder left behind
            shutil.rmtree(staging, ignore_errors=True)
            raise
    if failed:
        raise OutputsNotWritten(written, failed)
    return out


def _safe_name(student: str) -> str:
    """A student folder's name as a file name: a path separator, a control character or a
    byte that is not UTF-8 becomes ``_``, ``.``/``..`` and an empty name ``_``, and a name
    longer than ``_NAME_BYTES`` bytes is cut there (so ``<name>.md`` fits a file system's
    255). Two names can come out alike: ``file_names`` makes them unique."""
    safe = "".join("_" if c in "/\\" or ord(c) < 32 or ord(c) == 127
                   or 0xD800 <= ord(c) <= 0xDFFF else c for c in student)
    while len(safe.encode("utf-8")) > _NAME_BYTES:
        safe = safe[:-1]
    return "_" if safe in ("", ".", "..") else safe


_NAME_BYTES = 150  # a file name's bytes at most before its "-<hash>" and ".md"


def file_names(students) -> dict:
    """``{student: name}``: the name of each student's feedback file (``<name>.md``) and
    executed-notebook folder (``<name>/``) in the feedback folder, and of the folder
    ``grade(keep=...)`` keeps the notebooks in. Each is the folder's name made safe
    (``_safe_name``); where two students' names would meet, even only in letter case (a
    case-insensitive disk: macOS, Windows) or as one's folder and the other's ``.md``
    (``a.md/`` and ``a`` + ``.md``), each of them gets ``-`` and the first 8 (or more, until
    unique) hex digits of the SHA-256 of the folder's own name added: the same names for the
    same class on every run, never one student's file over another's. The names depend on
    the whole class, so ``grade`` and ``write_gradebook`` agree on one class's rows."""
    import hashlib

    if isinstance(students, (str, bytes)) or not hasattr(students, "__iter__"):
        raise TypeError(f"students must be the students' folder names (a list of strings), not "
                        f"{type(students).__name__} ({students!r}).")
    students = sorted(dict.fromkeys(v.string(s, "student", empty=True) for s in students))

    def claims(name):  # what the name takes in the folder: its .md file and its folder
        return {name.casefold(), f"{name}.md".casefold()}

    seen = {}
    for s in students:
        for c in claims(_safe_name(s)):
            seen[c] = seen.get(c, 0) + 1
    names = {s: _safe_name(s) for s in students
             if all(seen[c] == 1 for c in claims(_safe_name(s)))}
    taken = set().union(*(claims(n) for n in names.values()))
    for s in students:
        if s in names:
            continue
        digest = hashlib.sha256(s.encode("utf-8", "surrogatepass")).hexdigest()
        for n in range(8, len(digest) + 1, 4):  # longer only against a name made to meet it
            name = f"{_safe_name(s)}-{digest[:n]}"
            if not claims(name) & taken:
                break
        names[s] = name
        taken |= claims(name)
    return names


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gpuperf.grade", description=__doc__.split("\n")[0])
    ap.add_argument("submissions", help="folder with one subfolder of notebooks per student")
    ap.add_argument("--source", default="solutions",
                    help="the course's chapters, with the checker cells (default: solutions/)")
    ap.add_argument("--out", default="gradebook.csv", help="the gradebook (default: gradebook.csv)")
    ap.add_argument("--assigned", default=None,
                    help="the assignment's notebooks, comma-separated (e.g. 03_dram,06_reduce); "
                         "each counts for every student, 0 where missing (default: every "
                         "course notebook someone handed in)")
    ap.add_argument("--roster", default=None,
                    help="CSV with a header: folder,id[,name,email,section,sis_login_id] (the "
                         "student-id column and the LMS files take it)")
    ap.add_argument("--jobs", type=int, default=None,
                    help="notebooks graded at once (default: the CPUs)")
    ap.add_argument("--cell-timeout", type=int, default=120,
                    help="seconds a cell may run before it is interrupted (default: 120)")
    ap.add_argument("--memory-limit", type=float, default=8,
                    help="GiB of memory a student's kernel may allocate (default: 8)")
    ap.add_argument("--force", action="store_true", help="replace an existing gradebook")
    ap.add_argument("--seed", type=int, default=None,
                    help="the seed of the hidden cases, the same for every student (default: a "
                         "fresh one, printed); give the printed one to grade again alike")
    args = ap.parse_args(argv)
    import shutil

    from . import sandbox

    keep = None
    try:
        _refuse_existing(Path(args.out), args.force)  # before an hour of grading, not after
        if args.jobs is not None:
            v.positive_int(args.jobs, "--jobs")
        v.positive(args.memory_limit, "--memory-limit")
        roster = read_roster(args.roster) if args.roster else None
        assigned = [a.strip() for a in args.assigned.split(",") if a.strip()] \
            if args.assigned else None
        from .device import info

        here = info()
        print(f"grading on {here.name}" + (": the notebooks' kernels run on the simulator, "
                                           "performance checks are skipped (speed: not "
                                           "measured: no GPU)"
                                           if here.simulated else ""),
              file=sys.stderr, flush=True)
        jobs = args.jobs or os.cpu_count() or 1
        if not here.simulated and grading_env()[records.ENV_LIVE] == "0":
            print("the chapters' experiments show their recorded figures while grading "
                  f"({records.ENV_LIVE}=0); the checkers run and time the students' kernels "
                  f"on this GPU ({records.ENV_LIVE}=1 measures the figures too)",
                  file=sys.stderr, flush=True)
        if not here.simulated and jobs > 1:
            print(f"{jobs} notebooks are graded at once on one GPU: their speed checks share it "
                  "and can read slower than alone; --jobs 1 times each kernel alone",
                  file=sys.stderr, flush=True)
        why = sandbox.available()
        print("each notebook runs in its own kernel in a bubblewrap sandbox (read-only course "
              "and system, private /tmp, no network, no other students' files) with memory, "
              "process and CPU limits" if why is None else
              f"NOT SANDBOXED: {why}; each notebook still runs in its own kernel with memory, "
              "process and CPU limits, but its code can read and write what you can",
              file=sys.stderr, flush=True)
        out = Path(args.out)
        keep = Path(tempfile.mkdtemp(prefix=f".{out.stem}-notebooks.",
                                     dir=out.resolve().parent if out.resolve().parent.is_dir()
                                     else None))
        limits = sandbox.Limits(memory_bytes=int(args.memory_limit * sandbox.GIB))
        rows = grade(Path(args.submissions), source=Path(args.source),
                     cell_timeout=args.cell_timeout, hidden_seed=args.seed, jobs=args.jobs,
                     assigned=assigned, limits=limits, keep=keep,
                     hide=[out.resolve().parent] if out.resolve().parent != Path.cwd() else [],
                     progress=lambda line: print(line, file=sys.stderr, flush=True))
        for r in rows:
            r["student_id"] = (roster or {}).get(r["student"], {}).get("id", r["student"])
        try:
            write_gradebook(rows, out, force=args.force, roster=roster, notebooks=keep)
        except Exception as err:  # noqa: BLE001 - after grading: the run is never lost
            print(f"error: {err}" if isinstance(err, (OSError, ValueError, TypeError))
                  else f"error: {type(err).__name__}: {err}", file=sys.stderr)
            if _save_run(rows, out, keep, err):
                keep = None  # kept for the instructor, not removed below
            return 2
    except (FileNotFoundError, FileExistsError, ValueError, TypeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    finally:
        if keep is not None:
            shutil.rmtree(keep, ignore_errors=True)
    counts = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    _, details, feedback_dir = outputs(Path(args.out))
    lms = lms_outputs(Path(args.out))
    print(f"wrote {args.out} (one row per student), {details} ({len(rows)} rows: "
          + ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
          + f"), {lms['canvas']} and {lms['gradescope']} (to import in Canvas or Gradescope) "
          f"and {feedback_dir}/ (each student's feedback and executed notebooks)")
    renamed = {st: n for st, n in file_names(dict.fromkeys(r["student"] for r in rows)).items()
               if n != st}
    if renamed:
        print("feedback files not named as the folder (a character a file name cannot hold, or "
              "folders whose names meet in one file name): "
              + ", ".join(f"{st!r}: {n}.md" for st, n in renamed.items()), file=sys.stderr)
    return 0


def _save_run(rows: list[dict], out: Path, keep: Path | None, err: Exception) -> bool:
    """After grading, where the gradebook could not all be written: the details (every row;
    ``write_gradebook`` takes them back) saved beside ``out``, or in the system's temporary
    folder where that fails too, unless written already; said on stderr. True where the
    executed notebooks in ``keep`` are to stay (the feedback folder was not written)."""
    written = getattr(err, "written", [])
    details = outputs(out)[1]
    stay = keep is not None and Path(keep).is_dir() and any(Path(keep).iterdir()) \
        and outputs(out)[2] not in written
    if details not in written:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        for folder in (out.parent, Path(tempfile.gettempdir())):
            path = folder / f"{out.stem}-details.saved-{stamp}-{os.getpid()}.csv"
            try:
                folder.mkdir(parents=True, exist_ok=True)
                _write_file(path, _csv_text(COLUMNS, rows))
            except OSError as why:
                print(f"could not save the grading run's rows to {path}: {why}",
                      file=sys.stderr)
                continue
            print(f"the grading run's rows are saved in {path}; to write the gradebook from "
                  "them: python -c \"import csv, gpuperf.grade as g; g.write_gradebook(list("
                  f"csv.DictReader(open({str(path)!r}))), {str(out)!r}"
                  + (f", notebooks={str(keep)!r}" if stay else "") + ")\" (force=True "
                  "replaces what is there)", file=sys.stderr)
            break
    if stay:
        print(f"the executed notebooks are kept in {keep} (one folder per student, named as "
              "gpuperf.grade.file_names says)", file=sys.stderr)
    return stay


if __name__ == "__main__":
    sys.exit(main())
