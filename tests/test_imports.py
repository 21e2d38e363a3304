"""The package's shape, read from its imports with ``ast`` (``gpuperf.depgraph``): no cycle, no
``_private`` name taken from another package, no arrow from a lower layer to a higher one, and
every chapter's ``kernels.py`` short enough to read. CONTRIBUTING.md names the layers."""

import textwrap

import pytest

from gpuperf import depgraph

GRAPH = depgraph.build()


def _where(imp):
    return f"{imp.source} line {imp.line} imports {imp.target}" + (
        f" ({', '.join(imp.names)})" if imp.names else "")


def test_no_import_cycle():
    assert GRAPH.cycles() == [], "import cycles (module level or inside functions)"


def test_no_private_name_crosses_a_package():
    assert [_where(i) for i in GRAPH.private_crossings()] == []
    assert [f"{u.source} line {u.line} reads {u.target}.{u.names[0]}"
            for u in GRAPH.private_attribute_crossings()] == []


def test_no_arrow_against_the_layers():
    assert [f"{_where(i)}: {depgraph.layer(i.source)} -> {depgraph.layer(i.target)}"
            for i in GRAPH.upward()] == []


def test_nothing_imports_the_package_facade():
    """``gpuperf/__init__`` reaches every module lazily; a module that imported it back would
    close a circle (the mode is ``gpuperf.mode``)."""
    assert [_where(i) for i in GRAPH.imports if i.target == "gpuperf"] == []


def test_every_chapter_is_a_package_with_a_short_kernels_module():
    chapters = {m.split(".")[2] for m in GRAPH.modules if m.startswith("gpuperf.kernels.")}
    assert chapters
    for name in sorted(chapters):
        path = GRAPH.modules.get(f"gpuperf.kernels.{name}")
        assert path is not None and path.name == "__init__.py", (
            f"gpuperf.kernels.{name} must be a package (a folder with __init__.py)")
        kernels = path.parent / "kernels.py"
        if name == "launch":  # chapter 7's launch tools, a name kept for the notebooks
            continue
        assert kernels.is_file(), f"{name}: no kernels.py"
        n = len(kernels.read_text(encoding="utf-8").splitlines())
        assert n <= 400, f"{kernels} has {n} lines; at most 400 (move the rest beside it)"


@pytest.fixture
def toy(tmp_path):
    """A package with one of each fault, to show that the checks can fail."""
    pkg = tmp_path / "gpuperf"
    files = {
        "__init__.py": "from .mode import MODE\n",
        "mode.py": "MODE = 'x'\n",
        "bench.py": "from . import records\n",
        "records.py": "def f():\n    from . import bench\n",          # a cycle, in a function
        "kernels/__init__.py": "",
        "kernels/a/__init__.py": "from .kernels import k\n",
        "kernels/a/kernels.py": ("from gpuperf.kernels.b.kernels import _secret\n"
                                 "from gpuperf import bench as b\nk = b._hidden\n"),
        "kernels/b/__init__.py": "",
        "kernels/b/kernels.py": "_secret = 2\nfrom gpuperf import MODE\n",  # the facade
        "validate.py": "from gpuperf import grade\n",                   # core -> classroom
        "grade.py": "",
    }
    for rel, text in files.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(textwrap.dedent(text))
    return depgraph.build(tmp_path)


def test_the_checks_find_each_fault_in_a_toy_package(toy):
    assert toy.cycles() == [["gpuperf.bench", "gpuperf.records"]]
    assert [(i.source, i.names) for i in toy.private_crossings()] == [
        ("gpuperf.kernels.a.kernels", ("_secret",))]
    assert [(u.source, u.target, u.names) for u in toy.private_attribute_crossings()] == [
        ("gpuperf.kernels.a.kernels", "gpuperf.bench", ("_hidden",))]
    up = {(i.source, i.target) for i in toy.upward()}
    assert ("gpuperf.validate", "gpuperf.grade") in up
    assert ("gpuperf.kernels.b.kernels", "gpuperf") in up
    assert toy.closure({"gpuperf.kernels.a"}) >= {"gpuperf.kernels.a.kernels",
                                                   "gpuperf.kernels.b.kernels", "gpuperf"}
    with pytest.raises(ValueError, match="holds no package"):
        depgraph.build(toy.modules["gpuperf"].parent / "kernels")


def test_a_closure_wants_a_set_of_module_names():
    with pytest.raises(TypeError, match="roots"):
        GRAPH.closure("gpuperf.bench")
