"""Exercises judged again apart from the student's notebook (``grade.rejudge``), on the
student's function alone as ``vetting.kernel_definitions`` (a kernel) or
``vetting.answer_definitions`` (a host function) rebuilds it: what a notebook forges does not
reach that verdict, and a function the grader cannot run on its own earns nothing for what
only the notebook decided."""

import re
from pathlib import Path

import nbformat
import pytest

from gpuperf import assign, grade, sandbox
from gpuperf import vetting as vt
from gpuperf.nbtools import checker_cells

ROOT = Path(__file__).resolve().parents[1]


def _kernel_exercises():
    """(notebook, checker cell, kernel name, the code cells before the checker)."""
    out = []
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for cid, (_, _, name) in grade.kernel_exercises(nb).items():
            code = [c for c in nb.cells if c.cell_type == "code"]
            at = next(k for k, c in enumerate(code) if c.get("id") == cid)
            out.append((path.stem, cid, name, [c.source for c in code[:at]]))
    return out


KERNEL_EXERCISES = _kernel_exercises()


def _host_exercises():
    """(notebook, checker cell, function name, the code cells before the checker) of the
    host-function exercises judged again."""
    out = []
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        kernels = grade.kernel_exercises(nb)
        for cid, (_, _, name, _) in grade.judged_exercises(nb).items():
            if cid in kernels:
                continue
            code = [c for c in nb.cells if c.cell_type == "code"]
            at = next(k for k, c in enumerate(code) if c.get("id") == cid)
            out.append((path.stem, cid, name, [c.source for c in code[:at]]))
    return out


HOST_EXERCISES = _host_exercises()


def test_the_host_exercises_judged_again_are_those_marked_and_every_reference_is_vetted():
    assert {(nb, name) for nb, _, name, _ in HOST_EXERCISES} == {
        ("05_coarsening", "read_sweep"), ("06_reduce_measured", "my_absmax"),
        ("07_streams", "my_pipeline"), ("09_profiling", "profile_command")}
    for notebook, _, name, cells in HOST_EXERCISES:
        code = vt.answer_definitions(cells, name)
        assert f"def {name}(" in code, (notebook, code)
        compile(code, notebook, "exec")


def test_the_course_has_kernel_exercises_and_every_reference_kernel_is_vetted():
    assert len(KERNEL_EXERCISES) >= 12
    for notebook, _, name, cells in KERNEL_EXERCISES:
        code = vt.kernel_definitions(cells, name)
        assert "def " in code and ("cuda.jit" in code or "@jit" in code), (notebook, code)
        compile(code, notebook, "exec")  # it is Python, rebuilt from the syntax tree


def _right_answers():
    """(path, text, function name, kernel?) of each right answer under tests/right to an
    exercise judged again (a host function's answer may be named ``student``)."""
    names: dict = {}
    for nb, _, name, _ in KERNEL_EXERCISES:
        names.setdefault(nb, []).append((name, True))
    for nb, _, name, _ in HOST_EXERCISES:
        names.setdefault(nb, []).append((name, False))
    out = []
    for f in sorted((ROOT / "tests" / "right").glob("*/*.py")):
        text = f.read_text()
        m = re.search(r'NOTEBOOK(?:, LABEL)?\s*=\s*"([^"]+)"', text)
        for name, kernel in names.get(m.group(1) if m else None, []):
            for n in (name, "student") if not kernel else (name,):
                if re.search(rf"^(def {n}\b|{n}\s*=)", text, re.M):
                    out.append((f.relative_to(ROOT / "tests"), text, n, kernel))
                    break
    return out


RIGHT = _right_answers()


@pytest.mark.parametrize("path,text,name,kernel", RIGHT, ids=[str(r[0]) for r in RIGHT])
def test_every_right_answer_is_vetted(path, text, name, kernel):
    # A right answer written the way the course teaches is judged again on its own: the
    # whitelist costs no honest student the credit for structure and speed.
    assert len([r for r in RIGHT if r[3]]) >= 15 and len([r for r in RIGHT if not r[3]]) >= 12
    (vt.kernel_definitions if kernel else vt.answer_definitions)([text], name)


HEAD = "import numpy as np\nfrom numba import cuda\nimport gpuperf as gp\nco = gp.coalescing\n"
BODY = "    i = cuda.grid(1)\n    out[i] = x[i]\n"


def _defs(body=BODY, head="", params="x, out", decorator="@cuda.jit"):
    return [HEAD + head, f"{decorator}\ndef k({params}):\n{body}"]


@pytest.mark.parametrize("why,cells", [
    ("opens a file", _defs("    open('/tmp/x', 'w')\n")),
    ("imports in the body", _defs("    import os\n")),
    ("a dunder attribute", _defs("    y = x.__class__\n")),
    ("an array's ctypes", _defs("    p = x.ctypes\n")),
    ("format reaches attributes", _defs("    s = '{0.__class__}'.format(x)\n")),
    ("np.load runs pickles", _defs("    np.load('a.npy')\n")),
    ("a NumPy function that is no ufunc", _defs("    np.save('a', x)\n")),
    ("getattr", _defs("    getattr(x, 'shape')\n")),
    ("eval", _defs("    eval('1')\n")),
    ("a lambda", _defs("    f = lambda: 0\n")),
    ("a comprehension", _defs("    s = [v for v in range(3)]\n")),
    ("the course's kernel", _defs("    co.scale_rows_uncoalesced(x, x, out)\n")),
    ("the grader's machinery", _defs("    y = gp.exercises.GRADE_LOG\n")),
    ("a module's module", _defs("    y = np.lib.format.os\n")),
    ("a default argument", _defs(params="x, out, n=print('hi')")),
    ("a host function's constant", _defs(head="def f():\n    return 3\nN = f()\n",
                                         body="    out[0] = N\n")),
    ("a constant from a loop", _defs(head="for N in range(3):\n    pass\n",
                                     body="    out[0] = N\n")),
    ("a signature that runs code", _defs(decorator="@cuda.jit(\"void(__import__('os'))\")")),
    ("an option that runs code", _defs(decorator="@cuda.jit(device=print('x'))")),
    ("another decorator", _defs(decorator="@cuda.jit\n@staticmethod")),
    ("not a kernel", [HEAD, "def k(x, out):\n" + BODY]),
    ("a try block", _defs("    try:\n        out[0] = 1\n    except Exception:\n        pass\n")),
    ("a global statement", _defs("    global Q\n    Q = 1\n")),
    ("a with block", _defs("    with open('x') as f:\n        pass\n")),
    ("an attribute store", _defs("    x.shape = 3\n")),
    ("a module attribute store", _defs("    np.pi = 3\n")),
    ("a name defined nowhere", _defs("    out[0] = NOWHERE\n")),
    ("a stub", _defs("    # YOUR CODE HERE\n    raise NotImplementedError()\n")),
    ("a factory that imports", [HEAD, "def k(t):\n    import os\n    @cuda.jit\n"
                                      "    def g(x):\n        x[0] = t\n    return g\n"]),
    ("a factory that calls out", [HEAD, "def k(t):\n    s = open('x')\n    @cuda.jit\n"
                                        "    def g(x):\n        x[0] = t\n    return g\n"]),
    ("a factory with a loop", [HEAD, "def k(t):\n    for i in range(t):\n        pass\n"
                                     "    @cuda.jit\n    def g(x):\n        x[0] = t\n"
                                     "    return g\n"]),
    ("a factory's kernel calls a closure", [HEAD, "def k(t):\n    f = print\n    @cuda.jit\n"
                                                  "    def g(x):\n        f(x)\n    return g\n"]),
    ("a decorated factory", [HEAD, "@staticmethod\ndef k(t):\n    @cuda.jit\n"
                                   "    def g(x):\n        x[0] = t\n    return g\n"]),
])
def test_code_that_could_reach_beyond_the_kernel_is_not_vetted(why, cells):
    with pytest.raises(vt.NotVetted):
        vt.kernel_definitions(cells, "k")


def test_what_a_kernel_needs_comes_along_and_nothing_else():
    cells = [HEAD + "TILE = 16\nBLOCK, EXTRA = co.REMAP_BLOCK, 2\nimport os\nos.remove('x')\n",
             "@cuda.jit(device=True)\ndef half(v):\n    return v * np.float32(0.5)\n",
             "@cuda.jit\ndef k(x, out):\n    t = cuda.shared.array(TILE, np.float32)\n"
             "    i = cuda.grid(1)\n    if i < x.size:\n        out[i] = half(x[i]) + BLOCK\n",
             "answer = k\nprint('other work of the student')\n"]
    code = vt.kernel_definitions(cells, "answer")
    for needed in ("TILE = 16", "BLOCK, EXTRA = ", "def half", "def k", "answer = k",
                   "from numba import cuda", "import numpy as np", "co = gp.coalescing",
                   "import gpuperf as gp"):
        assert needed in code, (needed, code)
    for left in ("import os", "os.remove", "print("):
        assert left not in code, (left, code)
    assert code.index("import gpuperf as gp") < code.index("co = gp.coalescing")
    assert code.index("TILE = 16") < code.index("def k")


def test_a_function_that_makes_a_kernel_is_vetted_with_its_values():
    cells = [HEAD, "def make(tile, factor):\n    \"\"\"Doc.\"\"\"\n    shape = (tile, tile + 1)\n"
                   "    @cuda.jit\n    def k(x):\n        s = cuda.shared.array(shape, np.float32)\n"
                   "        x[0] = s[0, 0] * factor + x.shape[0]\n    return k\n"]
    code = vt.kernel_definitions(cells, "make")
    assert "def make(tile, factor)" in code and "def k(x)" in code
    assert vt.is_kernel_definition(cells, "make")


HOST = HEAD + "red = gp.reduce\n"


def _host(body, params="x, out"):
    return [HOST, f"def f({params}):\n{body}"]


@pytest.mark.parametrize("why,cells", [
    ("opens a file", _host("    open('/tmp/x', 'w')\n")),
    ("imports in the body", _host("    import os\n")),
    ("a dunder attribute", _host("    return x.__class__\n")),
    ("a dunder name", _host("    return __builtins__\n")),
    ("an array's ctypes", _host("    return x.ctypes\n")),
    ("format reaches attributes", _host("    return '{0.__class__}'.format(x)\n")),
    ("np.load runs pickles", _host("    return np.load('a.npy')\n")),
    ("np.save writes a file", _host("    np.save('a', x)\n")),
    ("an array's tofile", _host("    x.tofile('/tmp/x')\n")),
    ("getattr", _host("    return getattr(x, 'shape')\n")),
    ("type", _host("    return type(x)\n")),
    ("vars", _host("    return vars()\n")),
    ("eval", _host("    eval('1')\n")),
    ("a comprehension's name leaks no builtin", _host(
        "    [0 for open in range(1)]\n    return open('/etc/passwd')\n")),
    ("a lambda's parameter leaks no builtin", _host(
        "    g = lambda open: 0\n    return open('x')\n")),
    ("a module as a value", _host("    m = np\n    return m.load('x')\n")),
    ("a checker", _host("    return red.check_absmax(x)\n")),
    ("a chapter's submodule", _host("    return red.checks.plan('v8', 4)\n")),
    ("the grader's machinery", _host("    return gp.exercises.GRADE_LOG\n")),
    ("the records' machinery", _host("    return gp.records.run('x')\n")),
    ("a course class", _host("    return gp.records.Result\n")),
    ("an attribute store", _host("    x.shape = 3\n")),
    ("a module attribute store", _host("    np.pi = 3\n")),
    ("a store into a module's value", _host("    red.SIMULATOR[0] = 1\n")),
    ("a global statement", _host("    global Q\n    Q = 1\n")),
    ("a try block", _host("    try:\n        pass\n    except Exception:\n        pass\n")),
    ("a with block on a file", _host("    with open('x') as h:\n        pass\n")),
    ("a del statement", _host("    del x\n")),
    ("a nested function", _host("    def g():\n        return open('x')\n    return g\n")),
    ("a class", [HOST, "class f:\n    pass\n"]),
    ("a default that runs code", _host("    return x\n", params="x, out=open('x')")),
    ("numba.cuda's internals", _host("    return cuda.cudadrv.driver\n")),
    ("a raw stream", _host("    return cuda.external_stream(0)\n")),
    ("a value of the notebook that calls out", [HOST + "V = open('x')\n",
                                               "def f(x):\n    return V\n"]),
    ("a stub", _host("    # YOUR CODE HERE\n    raise NotImplementedError()\n")),
])
def test_host_code_that_could_reach_beyond_the_function_is_not_vetted(why, cells):
    with pytest.raises(vt.NotVetted):
        vt.answer_definitions(cells, "f")


def test_a_host_function_comes_with_its_kernels_cache_and_helpers_only():
    cells = [HOST + "BLOCK = 256\ncache = {}\nimport os\n",
             "@cuda.jit\ndef k(x, out, n):\n    i = cuda.grid(1)\n    if i < n:\n"
             "        out[i] = abs(x[i])\n",
             "def grid_for(n):\n    return max(1, min(gp.device.sm_count(default=2) * 4, "
             "-(-n // BLOCK)))\n",
             "def f(x):\n    n = x.shape[0]\n    g = grid_for(n)\n"
             "    if g not in cache:\n        cache[g] = cuda.device_array(n, np.float32)\n"
             "    out = cache[g]\n    s = cuda.stream()\n    with s.auto_synchronize():\n"
             "        k[g, BLOCK, s](x, out, n)\n"
             "    vals = sorted((v for v in out.copy_to_host()), key=lambda v: -v)\n"
             "    return float(vals[0]) if vals else 0.0\n",
             "os.remove('x')\nprint('other work')\n"]
    code = vt.answer_definitions(cells, "f")
    for needed in ("BLOCK = 256", "cache = {}", "def k(", "def grid_for(", "def f(",
                   "import gpuperf as gp", "from numba import cuda"):
        assert needed in code, (needed, code)
    for left in ("import os", "os.remove", "print("):
        assert left not in code, (left, code)
    # a kernel exercise's vetting stays strict: a plain function is no kernel
    with pytest.raises(vt.NotVetted):
        vt.kernel_definitions(cells, "f")


def test_a_checker_cell_with_more_names_judges_with_the_checker_defaults():
    text = "co.check_best_factor(read_sweep, sweep);"
    assert vt.answer_checker_call(text) == ("co", "check_best_factor", "read_sweep", ("sweep",))
    assert vt.kernel_checker_call(text) is None
    assert vt.without_arguments(text, 1).strip() == "co.check_best_factor(read_sweep);"
    with pytest.raises(ValueError, match="count=1"):
        vt.without_arguments("co.check_x(f);", 1)


def test_bad_arguments_are_refused_by_name():
    with pytest.raises(TypeError, match="cells"):
        vt.kernel_definitions("x = 1", "k")
    with pytest.raises(ValueError, match="name="):
        vt.kernel_definitions(["x = 1"], "not a name")


# -- graded as an instructor would: a forged notebook, judged again on the kernel alone

SOLUTION = ("@cuda.jit\ndef scale_rows(x, w, out):\n    ### BEGIN SOLUTION\n"
            "    i = cuda.grid(1)\n    rows, cols = x.shape\n    if i < rows * cols:\n"
            "        r, c = i // cols, i % cols\n        out[r, c] = x[r, c] * w[r]\n"
            "    ### END SOLUTION\n")
UNCOALESCED = ("@cuda.jit\ndef scale_rows(x, w, out):\n    i = cuda.grid(1)\n"
               "    rows, cols = x.shape\n    if i < rows * cols:\n"
               "        r, c = i % rows, i // rows\n        out[r, c] = x[r, c] * w[r]\n")
# The same, with a constant the grader does not run on its own (a generator expression).
UNVETTED = "STEP = tuple(1 for _ in range(1))[0]\n" + UNCOALESCED.replace(
    "i = cuda.grid(1)", "i = cuda.grid(1) * STEP")
# A cell after the checker that finds the verdict log in IPython's history and appends a
# verdict with every case passed: no name of the grader's machinery in it.
FORGE = """import json, re
p = re.findall(r"'([^']*verdicts-[0-9a-f]+[.]jsonl)'", "\\n".join(In))[-1]
e = json.loads(open(p).read().splitlines()[-1])
e["cases"] = [[c[0], True, c[2], c[3]] for c in e["cases"]]
e.update(passed=len(e["cases"]), failed=0, points=e["possible"], first_failure="")
open(p, "a").write(json.dumps(e) + "\\n")
"""


@pytest.fixture(scope="module")
def class_graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rejudge")
    source = tmp / "course" / "solutions"
    source.mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
                    "import numpy as np\nfrom numba import cuda\nimport gpuperf as gp\n"
                    "co = gp.coalescing", id="setup"),
                nbformat.v4.new_code_cell(SOLUTION, id="answer"),
                nbformat.v4.new_code_cell("co.check_remap(scale_rows);", id="check")]
    nbformat.write(nb, source / "02_demo.ipynb")
    copy = assign.assign(source, tmp / "student")[0]
    subs = tmp / "subs"
    for student, answer, forge in [("right", SOLUTION, False), ("forged", UNCOALESCED, True),
                                   ("unvetted", UNVETTED, True), ("honest", UNCOALESCED, False),
                                   ("stub", None, False)]:
        sub = nbformat.read(copy, as_version=4)
        if answer is not None:
            next(c for c in sub.cells if c.get("id") == "answer").source = answer
        if forge:
            sub.cells.append(nbformat.v4.new_code_cell(FORGE))
        (subs / student).mkdir(parents=True)
        nbformat.write(sub, subs / student / "02_demo.ipynb")
    rows = grade.grade(subs, source=source, cell_timeout=120, progress=None, hidden_seed=91,
                       jobs=2, limits=sandbox.Limits(memory_bytes=2 * sandbox.GIB))
    return {r["student"]: r for r in rows}


def test_a_right_kernel_is_judged_again_and_keeps_full_marks(class_graded):
    r = class_graded["right"]
    assert (r["status"], r["score"]) == ("graded", 1.0), r


def test_a_forged_verdict_does_not_reach_the_judgement_of_the_kernel(class_graded):
    honest, forged = class_graded["honest"], class_graded["forged"]
    # The uncoalesced kernel's outputs are right; its coalescing case fails, forged or not.
    assert 0 < honest["score"] < 1, honest
    assert forged["score"] == honest["score"], (forged, honest)
    assert "Judged again on your function's code alone" in forged["detail"], forged["detail"]


def test_a_kernel_the_grader_cannot_run_alone_earns_no_structure_or_speed(class_graded):
    r = class_graded["unvetted"]
    assert r["score"] <= class_graded["honest"]["score"], r
    assert "Not judged again apart from your notebook" in r["detail"], r["detail"]
    assert "generator" in r["detail"].lower() or "GeneratorExp" in r["detail"], r["detail"]


def test_a_stub_is_not_implemented(class_graded):
    assert class_graded["stub"]["status"] == "not implemented"
    assert class_graded["stub"]["score"] == 0


def test_the_judge_notebook_holds_only_vetted_code_and_the_course_checker():
    source = nbformat.read(ROOT / "solutions" / "02_coalescing.ipynb", as_version=4)
    graded = nbformat.read(ROOT / "solutions" / "02_coalescing.ipynb", as_version=4)
    for c in graded.cells:
        if c.cell_type == "code" and "def scale_rows" in c.source:
            c.source += "\nimport os\nos.system('echo hi')\n"
    nb, why = grade.judge_notebook(graded, source)
    assert not why, why
    text = "\n".join(c.source for c in nb.cells)
    assert "os.system" not in text and "def scale_rows" in text
    checks = dict(checker_cells(source))
    assert [c.id for c in nb.cells if c.id in checks] == list(grade.kernel_exercises(source))


def test_the_guide_counts_the_exercises_it_judges_again():
    guide = " ".join((ROOT / "book" / "instructors.md").read_text().split())
    m = re.search(r"\((\d+) of the course's exercises: (\d+) kernels, or functions that make "
                  r"one, and (\d+) host functions\)", guide)
    assert m, "the guide no longer says how many exercises are judged again"
    assert [int(x) for x in m.groups()] == [len(KERNEL_EXERCISES) + len(HOST_EXERCISES),
                                           len(KERNEL_EXERCISES), len(HOST_EXERCISES)]


# -- a host-function exercise whose answers the grader does not record, graded as a class

COMMAND = ("def profile_command(kernel, metrics, program):\n    ### BEGIN SOLUTION\n"
           "    return ([\"ncu\", \"--clock-control\", \"none\", \"-k\", f\"regex:^{kernel}\\\\[\",\n"
           "             \"--launch-skip\", \"1\", \"--launch-count\", \"1\",\n"
           "             \"--metrics\", \",\".join(metrics)] + list(program))\n"
           "    ### END SOLUTION\n")
# Right but for the clocks: every case fails.
WRONG_COMMAND = COMMAND.replace('"--clock-control", "none", ', "")
# Right, written with getattr: the grader cannot run it on its own.
UNVETTED_COMMAND = COMMAND.replace('",".join(metrics)', 'getattr(",", "join")(metrics)')


@pytest.fixture(scope="module")
def host_class_graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rejudge_host")
    source = tmp / "course" / "solutions"
    source.mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import gpuperf as gp\ndbg = gp.debugging",
                                          id="setup"),
                nbformat.v4.new_code_cell(COMMAND, id="answer"),
                nbformat.v4.new_code_cell("dbg.check_profile_command(profile_command);",
                                          id="check")]
    nbformat.write(nb, source / "09_demo.ipynb")
    copy = assign.assign(source, tmp / "student")[0]
    subs = tmp / "subs"
    for student, answer, forge in [("right", COMMAND, False), ("forged", WRONG_COMMAND, True),
                                   ("honest", WRONG_COMMAND, False),
                                   ("unvetted", UNVETTED_COMMAND, False),
                                   ("unvetted_forged", UNVETTED_COMMAND.replace(
                                       '"none", ', ""), True)]:
        sub = nbformat.read(copy, as_version=4)
        next(c for c in sub.cells if c.get("id") == "answer").source = answer
        if forge:
            sub.cells.append(nbformat.v4.new_code_cell(FORGE))
        (subs / student).mkdir(parents=True)
        nbformat.write(sub, subs / student / "09_demo.ipynb")
    rows = grade.grade(subs, source=source, cell_timeout=120, progress=None, hidden_seed=93,
                       jobs=2, limits=sandbox.Limits(memory_bytes=2 * sandbox.GIB))
    return {r["student"]: r for r in rows}


def test_a_host_function_is_judged_again_and_a_forged_verdict_does_not_reach_it(
        host_class_graded):
    g = host_class_graded
    assert (g["right"]["status"], g["right"]["score"]) == ("graded", 1.0), g["right"]
    assert g["honest"]["score"] == 0, g["honest"]
    # The forged log says every case passed; the judgement on the function alone says not.
    assert g["forged"]["score"] == 0, g["forged"]
    assert "Judged again on your function's code alone" in g["forged"]["detail"]


def test_a_host_function_the_grader_cannot_run_alone_goes_to_review_with_nothing_earned(
        host_class_graded):
    for student in ("unvetted", "unvetted_forged"):
        r = host_class_graded[student]
        assert (r["status"], r["score"]) == ("review", 0), r
        assert "Not judged again apart from your notebook" in r["detail"], r["detail"]
        assert "getattr" in r["detail"], r["detail"]
