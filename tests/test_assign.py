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

    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
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
    written = assign.assign(ROOT / "notebooks", tmp_path)
    assert written
    for path in written:
        original = nbformat.read(ROOT / "notebooks" / path.name, as_version=4)
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
    assert assign.main([str(ROOT / "notebooks" / "01_measuring.ipynb"), "--out", str(tmp_path)]) == 0
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
