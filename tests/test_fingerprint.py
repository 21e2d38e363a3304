"""The fingerprint of an experiment changes with the code it runs, and only with that code.

A toy chapter package is written to a temporary folder, fingerprinted, edited one definition at a
time and fingerprinted again (a fresh import each time)."""

from __future__ import annotations

import importlib
import linecache
import sys
import textwrap

import pytest

from gpuperf import fingerprint

KERNELS = '''
import functools

TPB = 128


class Dispatcher:  # stands in for a Numba kernel: the function it compiles is py_func
    def __init__(self, fn):
        self.py_func = fn


def _kernel(x):
    return x + 1


kernel = Dispatcher(_kernel)


@functools.lru_cache(maxsize=None)
def make_kernel(scale):
    def scaled(x):
        return x * scale
    return Dispatcher(scaled)


def launched_in_another_process():
    return "profiled"


def wrapper(x):
    return kernel.py_func(x) * TPB


def unrelated_wrapper(x):
    return x - 1
'''

EXPERIMENTS = '''
from . import kernels as k

VERSIONS = {"plain": k.wrapper}
LAUNCHES = {"other": "launched_in_another_process"}


def helper(x):
    return VERSIONS["plain"](x)


def experiment(progress):
    from .kernels import make_kernel
    return [helper(1), make_kernel(2), "toyfp.kernels:launched_in_another_process"]


def another_experiment(progress):
    return [k.unrelated_wrapper(1)]
'''


def _fingerprints(tmp_path, kernels=KERNELS, experiments=EXPERIMENTS) -> dict:
    package = tmp_path / "toyfp"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "kernels.py").write_text(textwrap.dedent(kernels))
    (package / "experiments.py").write_text(textwrap.dedent(experiments))
    for name in [m for m in sys.modules if m == "toyfp" or m.startswith("toyfp.")]:
        del sys.modules[name]
    importlib.invalidate_caches()
    linecache.clearcache()
    sys.path.insert(0, str(tmp_path))
    try:
        module = importlib.import_module("toyfp.experiments")
        return {name: fingerprint.fingerprint(getattr(module, name), prefix="toyfp")
                for name in ("experiment", "another_experiment")}
    finally:
        sys.path.remove(str(tmp_path))


def _edit(text, old, new):
    assert old in text
    return text.replace(old, new)


@pytest.mark.parametrize("what, old, new", [
    ("a kernel reached through a dispatcher and a table", "return x + 1", "return x + 2"),
    ("a constant the wrapper reads", "TPB = 128", "TPB = 256"),
    ("a kernel built by a cached factory imported inside the function", "return x * scale",
     "return x * scale * 2"),
    ("a launch named by a 'module:function' string", 'return "profiled"', 'return "other"'),
])
def test_an_edit_to_what_the_experiment_runs_changes_its_fingerprint(tmp_path, what, old, new):
    before = _fingerprints(tmp_path)
    after = _fingerprints(tmp_path, kernels=_edit(KERNELS, old, new))
    assert after["experiment"] != before["experiment"], what
    assert after["another_experiment"] == before["another_experiment"], what


def test_an_edit_elsewhere_in_the_same_files_changes_nothing_it_does_not_run(tmp_path):
    before = _fingerprints(tmp_path)
    after = _fingerprints(tmp_path, kernels=_edit(KERNELS, "return x - 1", "return x - 3"))
    assert after["experiment"] == before["experiment"]
    assert after["another_experiment"] != before["another_experiment"]
    # a comment outside every definition, and a new function nobody calls
    after = _fingerprints(tmp_path, kernels="# a comment\n" + KERNELS + "\ndef new():\n    pass\n")
    assert after == before


@pytest.mark.parametrize("what, old, new", [
    ("a corrected comment", "# stands in for a Numba kernel", "# plays a Numba kernel's part"),
    ("a new docstring", "def _kernel(x):\n", 'def _kernel(x):\n    """Adds one — to x."""\n'),
    ("a docstring of a function built by a factory",
     "def scaled(x):\n", 'def scaled(x):\n        """x times scale."""\n'),
    ("a comment after code, and blank lines", "return x + 1", "\n\n    return x + 1  # plus one"),
])
def test_comments_and_docstrings_change_no_fingerprint(tmp_path, what, old, new):
    # They are not what the GPU runs: correcting one must not make a record "earlier code".
    before = _fingerprints(tmp_path)
    assert _fingerprints(tmp_path, kernels=_edit(KERNELS, old, new)) == before, what


def test_code_text_keeps_strings_that_look_like_comments_or_docstrings():
    source = ('def f(x):  # why\n    """Doc."""\n    s = "# kept"\n    t = """kept too"""\n'
              '    return s + t  # é\n')
    assert fingerprint.code_text(source) == ('def f(x):\n    s = "# kept"\n'
                                             '    t = """kept too"""\n    return s + t')
    # a string that changes is code that changes
    assert fingerprint.code_text(source) != fingerprint.code_text(source.replace("kept", "gone"))


def test_the_experiments_own_helpers_and_tables_count(tmp_path):
    before = _fingerprints(tmp_path)
    edited = _edit(EXPERIMENTS, 'LAUNCHES = {"other": "launched_in_another_process"}', "")
    assert _fingerprints(tmp_path, experiments=edited) == before  # a table nothing reads
    edited = _edit(EXPERIMENTS, 'return VERSIONS["plain"](x)', 'return VERSIONS["plain"](x) + 0')
    assert _fingerprints(tmp_path, experiments=edited)["experiment"] != before["experiment"]


def test_the_course_kernels_are_fingerprinted_by_what_they_run():
    """On the real package: the reduce ladder reaches its rungs' kernels, and a launch table's
    bare names (``"_transpose_launch"``) reach the function that Nsight Compute runs."""
    from gpuperf import records

    parts = fingerprint.code_parts(records.get("reduce_ladder").fn)
    assert any(k.startswith("gpuperf.kernels.reduce.kernels.") for k in parts)
    assert not any(".checks." in k or ".figures." in k for k in parts)
    parts = fingerprint.code_parts(records.get("profiling_transpose").fn)
    assert "gpuperf.kernels.coalescing.profiling._transpose_launch" in parts
    assert any(k.startswith("gpuperf.kernels.coalescing.kernels.") for k in parts)


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="fn must be a function"):
        fingerprint.fingerprint(3)
    with pytest.raises(ValueError, match="prefix=''"):
        fingerprint.code_parts(print, prefix="")


SCRIPT = r"""
import inspect, json
import gpuperf
from gpuperf import fingerprint, records
print("FP" + json.dumps({n: fingerprint.fingerprint(inspect.unwrap(e.fn))
                         for n, e in records.experiments().items()}))
"""


def test_the_fingerprint_is_the_same_with_or_without_a_gpu():
    """A record is made on a GPU and replayed in the simulator: an experiment's fingerprint
    must not read what differs between them (``SIMULATOR``, imported from gpuperf.mode, is a
    constant the code reads but does not write). Compile mode stands in for the GPU here."""
    import inspect
    import json
    import os
    import subprocess
    import sys

    from gpuperf import records

    env = {**os.environ, "GPUPERF_MODE": "compile"}
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    r = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env,
                       timeout=600)
    line = next((ln for ln in r.stdout.splitlines() if ln.startswith("FP")), None)
    assert line, r.stderr[-3000:]
    elsewhere = json.loads(line[2:])
    here = {n: fingerprint.fingerprint(inspect.unwrap(e.fn))
            for n, e in records.experiments().items()}
    assert elsewhere == here, sorted(n for n in here if here[n] != elsewhere.get(n))


def test_an_imported_constant_counts_where_it_is_written(tmp_path):
    before = _fingerprints(tmp_path)
    # experiments.py reads TPB through the kernels module: a change there still counts
    edited = _edit(EXPERIMENTS, "from . import kernels as k",
                   "from . import kernels as k\nfrom .kernels import TPB")
    edited = _edit(edited, "return [k.unrelated_wrapper(1)]", "return [k.unrelated_wrapper(TPB)]")
    first = _fingerprints(tmp_path, experiments=edited)
    changed = _fingerprints(tmp_path, kernels=_edit(KERNELS, "TPB = 128", "TPB = 64"),
                            experiments=edited)
    assert changed["another_experiment"] != first["another_experiment"]
    # one from outside the chapters (the mode the course runs in) does not
    outside = _edit(EXPERIMENTS, "from . import kernels as k", "from . import kernels as k\nfrom math import pi")
    outside = _edit(outside, "return [k.unrelated_wrapper(1)]", "return [k.unrelated_wrapper(pi)]")
    assert _fingerprints(tmp_path, experiments=outside)["another_experiment"] == _fingerprints(
        tmp_path, experiments=_edit(outside, "from math import pi", "from math import e as pi")
    )["another_experiment"]
    assert before["experiment"] == first["experiment"]
