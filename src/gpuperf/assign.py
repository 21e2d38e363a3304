"""Student copies of the chapter notebooks: ``python -m gpuperf.assign notebooks/ --out student/``.

In each code cell, every region between ``### BEGIN SOLUTION`` and ``### END SOLUTION``
is replaced by ``# YOUR CODE HERE`` and ``raise NotImplementedError()`` at the same
indentation (nbgrader's markers, so nbgrader can be used instead). A region at the top
level of a cell (not inside a function) gets ``# YOUR CODE HERE`` alone: a ``raise`` there
would stop a student's "run all" at that cell, before the rest of the chapter; the cell
gives the answer's empty form above the region, and its checker says "not implemented yet". The markdown cells
that open and close a hidden solution (``:::{solution-start}``, ``:::{solution-end}``)
are dropped, and all outputs are cleared. A copy that still contains solution text
is an error, not a warning.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
_FENCE = re.compile(r"^\s*:{3,}\s*\{solution-(start|end)\}", re.M)


class AssignError(ValueError):
    """A notebook's solution markers are malformed."""


def strip_solutions(source: str, *, where: str = "cell") -> str:
    """Replace every marked solution region of a code cell's source."""
    from . import validate as v

    v.string(source, "source", empty=True)
    v.string(where, "where")
    out, inside, indent = [], False, ""
    for lineno, line in enumerate(source.splitlines(), 1):
        stripped = line.strip()
        if stripped == BEGIN:
            if inside:
                raise AssignError(f"{where}, line {lineno}: {BEGIN} inside another solution.")
            inside, indent = True, line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}# YOUR CODE HERE")
            if indent:
                out.append(f"{indent}raise NotImplementedError()")
        elif stripped == END:
            if not inside:
                raise AssignError(f"{where}, line {lineno}: {END} without {BEGIN}.")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise AssignError(f"{where}: {BEGIN} is never closed by {END}.")
    return "\n".join(out)


def student_copy(nb):
    """A student version of the notebook object ``nb`` (nbformat), solutions removed."""
    import copy

    _notebook_arg(nb)
    nb = copy.deepcopy(nb)
    cells = []
    for i, cell in enumerate(nb.cells):
        src = cell.source if isinstance(cell.source, str) else "".join(cell.source)
        if cell.cell_type == "markdown" and _FENCE.search(src):
            continue
        if cell.cell_type == "code":
            cell.source = strip_solutions(src, where=f"cell {i}")
            cell.outputs = []
            cell.execution_count = None
        cells.append(cell)
    nb.cells = cells
    return nb


def solution_leaks(nb) -> list[str]:
    """Places where a student copy still shows solution markers (should be empty)."""
    _notebook_arg(nb)
    leaks = []
    for i, cell in enumerate(nb.cells):
        src = cell.source if isinstance(cell.source, str) else "".join(cell.source)
        if BEGIN in src or END in src or _FENCE.search(src):
            leaks.append(f"cell {i}")
    return leaks


def _notebook_arg(nb):
    if not hasattr(nb, "cells") or not isinstance(getattr(nb, "cells", None), list):
        raise TypeError(f"nb must be a notebook object (nbformat.read(path, as_version=4)), not "
                        f"{type(nb).__name__}.")


def assign(src: Path, out: Path) -> list[Path]:
    import os

    import nbformat

    for name, val in (("src", src), ("out", out)):
        if not isinstance(val, (str, os.PathLike)) or not str(val).strip():
            raise TypeError(f"{name} must be a path (str or Path), not {type(val).__name__} "
                            f"({val!r}).")
    src, out = Path(src), Path(out)
    if not src.exists():
        raise FileNotFoundError(f"{src} does not exist; pass the notebooks folder or a notebook.")
    paths = sorted(src.glob("*.ipynb")) if src.is_dir() else [src]
    if not paths:
        raise FileNotFoundError(f"no .ipynb files in {src}.")
    if out.exists() and not out.is_dir():
        raise ValueError(f"out={out} is a file; pass a folder for the student copies.")
    if any(out.resolve() == p.parent.resolve() for p in paths):
        raise ValueError(f"out={out} is the folder of the notebooks themselves: the student "
                         "copies would overwrite the solutions. Pass another folder.")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for p in paths:
        nb = nbformat.read(p, as_version=4)
        try:
            student = student_copy(nb)
        except AssignError as err:
            raise AssignError(f"{p.name}: {err}") from None
        leaks = solution_leaks(student)
        if leaks:
            raise AssignError(f"{p.name}: solution text left in {', '.join(leaks)}")
        target = out / p.name
        nbformat.write(student, target)
        written.append(target)
    return written


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gpuperf.assign",
                                 description="Write student copies of the notebooks, without solutions.")
    ap.add_argument("source", help="a notebook or a folder of notebooks (e.g. notebooks/)")
    ap.add_argument("--out", default="student", help="output folder (default: student/)")
    args = ap.parse_args(argv)
    try:
        written = assign(Path(args.source), Path(args.out))
    except (AssignError, FileNotFoundError, ValueError, TypeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for p in written:
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
