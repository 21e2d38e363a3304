"""The batch grader on a class of generated submissions: right, wrong, untouched, hanging,
crashing, and edited (the checker cell faked or deleted), under the simulator."""

import csv
import os
import time
from pathlib import Path

import nbformat
import pytest

from gpuperf import assign, grade, sandbox

SETUP = "import gpuperf as gp\ngs = gp.gridstride"
RIGHT = "    return 3 * 4 * n / (ms * 1e-3) / 1e9"
WRONG = "    return 2 * 4 * n / (ms * 1e-3) / 1e9  # forgot the write"


def _source(folder):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(SETUP, id="setup"),
        nbformat.v4.new_markdown_cell("Write `saxpy_gbps(n, ms)`.", id="task"),
        nbformat.v4.new_code_cell(
            "def saxpy_gbps(n, ms):\n    ### BEGIN SOLUTION\n" + RIGHT + "\n    ### END SOLUTION",
            id="solution"),
        nbformat.v4.new_code_cell("gs.check_bandwidth_formula(saxpy_gbps);", id="check"),
        nbformat.v4.new_code_cell("print('the end')", id="after"),
    ]
    folder.mkdir()
    nbformat.write(nb, folder / "01_demo.ipynb")
    return folder / "01_demo.ipynb"


def _submit(root, student, copy, edit=None):
    nb = nbformat.read(copy, as_version=4)
    if edit:
        edit(nb)
    (root / student).mkdir(parents=True)
    nbformat.write(nb, root / student / copy.name)


def _answer(body):
    def edit(nb):
        cell = next(c for c in nb.cells if c.get("id") == "solution")
        cell.source = "def saxpy_gbps(n, ms):\n" + body
    return edit


@pytest.fixture(scope="module")
def gradebook(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("class")
    source = _source(tmp / "notebooks")
    copy = assign.assign(source.parent, tmp / "student")[0]
    subs = tmp / "submissions"
    _submit(subs, "right", copy, _answer(RIGHT))
    _submit(subs, "wrong", copy, _answer(WRONG))
    _submit(subs, "untouched", copy)
    _submit(subs, "hangs", copy, _answer("    import time\n    while True:\n"
                                         "        time.sleep(0.05)"))
    _submit(subs, "crashes", copy, _answer("    import os\n    os._exit(3)"))
    # like a GPU kernel that never ends: an interrupt does not stop it
    _submit(subs, "stuck", copy, _answer("    import signal, time\n"
                                         "    signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                                         "    while True:\n        time.sleep(0.05)"))

    def fake_checker(nb):  # a wrong answer, and a checker cell that prints a pass
        _answer(WRONG)(nb)
        next(c for c in nb.cells if c.get("id") == "check").source = \
            "print('all 5 checks passed')"
    _submit(subs, "edits", copy, fake_checker)

    def delete_checker(nb):
        _answer(WRONG)(nb)
        nb.cells = [c for c in nb.cells if c.get("id") != "check"]
    _submit(subs, "deletes", copy, delete_checker)
    def patch_checker(nb):  # a wrong answer, and an earlier cell that replaces the checker
        _answer(WRONG)(nb)
        at = next(i for i, c in enumerate(nb.cells) if c.get("id") == "solution")
        nb.cells.insert(at, nbformat.v4.new_code_cell(
            "import gpuperf.exercises as e\n"
            "def fake(fn):\n    r = e.Report('check_bandwidth_formula')\n"
            "    r.passed += ['a', 'b', 'c', 'd']\n    e._log_verdict(r)\n    return r\n"
            "gs.check_bandwidth_formula = fake\n"
            "e.GRADE_LOG, e.GRADING_CELL = 'forged.jsonl', 'check'\n"
            "fake(print)"))
    _submit(subs, "patches", copy, patch_checker)
    (subs / "stray").mkdir()
    (subs / "stray" / "notes.ipynb").write_text("{not a notebook")
    # Colab's and a browser's names; two files for one notebook: the newest counts
    import os
    _submit(subs, "renames", copy, _answer(WRONG))
    (subs / "renames" / copy.name).rename(subs / "renames" / "01_demo (1).ipynb")
    nb = nbformat.read(copy, as_version=4)
    _answer(RIGHT)(nb)
    nbformat.write(nb, subs / "renames" / "Copy of 01_demo.ipynb")
    os.utime(subs / "renames" / "01_demo (1).ipynb", (1, 1))

    out = tmp / "gradebook.csv"
    roster = tmp / "roster.csv"
    roster.write_text("folder,id,name\nright,s042,Ada\n")
    # the guide's command, with its options: two notebooks at once, the assignment named
    assert grade.main([str(subs), "--source", str(source.parent), "--out", str(out),
                       "--cell-timeout", "8", "--jobs", "2", "--assigned", "01_demo",
                       "--roster", str(roster)]) == 0
    _, details, _ = grade.outputs(out)
    with open(details, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return out, {r["student"]: r for r in rows if r["notebook"] == "01_demo"}, rows


def test_every_student_gets_a_row_per_notebook_and_exercise(gradebook):
    _, by_student, rows = gradebook
    assert sorted(by_student) == ["crashes", "deletes", "edits", "hangs", "patches", "renames",
                                  "right", "stray", "stuck", "untouched", "wrong"]
    assert len(rows) == 12  # one per student for 01_demo, and the stray file
    assert all(list(r) == list(grade.COLUMNS) for r in rows)


def test_the_gradebook_has_a_row_per_student_and_a_column_per_exercise(gradebook):
    out, g, _ = gradebook
    with open(out, newline="", encoding="utf-8") as f:
        table = {r["student"]: r for r in csv.DictReader(f)}
    column = "01_demo/check_bandwidth_formula"
    assert list(next(iter(table.values()))) == ["student", "student_id", column, "total",
                                                "out_of", "missing"]
    where = table.pop(grade.SPEED_ROW)  # the last row: where speed was measured
    assert where[column] == "not measured: no GPU"
    assert sorted(table) == sorted(g)  # the stray's unknown file adds no column
    for student, row in table.items():
        assert float(row[column]) == float(g[student]["score"]) == float(row["total"])
        assert row["out_of"] == "1.0"
        assert row["student_id"] == ("s042" if student == "right" else student)
    assert float(table["right"][column]) == 1.0 and float(table["hangs"][column]) == 0.0
    assert float(table["wrong"][column]) == 0.0  # wrong outputs: 0, whatever else passed
    assert table["stray"]["missing"] == "01_demo" and table["right"]["missing"] == ""


def test_each_student_gets_feedback_with_the_checkers_messages(gradebook):
    out, g, _ = gradebook
    folder = grade.outputs(out)[2]
    assert sorted(p.stem for p in folder.glob("*.md")) == sorted(g)
    right = (folder / "right.md").read_text()
    assert "100%" in right and "checks passed" in right and "simulator" in right
    wrong = (folder / "wrong.md").read_text()
    assert "checks failed" in wrong and "scores 0" in wrong and grade.RULE in wrong
    # each student's executed notebook is kept beside the feedback
    kept = folder / "right" / "01_demo.ipynb"
    assert kept.is_file() and "checks passed" in kept.read_text()
    assert "timeout" in (folder / "hangs.md").read_text()
    assert "no 01_demo.ipynb" in (folder / "stray.md").read_text()
    assert "not a notebook of the course" in (folder / "stray.md").read_text()


def test_grading_says_where_and_adds_hidden_cases(gradebook):
    _, g, _ = gradebook
    assert g["right"]["graded_on"] == "Numba CUDA simulator (no GPU)"
    # the formula checker draws one case at random: while grading, from a hidden seed too,
    # so the right answer was checked on a case the student's own run never showed
    assert int(g["right"]["total"]) == int(g["wrong"]["total"]) >= 4


def test_renamed_copies_count_and_the_newest_is_graded(gradebook):
    _, g, _ = gradebook
    assert g["renames"]["status"] == "graded" and g["renames"]["score"] == "1.0"
    assert "Copy of 01_demo.ipynb" in g["renames"]["detail"]
    assert "01_demo (1).ipynb" in g["renames"]["detail"]
    assert grade.course_name("Copy of Copy of 03_dram (2).ipynb") == "03_dram.ipynb"


def test_right_and_wrong_answers_are_scored(gradebook):
    _, g, _ = gradebook
    right, wrong = g["right"], g["wrong"]
    assert right["status"] == "graded" and right["exercise"] == "check_bandwidth_formula"
    assert int(right["passed"]) == int(right["total"]) > 0 and float(right["score"]) == 1.0
    assert wrong["status"] == "graded" and float(wrong["score"]) < 1.0 and wrong["detail"]


def test_a_fake_deleted_or_replaced_checker_changes_nothing(gradebook):
    _, g, _ = gradebook
    for who in ("edits", "deletes", "patches"):
        assert g[who]["status"] == ("review" if who == "patches" else "graded")
        assert (g[who]["passed"], g[who]["total"]) == (g["wrong"]["passed"], g["wrong"]["total"])
        assert float(g[who]["score"]) == 0.0
    # the code that replaced the checker names the grader's machinery: flagged for a human
    assert "_log_verdict" in g["patches"]["detail"] and "review" in g["patches"]["detail"]


def test_untouched_hanging_and_crashing_notebooks_are_said_so(gradebook):
    _, g, _ = gradebook
    assert g["untouched"]["status"] == "not implemented" and g["untouched"]["score"] == "0.0"
    assert g["hangs"]["status"] == "no verdict" and "timeout" in g["hangs"]["detail"]
    assert g["crashes"]["status"] == "no verdict" and "died" in g["crashes"]["detail"]
    assert g["stuck"]["status"] == "no verdict"
    assert "did not stop when interrupted" in g["stuck"]["detail"]
    assert g["stray"]["status"] == "missing"  # handed in no 01_demo at all
    stray = [r for r in gradebook[2] if r["notebook"] == "notes"]
    assert [r["status"] for r in stray] == ["not graded"]
    assert "not a notebook of the course" in stray[0]["detail"]


def test_an_existing_gradebook_is_kept_unless_forced(gradebook, tmp_path, capsys):
    out, _, _ = gradebook
    _, details, folder = grade.outputs(out)
    before = [out.read_bytes(), details.read_bytes(), sorted(folder.iterdir())]
    assert grade.main([str(tmp_path), "--out", str(out)]) == 2
    assert "--force" in capsys.readouterr().err
    with pytest.raises(FileExistsError):
        grade.write_gradebook([], out)
    lone = tmp_path / "lone.csv"  # only its feedback folder exists: still refused
    grade.outputs(lone)[2].mkdir()
    with pytest.raises(FileExistsError, match="lone-feedback"):
        grade.write_gradebook([], lone)
    assert not lone.exists()
    assert [out.read_bytes(), details.read_bytes(), sorted(folder.iterdir())] == before
    rows = list(csv.DictReader(open(details, newline="", encoding="utf-8")))
    again = tmp_path / "again" / "gb.csv"
    grade.write_gradebook(rows[:1], again)
    grade.write_gradebook(rows, again, force=True)  # forced: all three replaced whole
    assert sorted(p.stem for p in grade.outputs(again)[2].glob("*.md")) == sorted(
        {r["student"] for r in rows})
    assert not [p for p in again.parent.iterdir() if p.name.startswith(".")]  # no leftovers
    assert grade.main([str(tmp_path), "--out", str(tmp_path)]) == 2  # a folder: refused at once
    assert "is a folder" in capsys.readouterr().err


def test_the_cause_before_a_silent_checker_is_named(tmp_path):
    source = _source(tmp_path / "notebooks")
    copy = assign.assign(source.parent, tmp_path / "student")[0]
    subs = tmp_path / "subs"
    _submit(subs, "typo", copy, _answer("    return 3 * 4 * n /\n"))
    rows = grade.grade(subs, source=source.parent, cell_timeout=20, progress=None)
    assert rows[0]["status"] == "no verdict"
    assert "SyntaxError" in rows[0]["detail"] and "NameError" in rows[0]["detail"]


def test_a_runner_failure_is_run_again_and_never_scored_as_the_students(tmp_path, monkeypatch):
    """An exception out of the notebook runner itself (not a cell's error) is retried once; if
    it happens every time, the row says so instead of a silent 0 for the student."""
    source = _source(tmp_path / "notebooks")
    copy = assign.assign(source.parent, tmp_path / "student")[0]
    subs = tmp_path / "subs"
    _submit(subs, "right", copy, _answer(RIGHT))
    real, calls = grade._run, []

    def flaky(nb, **kw):
        if any("GRADE_REFERENCE = True" in c.source for c in nb.cells):
            return real(nb, **kw)  # the grader's own run of the course's notebook
        calls.append(1)
        return f"{grade.RUNNER_FAILED} (AssertionError: )" if len(calls) == 1 else real(nb, **kw)

    monkeypatch.setattr(grade, "_run", flaky)
    rows = grade.grade(subs, source=source.parent, cell_timeout=20, progress=None)
    assert len(calls) == 2 and rows[0]["status"] == "graded" and rows[0]["score"] == 1.0
    monkeypatch.setattr(grade, "_run", lambda nb, **kw: f"{grade.RUNNER_FAILED} (OSError: x)")
    rows = grade.grade(subs, source=source.parent, cell_timeout=20, progress=None)
    assert rows[0]["status"] == "no verdict"
    assert "runner failed" in rows[0]["detail"] and "grade this student again" in rows[0]["detail"]


def test_every_student_meets_the_same_hidden_cases(tmp_path):
    """One seed for the whole class, written into every guarded checker cell after the reload
    of gpuperf.exercises; the same seed grades alike."""
    source = _source(tmp_path / "notebooks")
    copy = assign.assign(source.parent, tmp_path / "student")[0]
    nb = grade.grading_notebook(nbformat.read(copy, as_version=4),
                                nbformat.read(source, as_version=4), "log.jsonl", 777)
    check = next(c for c in nb.cells if c.get("id") == "check").source
    assert check.index("_il.reload(_gx)") < check.index("_gx._hidden_seed = 777")
    subs = tmp_path / "subs"
    _submit(subs, "wrong", copy, _answer(WRONG))
    _submit(subs, "right", copy, _answer(RIGHT))
    said = []
    first = grade.grade(subs, source=source.parent, cell_timeout=20, progress=said.append)
    assert said[0].startswith("hidden cases drawn from seed ")
    seed = int(said[0].split()[5])
    again = grade.grade(subs, source=source.parent, cell_timeout=20, progress=None,
                        hidden_seed=seed)
    assert [(r["student"], r["passed"], r["total"], r["detail"]) for r in first] == \
        [(r["student"], r["passed"], r["total"], r["detail"]) for r in again]


def test_every_exercise_of_the_course_is_graded_once():
    """One checker cell per exercise directive in each chapter; a cell that shows a checker
    rejecting a wrong kernel on purpose (tagged expect-reject) is not an exercise."""
    import re

    from conftest import ROOT

    for path in sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        exercises = sum(len(re.findall(r"^:{3,}\{exercise\}", c.source, re.M))
                        for c in nb.cells if c.cell_type == "markdown")
        assert len(grade.checker_cells(nb)) == exercises, path.name


def test_a_notebook_without_exercises_keeps_the_student_in_the_gradebook(tmp_path):
    """A section without exercises (chapter 5.2) handed in alone: the student still gets a
    gradebook row (no exercises, nothing scored) and a feedback file that says why."""
    source = tmp_path / "notebooks"
    source.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Reading only", id="prose"),
                nbformat.v4.new_code_cell("print('hello')", id="code")]
    nbformat.write(nb, source / "02_reading.ipynb")
    subs = tmp_path / "submissions"
    _submit(subs, "reader", source / "02_reading.ipynb")
    rows = grade.grade(subs, source=source, progress=None, hidden_seed=5)
    mine = [r for r in rows if r["notebook"] == "02_reading"]
    assert [(r["student"], r["status"]) for r in mine] == [("reader", "not graded")]
    assert "no exercises" in mine[0]["detail"]
    out = grade.write_gradebook(rows, tmp_path / "gradebook.csv")
    with open(out, newline="") as f:
        table = list(csv.DictReader(f))
    assert [r["student"] for r in table] == ["reader"]
    assert table[0]["out_of"] == "0" and table[0]["total"] == "0"
    assert "no exercises" in (tmp_path / "gradebook-feedback" / "reader.md").read_text()


def _entry(cases, on="Numba CUDA simulator (no GPU)"):
    passed = [c for c in cases if c[1]]
    return {"passed": len(passed), "failed": len(cases) - len(passed),
            "points": float(sum(c[2] for c in passed)), "possible": float(sum(c[2] for c in cases)),
            "cases": [list(c) for c in cases], "on": on, "report": "r"}


def test_correctness_first_wrong_outputs_score_0_structure_and_speed_add_on_top():
    right_slow = grade._row("a", "nb", "check_x", _entry(
        [("n=1", True, 1, "output"), ("n=33", True, 1, "output"), ("source", False, 1, "structure"),
         ("speed", False, 1, "speed")]), "graded", "", 2.0)
    assert right_slow["score"] == 0.5 and right_slow["earned"] == 1.0  # half of its 2 points
    wrong_but_well_written = grade._row("b", "nb", "check_x", _entry(
        [("n=1", True, 1, "output"), ("n=33", False, 1, "output"), ("source", True, 1, "structure"),
         ("speed", True, 1, "speed")]), "graded", "", 2.0)
    assert wrong_but_well_written["score"] == 0.0 and wrong_but_well_written["earned"] == 0.0
    assert "scores 0" in wrong_but_well_written["detail"]
    assert "n=33" in wrong_but_well_written["detail"]
    assert "scores 0" in grade.feedback([wrong_but_well_written], "b")


def test_points_come_from_nbgrader_metadata_and_totals_cover_every_assigned_notebook():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("gs.check_a(f)", id="a"),
                nbformat.v4.new_code_cell("gs.check_b(f)", id="b")]
    nb.cells[0].metadata["nbgrader"] = {"points": 3}
    assert grade.exercise_points(nb) == {"a": 3.0, "b": 1.0}
    rows = [grade._row("ada", "01", "check_a", _entry([("c", True, 1, "output")]), "graded", "", 3),
            grade._row("ada", "02", "check_b", None, "missing", "no 02.ipynb", 1),
            grade._row("bob", "01", "check_a", None, "no verdict", "timeout", 3),
            grade._row("bob", "02", "check_b", _entry([("c", True, 1, "output")], on="NVIDIA H200"),
                       "graded", "", 1)]
    columns, table = grade.summary(rows, {"ada": {"id": "s001"}})
    assert columns == ["student", "student_id", "01/check_a", "02/check_b", "total", "out_of",
                       "missing"]
    ada, bob, where = table
    assert (ada["student_id"], ada["total"], ada["out_of"], ada["missing"]) == ("s001", 3.0, 4.0,
                                                                                  "02")
    assert (bob["student_id"], bob["total"], bob["out_of"], bob["missing"]) == ("bob", 1.0, 4.0, "")
    assert where["student"] == grade.SPEED_ROW
    assert where["01/check_a"] == "not measured: no GPU" and where["02/check_b"] == "NVIDIA H200"


def test_the_lms_files_follow_canvas_and_gradescope_conventions(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("folder,id,name,email,section\nada,s001,Ada Lovelace,ada@uni.edu,A\n")
    people = grade.read_roster(roster)
    assert people["ada"]["name"] == "Ada Lovelace"
    rows = [grade._row("ada", "01", "check_a", _entry([("c", True, 1, "output")]), "graded", "", 2)]
    tables = grade.lms_tables(rows, people, assignment="gpuperf ps1")
    cols, canvas = tables["canvas"]
    assert cols[:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assert canvas[0]["Student"].strip() == "Points Possible" and canvas[0]["gpuperf ps1"] == 2.0
    assert canvas[1]["Student"] == "Ada Lovelace" and canvas[1]["SIS User ID"] == "s001"
    assert canvas[1]["gpuperf ps1"] == 2.0
    cols, scope = tables["gradescope"]
    assert cols == ["Name", "SID", "Email", "Total Score", "Max Points"]
    assert scope == [{"Name": "Ada Lovelace", "SID": "s001", "Email": "ada@uni.edu",
                      "Total Score": 2.0, "Max Points": 2.0}]
    out = grade.write_gradebook(rows, tmp_path / "gb.csv", roster=people)
    assert all(p.is_file() for p in grade.lms_outputs(out).values())
    bad = tmp_path / "bad.csv"
    bad.write_text("name,id\nAda,1\n")
    with pytest.raises(ValueError, match="folder"):
        grade.read_roster(bad)



def test_a_roster_that_would_put_two_students_on_one_lms_row_is_refused(tmp_path):
    """One folder listed twice, or one id given to two folders: the LMS files would carry one
    student's grade under the other's id. Refused when the roster is read, before grading."""
    roster = tmp_path / "roster.csv"
    roster.write_text("folder,id\nada,s001\nbob,s002\nada,s003\n")
    with pytest.raises(ValueError, match=r"'ada' twice \(lines 2 and 4\)"):
        grade.read_roster(roster)
    roster.write_text("folder,id\nada,s001\nbob,s001\n")
    with pytest.raises(ValueError, match=r"'s001' to two folders, 'ada' \(line 2\) and 'bob'"):
        grade.read_roster(roster)
    roster.write_text("folder,id\nada,s001\ncy,\ndee,\n")  # no id, twice: fine
    assert grade.read_roster(roster)["dee"] == {"folder": "dee", "id": ""}


def test_student_folders_whose_names_meet_get_a_file_name_each():
    """`x\\y` and `x_y` made one safe name `x_y`: one student's executed notebooks went over
    the other's, and writing the feedback raised FileExistsError after all the grading. Every
    place a student's name becomes a file name takes ``file_names``: unique on any disk
    (letter case; `a.md/` beside `a.md`), the same on every run, plain names untouched."""
    import random

    h = __import__("hashlib").sha256(b"x\\y").hexdigest()
    students = ["x\\y", "x_y", "Ada", "ada", "a", "a.md", "bob", "..", "Jos\udce9", "tab\there",
                "n" * 300, "n" * 301, f"x_y-{h[:8]}"]  # the last: named as x\y's would be
    names = grade.file_names(students)
    assert sorted(names) == sorted(students)
    taken = [c for n in names.values() for c in (n.casefold(), f"{n}.md".casefold())]
    assert len(taken) == len(set(taken)), names  # no two meet, as a file or a folder
    assert all(n not in ("", ".", "..") and "/" not in n and "\\" not in n
               and len(f"{n}.md".encode()) <= 255 for n in names.values()), names
    assert names["bob"] == "bob" and names[f"x_y-{h[:8]}"] == f"x_y-{h[:8]}"
    assert names["x\\y"].startswith("x_y-") and names["x_y"].startswith("x_y-")
    shuffled = students[:]
    random.Random(3).shuffle(shuffled)
    assert grade.file_names(shuffled) == names  # the class's order changes nothing
    with pytest.raises(TypeError, match="student"):
        grade.file_names(["ada", 7])


def test_two_folders_with_one_safe_name_keep_their_own_rows_feedback_and_notebooks(tmp_path,
                                                                                     capsys):
    """The audit's class: `x\\y` (a wrong answer) and `x_y` (a right one), graded through
    ``main``: two rows, two feedback files, each with its own executed notebook."""
    source = _source(tmp_path / "notebooks")
    copy = assign.assign(source.parent, tmp_path / "student")[0]
    subs = tmp_path / "subs"
    _submit(subs, "x\\y", copy, _answer(WRONG))
    _submit(subs, "x_y", copy, _answer(RIGHT))
    out = tmp_path / "g" / "gradebook.csv"
    assert grade.main([str(subs), "--source", str(source.parent), "--out", str(out),
                       "--seed", "4242", "--jobs", "2", "--cell-timeout", "60"]) == 0
    assert "x_y-" in capsys.readouterr().err  # the renamed feedback files are named
    with open(out, newline="", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    assert {r["student"]: r["total"] for r in table[:-1]} == {"x\\y": "0.0", "x_y": "1.0"}
    folder = grade.outputs(out)[2]
    names = grade.file_names(["x\\y", "x_y"])
    for student, score in (("x\\y", "0%"), ("x_y", "100%")):
        text = (folder / f"{names[student]}.md").read_text()
        assert f"# Feedback for {student}" in text and f"Score {score}" in text
    assert "forgot the write" in (folder / names["x\\y"] / "01_demo.ipynb").read_text()
    assert "forgot the write" not in (folder / names["x_y"] / "01_demo.ipynb").read_text()
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")]  # no leftovers


def test_an_output_that_cannot_be_written_costs_no_other(tmp_path, monkeypatch):
    """One student's notebooks that cannot be copied, or one LMS file that cannot be written:
    everything else is written, then ``OutputsNotWritten`` names what failed and why."""
    import shutil

    rows = [grade._row(s, "01", "check_a", _entry([("c", True, 1, "output")]), "graded", "")
            for s in ("ada", "bob", "Jos\udce9")]  # a zip's Latin-1 folder name, too
    kept = tmp_path / "kept"
    for s, n in grade.file_names(["ada", "bob", "Jos\udce9"]).items():
        (kept / n).mkdir(parents=True)
        (kept / n / "01.ipynb").write_text(s.encode("utf-8", "backslashreplace").decode())
    real = shutil.copytree

    def copytree(src, dst, **kw):
        if Path(src).name == "ada":
            raise PermissionError(13, "Permission denied", str(src))
        return real(src, dst, **kw)
    monkeypatch.setattr(shutil, "copytree", copytree)
    real_write = grade._write_file

    def write_file(path, text):
        if "canvas" in path.name:
            raise OSError(28, "No space left on device", str(path))
        return real_write(path, text)
    monkeypatch.setattr(grade, "_write_file", write_file)
    out = tmp_path / "gb.csv"
    with pytest.raises(grade.OutputsNotWritten) as err:
        grade.write_gradebook(rows, out, notebooks=kept)
    message = str(err.value)
    assert "gb-canvas.csv" in message and "No space left" in message
    assert str(grade.outputs(out)[2] / "ada") in message and "Permission denied" in message
    _, details, folder = grade.outputs(out)
    assert out.is_file() and details.is_file() and grade.lms_outputs(out)["gradescope"].is_file()
    assert not grade.lms_outputs(out)["canvas"].exists()
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [f"{n}.md" for n in grade.file_names(["ada", "bob", "Jos\udce9"]).values()]
        + ["bob", "Jos_"])
    assert "Jos\\udce9" in details.read_text(encoding="utf-8")


def test_a_gradebook_that_cannot_be_written_after_grading_keeps_the_run(tmp_path, monkeypatch,
                                                                         capsys):
    """Nothing written at all (a gradebook that appeared meanwhile, a full disk): ``main``
    saves every row where ``write_gradebook`` takes them back, and says where."""
    rows = [grade._row(s, "01", "check_a", _entry([("c", True, 1, "output")]), "graded", "")
            for s in ("ada", "bob")]
    monkeypatch.setattr(grade, "grade", lambda *a, **kw: [dict(r) for r in rows])
    out = tmp_path / "gb.csv"

    def appeared(*a, **kw):
        raise FileExistsError(f"{out} exists: pass --force to replace, or another --out.")
    monkeypatch.setattr(grade, "write_gradebook", appeared)
    assert grade.main([str(tmp_path), "--out", str(out), "--jobs", "1"]) == 2
    err = capsys.readouterr().err
    saved = next(tmp_path.glob("gb-details.saved-*.csv"))
    assert str(saved) in err and "write_gradebook" in err
    monkeypatch.undo()
    with open(saved, newline="", encoding="utf-8") as f:
        again = list(csv.DictReader(f))
    assert [(r["student"], r["earned"]) for r in again] == [("ada", "1.0"), ("bob", "1.0")]
    grade.write_gradebook(again, out)  # the gradebook, from the saved rows
    assert out.is_file()


def test_a_student_named_as_the_speed_row_keeps_a_row_in_every_table(tmp_path):
    """A folder named `speed measured on` was dropped from both LMS imports (rows were told
    from the speed row by their text). The speed row is the gradebook's last, with no total."""
    rows = [grade._row(s, "01", "check_a", _entry([("c", True, 1, "output")]), "graded", "", 2)
            for s in ("ada", grade.SPEED_ROW)]
    tables = grade.lms_tables(rows)
    assert [r["Student"] for r in tables["canvas"][1][1:]] == ["ada", grade.SPEED_ROW]
    assert [(r["Name"], r["Total Score"]) for r in tables["gradescope"][1]] == [
        ("ada", 2.0), (grade.SPEED_ROW, 2.0)]
    out = grade.write_gradebook(rows, tmp_path / "gb.csv")
    with open(out, newline="", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    assert [(r["student"], r["total"]) for r in table] == [
        ("ada", "2.0"), (grade.SPEED_ROW, "2.0"), (grade.SPEED_ROW, "")]
    assert table[-1]["01/check_a"] == "not measured: no GPU"
    for kind, path in grade.lms_outputs(out).items():
        with open(path, newline="", encoding="utf-8") as f:
            assert grade.SPEED_ROW in f.read(), kind


def test_code_that_names_the_graders_machinery_is_found():
    src = nbformat.v4.new_notebook()
    src.cells = [nbformat.v4.new_code_cell("def f():\n    pass", id="answer")]
    sub = nbformat.v4.new_notebook()
    sub.cells = [nbformat.v4.new_code_cell("def f():\n    import gpuperf.exercises as e\n"
                                           "    e._log_verdict = print", id="answer")]
    assert "_log_verdict" in grade.machinery_touched(sub, src)
    sub.cells[0].source = "def f():\n    return 3 * 4"
    assert grade.machinery_touched(sub, src) == []


def test_every_option_of_the_guides_command_is_taken(tmp_path, capsys):
    """The guide's full command line, on a notebook without exercises (nothing to run): every
    option parses and reaches the gradebook, and the grader says whether it is sandboxed."""
    source = tmp_path / "solutions"
    source.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Reading only", id="prose")]
    nbformat.write(nb, source / "02_reading.ipynb")
    subs = tmp_path / "submissions"
    _submit(subs, "ada", source / "02_reading.ipynb")
    roster = tmp_path / "roster.csv"
    roster.write_text("folder,id\nada,s001\n")
    out = tmp_path / "gradebook.csv"
    assert grade.main([str(subs), "--source", str(source), "--out", str(out), "--assigned",
                       "02_reading", "--roster", str(roster), "--jobs", "2", "--seed", "4242",
                       "--cell-timeout", "60", "--memory-limit", "4"]) == 0
    err = capsys.readouterr().err
    assert "grading on" in err and ("bubblewrap sandbox" in err or "NOT SANDBOXED" in err)
    with open(out, newline="") as f:
        assert next(csv.DictReader(f))["student_id"] == "s001"
    assert all(p.is_file() for p in grade.lms_outputs(out).values())
    assert grade.main([str(subs), "--source", str(source), "--out", str(tmp_path / "x.csv"),
                       "--assigned", "99_nothing"]) == 2
    assert "99_nothing" in capsys.readouterr().err


def test_a_cases_kind_is_read_from_its_name_where_the_checker_does_not_say():
    from gpuperf import exercises as ex

    assert ex.case_kind("speed on this GPU (8192 x 8192)") == "speed"
    assert ex.case_kind("coalescing, traced warp by warp in the emulator (32 x 32)") == "structure"
    assert ex.case_kind("bank conflicts in shared memory (16 x 16 tiles, traced)") == "structure"
    assert ex.case_kind("races in the thread emulator") == "output"  # wrong on a GPU
    assert ex.case_kind("n=33 (hidden case)") == "output"
    chk = ex.Checker("t")
    with chk.case("layout", kind="structure"):
        chk.fail("uncoalesced")
    with chk.case("n=1"):
        pass
    assert chk.report_.kinds == {"layout": "structure"}


def _chapters_with_exercises():
    from conftest import ROOT

    return [p.stem for p in sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb"))
            if grade.checker_cells(nbformat.read(p, as_version=4))]


@pytest.mark.parametrize("chapter", _chapters_with_exercises())
def test_a_course_chapters_reference_scores_full_marks_in_the_sandbox(chapter):
    """Each chapter's reference, graded as a student's notebook is (its own sandboxed kernel,
    the limits, hidden cases, and the output cases decided by the grader against its own run
    of the course's notebook with the same seed): full marks. The emulator runs a thread per
    CUDA thread, so a process limit set too low would fail it. Slow (two runs of the
    chapter): ``-k 06_reduce`` runs one."""
    from conftest import ROOT

    path = ROOT / "solutions" / f"{chapter}.ipynb"
    reference = grade.reference_run(path, hidden_seed=4242, cell_timeout=600)
    rows = grade.grade_notebook(path, path, student="reference", hidden_seed=4242,
                                cell_timeout=600, reference=reference)
    assert rows and all((r["status"], r["score"]) == ("graded", 1.0) for r in rows), \
        [(r["exercise"], r["score"], r["detail"]) for r in rows if r["score"] != 1.0]
    assert not [r for r in rows if "judged in the student's kernel only" in r["detail"]]
    # Every exercise hands the grader the values it judges, but the two whose expected
    # answer is not one value the grader can make (book/instructors.md says so).
    cells = {k[0] for k in reference["values"]}
    nb = nbformat.read(path, as_version=4)
    assert {grade._checker_name(src) for cid, src in grade.checker_cells(nb)
            if cid not in cells} <= CHILD_DECIDED


# The exercises whose outputs are still judged in the student's kernel alone: the expected
# answer is the student's own measurement, or many answers are right.
CHILD_DECIDED = {"check_best_factor", "check_profile_command"}


def _exercise_notebook(notebook: str, label: str, after=()):
    """A notebook of one exercise of a chapter, as tests/conftest.py's ``solution`` runs it:
    the chapter's first two code cells (setup), the code of the exercises in ``after``, then
    the exercise's cells from its directive to its checker cell (ids as the chapter has them)."""
    import copy

    from conftest import ROOT

    src = nbformat.read(ROOT / "solutions" / f"{notebook}.ipynb", as_version=4)
    cells = src.cells

    def span(lab, with_checker):
        start = next(i for i, c in enumerate(cells) if f":label: {lab}" in c.source)
        end = next(i for i, c in enumerate(cells) if i > start and "solution-end" in c.source)
        check = next(i for i in range(end, len(cells)) if cells[i].cell_type == "code")
        return cells[start:check + 1] if with_checker else cells[start:end]

    nb = nbformat.v4.new_notebook()
    nb.metadata = copy.deepcopy(src.metadata)
    nb.cells = copy.deepcopy([c for c in cells if c.cell_type == "code"][:2]
                             + [c for a in after for c in span(a, False)]
                             + span(label, True))
    return nb


def _with_answer(nb, text: str):
    """``nb`` with ``text`` run at the end of the exercise's solution cell (the last cell
    with a solution region before the checker): its names win, and the grader, which puts
    the checker back after the cell before it in the course's notebook, runs it after them."""
    import copy

    nb = copy.deepcopy(nb)
    cell = [c for c in nb.cells if c.cell_type == "code" and "BEGIN SOLUTION" in c.source][-1]
    cell.source = cell.source.rstrip() + "\n\n" + text
    return nb


# One unusual right answer (tests/right/) per chapter package, and the allowed-set rule of
# the Little's-law exercises: graded through the grader's whole path, they keep full marks.
RIGHT_THROUGH_THE_GRADER = [
    "measuring/bandwidth_in_one_line", "coalescing/remap_divmod", "dram/loads_integer_ceiling",
    "dram/phase_channels_by_bursts", "matmul/tiled_at_chained_two_statements",
    "matmul/tile_reuse_fractions", "coarsening/grid_rounds_loop", "reduce/block_max_butterfly",
    "streams/pipeline_polls_events", "gdn/beta_grad_shuffles", "debugging/limiter_by_ranking",
    "checklist/roofline_by_ridge"]


@pytest.mark.parametrize("answer", RIGHT_THROUGH_THE_GRADER)
def test_a_right_answer_written_differently_keeps_full_marks_through_the_grader(answer,
                                                                                 tmp_path):
    """The answer's code in a cell of its own after the exercise's solution (its names win),
    graded as a student's notebook: the grader's reference run of the exercise and the
    student's values agree on every key."""
    from conftest import ROOT, load_answer
    from test_chapter_solutions import AFTER

    path = ROOT / "tests" / "right" / f"{answer}.py"
    mod = load_answer(path)
    source = tmp_path / "solutions"
    source.mkdir()
    nb = _exercise_notebook(mod.NOTEBOOK, mod.LABEL, AFTER.get(mod.LABEL, ()))
    nbformat.write(nb, source / "01_exercise.ipynb")
    (tmp_path / "subs" / "ada").mkdir(parents=True)
    nbformat.write(_with_answer(nb, path.read_text()), tmp_path / "subs" / "ada" / "01_exercise.ipynb")
    rows = grade.grade(tmp_path / "subs", source=source, cell_timeout=600, progress=None,
                       hidden_seed=4242, jobs=1)
    assert rows and all((r["status"], r["score"]) == ("graded", 1.0) for r in rows), \
        [(r["exercise"], r["score"], r["detail"]) for r in rows]


def _recorded(tmp_path, monkeypatch, name, answers, *, reference=False, forge=False):
    """Run a toy checker on ``answers`` (one per case) as the grader runs it, the values it
    judges recorded in ``tmp_path/name``: (its verdict as logged, the values read back)."""
    import json

    import numpy as np

    from gpuperf import exercises as ex

    folder, log = tmp_path / name, tmp_path / f"{name}.jsonl"
    folder.mkdir()
    monkeypatch.setattr(ex, "GRADE_LOG", str(log))
    monkeypatch.setattr(ex, "GRADING_CELL", "check")
    monkeypatch.setattr(ex, "GRADE_VALUES", str(folder))
    monkeypatch.setattr(ex, "GRADE_REFERENCE", reference)
    monkeypatch.setattr(ex, "_value_counts", {})
    chk = ex.Checker("toy")
    for k, got in enumerate(answers):
        with chk.case(f"n={k}"):
            chk.compare(np.asarray(got, np.float32), np.arange(3.0) + k)
            chk.record("memory" if got[0] == k else "compute", "memory")
    with chk.case("speed", kind="speed"):
        pass
    if forge:  # what a forged verdict says: everything passed
        chk.report_.passed += [n for n, _ in chk.report_.failed]
        chk.report_.failed.clear()
    chk.report(show=False)
    entry = json.loads(log.read_text().splitlines()[-1])
    return entry, grade.read_values(folder, reference=reference)


def test_the_grader_decides_outputs_from_the_values_handed_to_it(tmp_path, monkeypatch):
    right = [[0, 1, 2], [1, 2, 3]]
    ref_entry, ref_values = _recorded(tmp_path, monkeypatch, "ref", right, reference=True)
    reference = {"values": ref_values, "verdicts": {"check": ref_entry}, "stopped": None}
    assert len(ref_values) == 4 and all("want" in r for r in ref_values.values())
    # A right answer: nothing changes, full marks.
    entry, values = _recorded(tmp_path, monkeypatch, "right", right)
    assert not any("want" in r for r in values.values())  # the child never writes them
    decided, note = grade.decide_outputs(entry, "check", reference, values)
    assert decided == entry and note == ""
    # A wrong answer whose verdict is forged to pass: the grader fails the case, scores 0.
    entry, values = _recorded(tmp_path, monkeypatch, "forged", [[0, 1, 2], [1, 2, 9]],
                              forge=True)
    assert entry["failed"] == 0
    decided, note = grade.decide_outputs(entry, "check", reference, values)
    assert decided["failed"] == 1 and "differ from the reference at 1 case (first: n=1" in note
    row = grade._row("eve", "nb", "check_toy", decided, "graded", note)
    assert row["score"] == 0.0 and "outputs wrong" in row["detail"] and note in row["detail"]
    # Values withheld (the folder emptied), or a case dropped from the verdict: failed too.
    decided, note = grade.decide_outputs(entry, "check", reference, {})
    assert decided["failed"] == 2 and "no value was handed to the grader" in note
    dropped = dict(entry, cases=[c for c in entry["cases"] if c[0] != "n=1"],
                   passed=entry["passed"] - 1)
    decided, _ = grade.decide_outputs(dropped, "check", reference, values)
    assert ["n=1", False, 1, "output"] in decided["cases"]
    # A reference run without a verdict for the cell: the child's verdict, said so.
    _, note = grade.decide_outputs(entry, "check", dict(reference, verdicts={}), values)
    assert "judged in the student's kernel only" in note


def test_a_verdict_line_written_by_the_student_cannot_reweigh_its_cases(tmp_path, monkeypatch):
    """The student's kernel can append lines to the verdict log (it is in the writable run
    folder; found by `glob('/tmp/*/run-*/verd' + 'icts-*.jsonl')`, with no name the review
    flag looks for). A line that re-logs a wrong answer's verdict with every case weighed 0 and
    marked "speed", plus a passed case worth 10, scored 1.0 (10 of 10 points); one that claims
    50 points out of 1 for a right answer scored 50. Weights and kinds are the reference
    run's, unknown passed cases earn nothing, points are counted from the cases."""
    right = [[0, 1, 2], [1, 2, 3]]
    ref_entry, ref_values = _recorded(tmp_path, monkeypatch, "ref", right, reference=True)
    reference = {"values": ref_values, "verdicts": {"check": ref_entry}, "stopped": None}
    entry, values = _recorded(tmp_path, monkeypatch, "wrong", [[0, 1, 2], [1, 2, 9]])
    cases = [[c[0], True, 0, "speed"] for c in entry["cases"]] + [["fast enough", True, 10, "speed"]]
    forged = dict(entry, cases=cases, passed=len(cases), failed=0, points=10, possible=10,
                  first_failure=None)
    decided, note = grade.decide_outputs(forged, "check", reference, values)
    row = grade._row("mallory", "nb", "check_toy", decided, "graded", note)
    assert row["score"] == 0.0 and "outputs wrong" in row["detail"], row
    # the cases omitted altogether: the values still fail them
    only = dict(forged, cases=[["fast enough", True, 10, "speed"]], passed=1)
    decided, note = grade.decide_outputs(only, "check", reference, values)
    row = grade._row("mallory", "nb", "check_toy", decided, "graded", note)
    assert row["score"] == 0.0, row
    # a right answer claiming 50 points out of 1: its answer's score, 1.0
    entry, values = _recorded(tmp_path, monkeypatch, "right", right)
    inflated = dict(entry, points=50, possible=1)
    decided, note = grade.decide_outputs(inflated, "check", reference, values)
    row = grade._row("mallory", "nb", "check_toy", decided, "graded", note)
    assert row["score"] == 1.0 and row["points"] == row["possible"], row
    # and without a reference verdict to weigh by, never more than all of it
    row = grade._row("mallory", "nb", "check_toy", inflated, "graded", "")
    assert row["score"] == 1.0, row


def test_recorded_values_are_plain_data_and_junk_is_skipped(tmp_path):
    from gpuperf import exercises as ex

    class Liar(int):  # an int that says it equals anything
        def __eq__(self, other):
            return True

        __hash__ = int.__hash__

    assert ex.plain_value(Liar(3)) == 3 and type(ex.plain_value(Liar(3))) is int
    assert ex.plain_value((1.5, "memory")) == [1.5, "memory"]
    assert ex.plain_value(object()) == {"unreadable": "object"}
    assert ex.agrees(ex.plain_value(Liar(3)), 4) is not None
    assert ex.agrees([1.0000001, "compute"], [1.0, "compute"], rtol=1e-6) is None
    assert ex.agrees([1.0, "memory"], [1.0, "compute"], rtol=1e-6) is not None
    assert ex.agrees(5, None, allowed=[4, 5]) is None and ex.agrees(6, None, allowed=[4, 5])
    assert ex.agrees({"unreadable": "object"}, 3) is not None
    folder = tmp_path / "v"
    folder.mkdir()
    (folder / "values.jsonl").write_text(
        'not json\n{"key": ["c", "t", "n=1", 0], "got": {"json": 2}}\n'
        '{"key": ["c", "t", "n=2", 0], "got": {"npy": "../../etc/passwd", "shape": []}}\n'
        '{"key": ["c", "t", "n=3", 0], "got": {"json": 1}}\n'
        '{"key": ["c", "t", "n=3", 0], "got": {"json": 1}}\n')
    got = grade.read_values(folder)
    assert got[("c", "t", "n=1", 0)] == {"got": 2} and ("c", "t", "n=2", 0) not in got
    assert got[("c", "t", "n=3", 0)]["got"] == {"unreadable": "two values for one key"}


def test_a_racy_submission_is_graded_the_same_on_a_regrade(tmp_path):
    """A kernel with a race (the smoothing kernel without its barrier), graded twice with one
    seed: the same verdict both times, wrong outputs, 0; a right one beside it, full marks."""
    from conftest import ROOT

    source = tmp_path / "solutions"
    source.mkdir()
    nb = _exercise_notebook("09_profiling", "ex-profiling-race")
    nbformat.write(nb, source / "01_exercise.ipynb")
    for student, answer in (("racy", "wrong/debugging/smooth_no_barrier"),
                            ("right", "right/debugging/smooth_two_lines")):
        text = (ROOT / "tests" / f"{answer}.py").read_text()
        if student == "racy":
            text += "\nsmooth_fixed = kernel\n"
        sub = _with_answer(nb, text)
        (tmp_path / "subs" / student).mkdir(parents=True)
        nbformat.write(sub, tmp_path / "subs" / student / "01_exercise.ipynb")
    runs = [{r["student"]: (r["status"], r["score"], r["passed"], r["total"], r["detail"])
             for r in grade.grade(tmp_path / "subs", source=source, cell_timeout=600,
                                  progress=None, hidden_seed=31337, jobs=1)}
            for _ in range(2)]
    assert runs[0] == runs[1]
    assert runs[0]["racy"][:2] == ("graded", 0.0) and runs[0]["right"][:2] == ("graded", 1.0)


def test_the_kernel_process_writes_to_a_file_not_the_graders_terminal(tmp_path, capfd):
    # ipykernel's banner ("To connect another client to this kernel...", ten lines a notebook)
    # and what a cell writes to file descriptor 1 itself belong in the run's folder, not in
    # the instructor's terminal; the cell's own output still reaches the notebook.
    work, rundir = tmp_path / "work", tmp_path / "run"
    work.mkdir()
    rundir.mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import os\nos.write(1, b'straight to fd 1\\n')\nprint('a cell output')\n"
        "print('live=' + str(os.environ.get('GPUPERF_LIVE')))")])
    # and the grader's variables reach the kernel: experiments replay their records there
    km = sandbox.kernel_manager(work=work, rundir=rundir, env=grade.grading_env())
    try:
        assert grade._run(nb, cell_timeout=60, cwd=work, km=km) is None
    finally:
        sandbox.release(rundir)
    seen = capfd.readouterr()
    assert "straight to fd 1" not in seen.out + seen.err
    assert "another client" not in seen.out + seen.err
    assert "straight to fd 1" in (rundir / sandbox.KERNEL_OUTPUT).read_text()
    text = "".join(o.get("text", "") for o in nb.cells[0].outputs)
    assert "a cell output" in text
    assert "live=" + grade.grading_env()["GPUPERF_LIVE"] in text.splitlines()
    assert grade.grading_env() == {"GPUPERF_LIVE": os.environ.get("GPUPERF_LIVE", "0")}


def test_a_notebook_of_cells_each_under_the_cell_timeout_stops_at_its_budget(monkeypatch):
    """Every cell under the cell timeout (sleeping 110 s of 120) and no limit on the whole:
    a student's notebook held its job as long as it liked. It stops after NOTEBOOK_TIMEOUTS
    cell timeouts, and says so."""
    import nbformat

    monkeypatch.setattr(grade, "NOTEBOOK_TIMEOUTS", 2)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import time; time.sleep(1.5)") for _ in range(6)]
    t0 = time.monotonic()
    stopped = grade._run(nb, cell_timeout=2, cwd=Path.cwd())
    assert time.monotonic() - t0 < 20
    assert stopped and "ran past 4 s (2 cell timeouts)" in stopped, stopped
    assert sum(1 for c in nb.cells if c.get("execution_count")) < 6


def test_a_notebook_saved_by_colab_without_cell_ids_is_graded_as_its_answers_deserve(tmp_path):
    """Colab saves nbformat 4.0 without cell ids (its own go into each cell's metadata): every
    checker was put back at the top, before the answers, and a right answer scored 0
    (NameError). The course's ids are put back by the cells' text."""
    import json

    source = _source(tmp_path / "notebooks").parent
    copy = assign.assign(source, tmp_path / "student")[0]
    nb = nbformat.read(copy, as_version=4)
    answer = next(c for c in nb.cells if "NotImplementedError" in c.source)
    answer.source = "def saxpy_gbps(n, ms):\n" + RIGHT
    raw = json.loads(nbformat.writes(nb))
    raw["nbformat_minor"] = 0
    for k, cell in enumerate(raw["cells"]):
        cell.pop("id", None)
        cell["metadata"] = {"id": f"colab{k}"}
    (tmp_path / "subs" / "dee").mkdir(parents=True)
    (tmp_path / "subs" / "dee" / "Copy of 01_demo.ipynb").write_text(json.dumps(raw))
    rows = grade.grade(tmp_path / "subs", source=source, cell_timeout=120, progress=None,
                       hidden_seed=5, jobs=1)
    assert [(r["status"], r["score"]) for r in rows] == [("graded", 1.0)], rows


def test_a_notebook_keeps_at_most_notebook_output_cap_characters(monkeypatch):
    """OUTPUT_CAP bounds one cell: a hundred cells printing 190,000 characters each kept a
    19 MB notebook per student. All the cells together keep NOTEBOOK_OUTPUT_CAP."""
    import nbformat

    monkeypatch.setattr(grade, "NOTEBOOK_OUTPUT_CAP", 50_000)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("print('w' * 20_000)") for _ in range(6)]
    assert grade._run(nb, cell_timeout=60, cwd=Path.cwd()) is None
    kept = nbformat.writes(nb)
    assert len(kept) < 60_000 and "characters in this notebook left out" in kept


def test_a_verdict_log_replaced_by_a_fifo_or_a_link_is_not_read(tmp_path):
    """The verdict log is in the run folder, which the student's kernel can write: an answer
    that replaced it with a FIFO left the grader blocked for good opening it once the kernel
    had ended (the whole class with it); a link would be followed as the grader. Only a
    regular file is read."""
    import json
    import threading

    line = json.dumps({"cell": "c", "passed": 1, "failed": 0}) + "\n"
    real = tmp_path / "real.jsonl"
    real.write_text(line)
    assert grade._read_log(real) == [json.loads(line)]
    fifo, link = tmp_path / "fifo.jsonl", tmp_path / "link.jsonl"
    os.mkfifo(fifo)
    link.symlink_to(real)
    got = []
    t = threading.Thread(target=lambda: got.append(grade._read_log(fifo)), daemon=True)
    t.start()
    t.join(10)
    assert got == [[]], "reading a FIFO blocked"
    assert grade._read_log(link) == []
    assert grade._read_log(tmp_path / "none.jsonl") == []



# --- what the student wrote, where it ran (hostile23 items 1-3) -------------------------------

def _colab_text(nb) -> str:
    """``nb`` as Colab saves it: nbformat 4.0, no cell ids."""
    import json

    raw = json.loads(nbformat.writes(nb))
    raw["nbformat_minor"] = 0
    for k, cell in enumerate(raw["cells"]):
        cell.pop("id", None)
        cell["metadata"] = {"id": f"colab{k}"}
    return json.dumps(raw)


def _strip_ids(nb):
    return nbformat.reads(_colab_text(nb), as_version=4)


def _one_exercise_course():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(SETUP, id="setup"),
        nbformat.v4.new_markdown_cell("Write `loads(n)`.", id="task1"),
        nbformat.v4.new_code_cell("def loads(n):\n    ### BEGIN SOLUTION\n    return n\n"
                                  "    ### END SOLUTION", id="answer1"),
        nbformat.v4.new_code_cell("gs.check_loads(loads);", id="check1"),
        nbformat.v4.new_markdown_cell("Next.", id="task2"),
    ]
    return nb


def test_a_notebook_too_long_to_align_keeps_its_exact_cells(monkeypatch):
    """Past ALIGN_PAIRS pairs of cells to weigh, no alignment is made (a notebook made of
    thousands of cells costs no minutes): the cells with the course's exact text still get
    their ids, in or out of order, and the others are the student's own."""
    src = _one_exercise_course()
    sub = assign.student_copy(src)
    sub.cells.insert(0, sub.cells.pop(3))  # the checker cell moved to the top
    sub.cells[3].source = "def loads(n):\n    return n"
    monkeypatch.setattr(grade, "ALIGN_PAIRS", 0)
    got = [c.id for c in grade.course_ids(_strip_ids(sub), src).cells]
    assert got == ["check1", "setup", "task1", "student-3", "task2"]


def test_the_checker_runs_where_the_student_ran_it():
    """The checker goes where the student's checker cell stood, after every cell placed
    before it (an answer in a new cell below the stub, or below an abandoned attempt); where
    the student deleted it, after the answer and the student's cells that follow it, just
    before the next cell of the course; never before the answer."""
    src = _one_exercise_course()
    copy_ = assign.student_copy(src)

    def order(edit):
        import copy

        nb = copy.deepcopy(copy_)
        edit(nb)
        ran = grade.grading_notebook(nb, src)
        return [c.id for c in ran.cells]

    def below_the_stub(nb):
        at = next(i for i, c in enumerate(nb.cells) if c.id == "answer1")
        nb.cells.insert(at + 1, nbformat.v4.new_code_cell("def loads(n):\n    return n",
                                                          id="fix"))
    assert order(below_the_stub)[2:5] == ["answer1", "fix", "check1"]

    def deleted(nb):
        below_the_stub(nb)
        nb.cells = [c for c in nb.cells if c.id != "check1"]
    assert order(deleted)[2:6] == ["answer1", "fix", "check1", "task2"]

    def moved_up(nb):  # the checker cell moved above its answer: it runs after the answer
        below_the_stub(nb)
        check = next(c for c in nb.cells if c.id == "check1")
        nb.cells.remove(check)
        nb.cells.insert(1, check)
    got = order(moved_up)
    assert got.index("check1") > got.index("answer1")


def test_a_right_answer_below_the_stub_or_an_abandoned_attempt_gets_full_marks(tmp_path):
    """A right answer in a new cell below the untouched stub (with ids), and a fixed answer
    in a new cell below a wrong first attempt (Colab, no ids): the checker runs where the
    student ran it, after the fix, and both get full marks."""
    source = _source(tmp_path / "notebooks")
    copy = assign.assign(source.parent, tmp_path / "student")[0]
    subs = tmp_path / "subs"

    def below(first):
        def edit(nb):
            at = next(i for i, c in enumerate(nb.cells) if c.get("id") == "solution")
            if first is not None:
                nb.cells[at].source = "def saxpy_gbps(n, ms):\n" + first
            nb.cells.insert(at + 1, nbformat.v4.new_code_cell(
                "# fixed below\ndef saxpy_gbps(n, ms):\n" + RIGHT, id="mine"))
        return edit
    _submit(subs, "stub-kept", copy, below(None))
    nb = nbformat.read(copy, as_version=4)
    below(WRONG)(nb)
    (subs / "colab").mkdir()
    (subs / "colab" / copy.name).write_text(_colab_text(nb))
    rows = grade.grade(subs, source=source.parent, cell_timeout=60, progress=None,
                       hidden_seed=5, jobs=2)
    assert [(r["student"], r["status"], r["score"]) for r in rows] == [
        ("colab", "graded", 1.0), ("stub-kept", "graded", 1.0)], rows


def _solved(text):
    """A solution cell's code as a student writes it: without the solution markers."""
    return "\n".join(ln for ln in text.splitlines() if "SOLUTION" not in ln)


def _two_import_math_answers(folder):
    """A course notebook whose two answer cells both begin ``import math``."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(SETUP, id="setup"),
        nbformat.v4.new_markdown_cell("Write `loads(n)`.", id="task1"),
        nbformat.v4.new_code_cell(
            "import math\n\n\ndef loads(n):\n    ### BEGIN SOLUTION\n"
            "    return math.ceil(n / 4)\n    ### END SOLUTION", id="answer1"),
        nbformat.v4.new_code_cell("gs.check_loads(loads);", id="check1"),
        nbformat.v4.new_markdown_cell("Write `copy_loads(n)`.", id="task2"),
        nbformat.v4.new_code_cell(
            "import math\n\n\ndef copy_loads(n):\n    ### BEGIN SOLUTION\n"
            "    return math.ceil(n / 8)\n    ### END SOLUTION", id="answer2"),
        nbformat.v4.new_code_cell("gs.check_copy_loads(copy_loads);", id="check2"),
        nbformat.v4.new_code_cell("print('the end')", id="after"),
    ]
    folder.mkdir()
    nbformat.write(nb, folder / "02_demo.ipynb")
    return nb


def test_colab_answers_that_begin_alike_get_their_own_course_cells(tmp_path):
    """A notebook saved by Colab has no cell ids: its cells are matched with the course's by
    more than the first line (the names they define, their order, their lines), one cell to
    one course cell, so two answers that both begin `import math` each get theirs and each
    checker runs after its answer."""
    src = _two_import_math_answers(tmp_path / "notebooks")
    sub = assign.student_copy(src)
    for cell in sub.cells:
        if "NotImplementedError" in cell.source:
            cell.source = _solved(next(c for c in src.cells if c.id == cell.id).source)
    want = [c.id for c in sub.cells]
    got = grade.course_ids(_strip_ids(sub), src)
    assert [c.id for c in got.cells] == want
    ran = grade.grading_notebook(got, src)
    at = {c.id: i for i, c in enumerate(ran.cells)}
    assert at["answer1"] < at["check1"] < at["task2"] < at["answer2"] < at["check2"]
    # the same pair in the other order, one answer written its own way: still told apart
    sub.cells[2].source, sub.cells[5].source = ("import math\n\ndef loads(n):\n"
                                                "    return -(-n // 4)",
                                                "import math\ndef copy_loads(n): return 0")
    assert [c.id for c in grade.course_ids(_strip_ids(sub), src).cells] == want


def test_every_chapter_saved_by_colab_gets_its_course_ids_back():
    """Every chapter's student copy without ids, answered with the reference code (markers
    removed), with the student's own cells added after each answer (a try-out, and a second
    attempt at the answer): every cell of the course gets its own id back, and no new cell
    takes one."""
    import copy

    from conftest import ROOT

    for path in sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb")):
        src = nbformat.read(path, as_version=4)
        by_id = {c.id: c for c in src.cells}
        sub = assign.student_copy(src)
        cells = []
        for cell in sub.cells:
            cells.append(cell)
            if cell.cell_type == "code" and "NotImplementedError" in cell.source:
                cell.source = _solved(by_id[cell.id].source)
                cells.append(nbformat.v4.new_code_cell("print('trying it out')\nx = 1",
                                                       id=f"mine-{len(cells)}"))
                cells.append(nbformat.v4.new_code_cell(cell.source + "\n# my second try",
                                                       id=f"mine-{len(cells)}"))
        sub.cells = cells
        got = grade.course_ids(_strip_ids(copy.deepcopy(sub)), src)
        for mine, theirs in zip(sub.cells, got.cells):
            if mine.id.startswith("mine-"):
                assert theirs.id.startswith("student-"), (path.name, mine.source[:40])
            else:
                assert theirs.id == mine.id, (path.name, mine.id, theirs.id)


def test_an_edited_setup_cell_or_a_comment_is_not_the_students_machinery():
    """Only what the student wrote is read, and only its code: the setup cell's own Colab
    check (sys.modules, getattr) is the course's when the student sets MEASURE = False there,
    as the cell says; a comment or a prose string that says "inspect" names nothing. A real
    use in the student's lines is still found, in a course cell or a new one."""
    from conftest import ROOT

    src = nbformat.read(ROOT / "solutions" / "09_profiling.ipynb", as_version=4)
    setup = next(c for c in src.cells if c.cell_type == "code" and "MEASURE = True" in c.source)
    assert {"sys.modules", "getattr("} <= set(grade._MACHINERY) and "sys.modules" in setup.source
    answer = next(c for c in src.cells if c.cell_type == "code" and "BEGIN SOLUTION" in c.source)

    def touched(**edits):
        import copy

        sub = copy.deepcopy(src)
        by_id = {c.id: c for c in sub.cells}
        for cid, (old, new) in edits.items():
            assert old in by_id[cid].source
            by_id[cid].source = by_id[cid].source.replace(old, new, 1)
        return grade.machinery_touched(sub, src)

    assert touched(**{setup.id: ("MEASURE = True", "MEASURE = False")}) == []
    line = answer.source.splitlines()[-1]
    indent = line[: len(line) - len(line.lstrip())]
    calm = [f"{indent}# inspect each row: the larger of the two decides; getattr(x) eval(",
            f'{indent}note = "inspect the table; exercises. builtins"',
            f"{indent}inspected = retrieval = my_vars = 1",
            f"{indent}print(f\"{{inspected}}: inspect it\")"]
    for text in calm:
        assert touched(**{answer.id: (line, line + "\n" + text)}) == [], text
    # in a student's line, the code is read: a comment does not hide a use, nor a string
    found = {
        "MEASURE = False  # reads\nx = getattr(gp, 'exercises')": ["getattr("],
        'if getattr(sys.modules.get("gpuperf.exercises"), "GRADE_LOG", 0):\n    pass':
            ["GRADE_LOG", "gpuperf.exercises", "sys.modules", "getattr("],
        "print(f\"{getattr(gp, 'x')}\")": ["getattr("],
        "ｇｅｔａｔｔｒ(gp, 'x')": ["getattr("],
        "get_ipython().run_cell('import gpuperf.exercises as e')": ["gpuperf.exercises"],
        "z = __builtins__": ["__builtins__"],
        "import inspect\nf = inspect.currentframe().f_back": ["currentframe", "f_back",
                                                             "inspect"],
    }
    for text, names in found.items():
        assert sorted(touched(**{setup.id: ("MEASURE = True", text)})) == sorted(names), text
    # a statement of the course's own, edited, is the student's: it is read
    edited = 'getattr(sys.modules.get("numba_cuda"), "__version__", "0.30.4")'
    assert edited in setup.source
    assert "sys.modules" in touched(**{setup.id: (
        edited, 'getattr(sys.modules.get("gpuperf.exercises"), "_log_verdict", "0.30.4")')})
    # a new cell of the student's is all the student's
    import copy

    sub = copy.deepcopy(src)
    sub.cells.insert(3, nbformat.v4.new_code_cell("import sys\nm = sys.modules  # mine"))
    assert grade.machinery_touched(sub, src) == ["sys.modules"]


def test_no_chapter_answered_and_annotated_by_a_student_names_the_machinery():
    """Every chapter's student copy with each code cell as a student keeps it: the reference
    code written in (markers removed), MEASURE = False in the setup cell, and comments and
    prose strings that say "inspect", "exercises." and "getattr(": nothing is flagged, with
    the cells' ids or saved by Colab without them."""
    from conftest import ROOT

    for path in sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb")):
        src = nbformat.read(path, as_version=4)
        by_id = {c.id: c for c in src.cells}
        sub = assign.student_copy(src)
        for cell in sub.cells:
            if cell.cell_type == "code":
                text = _solved(by_id[cell.id].source).replace("MEASURE = True", "MEASURE = False")
                cell.source = ("# inspect: my notes on exercises. and getattr(\n" + text
                               + "\nprint('inspect the exercises. done')  # eval(")
        assert grade.machinery_touched(sub, src) == [], path.name
        colab = grade.course_ids(_strip_ids(sub), src)
        assert grade.machinery_touched(colab, src) == [], path.name
