import math
import time

import numpy as np
import pytest
from numba import cuda

from gpuperf import exercises as ex


def test_sizes_around_a_block():
    assert ex.sizes_around(256) == [1, 31, 32, 33, 255, 256, 257, 775, 1000]


def test_random_arrays_are_offset_scaled_and_seeded():
    a, b = ex.random_array(1000, 3), ex.random_array(1000, 3)
    np.testing.assert_array_equal(a, b)
    assert a.dtype == np.float32 and not np.array_equal(a, ex.random_array(1000, 4))
    assert abs(a.mean()) > 1e-3  # not centred on zero by construction


def test_poisoned():
    assert np.isnan(ex.poisoned(4)).all()
    assert (ex.poisoned(3, np.int32) == np.iinfo(np.int32).min).all()


def test_compare_explains_unwritten_and_wrong_elements():
    ref = np.arange(5, dtype=np.float64) + 0.5
    assert ex.compare(ref.astype(np.float32), ref) is None
    got = ref.copy()
    got[3] = np.nan
    assert "1 of 5 output element(s) are NaN, first at index 3" in ex.compare(got, ref)
    got = ref.copy()
    got[2] = 9
    assert "first at index 2: got 9" in ex.compare(got, ref)
    assert "shape" in ex.compare(np.zeros(3), ref)


def test_checker_turns_exceptions_into_one_line(capsys):
    chk = ex.Checker("demo")
    with chk.case("ok"):
        chk.compare(np.ones(2), np.ones(2))
    with chk.case("boom"):
        [][1]
    with chk.case("todo"):
        raise NotImplementedError()
    report = chk.report()
    out = capsys.readouterr().out
    assert not report and "2 of 3 checks failed" in out
    assert "your code raised IndexError" in out and "bounds" in out
    assert "not implemented yet" in out and "Traceback" not in out


def test_passing_report_is_truthy(capsys):
    chk = ex.Checker("demo")
    with chk.case("a"):
        pass
    assert chk.report() and "all 1 checks passed" in capsys.readouterr().out


def test_empty_checker_does_not_pass():
    assert not ex.Checker("nothing ran").report(show=False)


def test_source_checks_read_code_not_text():
    from numba import cuda

    def f():
        # cuda.shfl_down_sync is named in this comment only
        cuda.syncthreads()
        return "cuda.atomic.add"

    chk = ex.Checker("src")
    assert chk.calls(f, "numba.cuda:syncthreads", why="needs a barrier")
    assert not chk.calls(f, "numba.cuda:shfl_down_sync", why="use a shuffle")
    assert chk.avoids(f, "numba.cuda:atomic.add", why="no atomics")
    assert not chk.avoids(f, "numba.cuda:syncthreads", why="no barrier")
    assert chk.report_.failed == [("source", "use a shuffle"), ("source", "no barrier")]


def test_is_kernel_rejects_plain_functions(capsys):
    chk = ex.Checker("k")
    assert not chk.is_kernel(lambda: None)
    assert "@cuda.jit" in chk.report().text()


@pytest.mark.parametrize("bad", [None, 3])
def test_is_kernel_rejects_non_callables(bad):
    assert not ex.Checker("k").is_kernel(bad)


def test_an_untouched_stub_gets_one_line_in_every_mode():
    """On a GPU a stub kernel (`raise NotImplementedError()`) runs and writes nothing; the
    checkers find the stub in the source's syntax tree before launching anything."""
    import gpuperf as gp

    def stub(x, out):
        # YOUR CODE HERE
        raise NotImplementedError()

    def mentions_it(x, out):
        # a comment saying raise NotImplementedError() is not a stub
        return "raise NotImplementedError"

    assert ex.is_stub(stub) and not ex.is_stub(mentions_it)
    for check in (gp.reduce.check_sequential_max, gp.gridstride.check_saxpy,
                  gp.coalescing.check_remap, gp.dram.check_loads_needed):
        report = check(stub)
        assert not report and len(report.failed) == 1
        assert "not implemented yet" in report.failed[0][1]


def test_an_unanswered_answer_dict_gets_one_line(capsys):
    """A top-level solution region leaves the answer's empty form (every value None) in the
    student copy: its checker says "not implemented yet", not a list of wrong values."""
    import gpuperf as gp

    kernels = [r["kernel"] for r in gp.records.run("profiling_speed_of_light", live=False).rows]
    answer = dict.fromkeys(kernels)
    report = gp.debugging.check_limiters(answer)
    assert not report and len(report.failed) == 1
    assert "not implemented yet" in report.failed[0][1]
    partly = dict(answer, **{kernels[0]: "DRAM"})
    assert "not implemented yet" not in " ".join(w for _, w in
                                                 gp.debugging.check_limiters(partly).failed)


def test_written_arguments_reads_stores_atomics_and_calls():
    from numba import cuda

    @cuda.jit
    def stores(x, y, z, w):
        i = cuda.grid(1)
        out = z[2:]          # a view of z, stored into below
        out[i] = x[i] + math.sqrt(y[i])   # one element of y is read, not y
        cuda.atomic.add(w, 0, 1)

    @cuda.jit
    def chained(a, b, c):
        a[0][1] = 1
        b[0], c[1] = 2, 3

    @cuda.jit
    def passes(a, b):
        helper(a[1:], b[0])  # noqa: F821 - a view may be written by the function it goes to

    assert ex.written_arguments(stores) == {2, 3}
    assert ex.written_arguments(chained) == {0, 1, 2}
    assert ex.written_arguments(passes) == {0}


def test_preflight_runs_a_second_interleaving():
    """With the access record off, a race still shows by its effect: the output changes when
    the threads run in another order. A barrier, or float atomics in another order, pass."""
    from numba import cuda, float32

    @cuda.jit
    def no_barrier(x, out):
        tile = cuda.shared.array(64, float32)
        t = cuda.threadIdx.x
        tile[t] = x[t]
        out[t] = tile[(t + 1) % 64]

    @cuda.jit
    def barrier(x, out):
        tile = cuda.shared.array(64, float32)
        t = cuda.threadIdx.x
        tile[t] = x[t]
        cuda.syncthreads()
        out[t] = tile[(t + 1) % 64]

    @cuda.jit
    def float_atomics(x, out):
        cuda.atomic.add(out, 0, x[cuda.grid(1)])

    x = np.random.default_rng(3).random(256).astype(np.float32)
    for kernel, grid, out, passes in ((no_barrier, 1, np.zeros(64, np.float32), False),
                                      (barrier, 1, np.zeros(64, np.float32), True),
                                      (float_atomics, 4, np.zeros(1, np.float32), True)):
        chk = ex.Checker("order")
        ex.preflight(chk, kernel, grid, 64, x, out, races=False, compile_targets=False)
        assert (not chk.report_.failed) == passes, (kernel, chk.report_.failed)
        if not passes:
            assert "out came out different" in chk.report_.failed[0][1]


def test_uses_sees_intrinsics_imported_by_name_on_the_real_target():
    # On a GPU, `from numba.cuda import syncthreads` binds numba.cuda.intrinsics.syncthreads;
    # the source checks must still see "numba.cuda:syncthreads" (found by a reviewer). The
    # simulator cannot import these names, so the real target runs in a process of its own.
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent("""
        import os
        os.environ["GPUPERF_MODE"] = "compile"; os.environ["NUMBA_ENABLE_CUDASIM"] = "0"
        import gpuperf  # noqa: F401
        from numba import cuda
        from numba.cuda import syncthreads, shfl_down_sync, atomic, shared
        from gpuperf import exercises as ex

        def k(x):
            s = shared.array(4, "float32")
            syncthreads()
            atomic.add(x, 0, shfl_down_sync(0xFFFFFFFF, x[0], 1) + s[0])

        kk = cuda.jit(k)
        names = ("numba.cuda:syncthreads", "numba.cuda:shfl_down_sync", "numba.cuda:atomic.add",
                 "numba.cuda:shared.array")
        print(all(ex.uses(kk, n) for n in names), ex.uses(kk, "numba.cuda:local.array"))
    """)
    env = {k: v for k, v in __import__("os").environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.stdout.strip().splitlines()[-1] == "True None", done.stdout + done.stderr


@pytest.mark.parametrize("student_ms,passes", [(2.0, True), (4.0, False)])
def test_a_speed_bar_compares_the_students_rate_with_the_ceiling_measured_now(
        monkeypatch, capsys, student_ms, passes):
    """The speed bars' engine, with the timings faked (no GPU here): a kernel that moves
    1 GB in 2 ms (500 GB/s) against a copy measured at 800 GB/s reaches 62% and passes a
    60% bar; at 4 ms (250 GB/s, 31%) it fails it, and the message names both rates."""
    from types import SimpleNamespace

    from gpuperf import bench

    monkeypatch.setattr(bench, "time_kernel", lambda run, **kw: SimpleNamespace(median_ms=student_ms))
    monkeypatch.setattr(ex, "_one_launch_s", lambda run: student_ms / 1e3)
    monkeypatch.setattr(bench, "measure_copy", lambda nbytes: SimpleNamespace(
        median_ms=2 * nbytes / 800e9 * 1e3))
    chk = ex.Checker("speed")
    got = ex.speed_against_copy(chk, lambda: None, 10**9, target=0.6, advice="keep loads in flight")
    assert got == pytest.approx((1e9 / student_ms / 1e6) / 800)
    assert bool(chk.report()) is passes
    out = capsys.readouterr().out
    assert "800 GB/s" in out and "of the device-to-device copy measured now" in out
    assert passes or "under the 60% bar: keep loads in flight" in out


def test_rounded_up_allows_the_floating_point_hair_at_a_whole_number():
    assert ex.rounded_up(20.4) == {21}
    assert ex.rounded_up(20.0) == {20, 21}  # a hair over 20 in floating point rounds up to 21
    assert ex.rounded_up(4096 * 1e9 * (500 * 1e-9) / (8 * 32 * 100 * 4)) == {20, 21}
    assert ex.rounded_up(19.999999) == {20}
    assert ex.rounded_up(20.0, rel=0.0) == {20}


def test_a_speed_under_its_bar_never_reads_as_equal_to_it():
    assert ex._percent_pair(0.0796, 0.08) == ("7.96%", "8.00%")
    assert ex._percent_pair(0.079, 0.08) == ("7.9%", "8.0%")
    assert ex._percent_pair(0.5, 0.35) == ("50%", "35%")
    assert ex._percent_pair(0.35, 0.35) == ("35%", "35%")  # at the bar: it passes


def _book_exercises():
    """(notebook, label, title, checker cell) of every exercise of the book."""
    import json
    import re

    from conftest import ROOT, checker_call

    out = []
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            m = re.search(r":::\{exercise\} (.+)\n(?:.*\n)*?:label: (ex-[\w-]+)",
                          "".join(cell["source"]))
            if m:
                out.append((path.stem, m.group(2), m.group(1).strip(),
                            checker_call(path.stem, m.group(2)).strip()))
    return out


def test_every_checker_knows_its_exercise_by_the_books_title():
    import re

    exercises = _book_exercises()
    assert len(exercises) >= 20
    for _notebook, label, title, call in exercises:
        name = re.search(r"\.(check_\w+)\(", call).group(1)
        entry = ex.BOOK_TITLES[name]
        book, when = entry if isinstance(entry, tuple) else (entry, {})
        assert book == title, (label, book, title)
        for key, value in when.items():  # the book's call is the one the title is for
            assert re.search(rf"{key}\s*=\s*{re.escape(repr(value))}|{key}\s*=\s*\"{value}\"",
                             call), (label, call)


@pytest.mark.parametrize("notebook,label,title,call", _book_exercises(),
                         ids=lambda v: v if str(v).startswith("ex-") else "")
def test_a_stub_verdict_names_the_exercise_as_the_book_does(notebook, label, title, call, capsys):
    """The student copy as it comes (every solution region stubbed): its verdict is titled as
    the book titles the exercise, with no checker function name and no reStructuredText."""
    from conftest import solution

    ns = solution(notebook, label, stubbed=True,
                  after={"ex-gdn-beta": ("ex-gdn-registers",)}.get(label, ()))
    ns.setdefault("sweep", None)  # the chapter's sweep: the recorded one stands in
    report = eval(call, ns)
    out = capsys.readouterr().out
    assert not report
    assert report.title == title, (report.title, title)
    text = report.text()
    assert "check_" not in text and "``" not in text and ":func:" not in text, text
    assert title in out


def test_a_slow_kernel_stops_the_speed_bar_after_one_launch(monkeypatch, capsys):
    """Issue 63: a wrong kernel that takes seconds per launch is not timed 24 times: its one
    launch decides, and the failure says the timing was stopped."""
    from types import SimpleNamespace

    from gpuperf import bench

    timed = []
    monkeypatch.setattr(ex, "_one_launch_s", lambda run: 4.0)
    monkeypatch.setattr(bench, "time_kernel", lambda run, **kw: timed.append(1))
    monkeypatch.setattr(bench, "measure_copy", lambda nbytes: SimpleNamespace(
        median_ms=2 * nbytes / 800e9 * 1e3))
    chk = ex.Checker("speed")
    ex.speed_against_copy(chk, lambda: None, 10**9, target=0.6, advice="coalesce")
    assert not chk.report() and not timed
    out = capsys.readouterr().out
    assert "stopped after one launch" in out and "4 s" in out and "coalesce" in out


def test_the_emulator_can_read_unwritten_memory_as_zero():
    from numba import cuda, float32

    from gpuperf import emulator

    @cuda.jit
    def unzeroed(out):
        acc = cuda.local.array(2, float32)
        tile = cuda.shared.array(32, float32)
        acc[0] += 1.0
        out[cuda.threadIdx.x] = acc[0] + tile[cuda.threadIdx.x]

    out = np.zeros(32, np.float32)
    emulator.launch(unzeroed, 1, 32, out)
    assert np.isnan(out).all()
    with emulator.poison("zero"):
        emulator.launch(unzeroed, 1, 32, out)
    assert (out == 1).all()
    chk = ex.Checker("unzeroed")
    ex.preflight(chk, unzeroed, 1, 32, np.zeros(32, np.float32), compile_targets=False)
    assert "memory read before it is written" in chk.report(show=False).text()


def test_structure_rules_count_sectors_loads_in_flight_and_tree_steps():
    """Issue 63: what the outputs cannot show, counted from the emulator's record."""
    from numba import cuda, float32

    @cuda.jit
    def chunks(x, out):  # each thread its own 8 consecutive elements, one load per store
        for k in range(8):
            out[8 * cuda.grid(1) + k] = x[8 * cuda.grid(1) + k]

    @cuda.jit
    def batched(x, out):  # 4 loads a grid's width apart, then 4 stores
        i, s = cuda.grid(1), cuda.gridsize(1)
        a, b, c, d = x[i], x[i + s], x[i + 2 * s], x[i + 3 * s]
        out[i], out[i + s], out[i + 2 * s], out[i + 3 * s] = a, b, c, d

    @cuda.jit
    def tree(x, out):
        t = cuda.threadIdx.x
        sh = cuda.shared.array(64, float32)
        sh[t] = x[t]
        cuda.syncthreads()
        s = 32
        while s > 0:
            if t < s:
                sh[t] += sh[t + s]
            cuda.syncthreads()
            s //= 2
        if t == 0:
            out[0] = sh[0]

    x = ex.random_array(512, 1)
    for kernel, grid, in_flight, coalesced in ((chunks, 1, 1, False), (batched, 2, 4, True)):
        chk = ex.Checker("rules")
        run = ex.recorded_run(chk, "run", kernel, grid, 64, x, ex.poisoned(512))
        assert max(ex.loads_in_flight(run, "x")) == in_flight
        with chk.case("coalesced"):
            assert ex.expect_coalesced(chk, run, ["x", "out"], advice="a") is coalesced
        with chk.case("in flight"):
            assert ex.expect_in_flight(chk, run, "x", at_least=2, advice="b") is (in_flight >= 2)
        if not coalesced:
            assert "line" in chk.report(show=False).failed[0][1]
    chk = ex.Checker("tree")
    run = ex.recorded_run(chk, "run", tree, 1, 64, x[:64], ex.poisoned(1))
    assert [w for w, _ in ex.tree_steps(run)] == [32, 16, 8, 4, 2, 1]
    with chk.case("tree"):
        assert ex.expect_tree(chk, run, 64, advice="c")
        assert not ex.expect_tree(chk, run, 128, advice="c")


@cuda.jit
def _slow(out):
    acc = 0.0
    for j in range(20000):
        acc += j
    out[cuda.grid(1)] = acc


def test_a_slow_kernel_is_stopped_at_the_checkers_cpu_limit(monkeypatch):
    """Issue 63: past CHECK_CPU_S of CPU time a simulated launch stops between two of its
    threads, that case fails saying so, and the remaining cases are not run (one note)."""
    monkeypatch.setattr(ex, "CHECK_CPU_S", 1e-4)  # spent within the first launch on any machine
    chk = ex.Checker("slow")
    for k in range(3):
        with chk.case(f"case {k}"):
            _slow[2, 32](np.zeros(64))
    report = chk.report(show=False)
    assert len(report.failed) == 1 and "stopped" in report.failed[0][1]
    assert "2 more case(s) not run" in report.text()


def test_host_code_that_never_returns_is_stopped_at_the_checkers_cpu_limit(monkeypatch):
    """A student's host function with an endless loop (no simulated launch to stop): a CPU-time
    timer interrupts it past CHECK_CPU_S and HOST_GRACE_S; that case fails saying so, the rest
    are not run, and the timer is off again afterwards. Found playing a student: a
    ``while i < n`` whose index never advances hung check_predict for good."""
    import signal

    from gpuperf.kernels import streams

    monkeypatch.setattr(ex, "CHECK_CPU_S", 0.2)
    monkeypatch.setattr(ex, "HOST_GRACE_S", 0.3)

    def predict_ms(h2d_ms, kernel_ms, d2h_ms, n_streams):
        i, t = 0, 0.0
        while i < len(h2d_ms):
            t += h2d_ms[i]
        return t

    started = time.process_time()
    report = streams.check_predict(predict_ms)
    assert not report and time.process_time() - started < 10
    assert "still running" in report.failed[0][1] and "Traceback" not in report.text()
    assert signal.getitimer(signal.ITIMER_VIRTUAL)[0] == 0
