"""Student copies of the chapter notebooks: ``python -m gpuperf.assign solutions/ --out student/``.

The chapters, solutions included, live in ``solutions/``; ``notebooks/`` holds their student
copies, the notebooks a student opens (from the repository, or with the book's Colab button).
After editing a chapter, ``python -m gpuperf.assign solutions/ --out notebooks/ --force``
writes them again, and ``--check`` says whether they are current (the tests and the book
build refuse stale copies).

In each code cell, every region between ``### BEGIN SOLUTION`` and ``### END SOLUTION``
(nbgrader's markers, recognised in any case and spacing: ``###BEGIN SOLUTION``,
``### Begin Solution``) is replaced by ``# YOUR CODE HERE`` and ``raise
NotImplementedError()`` at the same indentation. A region at the top level of a cell (not
inside a function) gets ``# YOUR CODE HERE`` alone: a ``raise`` there would stop a
student's "run all" at that cell, before the rest of the chapter; the cell gives the
answer's empty form above the region, and its checker says "not implemented yet".

Everything between a hidden solution's fences (``:::{solution-start}`` ...
``:::{solution-end}``) is solution: prose there is dropped, and a code cell there must mark
its solution region (the code around the region is the task's scaffold), or the copy fails
naming the cell. Text beside a fence in the same cell is kept. Exercise directives
(``:::{exercise} Title`` ... ``:::``) become a heading and the task, readable in Jupyter
and Colab, and all outputs are cleared. A copy that still contains solution text is an
error, not a warning.

With ``--nbgrader`` it writes nbgrader *source* notebooks instead (:func:`nbgrader_source`):
solutions kept and marked as autograded answers, checker cells as autograder tests.

Nothing is lost: the output folder may not be or contain the source, existing copies (a
student's work, perhaps) are overwritten only with ``--force``, every notebook is checked
before anything is written, and each file is written whole or not at all.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from .nbtools import default_file_mode, notebook_arg

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
# nbgrader's markers in any case and spacing ("###BEGIN SOLUTION", "### Begin Solution").
_BEGIN = re.compile(r"^\s*#+\s*begin\s+solution\s*#*\s*$", re.I)
_END = re.compile(r"^\s*#+\s*end\s+solution\s*#*\s*$", re.I)
# Anything that looks like a marker, recognised or not: left in a copy, it is a leak.
_MARKERISH = re.compile(r"\b(begin|end)[\s_-]*solution\b", re.I)
# MyST solution directives, with colon or backtick fences: {solution-start} / {solution-end}
# (the book's split form) and a whole {solution} block.
_FENCE = re.compile(r"^\s*(:{3,}|`{3,})\s*\{solution(-start|-end)?\}", re.M | re.I)
_EXERCISE = re.compile(r"^\s*(:{3,}|`{3,})\s*\{exercise\}\s*(.*)$", re.I)
_OPTION = re.compile(r"^\s*:[\w-]+:")


SOURCE = "solutions"  # the chapters with their solutions (the book and the instructor)
STUDENT = "notebooks"  # their student copies: what a student opens


class AssignError(ValueError):
    """A notebook's solution markers are malformed."""


def strip_solutions(source: str, *, where: str = "cell") -> str:
    """Replace every marked solution region of a code cell's source."""
    from . import validate as v

    v.string(source, "source", empty=True)
    v.string(where, "where")
    out, inside, indent = [], False, ""
    for lineno, line in enumerate(source.splitlines(), 1):
        if _BEGIN.match(line):
            if inside:
                raise AssignError(f"{where}, line {lineno}: {BEGIN} inside another solution.")
            inside, indent = True, line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}# YOUR CODE HERE")
            if indent:
                out.append(f"{indent}raise NotImplementedError()")
        elif _END.match(line):
            if not inside:
                raise AssignError(f"{where}, line {lineno}: {END} without {BEGIN}.")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise AssignError(f"{where}: {BEGIN} is never closed by {END}.")
    return "\n".join(out)


def _closing(lines, i):
    """Index of the line after the start of a directive at ``lines[i]`` and its
    option lines (``:class: dropdown``) and, for a fence with no body, its closing line."""
    i += 1
    while i < len(lines) and _OPTION.match(lines[i]):
        i += 1
    return i


def _markdown(src: str, inside: bool, where: str):
    """A markdown cell's text for the student (solution prose out, exercise directives as a
    heading and the task) and whether it ends inside a solution."""
    lines, out, i = src.split("\n"), [], 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            marks, kind = fence.group(1), (fence.group(2) or "").lower()
            close = re.compile(rf"^\s*{re.escape(marks)}\s*$")
            if kind == "":  # a whole {solution} block: all of it goes, up to its closing fence
                if inside:
                    raise AssignError(f"{where}: a solution block inside a hidden solution.")
                i += 1
                while i < len(lines) and not close.match(lines[i]):
                    i += 1
                if i == len(lines):
                    raise AssignError(f"{where}: a {{solution}} block is never closed by "
                                      f"{marks}.")
                i += 1
                continue
            if kind == "-start":
                if inside:
                    raise AssignError(f"{where}: a solution starts inside another solution.")
                inside = True
            else:
                if not inside:
                    raise AssignError(f"{where}: a solution ends that never started.")
                inside = False
            i = _closing(lines, i)
            j = i
            while j < len(lines) and not lines[j].strip():
                j += 1  # blank lines before the fence's own closing line
            if j < len(lines) and close.match(lines[j]):
                i = j + 1
            continue
        if inside:
            i += 1
            continue
        exercise = _EXERCISE.match(line)
        if exercise:
            marks, title = exercise.group(1), exercise.group(2).strip()
            out.append(f"### Exercise: {title}" if title else "### Exercise")
            i = _closing(lines, i)
            body = []
            while i < len(lines) and not re.match(rf"^\s*{re.escape(marks)}\s*$", lines[i]):
                body.append(lines[i])
                i += 1
            i += 1  # the directive's closing line
            while body and not body[0].strip():
                body.pop(0)
            out += ([""] + body) if body else []
            continue
        out.append(line)
        i += 1
    return "\n".join(out).strip("\n"), inside


def _walk(nb, code_cell):
    """A copy of ``nb`` with the markdown as the student sees it (hidden solutions' prose
    out, exercises as headings), outputs cleared, and each code cell's source replaced by
    ``code_cell(i, cell, src)``. A code cell inside a hidden solution must mark its region."""
    import copy

    notebook_arg(nb)
    nb = copy.deepcopy(nb)
    cells, inside = [], False
    for i, cell in enumerate(nb.cells):
        src = cell.source if isinstance(cell.source, str) else "".join(cell.source)
        if cell.cell_type == "markdown":
            text, inside = _markdown(src, inside, f"cell {i}")
            if not text.strip():
                continue  # a cell that held only fences or solution prose
            cell.source = text
        elif cell.cell_type == "code":
            if inside and not any(_BEGIN.match(ln) for ln in src.splitlines()):
                raise AssignError(
                    f"cell {i}: a code cell inside a hidden solution (after a "
                    ":::{solution-start} with no :::{solution-end} yet) has no ### BEGIN "
                    "SOLUTION region: mark the solution in it, move it out of the solution, or "
                    "add the :::{solution-end} that should come before it.")
            cell.source = code_cell(i, cell, src)
            cell.outputs = []
            cell.execution_count = None
        elif inside:
            continue  # a raw cell inside a solution is solution too
        cells.append(cell)
    if inside:
        raise AssignError("a :::{solution-start} is never closed by :::{solution-end}.")
    nb.cells = cells
    return nb


def student_copy(nb):
    """A student version of the notebook object ``nb`` (nbformat), solutions removed."""
    return _walk(nb, lambda i, cell, src: strip_solutions(src, where=f"cell {i}"))


def _canonical_markers(source: str) -> str:
    """The solution markers spelled as nbgrader expects them, at their indentation."""
    out = []
    for line in source.splitlines():
        indent = line[: len(line) - len(line.lstrip())]
        if _BEGIN.match(line):
            line = indent + BEGIN
        elif _END.match(line):
            line = indent + END
        out.append(line)
    return "\n".join(out)


def nbgrader_source(nb, *, points: int = 1):
    """An nbgrader *source* notebook made from a chapter notebook ``nb``: solution cells
    marked as autograded answers (nbgrader replaces their marked regions), every checker
    cell an autograder test worth ``points`` (or its own nbgrader ``points`` metadata, as
    ``python -m gpuperf.grade`` counts it) that fails when the checker does, and the
    markdown as in the student copy (hidden solutions' prose out, exercises as headings)."""
    from .nbtools import checker_cells
    from .validate import positive_int

    notebook_arg(nb)
    positive_int(points, "points")
    checks = {cid for cid, _ in checker_cells(nb)}

    def code_cell(i, cell, src):
        strip_solutions(src, where=f"cell {i}")  # the markers must be well formed
        grade_id = cell.get("id") or f"cell-{i}"
        if any(_BEGIN.match(ln) for ln in src.splitlines()):
            cell.metadata["nbgrader"] = {"grade": False, "solution": True, "locked": False,
                                         "grade_id": grade_id, "schema_version": 3}
            return _canonical_markers(src)
        if cell.get("id") in checks:
            # A checker cell's own nbgrader points (what python -m gpuperf.grade weighs it
            # by too) win over the default.
            own = cell.metadata.get("nbgrader", {}).get("points")
            worth = own if isinstance(own, (int, float)) and not isinstance(own, bool) \
                and own > 0 else points
            cell.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True,
                                         "points": worth, "grade_id": grade_id,
                                         "schema_version": 3}
            return _as_test(src, where=f"cell {i}")
        return src

    return _walk(nb, code_cell)


def _as_test(source: str, *, where: str) -> str:
    """A checker cell as an nbgrader test: the report is printed as before, then asserted."""
    import ast

    tree = ast.parse(source)
    last = tree.body[-1] if tree.body else None
    if not isinstance(last, ast.Expr) or not isinstance(last.value, ast.Call):
        raise AssignError(f"{where}: a checker cell must end with the checker call (e.g. "
                          "`gs.check_saxpy(my_saxpy);`) to become an nbgrader test.")
    lines = source.rstrip().rstrip(";").splitlines()
    start = last.lineno - 1
    call = "\n".join(lines[start:])
    head = "\n".join(lines[:start])
    # nbgrader keeps the hidden block out of the released notebook and puts it back when it
    # autogrades: the checker runs again in grading mode, on cases the student never saw.
    hidden = (
        "### BEGIN HIDDEN TESTS\n"
        "import os as _os, tempfile as _tf\n"
        "import gpuperf.exercises as _gx\n"
        "print('Hidden tests (cases the notebook did not show):')\n"
        "_gx.GRADE_LOG, _gx._hidden_seed = _os.path.join(_tf.mkdtemp(), 'hidden.jsonl'), None\n"
        "try:\n" + "\n".join("    " + line for line in call.splitlines()).replace(
            "    ", "    _hidden = ", 1) + "\n"
        "finally:\n    _gx.GRADE_LOG = None\n"
        "assert _hidden, \"the checker failed on cases the notebook did not show\"\n"
        "### END HIDDEN TESTS")
    return ((head + "\n") if head else "") + (
        f"_report = {call}\n"
        "assert _report, \"the checker's report above lists what failed\"\n" + hidden)


def solution_leaks(nb) -> list[str]:
    """Places where a student copy still shows solution markers (should be empty)."""
    notebook_arg(nb)
    leaks = []
    for i, cell in enumerate(nb.cells):
        src = cell.source if isinstance(cell.source, str) else "".join(cell.source)
        if _MARKERISH.search(src) or _FENCE.search(src):
            leaks.append(f"cell {i}")
    return leaks


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
        return True
    except ValueError:
        return False


def assign(src: Path, out: Path, *, force: bool = False, nbgrader: bool = False) -> list[Path]:
    """Write a student copy of each notebook of ``src`` (a notebook or a folder) to ``out``
    (with ``nbgrader``: an nbgrader source notebook instead, see :func:`nbgrader_source`).

    Refuses an ``out`` that is or contains the source, and existing copies unless ``force``;
    every copy is made and checked before any is written, and each file appears whole."""
    import os
    import tempfile

    import nbformat

    from . import validate as v

    for name, val in (("src", src), ("out", out)):
        if not isinstance(val, (str, os.PathLike)) or not str(val).strip():
            raise TypeError(f"{name} must be a path (str or Path), not {type(val).__name__} "
                            f"({val!r}).")
    v.boolean(force, "force")
    v.boolean(nbgrader, "nbgrader")
    src, out = Path(src), Path(out)
    if not src.exists():
        raise FileNotFoundError(f"{src} does not exist; pass the notebooks folder or a notebook.")
    paths = sorted(src.glob("*.ipynb")) if src.is_dir() else [src]
    if not paths:
        raise FileNotFoundError(f"no .ipynb files in {src}.")
    if out.exists() and not out.is_dir():
        raise ValueError(f"out={out} is a file; pass a folder for the student copies.")
    where = out.resolve()
    for p in paths:
        if _inside(p.resolve(), where):
            raise ValueError(
                f"out={out} is or contains the source ({p}): the student copies could overwrite "
                "the notebooks with their solutions. Pass a folder outside it, e.g. "
                "--out student/.")
    if src.is_dir() and _inside(where, src.resolve()):
        raise ValueError(f"out={out} is inside the source folder {src}: the copies would sit "
                         "among the notebooks with their solutions (and be handed out with "
                         "them). Pass a folder outside it, e.g. --out student/.")
    targets = [out / p.name for p in paths]
    existing = [t for t in targets if t.exists()]
    if existing and not force:
        shown = ", ".join(t.name for t in existing[:4]) + (" ..." if len(existing) > 4 else "")
        raise FileExistsError(
            f"{len(existing)} student cop{'y' if len(existing) == 1 else 'ies'} already in "
            f"{out} ({shown}): a student's work may be in them. Choose another --out, or pass "
            "--force to replace them.")
    copies = []
    for p in paths:  # every copy made and checked before anything is written
        try:
            nb = nbformat.read(p, as_version=4)
        except Exception as err:  # noqa: BLE001 - any unreadable notebook stops the run
            raise AssignError(f"{p.name}: not a readable notebook ({type(err).__name__}: "
                              f"{err}); nothing was written.") from None
        try:
            student = nbgrader_source(nb) if nbgrader else student_copy(nb)
        except AssignError as err:
            raise AssignError(f"{p.name}: {err} Nothing was written.") from None
        leaks = [] if nbgrader else solution_leaks(student)
        if leaks:
            raise AssignError(f"{p.name}: solution text left in {', '.join(leaks)}; nothing "
                              "was written.")
        copies.append(nbformat.writes(student))
    out.mkdir(parents=True, exist_ok=True)
    staged = []
    try:
        for target, text in zip(targets, copies):
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=out)
            staged.append((Path(tmp), target))
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
    except BaseException:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise
    mode = default_file_mode()
    for tmp, target in staged:  # each file is replaced whole (same folder: an atomic rename)
        os.chmod(tmp, mode)  # a temporary file is private; a copy is as readable as any file
        os.replace(tmp, target)
    return targets


def stale_copies(src, out) -> list[str]:
    """The notebooks of ``src`` (a folder or one notebook) whose copy in folder ``out`` is
    missing or is not their student copy (each as ``"name: why"``); empty when all are current."""
    import os

    import nbformat

    for name, val in (("src", src), ("out", out)):
        if not isinstance(val, (str, os.PathLike)) or not str(val).strip():
            raise TypeError(f"{name} must be a path (str or Path), not {type(val).__name__} "
                            f"({val!r}).")
    src, out = Path(src), Path(out)
    if not src.exists():
        raise ValueError(f"src={src} does not exist: pass the chapters' folder (solutions/) "
                         "or one of its notebooks.")
    if out.exists() and not out.is_dir():
        raise ValueError(f"out={out} is a file: pass the folder of student copies (notebooks/).")
    stale = []
    for p in sorted(src.glob("*.ipynb")) if src.is_dir() else [src]:
        target = out / p.name
        if not target.exists():
            stale.append(f"{p.name}: no copy in {out}")
            continue
        want = student_copy(nbformat.read(p, as_version=4))
        if nbformat.reads(target.read_text(encoding="utf-8"), as_version=4) != want:
            stale.append(f"{p.name}: {target} is not its student copy")
    return stale


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gpuperf.assign",
                                 description="Write student copies of the notebooks, without solutions.")
    ap.add_argument("source", help="a notebook or a folder of notebooks (e.g. solutions/)")
    ap.add_argument("--out", default="student", help="output folder (default: student/)")
    ap.add_argument("--force", action="store_true",
                    help="replace copies already in the output folder (a student's work may be "
                         "in them)")
    ap.add_argument("--nbgrader", action="store_true",
                    help="write nbgrader source notebooks (solutions kept and marked, checker "
                         "cells as autograder tests) for nbgrader's generate_assignment")
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 naming each copy in --out that is missing or "
                         "not the student copy of its source (e.g. solutions/ --out notebooks/)")
    args = ap.parse_args(argv)
    if args.check:
        if not Path(args.source).is_dir() or not Path(args.out).is_dir():
            print(f"error: --check compares two folders; {args.source} or {args.out} is not one.",
                  file=sys.stderr)
            return 2
        stale = stale_copies(args.source, args.out)
        for line in stale:
            print(f"stale: {line}")
        if stale:
            print(f"write them again: python -m gpuperf.assign {args.source} --out {args.out} "
                  "--force", file=sys.stderr)
            return 1
        print(f"every copy in {args.out} is the student copy of its notebook in {args.source}")
        return 0
    try:
        written = assign(Path(args.source), Path(args.out), force=args.force,
                         nbgrader=args.nbgrader)
    except (AssignError, FileNotFoundError, FileExistsError, ValueError, TypeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for p in written:
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
