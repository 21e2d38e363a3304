import nbformat
import pytest
from conftest import ROOT

from gpuperf import assign


def test_strip_keeps_indentation_and_code_around():
    src = "def f(x):\n    y = 1\n    ### BEGIN SOLUTION\n    return x + y\n    ### END SOLUTION\n"
    out = assign.strip_solutions(src)
    assert out == "def f(x):\n    y = 1\n    # YOUR CODE HERE\n    raise NotImplementedError()"


def test_a_top_level_region_gets_no_raise():
    """A raise at the top level of a cell would stop a student's "run all" there."""
    src = "answer = None\n### BEGIN SOLUTION\nanswer = 42\n### END SOLUTION\nprint(answer)"
    out = assign.strip_solutions(src)
    assert out == "answer = None\n# YOUR CODE HERE\nprint(answer)"
    compile(out, "cell", "exec")


def test_student_copies_define_every_function_their_checkers_call(tmp_path):
    """Each name a checker cell passes must still be defined in the student copy (a
    solution region around a whole def left the ch. 2 checker with a NameError)."""
    import ast
    import re

    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        student = assign.student_copy(nbformat.read(path, as_version=4))
        defined = set()
        for cell in student.cells:
            if cell.cell_type != "code":
                continue
            tree = ast.parse(re.sub(r"^\s*[!%].*$", "", cell.source, flags=re.M))
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                    defined.add(node.name)
                elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    defined.add(node.id)
                elif isinstance(node, (ast.Import, ast.ImportFrom)):
                    defined |= {(a.asname or a.name).split(".")[0] for a in node.names}
            for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
                fn = call.func
                if isinstance(fn, ast.Attribute) and fn.attr.startswith("check_"):
                    for arg in call.args[:1]:
                        if isinstance(arg, ast.Name):
                            assert arg.id in defined, f"{path.name}: {fn.attr}({arg.id}) undefined"


@pytest.mark.parametrize("src,words", [
    ("### BEGIN SOLUTION\nx = 1\n", "never closed"),
    ("x = 1\n### END SOLUTION\n", "without"),
    ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION\n", "inside another"),
])
def test_malformed_markers_are_errors(src, words):
    with pytest.raises(assign.AssignError, match=words):
        assign.strip_solutions(src)


def test_student_copies_of_every_notebook_have_no_solutions(tmp_path):
    written = assign.assign(ROOT / "solutions", tmp_path)
    assert written
    for path in written:
        original = nbformat.read(ROOT / "solutions" / path.name, as_version=4)
        student = nbformat.read(path, as_version=4)
        assert assign.solution_leaks(student) == []
        solutions = []
        for cell in original.cells:
            if cell.cell_type == "code" and assign.BEGIN in cell.source:
                body = cell.source.split(assign.BEGIN, 1)[1].split(assign.END, 1)[0]
                solutions += [ln.strip() for ln in body.splitlines() if len(ln.strip()) > 12]
        text = "\n".join(c.source for c in student.cells if c.cell_type == "code")
        leaked = [s for s in solutions if s in text]
        assert not leaked, f"{path.name}: solution lines in the student copy: {leaked[:3]}"
        assert all(not c.get("outputs") for c in student.cells if c.cell_type == "code")
        if solutions:
            assert "raise NotImplementedError()" in text


def test_cli(tmp_path, capsys):
    assert assign.main([str(ROOT / "solutions" / "01_measuring.ipynb"), "--out", str(tmp_path)]) == 0
    assert (tmp_path / "01_measuring.ipynb").exists()
    assert assign.main([str(tmp_path / "missing"), "--out", str(tmp_path)]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_checker_on_an_untouched_exercise_says_not_implemented(capsys):
    """What a student sees when running a checker before writing any code."""
    import gpuperf as gp

    def saxpy_gbps(n, ms):
        # YOUR CODE HERE
        raise NotImplementedError()

    assert not gp.gridstride.check_bandwidth_formula(saxpy_gbps)
    assert "not implemented yet" in capsys.readouterr().out


# ------------------------------------------------------------------ nothing is lost


def _chapter(tmp_path, name="01_measuring.ipynb"):
    """A copy of one chapter notebook in its own folder (the instructor's source)."""
    src = tmp_path / "notebooks"
    src.mkdir()
    (src / name).write_bytes((ROOT / "solutions" / name).read_bytes())
    return src


def _snapshot(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("out", [".", "..", "sub/.."])
def test_out_that_is_or_contains_the_source_is_refused(tmp_path, out):
    src = _chapter(tmp_path)
    before = _snapshot(tmp_path)
    with pytest.raises(ValueError, match="is or contains the source"):
        assign.assign(src, src / out)
    assert _snapshot(tmp_path) == before


def test_existing_copies_are_kept_unless_forced(tmp_path, capsys):
    src = _chapter(tmp_path)
    out = tmp_path / "student"
    assign.assign(src, out)
    work = out / "01_measuring.ipynb"
    work.write_text(work.read_text().replace("# YOUR CODE HERE", "my answer = 42", 1))
    mine = work.read_bytes()
    with pytest.raises(FileExistsError, match="--force"):
        assign.assign(src, out)
    assert work.read_bytes() == mine
    assert assign.main([str(src), "--out", str(out)]) == 2
    assert "--force" in capsys.readouterr().err and work.read_bytes() == mine
    assert assign.main([str(src), "--out", str(out), "--force"]) == 0
    assert b"my answer = 42" not in work.read_bytes()


def test_a_bad_notebook_stops_the_run_before_anything_is_written(tmp_path):
    src = _chapter(tmp_path)
    bad = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "def f():\n    ### BEGIN SOLUTION\n    return 1\n")])
    nbformat.write(bad, src / "99_broken.ipynb")  # sorts after the good one
    out = tmp_path / "student"
    with pytest.raises(assign.AssignError, match="99_broken.ipynb.*never closed.*Nothing"):
        assign.assign(src, out)
    assert not out.exists() or not list(out.iterdir())
    (src / "99_broken.ipynb").write_text("{not json")
    with pytest.raises(assign.AssignError, match="not a readable notebook"):
        assign.assign(src, out)
    assert not out.exists() or not list(out.iterdir())


def test_a_failed_write_leaves_no_partial_file(tmp_path, monkeypatch):
    import os

    src = _chapter(tmp_path)
    (src / "02_coalescing.ipynb").write_bytes(
        (ROOT / "solutions" / "02_coalescing.ipynb").read_bytes())
    out = tmp_path / "student"
    calls = []
    real = os.fdopen

    def full_disk(fd, *args, **kwargs):
        calls.append(fd)
        if len(calls) == 2:
            os.close(fd)
            raise OSError(28, "No space left on device")
        return real(fd, *args, **kwargs)

    monkeypatch.setattr(os, "fdopen", full_disk)
    with pytest.raises(OSError, match="No space"):
        assign.assign(src, out)
    assert list(out.iterdir()) == []  # neither the first copy nor a temporary file


@pytest.mark.parametrize("begin,end", [
    ("###BEGIN SOLUTION", "###END SOLUTION"),
    ("### Begin Solution", "### End Solution"),
    ("  #   begin   solution  ", "# END SOLUTION"),
])
def test_markers_in_any_case_and_spacing_are_recognised(begin, end):
    src = f"def f(x):\n    {begin.strip()}\n    return x * 1234567\n    {end.strip()}\n"
    out = assign.strip_solutions(src)
    assert "1234567" not in out and "raise NotImplementedError()" in out


def _nb(*cells):
    return nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell(text) if kind == "md" else nbformat.v4.new_code_cell(text)
        for kind, text in cells])


def test_an_unrecognised_marker_is_a_leak_not_a_silent_answer(tmp_path):
    src = tmp_path / "notebooks"
    src.mkdir()
    nbformat.write(_nb(("code", "def f():\n    ### BEGIN-SOLUTION\n    return 99\n")),
                   src / "a.ipynb")
    with pytest.raises(assign.AssignError, match="solution text left in cell 0"):
        assign.assign(src, tmp_path / "student")


def test_everything_between_the_fences_is_solution_and_the_task_text_stays():
    nb = _nb(
        ("md", ":::{exercise} Add one\n:label: ex-add\n\nWrite `f(x)` that adds one.\n:::"),
        ("md", "Try it before you look.\n\n:::{solution-start} ex-add\n:class: dropdown\n:::\n"
               "The secret: add 1."),
        ("code", "def f(x):\n    ### BEGIN SOLUTION\n    return x + 1\n    ### END SOLUTION"),
        ("md", "Why this works: it adds one."),
        ("md", ":::{solution-end}\n:::\nNow run the checker."),
        ("code", "check(f)"))
    student = assign.student_copy(nb)
    texts = [c.source for c in student.cells]
    assert texts[0] == "### Exercise: Add one\n\nWrite `f(x)` that adds one."
    assert texts[1] == "Try it before you look."  # the task sentence beside the fence stays
    assert "return x + 1" not in texts[2] and "raise NotImplementedError()" in texts[2]
    assert texts[3] == "Now run the checker." and texts[4] == "check(f)"
    assert not any("secret" in t or "Why this works" in t for t in texts)
    assert assign.solution_leaks(student) == []


def test_a_code_cell_inside_a_solution_without_markers_fails_with_its_number():
    nb = _nb(("md", ":::{solution-start} ex\n:::"), ("code", "def f(x):\n    return x + 1"),
             ("md", ":::{solution-end}\n:::"))
    with pytest.raises(assign.AssignError, match="cell 1: a code cell inside a hidden solution"):
        assign.student_copy(nb)
    with pytest.raises(assign.AssignError, match="never closed"):
        assign.student_copy(_nb(("md", ":::{solution-start} ex\n:::"), ("md", "text")))


def test_out_inside_the_source_folder_is_refused(tmp_path):
    src = _chapter(tmp_path)
    with pytest.raises(ValueError, match="inside the source folder"):
        assign.assign(src, src / "student")
    assert not (src / "student").exists()


@pytest.mark.parametrize("solution", [
    ":::{solution} ex-add\n:class: dropdown\n\nSECRET-1: add one.\n:::",
    "```{solution-start} ex-add\n```\nSECRET-2: add one.\n```{solution-end}\n```",
    ":::{solution-start} ex-add\n:class: dropdown\n\n:::\nSECRET-3\n:::{solution-end}\n\n:::",
])
def test_every_form_of_a_solution_directive_is_removed(solution):
    nb = _nb(("md", "Task: add one.\n\n" + solution + "\n\nAfter."), ("code", "check(f)"))
    student = assign.student_copy(nb)
    text = "\n".join(c.source for c in student.cells)
    assert "SECRET" not in text and "solution" not in text.lower()
    first = student.cells[0].source
    assert first.startswith("Task: add one.") and first.rstrip().endswith("After.")
    assert ":::" not in text and "```" not in text


def test_prose_about_solutions_and_trailing_hashes_are_understood():
    nb = _nb(("md", "We recommend solutions that end solutions early."),
             ("code", "def f():\n    ### BEGIN SOLUTION ###\n    return 7\n    ### END SOLUTION ###"))
    student = assign.student_copy(nb)
    assert assign.solution_leaks(student) == []
    assert "return 7" not in student.cells[1].source


def test_copies_are_as_readable_as_other_new_files(tmp_path):
    import os
    import stat

    src = _chapter(tmp_path)
    umask = os.umask(0o022)
    try:
        written = assign.assign(src, tmp_path / "student")
    finally:
        os.umask(umask)
    assert stat.S_IMODE(written[0].stat().st_mode) == 0o644


def test_every_chapter_becomes_an_nbgrader_source():
    """Each exercise: its solution cells marked as answers, its checker cell a locked test
    that asserts the report; the hidden solutions' prose gone."""
    from gpuperf import grade

    answered = {}  # chapter number -> whether any of its sections has answers
    for path in sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        src = assign.nbgrader_source(nb, points=2)
        meta = [c.metadata.get("nbgrader") for c in src.cells]
        tests = [m for m in meta if m and m["grade"]]
        answers = [m for m in meta if m and m["solution"]]
        assert len(tests) == len(grade.checker_cells(nb)) and all(m["points"] == 2 for m in tests)
        assert bool(answers) == bool(tests) and all(m["locked"] for m in tests)
        answered[path.name[:2]] = answered.get(path.name[:2], False) or bool(answers)
        for cell in src.cells:
            if cell.metadata.get("nbgrader", {}).get("grade"):
                visible, hidden = cell.source.split("### BEGIN HIDDEN TESTS\n")
                assert visible.rstrip().endswith('assert _report, "the checker\'s report '
                                                 'above lists what failed"')
                assert hidden.rstrip().endswith("### END HIDDEN TESTS")
                compile(cell.source, path.name, "exec")  # the test cell is valid Python
            if cell.cell_type == "markdown":
                assert "{solution" not in cell.source and "{exercise}" not in cell.source
    # a section may be reading only (chapter 5.2); every chapter has exercises to grade
    assert answered and all(answered.values()), answered


def test_a_checker_cells_own_points_are_kept_for_nbgrader_and_the_grader():
    """A checker cell's nbgrader points metadata is what nbgrader and gpuperf.grade both count."""
    from gpuperf import grade

    nb = nbformat.read(ROOT / "solutions" / "06_reduce.ipynb", as_version=4)
    (cid, _), = grade.checker_cells(nb)
    cell = next(c for c in nb.cells if c.get("id") == cid)
    cell.metadata["nbgrader"] = {"points": 5}
    assert grade.exercise_points(nb) == {cid: 5.0}
    src = assign.nbgrader_source(nb, points=2)
    assert next(c for c in src.cells if c.get("id") == cid).metadata["nbgrader"]["points"] == 5
