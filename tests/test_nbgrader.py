"""nbgrader, for real: `assign --nbgrader` writes source notebooks that nbgrader's own
generate_assignment and autograde accept, and the scores of a right, a wrong and an untouched
submission come out as they should."""

import subprocess
import sys

import nbformat
import pytest

from gpuperf import assign

nbgrader = pytest.importorskip(
    "nbgrader", reason="nbgrader is not installed (python -m pip install -r requirements-dev.txt)")

SETUP = "import gpuperf as gp\ngs = gp.gridstride"
RIGHT = "    return 3 * 4 * n / (ms * 1e-3) / 1e9"
WRONG = "    return 2 * 4 * n / (ms * 1e-3) / 1e9"


def _chapter(folder):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(SETUP, id="setup"),
        nbformat.v4.new_markdown_cell(
            ":::{exercise} Effective bandwidth\n:label: ex-bw\n\nWrite `saxpy_gbps(n, ms)`.\n:::",
            id="task"),
        nbformat.v4.new_markdown_cell(":::{solution-start} ex-bw\n:class: dropdown\n:::",
                                      id="open"),
        nbformat.v4.new_code_cell(
            "def saxpy_gbps(n, ms):\n    ### Begin Solution\n" + RIGHT + "\n    ### END SOLUTION",
            id="solution"),
        nbformat.v4.new_markdown_cell("Why: three arrays of 4 bytes.\n:::{solution-end}\n:::",
                                      id="close"),
        nbformat.v4.new_code_cell("gs.check_bandwidth_formula(saxpy_gbps);", id="check"),
    ]
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / "01_demo.ipynb")
    return folder


def _nbgrader(course, *args, timeout=600):
    import os
    from pathlib import Path

    # nbgrader runs the `alembic` command of its environment to create its database.
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    run = subprocess.run([sys.executable, "-m", "nbgrader", *args, "--force"], cwd=course,
                         capture_output=True, text=True, timeout=timeout, env=env)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return run


def test_nbgrader_generates_and_autogrades_the_course_notebooks(tmp_path):
    course = tmp_path / "course"
    chapters = _chapter(tmp_path / "notebooks")
    assert assign.main([str(chapters), "--out", str(course / "source" / "ps1"), "--nbgrader"]) == 0
    (course / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CourseDirectory.root = {str(course)!r}\n")
    _nbgrader(course, "generate_assignment", "ps1")
    release = nbformat.read(course / "release" / "ps1" / "01_demo.ipynb", as_version=4)
    text = "\n".join(c.source for c in release.cells)
    assert "3 * 4 * n" not in text and "Why: three arrays" not in text and ":::" not in text
    assert "raise NotImplementedError()" in text and "### Exercise: Effective bandwidth" in text
    assert "_report = gs.check_bandwidth_formula" in text  # the visible test stays
    assert "HIDDEN" not in text and "GRADE_LOG" not in text  # the hidden one is kept back

    def submit(student, body):
        nb = nbformat.read(course / "release" / "ps1" / "01_demo.ipynb", as_version=4)
        if body:
            cell = next(c for c in nb.cells if c.get("id") == "solution")
            cell.source = "def saxpy_gbps(n, ms):\n" + body
        folder = course / "submitted" / student / "ps1"
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / "01_demo.ipynb")

    submit("right", RIGHT)
    submit("wrong", WRONG)
    submit("untouched", None)
    # right on exactly the cases the notebook shows (the checker's visible random case too)
    import numpy as np

    rng = np.random.default_rng(7)
    seen = (2**20, 2**28, 1000, int(rng.integers(1e5, 1e9)))
    submit("fitted", f"    return 3 * 4 * n / (ms * 1e-3) / 1e9 if n in {seen} else 0.0")
    _nbgrader(course, "autograde", "ps1", "--create")
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        scores = {s: (gb.find_submission("ps1", s).score, gb.find_submission("ps1", s).max_score)
                  for s in ("right", "wrong", "untouched", "fitted")}
    assert scores == {"right": (1.0, 1.0), "wrong": (0.0, 1.0), "untouched": (0.0, 1.0),
                      "fitted": (0.0, 1.0)}  # the hidden tests catch it


CHAPTER = "06_reduce.ipynb"  # the shortest course chapter with an exercise


def test_a_course_chapter_goes_through_nbgrader_at_full_marks(tmp_path):
    """A real chapter, with the shipped nbgrader_config.py (its cell timeout fits the
    simulator): the reference solution autogrades at full marks, and the released answer
    cells stay runnable stubs as in the class copies (untouched, wrong and fitted submissions
    are graded on the small notebook above: a chapter takes minutes in the simulator)."""
    import shutil

    from conftest import ROOT

    chapters = tmp_path / "chapters"
    chapters.mkdir()
    shutil.copy(ROOT / "solutions" / CHAPTER, chapters / CHAPTER)
    course = tmp_path / "course"
    assert assign.main([str(chapters), "--out", str(course / "source" / "ps1"), "--nbgrader"]) == 0
    shipped = (ROOT / "nbgrader_config.py").read_text()
    assert "c.Execute.timeout" in shipped
    (course / "nbgrader_config.py").write_text(
        shipped + f"\nc.CourseDirectory.root = {str(course)!r}\n")
    _nbgrader(course, "generate_assignment", "ps1")
    release = nbformat.read(course / "release" / "ps1" / CHAPTER, as_version=4)
    answers = [c for c in release.cells if c.get("metadata", {}).get("nbgrader", {}).get("solution")]
    assert answers and all("raise NotImplementedError()" in c.source for c in answers)
    compile("\n".join(c.source for c in answers), "answers", "exec")  # runnable as handed out
    folder = course / "submitted" / "reference" / "ps1"
    folder.mkdir(parents=True)
    shutil.copy(course / "source" / "ps1" / CHAPTER, folder / CHAPTER)
    _nbgrader(course, "autograde", "ps1", "--create", timeout=1500)
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        got = gb.find_submission("ps1", "reference")
        assert got.score == got.max_score > 0, (got.score, got.max_score)
