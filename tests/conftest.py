"""Tests run on Numba's CUDA simulator (CI has no GPU), at small sizes."""

import os
import sys
from pathlib import Path

os.environ.setdefault("GPUPERF_MODE", "simulator")

import gpuperf  # noqa: E402,F401  (chooses the mode before any test imports numba.cuda)

ROOT = Path(__file__).resolve().parents[1]
WRONG = Path(__file__).parent / "wrong"


def load_answer(path):
    """Import a standalone answer file (tests/wrong, tests/right, tests/holes) as a module
    named after its folders, e.g. ``wrong_streams_pipeline_no_wait``."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        f"{path.parent.parent.name}_{path.parent.name}_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # the simulator looks a kernel's globals up by module
    spec.loader.exec_module(mod)
    return mod


def load_wrong(chapter: str):
    """(name, module) for every known-wrong solution of a chapter (tests/wrong/<chapter>/*.py)."""
    return [(path.stem, load_answer(path)) for path in sorted((WRONG / chapter).glob("*.py"))]


def _exercise_cells(cells: list, label: str) -> list[str]:
    """The code cells of exercise ``label``: from its directive to its solution's end."""
    sources = ["".join(c["source"]) for c in cells]
    start = next(i for i, s in enumerate(sources) if f":label: {label}" in s)
    end = next(i for i, s in enumerate(sources)
               if i > start and "solution-end" in s)
    return [s for s, c in zip(sources[start:end], cells[start:end]) if c["cell_type"] == "code"]


def solution(notebook: str, label: str, after: tuple = (), own_cells: bool = True,
             stubbed: bool = False) -> dict:
    """The names a chapter's solution to exercise ``label`` defines, run from
    ``solutions/<notebook>.ipynb``: the chapter's first two code cells (setup and imports),
    the code cells of the exercises in ``after``, then this exercise's code cells (what it
    gives and the solution; not with ``own_cells=False``; with ``stubbed=True``, this
    exercise's solution regions stubbed as the student copy has them). The tests check the very
    code the book shows, not a copy."""
    import json
    import linecache

    from gpuperf import assign

    cells = json.loads((ROOT / "solutions" / f"{notebook}.ipynb").read_text())["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    ns = {"__name__": f"solution_{notebook}"}
    sources = [*code[:2]]
    for earlier in after:
        sources += _exercise_cells(cells, earlier)
    if own_cells:
        own = _exercise_cells(cells, label)
        sources += [assign.strip_solutions(s) for s in own] if stubbed else own
    for k, source in enumerate(sources):
        # A name linecache can serve, as Jupyter gives each cell: inspect.getsource works.
        name = f"<solutions/{notebook}.ipynb {label} cell {k}>"
        linecache.cache[name] = (len(source), None, source.splitlines(True), name)
        exec(compile(source, name, "exec"), ns)
    return ns


def checker_call(notebook: str, label: str) -> str:
    """The expression of exercise ``label``'s checker cell (the code cell after its solution)."""
    import json

    cells = json.loads((ROOT / "solutions" / f"{notebook}.ipynb").read_text())["cells"]
    sources = ["".join(c["source"]) for c in cells]
    start = next(i for i, s in enumerate(sources) if f":label: {label}" in s)
    end = next(i for i, s in enumerate(sources) if i > start and "solution-end" in s)
    return next(s for s, c in zip(sources[end:], cells[end:])
                if c["cell_type"] == "code").strip().rstrip(";")


import contextlib  # noqa: E402

import pytest  # noqa: E402


@pytest.fixture
def course_code_as_answer(monkeypatch):
    """Let the course's own kernel stand in for a student's right answer (the checkers
    refuse the course's code as an answer, and answers that use the course's solution,
    see exercises.refuses_stubs)."""
    from gpuperf import exercises

    monkeypatch.setattr(exercises, "_course_module", lambda obj: None)
    monkeypatch.setattr(exercises, "_borrowed", lambda student, forbidden: None)
    monkeypatch.setattr(exercises, "_tripwires", _no_tripwires)


@contextlib.contextmanager
def _no_tripwires(names, module):
    yield []


def record_paths_with(name: str) -> list:
    """The shipped records that hold experiment ``name`` (for tests run once per GPU)."""
    from gpuperf import records

    return [p for p in records.available() if name in records.load(p)["experiments"]]
