"""The notebooks as files: no outputs, the shared setup cell, Colab metadata, exercises, toc;
the chapters with their solutions in solutions/, their current student copies in notebooks/."""

import re

import nbformat
import pytest
import yaml
from conftest import ROOT

from gpuperf import assign, colab

NOTEBOOKS = sorted((ROOT / "solutions").glob("*.ipynb"))  # the chapters, solutions included
COPIES = sorted((ROOT / "notebooks").glob("*.ipynb"))  # their student copies
BOTH = NOTEBOOKS + COPIES
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
TOC = (ROOT / "_toc.yml").read_text()


def ids(p):
    return f"{p.parent.name}/{p.name}"


def test_there_are_notebooks():
    assert NOTEBOOKS


def test_students_open_current_copies_without_solutions():
    """What a student opens (the repository's notebooks/, the book's Colab button) holds no
    solution, and is exactly what gpuperf.assign makes of the chapter today."""
    assert [p.name for p in COPIES] == [p.name for p in NOTEBOOKS]
    assert assign.stale_copies(ROOT / "solutions", ROOT / "notebooks") == []
    for path in COPIES:
        assert assign.solution_leaks(nbformat.read(path, as_version=4)) == [], path.name


def test_a_stale_copy_is_named(tmp_path):
    import shutil

    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    first = tmp_path / "notebooks" / COPIES[0].name
    nb = nbformat.read(first, as_version=4)
    nb.cells[-1].source += "\n\nedited"
    nbformat.write(nb, first)
    (tmp_path / "notebooks" / COPIES[-1].name).unlink()
    stale = assign.stale_copies(ROOT / "solutions", tmp_path / "notebooks")
    assert [s.split(":")[0] for s in stale] == [COPIES[0].name, COPIES[-1].name]
    assert assign.main([str(ROOT / "solutions"), "--out", str(tmp_path / "notebooks"),
                        "--check"]) == 1
    assert assign.main([str(ROOT / "solutions"), "--out", str(ROOT / "notebooks"),
                        "--check"]) == 0


@pytest.mark.parametrize("path", BOTH, ids=ids)
def test_stored_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    with_outputs = [i for i, c in enumerate(nb.cells)
                    if c.cell_type == "code" and (c.outputs or c.execution_count)]
    assert not with_outputs, f"cells {with_outputs} have outputs: strip them"


@pytest.mark.parametrize("path", BOTH, ids=ids)
def test_setup_cell_and_colab_metadata(path):
    nb = nbformat.read(path, as_version=4)
    first_code = next(c for c in nb.cells if c.cell_type == "code")
    assert "setup" in first_code.metadata.get("tags", [])
    assert first_code.source == colab.SETUP_CELL, "use gpuperf.colab.SETUP_CELL verbatim"
    assert nb.metadata.get("accelerator") == "GPU"
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# ")


def test_setup_cell_url_matches_config():
    assert colab.REPOSITORY_URL == CONFIG["repository"]["url"]
    assert f"git+{CONFIG['repository']['url']}" in colab.SETUP_CELL


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_in_the_table_of_contents(path):
    assert f"notebooks/{path.stem}" in TOC


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_every_exercise_has_hidden_solution_and_checker(path):
    nb = nbformat.read(path, as_version=4)
    cells = nb.cells
    labels = []
    for i, cell in enumerate(cells):
        m = re.search(r":::\{exercise\}.*\n:label: (\S+)", cell.source) if cell.cell_type == "markdown" else None
        if not m:
            continue
        label = m.group(1)
        labels.append(label)
        rest = cells[i + 1:]
        start = next((j for j, c in enumerate(rest) if c.cell_type == "markdown"
                      and re.search(r"\{solution-start\}\s+" + re.escape(label), c.source)), None)
        assert start is not None, f"{label}: no solution-start cell after the exercise"
        end = next((j for j, c in enumerate(rest) if j > start and c.cell_type == "markdown"
                    and "{solution-end}" in c.source), None)
        assert end is not None, f"{label}: no solution-end cell"
        body = [c for c in rest[start + 1:end] if c.cell_type == "code"]
        assert body and all("### BEGIN SOLUTION" in c.source and "### END SOLUTION" in c.source
                            for c in body), f"{label}: solution code needs BEGIN/END SOLUTION markers"
        after = next((c for c in rest[end + 1:] if c.cell_type == "code"), None)
        assert after is not None and re.search(r"\bcheck_\w+\(", after.source), \
            f"{label}: the code cell after the solution must call a checker"
    assert len(labels) == len(set(labels))


def test_every_exercise_is_in_the_instructor_guide():
    guide = (ROOT / "book" / "instructors.md").read_text()
    labels = set()
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                labels |= set(re.findall(r":::\{exercise\}.*\n:label: (\S+)", cell.source))
    assert labels
    missing = sorted(label for label in labels if f"`{label}`" not in guide)
    assert not missing, f"add these exercises to book/instructors.md: {missing}"


def _exercise_numbers() -> dict:
    """Each exercise's number as the built page prints it ("Exercise 6.2"): Sphinx numbers
    them per numbered chapter of the toc (counting on across numbered parts), through the
    chapter's file and then its sections, in order."""
    toc, out, chapter = yaml.safe_load(TOC), {}, 0
    for part in toc["parts"]:
        if not part.get("numbered"):
            continue
        for entry in part["chapters"]:
            chapter, k = chapter + 1, 0
            for f in [entry["file"]] + [s["file"] for s in entry.get("sections", [])]:
                path = ROOT / "solutions" / (f.split("/")[-1] + ".ipynb")
                for cell in nbformat.read(path, as_version=4).cells:
                    if cell.cell_type == "markdown":
                        for label in re.findall(r":::\{exercise\}.*\n:label: (\S+)", cell.source):
                            k += 1
                            out[label] = f"{chapter}.{k}"
    return out


def test_the_instructor_guide_gives_each_exercise_its_number_on_the_page():
    # Review 610_4, finding 14: the table's chapter column gives section numbers (6.1 Reduce);
    # the page titles the exercise "Exercise 6.2". Every row names the page's number too.
    numbers = _exercise_numbers()
    assert numbers
    rows = dict(re.findall(r"^\| `(ex-[\w-]+)` \| ([^|]+?) \|",
                           (ROOT / "book" / "instructors.md").read_text(), re.M))
    wrong = {k: (rows.get(k), f"Exercise {n}") for k, n in numbers.items()
             if rows.get(k) != f"Exercise {n}"}
    assert not wrong, wrong


def test_every_cell_has_an_id():
    """nbformat 4.5 cells need ids; a cell without one makes nbformat warn on stderr whenever
    the notebook is validated (the book build, the self-check)."""
    import json

    for path in BOTH:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        ids = [c.get("id") for c in cells]
        assert all(ids), f"{path.name}: cells {[i for i, x in enumerate(ids) if not x]} have no id"
        assert len(set(ids)) == len(ids), f"{path.name}: duplicate cell ids"


def test_the_readme_local_run_command_is_installed():
    """`python -m pip install -r requirements.txt`, then `jupyter lab notebooks/`."""
    import re
    import subprocess
    import sys

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "`jupyter lab notebooks/`" in readme
    assert re.search(r"^jupyterlab\b", (ROOT / "requirements.txt").read_text(), re.M)
    r = subprocess.run([sys.executable, "-m", "jupyter", "lab", "--version"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and re.match(r"4\.", r.stdout.strip()), (r.stdout, r.stderr)
