"""An answer that hands the exercise to the course's own solution (``red.reduce_sum``,
``st.ideal_ms``, ``g.moved_bytes``, ...) fails on one line, however it reaches it; a comment
or a string that names the function, or a course helper the task allows, does not."""

import functools
import types

import numpy as np
import pytest
from numba import cuda

import gpuperf as gp
from gpuperf import exercises as ex
from gpuperf.kernels import coarsening as cz
from gpuperf.kernels import dram
from gpuperf.kernels import gdn as g
from gpuperf.kernels import matmul as mm
from gpuperf.kernels import reduce as red
from gpuperf.kernels import streams as st

FORBIDDEN = ex._resolve_names(("reduce_sum", "make_v8", "gpuperf.kernels.dram:DramLayout",
                               "gpuperf.kernels.dram:DramLayout.locate_element"),
                              "gpuperf.kernels.reduce")


def direct(d_x):
    return red.reduce_sum(d_x, "v8")


SUM = red.reduce_sum


def through_an_alias(d_x):
    return SUM(d_x)


def _helper(x):
    return gp.kernels.reduce.reduce_sum(x)


def through_a_helper(d_x):
    return _helper(d_x)


def through_an_import(d_x):
    from gpuperf.kernels.reduce import reduce_sum as total

    return total(d_x)


def a_factory(block):
    def inner():
        return red.make_v8(block)

    return inner()


LAYOUT = dram.DramLayout(32, 4, 8)


def a_method_of_an_instance(index, element_bytes, burst_bytes, channels, banks):
    return LAYOUT.locate_element(index, element_bytes)


def a_closure():
    fn = red.reduce_sum

    def answer(d_x):
        return fn(d_x)

    return answer


def only_mentions_it(d_x):
    # red.reduce_sum(d_x) would be the course's answer; "reduce_sum" in a string is fine
    note = "red.reduce_sum"
    return float(np.sum(d_x.copy_to_host())) + 0 * len(note)


def uses_allowed_helpers(d_x):
    n = d_x.shape[0]
    return red.head_elements(d_x, n) + gp.device.sm_count(default=2)


@cuda.jit
def own_kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = red.warp_sum(x[i])


class _CallsIt:
    def __call__(self, d_x):
        return red.reduce_sum(d_x)


class _HoldsIt:
    def __init__(self):
        self.fn = red.reduce_sum

    def __call__(self, d_x):
        return self.fn(d_x)


@pytest.mark.parametrize("fn,expected", [
    (direct, "reduce_sum"), (through_an_alias, "reduce_sum"), (through_a_helper, "reduce_sum"),
    (through_an_import, "reduce_sum"), (a_factory, "make_v8"),
    (a_method_of_an_instance, "locate_element"), (a_closure(), "reduce_sum"),
    # hostile23 item 5: callables without code of their own, and a copy of the course's code
    (functools.partial(red.reduce_sum), "reduce_sum"), (functools.partial(direct), "reduce_sum"),
    (_CallsIt(), "reduce_sum"), (_HoldsIt(), "reduce_sum"), (LAYOUT.locate_element, "locate_element"),
    (types.FunctionType(red.reduce_sum.__code__, vars(red)), "reduce_sum"),
    (functools.partial(red.make_v8.__wrapped__, 256), "make_v8"),
])
def test_every_way_of_reaching_the_answer_is_seen(fn, expected):
    assert ex._borrowed(fn, FORBIDDEN).endswith(expected)


@pytest.mark.parametrize("fn", [only_mentions_it, uses_allowed_helpers, own_kernel,
                                functools.partial(uses_allowed_helpers)])
def test_comments_strings_and_allowed_helpers_count_for_nothing(fn):
    assert ex._borrowed(fn, FORBIDDEN) is None


def _fails_as_borrowed(report, name):
    assert not report.passed
    assert report.failed and "the course's own answer" in report.failed[0][1], report.failed
    assert name in report.failed[0][1]


def test_each_checker_refuses_the_course_answer(capsys):
    def my_absmax(d_x):
        return red.reduce_sum(d_x)

    def predict_ms(h2d_ms, kernel_ms, d2h_ms, n_streams):
        return st.ideal_ms(h2d_ms, kernel_ms, d2h_ms, n_streams)

    def must_move(method, n_ch, n_samples):
        return g.moved_bytes(method, n_ch, n_samples)

    def loads_needed(ceiling_gbps, latency_ns, warps_per_sm, sm_count, bytes_per_load):
        return dram.loads_per_thread_needed(ceiling_gbps, latency_ns, warps_per_sm, sm_count,
                                            bytes_per_load)

    def intensity_and_bound(M, N, K, tile, bw_gbps, peak_tflops):
        ai = mm.intensity("tiled", M, N, K, tile)
        return ai, min(peak_tflops, bw_gbps * ai / 1e3)

    def make_my_tiled(tile):
        return mm.make_tiled(tile)

    def make_my_coarsened(tile, factor):
        return cz.make_coarsened(tile, factor)

    def my_pipeline(a, b, out, n_streams, n_chunks):
        return st.pipelined(a, b, out, n_streams=n_streams, n_chunks=n_chunks)

    cases = [(red.check_absmax, my_absmax, "reduce_sum"),
             (st.check_predict, predict_ms, "ideal_ms"),
             (g.check_moved_bytes, must_move, "moved_bytes"),
             (dram.check_loads_needed, loads_needed, "loads_per_thread_needed"),
             (mm.check_intensity, intensity_and_bound, "intensity"),
             (mm.check_tiled, make_my_tiled, "make_tiled"),
             (cz.check_coarsened, make_my_coarsened, "make_coarsened"),
             (st.check_pipeline, my_pipeline, "pipelined")]
    for check, answer, name in cases:
        _fails_as_borrowed(check(answer), name)
    assert capsys.readouterr().out.count("the course's own answer") == len(cases)


def test_a_misspelt_course_name_is_the_course_bug():
    @ex.refuses_stubs(solved_by=("no_such_function",))
    def check_x(fn):
        """A checker."""
        return ex.Checker("x").report()

    def answer():
        return 1

    with pytest.raises(AttributeError):
        check_x(answer)


def test_every_checkers_course_answers_exist():
    import importlib

    names = 0
    for mod in ("gridstride", "coalescing", "dram", "matmul", "coarsening", "reduce", "streams",
                "gdn", "privatization"):
        module = importlib.import_module(f"gpuperf.kernels.{mod}")
        for attr in dir(module):
            solved_by = getattr(getattr(module, attr), "solved_by", ())
            if attr.startswith("check_") and solved_by:
                assert len(ex._resolve_names(solved_by, module.__name__)) >= len(solved_by)
                names += len(solved_by)
    assert names >= 20


# hostile23 item 5: what reading the code cannot see is caught while the check runs. The
# course's answers are tripwires then: any call the student's code makes to them, by any
# route, fails the check on the refusal's line; the checker's own calls, and a course helper
# the student may call that calls them inside, go through.
_NAME = "moved" + "_bytes"  # a name built at run time: the compiled code never reads it


def _dynamic(method, n_ch, n_samples):
    return getattr(g, _NAME)(method, n_ch, n_samples)


class _Dynamic:
    def __call__(self, method, n_ch, n_samples):
        return getattr(g.models, _NAME)(method, n_ch, n_samples)


def _swallows(method, n_ch, n_samples):
    try:
        return getattr(g, _NAME)(method, n_ch, n_samples)
    except BaseException:  # noqa: BLE001  (the student's code catching the tripwire)
        return 0


def _through_a_lambda():
    fetch = (lambda: getattr(g.models, _NAME))  # noqa: E731
    return lambda method, n_ch, n_samples: fetch()(method, n_ch, n_samples)


def _right(method, n_ch, n_samples):
    """A right answer that calls a course helper which itself calls the course's answer."""
    table = {r["method"]: r["moved_GB"] for r in g.memory_table(n_ch, n_samples)}
    return table[method] * 1e9


@pytest.mark.parametrize("answer", [_dynamic, _Dynamic(), _swallows, _through_a_lambda()],
                         ids=["getattr", "callable object", "swallows the tripwire", "lambda"])
def test_a_call_reading_cannot_see_is_caught_while_the_check_runs(answer, capsys):
    code = g.models.moved_bytes.__code__
    assert ex._borrowed(answer, ex._resolve_names(g.check_moved_bytes.solved_by,
                                                  "gpuperf.kernels.gdn.checks")) is None
    _fails_as_borrowed(g.check_moved_bytes(answer), "moved_bytes")
    assert g.models.moved_bytes.__code__ is code  # put back after the check
    assert g.moved_bytes("fused", 64, 100) > 0
    assert not ex._WATCHED


def test_the_checkers_own_calls_and_allowed_helpers_pass_the_tripwires():
    """memory_table calls moved_bytes; a right answer built on it is not refused (here, a
    checker of this file that forbids only moved_bytes; its reference comes through the course
    too, as a course checker's own call does). A right answer the course's checker judges
    passes its tripwires: tests/test_chapter_solutions.py."""
    @ex.refuses_stubs(solved_by=("gpuperf.kernels.gdn.models:moved_bytes",))
    def check_table(fn):
        """A checker."""
        chk = ex.Checker("x")
        with chk.case("one"):
            chk.expect(fn("registers", 8, 1000) == g.memory_table(8, 1000)[3]["moved_GB"] * 1e9,
                       "differs")
        return chk.report(show=False)

    assert check_table(_right)
    assert ex._borrowed(_right, ex._resolve_names(("gpuperf.kernels.gdn.models:moved_bytes",),
                                                  "gpuperf.kernels.gdn")) is None


def test_the_audits_bypasses_are_refused(capsys):
    """hostile23 item 5: `must_move = _Bytes()` (a class whose __call__ calls the model) and
    `functools.partial(dr.channel_gbps)` got full marks."""
    from gpuperf.kernels.gdn import models as _m

    class _Bytes:
        def __call__(self, method, n_ch, n_samples):
            return _m.moved_bytes(method, n_ch, n_samples)

    _fails_as_borrowed(g.check_moved_bytes(_Bytes()), "moved_bytes")
    _fails_as_borrowed(dram.check_channel_gbps(functools.partial(dram.channel_gbps)),
                       "channel_gbps")


def test_a_package_installed_outside_site_packages_is_a_library_not_the_student(tmp_path,
                                                                                 monkeypatch):
    """A folder on sys.path that holds installed distributions (pip --target, as on the course's
    GPU machine) is library code: its frames are passed over when the tripwires ask who called,
    while a file in a plain folder (a notebook's cell, a test) is the student's."""
    import sys

    from gpuperf import exercises

    site = tmp_path / "site"
    (site / "somepkg").mkdir(parents=True)
    (site / "somepkg-1.0.dist-info").mkdir()
    plain = tmp_path / "work"
    plain.mkdir()
    monkeypatch.setattr(sys, "path", [*sys.path, str(site), str(plain)])
    exercises._whose_file.cache_clear()
    try:
        assert exercises._whose_file(str(site / "somepkg" / "core.py")) == "library"
        assert exercises._whose_file(str(plain / "cell.py")) == "student"
        assert exercises._whose_file(exercises.__file__) == "course"
    finally:
        exercises._whose_file.cache_clear()
