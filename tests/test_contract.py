"""The input contract: every public function answers bad input with a clear error.

``BAD`` maps every public function, method and constructor (enumerated by
``contract_api.public_api()``) to bad calls. Each bad call must raise ``TypeError`` or
``ValueError`` (or a gpuperf subclass of them) whose message contains the given words
(the parameter's name, or the bad value). Three other kinds of answer are allowed where
they are the contract: exercise checkers answer a wrong submission with a failed
``Report`` (``REPORT``), command-line tools with exit status 2 and a message on stderr
(``CLI``), and a predicate answers any object (``ANSWER``). ``test_every_public_function_has_bad_input_tests`` keeps new
functions from skipping the contract.
"""

from __future__ import annotations

import contextlib
import io
import math

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import contract_api  # noqa: E402
from numba import cuda  # noqa: E402  (after contract_api, which imports gpuperf: the mode is chosen first)

import gpuperf as gp  # noqa: E402
from gpuperf import assign, bench, colab, device, grade, plots, profiling, record, records, targets, widgets  # noqa: E402
from gpuperf import exercises as ex  # noqa: E402
from gpuperf import sandbox as sb  # noqa: E402
from gpuperf import validate as v  # noqa: E402
from gpuperf.kernels import coalescing as co  # noqa: E402
from gpuperf.kernels import coarsening as cs  # noqa: E402
from gpuperf.kernels import debugging as dbg  # noqa: E402
from gpuperf.kernels import dram as dr  # noqa: E402
from gpuperf.kernels import gdn  # noqa: E402
from gpuperf.kernels import gridstride as gs  # noqa: E402
from gpuperf.kernels import launch as ln  # noqa: E402
from gpuperf.kernels import matmul as mm  # noqa: E402
from gpuperf.kernels import privatization as pv  # noqa: E402
from gpuperf.kernels import reduce as rd  # noqa: E402
from gpuperf.kernels import streams as st  # noqa: E402

NAN, INF = float("nan"), float("inf")
X = np.ones(8, np.float32)
A23 = np.ones((2, 3), np.float32)
W = np.ones((2, 4), np.float64)
W32 = np.ones((2, 4), np.float32)
G = np.ones((2, 2))
BETA = np.ones(2)
R = records.Result("demo", [{"version": "a", "block": 128, "gbps": 10.0},
                            {"version": "b", "block": 256, "gbps": 20.0}],
                   {"gpu": "My GPU", "ceilings": {"copy_gbps": 100.0}}, "recorded")
V = mm.variant("tiled", tile=4)
CHAIN = dr.chase_chain(4)
REPORT, CLI, ANSWER = "report", "cli", "answer"


def _packed_stand_in():
    """A PackedLaunch of one int64 parameter, built without the driver (the simulator has none):
    enough for set_argument's checks."""
    import ctypes

    from numba.core import types

    p = ln.PackedLaunch.__new__(ln.PackedLaunch)
    p._argtypes, p._slots = (types.int64,), [[ctypes.c_int64(0)]]
    return p


def _misaligned_view():
    from numba import cuda

    return cuda.to_device(np.ones(8, np.float32))[1:]


def B(fn, *args, err=ValueError, word="", **kw):  # noqa: N802 - one bad call
    return (lambda: fn(*args, **kw), err, word)


def rep(fn, *args, word="", **kw):
    """A checker given a wrong kind of submission: a failed Report that says so."""
    return (lambda: fn(*args, **kw), REPORT, word)


def cli(main, argv, word):
    return (lambda: main(argv), CLI, word)


def _rec(name):
    return lambda: records.run(name)


def lazy(fn, make, *rest, err=ValueError, word="", **kw):
    """A bad call whose good arguments are built when the test runs (e.g. a replayed Result)."""
    return (lambda: fn(make(), *rest, **kw), err, word)


BAD = {
    # ------------------------------------------------------------------ package and tools
    "gpuperf:show_source": [B(gp.show_source, 42, err=TypeError, word="obj")],
    "gpuperf.assign:strip_solutions": [B(assign.strip_solutions, 42, err=TypeError,
                                         word="source")],
    "gpuperf.assign:student_copy": [B(assign.student_copy, "nb", err=TypeError, word="nb")],
    "gpuperf.assign:solution_leaks": [B(assign.solution_leaks, None, err=TypeError, word="nb")],
    "gpuperf.assign:stale_copies": [B(assign.stale_copies, None, "notebooks", err=TypeError,
                                      word="src"),
                                    B(assign.stale_copies, "/no/such/solutions", "notebooks",
                                      word="src="),
                                    B(assign.stale_copies, "solutions", __file__, word="out=")],
    "gpuperf.assign:nbgrader_source": [B(assign.nbgrader_source, "nb", err=TypeError,
                                         word="nb")],
    "gpuperf.assign:assign": [B(assign.assign, 42, "out", err=TypeError, word="src"),
                              B(assign.assign, "notebooks", "out", nbgrader=1, err=TypeError,
                                word="nbgrader"),
                              B(assign.assign, "notebooks", "out", force="yes", err=TypeError,
                                word="force")],
    "gpuperf.assign:main": [cli(assign.main, ["/no/such/notebooks"], "does not exist")],
    "gpuperf.bench:Timing.__init__": [B(bench.Timing, "12", err=TypeError, word="times_ms"),
                                      B(bench.Timing, [1.0, NAN], word="times_ms[1]")],
    "gpuperf.bench:time_kernel": [B(bench.time_kernel, "f", err=TypeError, word="fn"),
                                  B(bench.time_kernel, print, min_repeat=0, word="min_repeat"),
                                  B(bench.time_kernel, print, hide_launch="yes",
                                    err=TypeError, word="hide_launch")],
    "gpuperf.bench:flush_l2": [B(bench.flush_l2, "clean", word="kind")],
    "gpuperf.bench:hold_gpu": [B(bench.hold_gpu, 0, word="us"),
                               B(bench.hold_gpu, "5", err=TypeError, word="us")],
    "gpuperf.bench:gbps": [B(bench.gbps, 100, 0, word="ms"), B(bench.gbps, "1", 1, err=TypeError,
                                                                  word="nbytes")],
    "gpuperf.bench:tflops": [B(bench.tflops, 100, NAN, word="ms")],
    "gpuperf.bench:bandwidth_row": [B(bench.bandwidth_row, 100, "t", err=TypeError,
                                      word="timing")],
    "gpuperf.bench:measure_copy": [B(bench.measure_copy, 0, word="nbytes")],
    "gpuperf.bench:measure_cublas_sgemm": [B(bench.measure_cublas_sgemm, -1, word="n")],
    "gpuperf.bench:sweep": [B(bench.sweep, "m", {"a": [1]}, err=TypeError, word="measure"),
                            B(bench.sweep, print, {"a": 1}, err=TypeError, word="grid['a']")],
    "gpuperf.colab:new_notebook": [B(colab.new_notebook, "x", err=TypeError, word="cells"),
                                   B(colab.new_notebook, [("py", "x")], word="cells[0][0]")],
    "gpuperf.device:DeviceInfo.__init__": [B(device.DeviceInfo, 5, None, None, None, 1, None,
                                             None, None, None, 32, 1024, None, None, None,
                                             False, err=TypeError, word="name")],
    "gpuperf.device:sm_count": [B(device.sm_count, 0, word="default")],
    "gpuperf.device:occupancy": [B(device.occupancy, 0, 32, 0, dr.T4_SPEC_FACTS, word="threads"),
                                 B(device.occupancy, 64, 300, 0, dr.T4_SPEC_FACTS,
                                   word="registers"),
                                 B(device.occupancy, 64, 32, -1, dr.T4_SPEC_FACTS,
                                   word="shared_bytes"),
                                 B(device.occupancy, 64, 32, 0, "facts", err=TypeError,
                                   word="facts_")],
    "gpuperf.device:show_occupancy": [B(device.show_occupancy, 64, 32, 0, "r", err=TypeError,
                                        word="res")],
    "gpuperf.device:describe": [B(device.describe, "x", err=TypeError, word="d")],
    "gpuperf.kernels.matmul:dram_roofline_summary": [B(gp.matmul.dram_roofline_summary, "r",
                                                  err=TypeError, word="res")],
    "gpuperf.kernels.coalescing:stride_wavefronts": [B(gp.coalescing.stride_wavefronts, "r", err=TypeError,
                                              word="profiling_stride")],
    "gpuperf.kernels.reduce:atomics_waves": [B(gp.reduce.atomics_waves, "r", err=TypeError,
                                          word="profiling_reduce_atomics")],
    "gpuperf.kernels.gdn:gdn_profile_table": [B(gp.gdn.gdn_profile_table, "r", err=TypeError,
                                              word="profiling_gdn")],
    "gpuperf.kernels.coarsening:issue_summary": [B(gp.coarsening.issue_summary, "r", err=TypeError,
                                          word="res")],
    "gpuperf.kernels.matmul:plot_dram_roofline": [B(gp.matmul.plot_dram_roofline, "r", err=TypeError,
                                               word="res")],
    "gpuperf.profiling:course_roofline": [B(profiling.course_roofline, 5, err=TypeError,
                                            word="path")],
    "gpuperf.profiling:course_roofline_summary": [B(profiling.course_roofline_summary, "r",
                                                    err=TypeError, word="roof")],
    "gpuperf.profiling:course_roofline_l2_rows": [B(profiling.course_roofline_l2_rows, "r",
                                                    err=TypeError, word="roof")],
    "gpuperf.profiling:plot_course_roofline": [B(profiling.plot_course_roofline, "r",
                                                 err=TypeError, word="roof"),
                                               B(profiling.plot_course_roofline,
                                                 {"points": [], "copy_gbps": None,
                                                  "cublas_tflops": None}, word="record")],
    "gpuperf.kernels.gridstride:onchip_expected": [
        B(gs.onchip_expected, "shared8", 8, 1, 1, word="shared8"),
        B(gs.onchip_expected, "shared4", 12, 1, 1, word="reads"),
        B(gs.onchip_expected, "shared4", 8, 0, 1, word="block"),
        B(gs.onchip_expected, "l1_16", 8, 1, 2.0, err=TypeError, word="blocks"),
        B(gs.onchip_expected, "l1_4", 8, 1, 1, step=-1, word="step")],
    "gpuperf.kernels.dram:onchip_roof_gbps": [B(gp.dram.onchip_roof_gbps, "r", err=TypeError,
                                             word="profiling_onchip_roofs")],
    "gpuperf.kernels.dram:onchip_roofs_summary": [B(gp.dram.onchip_roofs_summary, R,
                                                 err=TypeError, word="profiling_onchip_roofs")],
    "gpuperf.kernels.matmul:onchip_roofline_summary": [
        B(gp.matmul.onchip_roofline_summary, R, R, err=TypeError, word="profiling_matmul_roofline"),
        lazy(gp.matmul.onchip_roofline_summary, _rec("profiling_matmul_roofline"), R,
             err=TypeError, word="profiling_onchip_roofs")],
    "gpuperf.kernels.matmul:plot_onchip_roofline": [
        B(gp.matmul.plot_onchip_roofline, "r", R, err=TypeError, word="profiling_matmul_roofline"),
        lazy(gp.matmul.plot_onchip_roofline, _rec("profiling_matmul_roofline"),
             records.recorded("profiling_onchip_roofs"), title=3, err=TypeError, word="title")],
    "gpuperf.kernels.gridstride:read_step": [B(gs.read_step, 0, word="quads"),
                                              B(gs.read_step, 2.5, err=TypeError, word="quads")],
    "gpuperf.kernels.dram:l2_read_gbps": [B(gp.dram.l2_read_gbps, "r", err=TypeError,
                                         word="res")],
    "gpuperf.device:fp32_peak_tflops": [B(device.fp32_peak_tflops, "x", err=TypeError, word="d"),
                                        B(device.fp32_peak_tflops, None, 0, word="clock_khz")],
    "gpuperf.exercises:sizes_around": [B(ex.sizes_around, 0, word="block")],
    "gpuperf.exercises:random_array": [B(ex.random_array, -1, word="shape"),
                                       B(ex.random_array, 3, rng="seed", err=TypeError,
                                         word="rng")],
    "gpuperf.exercises:poisoned": [B(ex.poisoned, 4, dtype="bogus", err=TypeError,
                                     word="dtype")],
    "gpuperf.exercises:Report.text": [B(ex.Report("t").text, -1, word="max_failures")],
    "gpuperf.exercises:Report.__init__": [B(ex.Report, 5, err=TypeError, word="title")],
    "gpuperf.exercises:Checker.__init__": [B(ex.Checker, 5, err=TypeError, word="title")],
    "gpuperf.exercises:Checker.case": [(lambda: ex.Checker("t").case(5).__enter__(),
                                        TypeError, "name"),
                                       (lambda: ex.Checker("t").case("c", points=0).__enter__(),
                                        ValueError, "points")],
    "gpuperf.exercises:Checker.fail": [B(ex.Checker("t").fail, 5, err=TypeError, word="why")],
    "gpuperf.exercises:Checker.expect": [B(ex.Checker("t").expect, True, 5, err=TypeError,
                                           word="why")],
    "gpuperf.exercises:Checker.compare": [B(ex.Checker("t").compare, [1.0], [1.0], rtol=-1,
                                            word="rtol")],
    "gpuperf.exercises:Checker.is_kernel": [B(ex.Checker("t").is_kernel, None, what=5,
                                              err=TypeError, word="what")],
    "gpuperf.exercises:Checker.calls": [B(ex.Checker("t").calls, len, "syncthreads", why="w",
                                          word="names"),
                                        B(ex.Checker("t").calls, len, "numba.cuda:x", why=5,
                                          err=TypeError, word="why")],
    "gpuperf.exercises:Checker.avoids": [B(ex.Checker("t").avoids, "x", "numba.cuda:x",
                                           why="w", err=TypeError, word="fn")],
    "gpuperf.exercises:Checker.note": [B(ex.Checker("t").note, 5, err=TypeError, word="text")],
    "gpuperf.exercises:Checker.report": [B(ex.Checker("t").report, show="yes", err=TypeError,
                                           word="show")],
    "gpuperf.exercises:compare": [B(ex.compare, [1.0], [1.0], atol=NAN, word="atol"),
                                  B(ex.compare, [1.0], ["a"], err=TypeError, word="ref")],
    "gpuperf.exercises:describe_exception": [B(ex.describe_exception, "e", err=TypeError,
                                               word="err")],
    "gpuperf.exercises:source_of": [B(ex.source_of, "fn", err=TypeError, word="fn")],
    "gpuperf.nsight:available": [B(profiling.available, "nvprof", word="tool")],
    "gpuperf.kernels.coalescing:stride_parts_table": [B(gp.coalescing.stride_parts_table, [], err=TypeError,
                                               word="profiling_stride_parts")],
    "gpuperf.nsight:ncu_command": [B(profiling.ncu_command, "python3 x.py", kernel="k",
                                        metrics=["m"], err=TypeError, word="program"),
                                      B(profiling.ncu_command, ["p"], kernel="k", metrics=["m"],
                                        launch_count=0, word="launch_count"),
                                      B(profiling.ncu_command, ["p"], kernel="gemm(", metrics=["m"],
                                        library=True, word="kernel"),
                                      B(profiling.ncu_command, ["p"], kernel="gemm", metrics=["m"],
                                        library="yes", err=TypeError, word="library")],
    "gpuperf.nsight:parse_ncu_csv": [B(profiling.parse_ncu_csv, b"x", err=TypeError,
                                          word="text")],
    "gpuperf.nsight:metrics_by_kernel": [B(profiling.metrics_by_kernel, [{"kernel": "k"}],
                                              err=TypeError, word="rows[0]")],
    "gpuperf.profiling:launch_command": [B(profiling.launch_command, "transposed", 1,
                                           word="name")],
    "gpuperf.profiling:profile": [B(profiling.profile, "stride", 2, 64, kernel="copy strided",
                                    metrics=["m"], word="kernel"),
                                  B(profiling.profile, "strides", 2, kernel="k", metrics=["m"],
                                    word="name")],
    "gpuperf.nsight:top_stalls": [B(profiling.top_stalls, [1.0], err=TypeError, word="row"),
                                     B(profiling.top_stalls, {"ilp": 1}, word="stall_"),
                                     B(profiling.top_stalls, {"stall_wait": 1.0}, n=0,
                                       word="n")],
    "gpuperf.nsight:parse_sanitizer": [B(profiling.parse_sanitizer, "nothing", word="SUMMARY"),
                                          B(profiling.parse_sanitizer, b"x", err=TypeError,
                                            word="text")],
    "gpuperf.profiling:sanitize": [B(profiling.sanitize, "leakcheck", "smooth", 1, 10,
                                     word="tool")],
    "gpuperf.nsight:speed_of_light": [B(profiling.speed_of_light, [1], err=TypeError,
                                           word="metrics"),
                                         B(profiling.speed_of_light, {}, word="SOL_METRICS")],
    "gpuperf.profiling:try_profile": [B(profiling.try_profile, "stride", 1, kernel="a b",
                                        metrics=["m"], word="kernel"),
                                      B(profiling.try_profile, "strides", kernel="k",
                                        metrics=["m"], word="name")],
    "gpuperf.kernels.debugging:check_profile_command": [rep(dbg.check_profile_command, "f",
                                                            word="")],
    "gpuperf.kernels.debugging:check_limiters": [B(dbg.check_limiters, {}, res="r",
                                                   err=TypeError, word="res"),
                                                 rep(dbg.check_limiters, "dram", word="answer")],
    "gpuperf.kernels.debugging:check_smooth": [rep(dbg.check_smooth, "k", word="kernel")],
    "gpuperf.kernels.debugging:find_races": [B(dbg.find_races, "k", err=TypeError,
                                               word="kernel"),
                                             B(dbg.find_races, dbg.smooth, 0, word="n")],
    "gpuperf.kernels.debugging:limiter": [B(dbg.limiter, [1], err=TypeError, word="row"),
                                          B(dbg.limiter, {"sm_pct": 1}, word="memory_pct")],
    "gpuperf.kernels.debugging:plot_speed_of_light": [B(dbg.plot_speed_of_light, "r",
                                                        err=TypeError, word="res")],
    "gpuperf.kernels.debugging:smooth_grid": [B(dbg.smooth_grid, 0, word="n")],
    "gpuperf.kernels.debugging:smooth_reference": [B(dbg.smooth_reference, [[1.0, 2.0]],
                                                     word="x")],
    "gpuperf.nsight:parse_cupti_trace": [
        B(profiling.parse_cupti_trace, {"events": []}, word="traceEvents"),
        B(profiling.parse_cupti_trace, "{not json", word="JSON")],
    "gpuperf.nsight:cupti_ops": [B(profiling.cupti_ops, 3, err=TypeError, word="fn")],
    "gpuperf.kernels.streams:match_pipeline_run": [
        B(gp.streams.match_pipeline_run, 5, [], err=TypeError, word="ops"),
        B(gp.streams.match_pipeline_run, [], [{"chunk": 1, "kind": "h2d", "start_ms": 0.0,
                                              "end_ms": 1.0}], word="spans")],
    "gpuperf.kernels.streams:cupti_timeline_summary": [
        B(gp.streams.cupti_timeline_summary, R, err=TypeError, word="profiling_streams_timeline")],
    "gpuperf.kernels.streams:show_cupti_timeline": [
        B(gp.streams.show_cupti_timeline, None, err=TypeError, word="res")],
    "gpuperf.nsight:parse_racecheck": [B(profiling.parse_racecheck, "no summary",
                                            word="RACECHECK")],
    "gpuperf.exercises:written_arguments": [B(ex.written_arguments, len, err=TypeError,
                                              word="kernel")],
    "gpuperf.exercises:bandwidth_line": [B(ex.bandwidth_line, 0, 1, 100, word="student_ms")],
    "gpuperf.plots:source_label": [B(plots.source_label, "fig", "l", err=TypeError,
                                     word="fig")],
    "gpuperf.plots:copy_ceilings": [B(plots.copy_ceilings, {"a": 1}, err=TypeError,
                                      word="result")],
    "gpuperf.plots:legend_if_labelled": [B(plots.legend_if_labelled, "ax", err=TypeError,
                                             word="ax")],
    "gpuperf.plots:lines": [B(plots.lines, R, x="blok", word="blok"),
                            B(plots.lines, R, x="block", rows=[], word="rows"),
                            B(plots.lines, R, x="block", ceilings={"copy": -1},
                              word="ceilings"),
                            B(plots.lines, R, x="block", references="yes", err=TypeError,
                              word="references")],
    "gpuperf.plots:heatmap": [B(plots.heatmap, R, x="block", y="version", value="gbs",
                                word="value"),
                              B(plots.heatmap, R, x="block", y="version", references="no",
                                err=TypeError, word="references")],
    "gpuperf.plots:bars": [B(plots.bars, R, label="version", y="gbs", word="gbs"),
                           B(plots.bars, R, label="version", ceiling=100, err=TypeError,
                             word="ceiling"),
                           B(plots.bars, R, label="version", references=0, err=TypeError,
                             word="references")],
    "gpuperf.plots:timeline": [B(plots.timeline, [{"stream": 0, "start_ms": 2, "end_ms": 1}],
                                 word="spans[0]")],
    "gpuperf.plots:roofline": [B(plots.roofline, [], bw_gbps=0, peak_tflops=1,
                                 word="bw_gbps"),
                               B(plots.roofline, [], bw_gbps=1, peak_tflops=1,
                                 references={"H200": [{"name": "a"}]}, err=TypeError,
                                 word="references['H200'][0]"),
                               B(plots.roofline, [], bw_gbps=1, peak_tflops=1,
                                 second_intensity=("L2", [{"name": "a"}]), err=TypeError,
                                 word="second_intensity[1][0]")],
    "gpuperf.record:main": [cli(record.main, ["--only", "nonsense_"], "nonsense_")],
    "gpuperf.records:Experiment.__init__": [B(records.Experiment, "x", "fn", "c", "t",
                                              err=TypeError, word="fn")],
    "gpuperf.records:experiment": [B(records.experiment, "Bad Name", chapter="c", title="t",
                                     word="Bad Name")],
    "gpuperf.records:get": [B(records.get, 5, err=TypeError, word="name"),
                            B(records.get, "reduce_ladderr", word="reduce_ladder")],
    "gpuperf.store:slug": [B(records.slug, 5, err=TypeError, word="gpu_name")],
    "gpuperf.store:load": [B(records.load, 5, err=TypeError, word="path")],
    "gpuperf.store:save": [B(records.save, "data", "/tmp/x.json", err=TypeError,
                               word="data")],
    "gpuperf.records:Result.select": [B(R.select, versionn="a", word="versionn")],
    "gpuperf.records:Result.where": [B(R.where, versionn="a", word="versionn")],
    "gpuperf.records:Result.one": [B(R.one, blok=1, word="blok")],
    "gpuperf.records:Result.column": [B(R.column, "gbs", word="gbs")],
    "gpuperf.records:Result.values": [B(R.values, "gbs", word="gbs")],
    "gpuperf.records:Result.table": [B(R.table, ["gbs"], word="columns[0]")],
    "gpuperf.records:Result.show": [B(R.show, max_rows=0, word="max_rows"),
                                    B(R.show, note=3, err=TypeError, word="note")],
    "gpuperf.records:Result.__init__": [B(records.Result, "n", "rows", {}, "recorded",
                                          err=TypeError, word="rows")],
    "gpuperf.records:recorded": [B(records.recorded, "no_such_experiment",
                                   word="no_such_experiment")],
    "gpuperf.records:measure": [B(records.measure, "gridstride_ceilings", progress=5,
                                  err=TypeError, word="progress")],
    "gpuperf.records:run": [B(records.run, "gridstride_ceilings", live="yes", err=TypeError,
                              word="live"),
                            B(records.run, "matmul_ladder", like={"gpu": "x"}, err=TypeError,
                              word="like")],
    "gpuperf.validate:array": [B(v.array, [1.0], err=TypeError, word="x")],
    "gpuperf.validate:same_shape": [B(v.same_shape, np.ones(2), np.ones(3), word="a and b")],
    "gpuperf.validate:positive_int": [B(v.positive_int, 0, "n", word="n")],
    "gpuperf.validate:result_with": [B(v.result_with, "r", "little", "ilp", err=TypeError,
                                       word="little must be"),
                                     lazy(v.result_with, _rec("dram_littles_law"), "little",
                                          "no_such_column", word="little column")],
    "gpuperf.validate:disjoint": [(lambda x: B(v.disjoint, x, "out", a=x, word="out overlaps a"))(
        np.ones(4, np.float32))],
    "gpuperf.validate:aligned16": [B(v.aligned16, _misaligned_view(), "x", "use a fresh one.",
                                     word="x starts 4 bytes past")],
    "gpuperf.validate:block_size": [B(v.block_size, 2000, word="block")],
    "gpuperf.validate:choice": [B(v.choice, "z", "version", ["a"], word="version")],
    "gpuperf.validate:integer": [B(v.integer, "8", "n", err=TypeError, word="n")],
    "gpuperf.validate:number": [B(v.number, INF, "ms", word="ms")],
    "gpuperf.validate:positive": [B(v.positive, -1, "ms", word="ms")],
    "gpuperf.validate:nonnegative": [B(v.nonnegative, -1, "ms", word="ms")],
    "gpuperf.validate:string": [B(v.string, 5, "name", err=TypeError, word="name")],
    "gpuperf.validate:boolean": [B(v.boolean, "yes", "flag", err=TypeError, word="flag")],
    "gpuperf.validate:function": [B(v.function, "f", "fn", err=TypeError, word="fn")],
    "gpuperf.validate:kernel": [B(v.kernel, "k", "kernel", err=TypeError, word="kernel")],
    "gpuperf.validate:mapping": [B(v.mapping, [], "controls", err=TypeError, word="controls")],
    "gpuperf.validate:sequence": [B(v.sequence, "abc", "values", err=TypeError,
                                    word="values")],
    "gpuperf.validate:result": [B(v.result, {}, "res", err=TypeError, word="res")],
    "gpuperf.validate:column": [B(v.column, R, "gbs", "y", word="y")],
    "gpuperf.validate:Spec.__init__": [B(v.Spec, 5, err=TypeError, word="fn")],
    "gpuperf.validate:Spec.__call__": [B(v.Int(1), 0, "n", word="n")],
    "gpuperf.validate:Int": [B(v.Int, "1", err=TypeError, word="minimum")],
    "gpuperf.validate:Num": [B(v.Num, "0", err=TypeError, word="minimum")],
    "gpuperf.validate:Pos": [B(v.Pos, "no", err=TypeError, word="optional")],
    "gpuperf.validate:OneOf": [B(v.OneOf, 5, err=TypeError, word="options")],
    "gpuperf.validate:Str": [B(v.Str, "x", err=TypeError, word="optional")],
    "gpuperf.validate:Fn": [B(v.Fn, 5, err=TypeError, word="what")],
    "gpuperf.validate:Kernel": [B(v.Kernel, "x", err=TypeError, word="optional")],
    "gpuperf.validate:Res": [B(v.Res, "x", err=TypeError, word="optional")],
    "gpuperf.validate:Dict": [B(v.Dict, empty="x", err=TypeError, word="empty")],
    "gpuperf.validate:Seq": [B(v.Seq, empty="x", err=TypeError, word="empty")],
    "gpuperf.validate:Arr": [B(v.Arr, ndim="1", err=TypeError, word="ndim")],
    "gpuperf.validate:checks": [B(v.checks, n=5, err=TypeError, word="n")],
    "gpuperf.validate:shared_bytes": [B(v.shared_bytes, "1", err=TypeError, word="nbytes"),
                                      B(v.shared_bytes, 64 * 1024, word="48 KiB")],
    "gpuperf.exercises:speed_against_copy": [
        B(ex.speed_against_copy, ex.Checker("t"), "f", 100, target=0.5, advice="a",
          err=TypeError, word="run"),
        B(ex.speed_against_copy, ex.Checker("t"), print, 0, target=0.5, advice="a",
          word="nbytes"),
        B(ex.speed_against_copy, ex.Checker("t"), print, 100, target=-1, advice="a",
          word="target"),
        B(ex.speed_against_copy, ex.Checker("t"), print, 100, target=0.5, advice=3,
          err=TypeError, word="advice")],
    "gpuperf.exercises:speed_against_cublas": [
        B(ex.speed_against_cublas, ex.Checker("t"), 3, 64, target=0.5, advice="a",
          err=TypeError, word="run"),
        B(ex.speed_against_cublas, ex.Checker("t"), print, 0, target=0.5, advice="a",
          word="n"),
        B(ex.speed_against_cublas, "chk", print, 64, target=0.5, advice="a",
          err=TypeError, word="chk")],
    "gpuperf.exercises:speed_not_measured": [
        B(ex.speed_not_measured, "chk", "60% of a copy", err=TypeError, word="chk"),
        B(ex.speed_not_measured, ex.Checker("t"), 0.6, err=TypeError, word="bar")],
    "gpuperf.exercises:race_times": [B(ex.race_times, "f", print, err=TypeError, word="mine"),
                                     B(ex.race_times, print, print, rounds=0, word="rounds"),
                                     B(ex.race_times, print, print, hide_launch="yes",
                                       err=TypeError, word="hide_launch")],
    "gpuperf.widgets:explore": [B(widgets.explore, R, x="blok", controls={"version": ["a"]},
                                  word="blok"),
                                B(widgets.explore, R, x="block", controls={"version": "a"},
                                  err=TypeError, word="controls['version']"),
                                B(widgets.explore, R, x="block", controls={"version": ["a"]},
                                  xlabel=3, err=TypeError, word="xlabel"),
                                B(widgets.explore, R, x="block", controls={"version": ["a"]},
                                  ceilings=lambda res: {"copy": -1.0}, err=TypeError,
                                  word="ceilings(result)"),
                                B(widgets.explore, R, x="block", controls={"version": ["a"]},
                                  ceilings=lambda res: res.nope, err=TypeError,
                                  word="ceilings(result)")],
    "gpuperf.plots:live_references": [B(plots.live_references, "r", err=TypeError,
                                        word="result")],
    "gpuperf.plots:reference_curves": [B(plots.reference_curves, "ax", R, x="block", y="gbps",
                                         err=TypeError, word="ax"),
                                       B(plots.reference_curves, None, R, x="blok", y="gbps",
                                         word="blok")],
    "gpuperf.plots:reference_bars": [B(plots.reference_bars, "ax", R, label="version",
                                       y="gbps", err=TypeError, word="ax"),
                                     B(plots.reference_bars, None, R, label="versoin",
                                       y="gbps", word="versoin")],
    "gpuperf.nbtools:checker_cells": [B(grade.checker_cells, "nb", err=TypeError, word="nb")],
    "gpuperf.grade:grading_notebook": [B(grade.grading_notebook, "nb", "nb", err=TypeError,
                                         word="nb")],
    "gpuperf.grade:grade_notebook": [B(grade.grade_notebook, "a.ipynb", "b.ipynb", student=3,
                                       err=TypeError, word="student"),
                                     B(grade.grade_notebook, "a.ipynb", "b.ipynb", student="s",
                                       cell_timeout=0, word="cell_timeout")],
    "gpuperf.grade:course_name": [B(grade.course_name, 3, err=TypeError, word="filename")],
    "gpuperf.grade:outputs": [B(grade.outputs, 3, err=TypeError, word="out")],
    "gpuperf.grade:summary": [B(grade.summary, ["row"], err=TypeError, word="rows[0]")],
    "gpuperf.grade:feedback": [B(grade.feedback, [], 3, err=TypeError, word="student")],
    "gpuperf.exercises:seeds": [B(ex.seeds, (0, -1), word="visible[1]"),
                                B(ex.seeds, (), word="visible")],
    "gpuperf.exercises:hidden_sizes": [B(ex.hidden_sizes, 5, 2, word="high"),
                                       B(ex.hidden_sizes, 1, 9, count=-1, word="count")],
    "gpuperf.exercises:case_rng": [B(ex.case_rng, -3, word="seed")],
    "gpuperf.exercises:case_kind": [B(ex.case_kind, 3, err=TypeError, word="name")],
    "gpuperf.grade:grade": [B(grade.grade, 42, err=TypeError, word="submissions"),
                            B(grade.grade, "subs", cell_timeout=0, word="cell_timeout"),
                            B(grade.grade, "subs", hidden_seed=1, word="hidden_seed")],
    "gpuperf.grade:write_gradebook": [B(grade.write_gradebook, [], "g.csv", force="yes",
                                        err=TypeError, word="force"),
                                      B(grade.write_gradebook, ["row"], "g.csv", err=TypeError,
                                        word="rows[0]")],
    "gpuperf.grade:exercise_points": [B(grade.exercise_points, "nb", err=TypeError, word="nb")],
    "gpuperf.grade:machinery_touched": [B(grade.machinery_touched, "a", "b", err=TypeError,
                                          word="nb")],
    "gpuperf.grade:read_roster": [B(grade.read_roster, 3, err=TypeError, word="roster")],
    "gpuperf.grade:lms_outputs": [B(grade.lms_outputs, 3, err=TypeError, word="out")],
    "gpuperf.grade:lms_tables": [B(grade.lms_tables, [], assignment=3, err=TypeError,
                                   word="assignment")],
    "gpuperf.sandbox:Limits.__init__": [B(sb.Limits, memory_bytes=-1, word="memory_bytes")],
    "gpuperf.sandbox:command": [B(sb.command, "python", work="w", rundir="r",
                                  err=TypeError, word="argv"),
                                B(sb.command, ["python"], work=3, rundir="r",
                                  err=TypeError, word="work")],
    "gpuperf.sandbox:limited": [B(sb.limited, ["python"], "8G", sandboxed=True,
                                  err=TypeError, word="limits")],
    "gpuperf.sandbox:release": [B(sb.release, 3, err=TypeError, word="rundir")],
    "gpuperf.sandbox:kernel_manager": [B(sb.kernel_manager, work=3, rundir="r", err=TypeError,
                                         word="work")],
    "gpuperf.grade:main": [cli(grade.main, ["/no/such/submissions", "--out",
                                            "/no/such/gradebook.csv"], "not a folder")],
    "gpuperf.widgets:pick": [B(widgets.pick, R, controls={"version": ["a"]}, show="f",
                               err=TypeError, word="show")],
    "gpuperf.widgets:interact": [B(widgets.interact, "fn", a=[1], err=TypeError, word="fn"),
                                 B(widgets.interact, print, a=(5, 1, 1), word="a"),
                                 B(widgets.interact, print, start={"b": 1}, a=[1], word="b")],
    "gpuperf.widgets:tabs": [B(widgets.tabs, [], err=TypeError, word="pages"),
                             B(widgets.tabs, {}, word="pages"),
                             B(widgets.tabs, {"a": "not a widget"}, err=TypeError,
                               word="pages['a']")],
    # ------------------------------------------------------------------ coalescing
    "gpuperf.kernels.coalescing:WarpAccess.from_addresses": [
        B(co.WarpAccess.from_addresses, [0, -4], 4, word="addresses[1]")],
    "gpuperf.kernels.coalescing:WarpAccess.__init__": [B(co.WarpAccess, [0], 4, err=TypeError,
                                                         word="addresses")],
    "gpuperf.kernels.coalescing:stride_footprint": [
        lazy(co.stride_footprint, _rec("coalescing_offset"), None, word="coalescing_stride")],
    "gpuperf.kernels.coalescing:warp_access": [B(co.warp_access, -1, word="stride")],
    "gpuperf.kernels.coalescing:stride_efficiency": [B(co.stride_efficiency, 1, 3,
                                                       word="elem_bytes")],
    "gpuperf.kernels.coalescing:draw_warp_access": [B(co.draw_warp_access, "a", err=TypeError,
                                                      word="access")],
    "gpuperf.kernels.coalescing:draw_warp_access_gallery": [
        B(co.draw_warp_access_gallery, [{"strid": 1}], word="cases[0] key")],
    "gpuperf.kernels.coalescing:draw_stride_efficiency": [B(co.draw_stride_efficiency, 0,
                                                            word="max_stride")],
    "gpuperf.kernels.coalescing:make_copy_ilp": [B(co.make_copy_ilp, 0, word="ilp")],
    "gpuperf.kernels.coalescing:make_copy_vec4": [B(co.make_copy_vec4, 17, word="ilp")],
    "gpuperf.kernels.coalescing:make_copy_strided": [B(co.make_copy_strided, 4, "int8",
                                                       word="dtype")],
    "gpuperf.kernels.coalescing:make_sum_fields": [B(co.make_sum_fields, "SoA", 0, word="used")],
    "gpuperf.kernels.coalescing:aos_model_bytes": [B(co.aos_model_bytes, "aos", 1,
                                                     word="layout")],
    "gpuperf.kernels.coalescing:compare_layout_bytes": [
        B(co.compare_layout_bytes, "f", R, err=TypeError, word="fn")],
    "gpuperf.kernels.coalescing:make_read_strided": [B(co.make_read_strided, 0, word="ilp")],
    "gpuperf.kernels.coalescing:copy_launch": [B(co.copy_launch, 0, word="n")],
    "gpuperf.kernels.coalescing:copy": [B(co.copy, X, version="vec8", word="version")],
    "gpuperf.kernels.coalescing:make_matmul_bcol": [B(co.make_matmul_bcol, 64, word="tile")],
    "gpuperf.kernels.coalescing:matmul": [B(co.matmul, A23, A23, layout="diag",
                                            word="layout")],
    "gpuperf.kernels.coalescing:make_transpose": [
        B(co.make_transpose, 32, 8, 9, word="pad"),
        B(co.make_transpose, 32, 8, 1, True, True, word="swizzle"),
        B(co.make_transpose, 32, 8, 0, True, "yes", err=TypeError, word="swizzle")],
    "gpuperf.kernels.coalescing:transpose": [B(co.transpose, X, word="a")],
    "gpuperf.kernels.coalescing:make_transpose_vec4": [
        B(co.make_transpose_vec4, 3, word="block_rows"),
        B(co.make_transpose_vec4, 8, "yes", err=TypeError, word="flip")],
    "gpuperf.kernels.coalescing:make_transpose_unchecked": [
        B(co.make_transpose_unchecked, 32, 8, 9, word="pad"),
        B(co.make_transpose_unchecked, 32, 7, word="block_rows")],
    "gpuperf.kernels.coalescing:staging_ablation": [
        B(co.staging_ablation, [], err=TypeError, word="tp"),
        B(co.staging_ablation, R, word="coalescing_transpose")],
    "gpuperf.kernels.coalescing:copy_in_flight": [B(co.copy_in_flight, "r", err=TypeError, word="res")],
    "gpuperf.kernels.coalescing:vec4_transpose_summary": [
        B(co.vec4_transpose_summary, [], err=TypeError, word="tp")],
    "gpuperf.kernels.coalescing:device_data": [B(co.device_data, 0, word="n"),
                                                 B(co.device_data, 8, "int8", word="dtype"),
                                                 B(co.device_data, 8, seed="1", err=TypeError,
                                                   word="seed")],
    # ------------------------------------------------------------------ coarsening
    "gpuperf.kernels.coarsening:make_coarsened": [B(cs.make_coarsened, 32, 0, word="factor")],
    "gpuperf.kernels.coarsening:make_regtile_fast": [
        B(cs.make_regtile_fast, 64, 64, 4, 4, 4, word="vectors"),
        B(cs.make_regtile_fast, 128, 128, 8, 8, 8, 3, word="k_steps")],
    "gpuperf.kernels.coarsening:FastMatmul.__init__": [
        B(cs.FastMatmul, 32, 32, 8, 4, 4, 2, splits=0, word="splits")],
    "gpuperf.kernels.coarsening:FastMatmul.__call__": [
        B(lambda: cs.fast_matmul(32, 32, 8, 4, 4, 2)(cuda.to_device(np.ones((4, 4), np.float32)),
                                                      cuda.to_device(np.ones((4, 4), np.float32)),
                                                      cuda.device_array((4, 5), np.float32)),
          word="shape"),
        B(lambda: cs.fast_matmul(32, 32, 8, 4, 4, 2)(np.ones(4, np.float32),
                                                      np.ones((4, 4), np.float32),
                                                      np.ones((4, 4), np.float32)),
          err=TypeError, word="2-D"),
        B(lambda: cs.fast_matmul(32, 32, 8, 4, 4, 2)(np.ones((4, 4), np.float32),
                                                      np.ones((4, 4), np.float32),
                                                      np.ones((4, 4), np.float32)),
          err=TypeError, word="device array"),
        B(lambda: cs.fast_matmul(32, 32, 8, 4, 4, 2)(*(cuda.to_device(np.ones((4, 4), np.float32))
                                                       for _ in range(3)), stream="s1"),
          err=TypeError, word="stream"),
        B(lambda: cs.fast_matmul(32, 32, 8, 4, 4, 2)(
            cuda.to_device(np.ones(17, np.float32))[1:].reshape(4, 4),
            cuda.to_device(np.ones((4, 4), np.float32)), cuda.device_array((4, 4), np.float32)),
          word="16-byte boundary"),
        B(lambda: (lambda a: cs.fast_matmul(32, 32, 8, 4, 4, 2)(
            a, cuda.to_device(np.ones((4, 4), np.float32)), a))(
            cuda.to_device(np.ones((4, 4), np.float32))), word="overlaps A")],
    "gpuperf.kernels.coarsening:fast_matmul": [B(cs.fast_matmul, 128, 128, 8, 8, 8, 2, 0,
                                                 word="splits")],
    "gpuperf.kernels.coarsening:fast_variant": [B(cs.fast_variant, 100, word="block tile")],
    "gpuperf.kernels.coarsening:fast_parts": [B(cs.fast_parts, 0, word="n"),
                                               B(cs.fast_parts, 4096, word="strips")],
    "gpuperf.kernels.coarsening:fast_kernel_variant": [
        B(cs.fast_kernel_variant, index="int32", word="index")],
    "gpuperf.kernels.coarsening:inner_loop_mix": [B(cs.inner_loop_mix, "v", err=TypeError,
                                                    word="Variant")],
    "gpuperf.kernels.coarsening:fast_path_summary": [
        B(cs.fast_path_summary, "res", err=TypeError, word="res")],
    "gpuperf.kernels.coarsening:make_vecadd_coarsened": [B(cs.make_vecadd_coarsened, 0,
                                                           word="factor")],
    "gpuperf.kernels.coarsening:make_regtile_scalar": [B(cs.make_regtile_scalar, 0,
                                                         word="bm")],
    "gpuperf.kernels.coarsening:make_regtile": [B(cs.make_regtile, prefetch="yes",
                                                  err=TypeError, word="prefetch")],
    "gpuperf.kernels.coarsening:make_regtile_double": [
        B(cs.make_regtile_double, max_registers=8, word="max_registers"),
        B(cs.make_regtile_double, k_steps=3, word="k_steps"),
        B(cs.make_regtile_double, warp_tile=(32, 32), word="warp_tile"),
        B(cs.make_regtile_double, 128, 128, 32, 8, 8, word="shared memory"),
        B(cs.make_regtile_double, edge="no", err=TypeError, word="edge")],
    "gpuperf.kernels.coarsening:no_edge_variant": [B(cs.no_edge_variant, k_steps=3, word="k_steps")],
    "gpuperf.kernels.coarsening:FastMatmul.strip_splits": [
        B(lambda: cs.fast_matmul(32, 32, 8, 4, 4, 2).strip_splits(0, 4, 4), word="K"),
        B(lambda: cs.fast_matmul(32, 32, 8, 4, 4, 2).strip_splits(64, 4, 2.5), err=TypeError,
          word="cols")],
    "gpuperf.kernels.coarsening:make_regtile_1d": [
        B(cs.make_regtile_1d, 64, 64, 8, 7, word="thread tiles"),
        B(cs.make_regtile_1d, max_registers=0, word="max_registers")],
    "gpuperf.kernels.coarsening:regtile_1d_summary": [
        B(cs.regtile_1d_summary, 3, err=TypeError, word="res"),
        B(cs.regtile_1d_summary, R, word="tm")],
    "gpuperf.kernels.coarsening:tuning_table": [
        B(cs.tuning_table, err=TypeError, word="result"),
        B(cs.tuning_table, R, word="kind"),
        B(cs.tuning_table, "rt", err=TypeError, word="results[0]")],
    "gpuperf.kernels.coarsening:show_tuning": [
        lazy(cs.show_tuning, _rec("matmul_regtile_sweep"), top=0, word="top")],
    "gpuperf.kernels.coarsening:regtile_1d_variant": [
        B(cs.regtile_1d_variant, 64, 64, 8, 0, word="tm")],
    "gpuperf.kernels.coarsening:sass_count": [B(cs.sass_count, "nope", err=TypeError, word="v")],
    "gpuperf.kernels.coarsening:cap_summary": [
        B(cs.cap_summary, [], err=TypeError, word="res"),
        B(cs.cap_summary, R, word="factor")],
    "gpuperf.kernels.coarsening:double_buffer_summary": [
        B(cs.double_buffer_summary, [], err=TypeError, word="res"),
        B(cs.double_buffer_summary, R, word="kind")],
    "gpuperf.kernels.coarsening:unroll_summary": [
        B(cs.unroll_summary, [], err=TypeError, word="res"),
        B(cs.unroll_summary, R, word="bk")],
    "gpuperf.kernels.dram:latency_index_summary": [
        B(dr.latency_index_summary, None, err=TypeError, word="res"),
        B(dr.latency_index_summary, R, word="level")],
    "gpuperf.kernels.coarsening:coarsened_variant": [
        B(cs.coarsened_variant, 0, word="tile"),
        B(cs.coarsened_variant, 32, 2, max_registers=300, word="max_registers")],
    "gpuperf.kernels.coarsening:regtile_variant": [B(cs.regtile_variant, vectorized=False,
                                                     prefetch=True, word="prefetch"),
                                                   B(cs.regtile_variant, double=True,
                                                     word="double")],
    "gpuperf.kernels.coarsening:variant": [B(cs.variant, "coarsened", tyle=8, word="tyle")],
    "gpuperf.kernels.coarsening:matmul": [B(cs.matmul, A23, A23, version="nope",
                                            word="version")],
    "gpuperf.kernels.coarsening:vector_add": [
        B(cs.vector_add, X, X, out=np.ones(4, np.float32), word="out"),
        B(cs.vector_add, X, X, out=np.ones(8), err=TypeError, word="out"),
        B(cs.vector_add, X, X, out=np.ones(8, np.int32), err=TypeError, word="out")],
    "gpuperf.kernels.coarsening:resources": [B(cs.resources, "v", err=TypeError, word="v")],
    "gpuperf.kernels.coarsening:waves": [B(cs.waves, V, 0, 8, 1, word="M")],
    "gpuperf.kernels.coarsening:grid_blocks": [B(cs.grid_blocks, "v", 8, 8, err=TypeError,
                                                 word="v")],
    "gpuperf.kernels.coarsening:measure_point": [B(cs.measure_point, 33, word="tile")],
    "gpuperf.kernels.coarsening:measure_regtile_point": [B(cs.measure_regtile_point, "8",
                                                           word="tile")],
    "gpuperf.kernels.coarsening:plot_factor_sweep": [B(cs.plot_factor_sweep, "s", err=TypeError,
                                                       word="sweep")],
    "gpuperf.kernels.coarsening:explore_coarsening": [B(cs.explore_coarsening, y="gbs",
                                                        word="y")],
    "gpuperf.kernels.coarsening:explore_regtile": [B(cs.explore_regtile, R, word="res")],
    "gpuperf.kernels.coarsening:compare_tile_reuse": [
        B(cs.compare_tile_reuse, "f", R, err=TypeError, word="fn"),
        B(cs.compare_tile_reuse, print, "rt", err=TypeError, word="res"),
        B(cs.compare_tile_reuse, print, R, word="kind")],
    "gpuperf.kernels.coarsening:check_tile_reuse": [rep(cs.check_tile_reuse, 3, word="function")],
    "gpuperf.kernels.coarsening:check_grid_rounds": [rep(cs.check_grid_rounds, 3, word="function")],
    "gpuperf.kernels.coarsening:check_coarsened": [B(cs.check_coarsened, "k", err=TypeError,
                                                     word="make_kernel")],
    "gpuperf.kernels.coarsening:check_best_factor": [B(cs.check_best_factor, {}, res="r",
                                                       err=TypeError, word="res"),
                                                     rep(cs.check_best_factor, "8",
                                                         word="answer")],
    # ------------------------------------------------------------------ dram
    "gpuperf.kernels.dram:DramLayout.burst_of": [B(dr.TEXTBOOK.burst_of, -1,
                                                   word="byte_address")],
    "gpuperf.kernels.dram:DramLayout.locate": [B(dr.TEXTBOOK.locate, "8", err=TypeError,
                                                 word="byte_address")],
    "gpuperf.kernels.dram:DramLayout.locate_element": [B(dr.TEXTBOOK.locate_element, -1,
                                                         word="index")],
    "gpuperf.kernels.dram:DramLayout.table": [B(dr.TEXTBOOK.table, 0, word="n_elements")],
    "gpuperf.kernels.dram:DramLayout.__init__": [B(dr.DramLayout, burst_bytes=0,
                                                   word="burst_bytes")],
    "gpuperf.kernels.dram:ddr_channel_gbps": [B(dr.ddr_channel_gbps, 64, NAN,
                                                word="clock_ghz")],
    "gpuperf.kernels.dram:channels_needed": [B(dr.channels_needed, 100, 0,
                                               word="channel_gbps")],
    "gpuperf.kernels.dram:bus_utilization": [B(dr.bus_utilization, -1, 2, word="ratio")],
    "gpuperf.kernels.dram:banks_needed": [B(dr.banks_needed, INF, word="ratio")],
    "gpuperf.kernels.dram:bank_schedule": [B(dr.bank_schedule, 4, 0, 10, word="banks")],
    "gpuperf.kernels.dram:simulated_utilization": [B(dr.simulated_utilization, 4, 2, 1,
                                                     word="accesses")],
    "gpuperf.kernels.dram:tile_loads": [B(dr.tile_loads, 4, 2, 5, word="phase")],
    "gpuperf.kernels.dram:phase_usage": [B(dr.phase_usage, 4, 2, 0, matrix="Q",
                                           word="matrix")],
    "gpuperf.kernels.dram:channels_used": [B(dr.channels_used, 0, 2, 0, word="width")],
    "gpuperf.kernels.dram:littles_law_gbps": [B(dr.littles_law_gbps, 100, 0,
                                                word="latency_ns")],
    "gpuperf.kernels.dram:bytes_in_flight": [B(dr.bytes_in_flight, "8", 4, 132, err=TypeError,
                                               word="warps_per_sm"),
                                             B(dr.bytes_in_flight, 8, 4, -1, word="sm_count")],
    "gpuperf.kernels.dram:loads_per_thread_needed": [B(dr.loads_per_thread_needed, NAN, 600,
                                                       32, 132, word="target_gbps")],
    "gpuperf.kernels.dram:show_model_table": [B(dr.show_model_table, [], {"a": "b"}, err=TypeError,
                                                word="rows"),
                                              B(dr.show_model_table, [{"a": 1}], {"b": "c"},
                                                word="headers")],
    "gpuperf.kernels.dram:strides_visible": [B(dr.strides_visible, "r", err=TypeError, word="res")],
    "gpuperf.kernels.dram:step_latency_ns": [B(dr.step_latency_ns, 0.02, 0.01, 100, word="ms_long")],
    "gpuperf.kernels.dram:channel_gbps": [B(dr.channel_gbps, 20, 1, -16, word="bus_gbps")],
    "gpuperf.kernels.dram:copy_loads_per_thread_needed": [
        B(dr.copy_loads_per_thread_needed, -1, 600, 32, 132, word="copy_gbps")],
    "gpuperf.kernels.dram:copy_latency_covered_ns": [B(dr.copy_latency_covered_ns, 1e6, 0,
                                                       word="copy_gbps")],
    "gpuperf.kernels.dram:make_sum_loads": [B(dr.make_sum_loads, 0, word="ilp")],
    "gpuperf.kernels.dram:make_copy": [B(dr.make_copy, 0, word="ilp")],
    "gpuperf.kernels.dram:make_strided_chunks": [B(dr.make_strided_chunks, 0, word="ilp")],
    "gpuperf.kernels.dram:chase_chain": [B(dr.chase_chain, 0, word="n_slots")],
    "gpuperf.kernels.dram:chase": [B(dr.chase, CHAIN, 3, start=5, word="start"),
                                   B(dr.chase, CHAIN, -1, word="steps")],
    "gpuperf.kernels.dram:sum_partials": [B(dr.sum_partials, X, ilp=0, word="ilp")],
    "gpuperf.kernels.dram:copy": [B(dr.copy, X, shared_bytes=-1, word="shared_bytes")],
    "gpuperf.kernels.dram:chunk_geometry": [B(dr.chunk_geometry, 0, 128, word="n_elements")],
    "gpuperf.kernels.dram:strided_sum": [B(dr.strided_sum, X, 100, word="stride_bytes")],
    "gpuperf.kernels.dram:measure_loads": [B(dr.measure_loads, 0, 8, word="ilp")],
    "gpuperf.kernels.dram:resident_blocks_per_sm": [
        B(dr.resident_blocks_per_sm, "k", 128, err=TypeError, word="kernel"),
        B(dr.resident_blocks_per_sm, dr.pointer_chase, 0, word="block"),
        B(dr.resident_blocks_per_sm, dr.pointer_chase, 128, -1, word="shared_bytes")],
    "gpuperf.kernels.dram:persistent_launch": [
        B(dr.persistent_launch, "k", 8, err=TypeError, word="kernel"),
        B(dr.persistent_launch, dr.pointer_chase, 0, word="warps_per_sm")],
    "gpuperf.kernels.dram:littles_law_agreement": [B(dr.littles_law_agreement, "res",
                                                     err=TypeError, word="res")],
    "gpuperf.kernels.dram:latency_levels": [lazy(dr.latency_levels, _rec("dram_latency"),
                                                 order="diagonal", word="order")],
    "gpuperf.kernels.dram:draw_burst": [B(dr.draw_burst, 0, word="burst_bytes")],
    "gpuperf.kernels.dram:draw_banks": [B(dr.draw_banks, -1.0, word="ratio")],
    "gpuperf.kernels.dram:draw_interleaving": [B(dr.draw_interleaving, "L", err=TypeError,
                                                 word="layout")],
    "gpuperf.kernels.dram:draw_matmul_phases": [B(dr.draw_matmul_phases, 0, word="width")],
    "gpuperf.kernels.dram:plot_latency": [B(dr.plot_latency, R, word="order")],
    "gpuperf.kernels.dram:plot_littles_law": [B(dr.plot_littles_law, R, word="ilp")],
    "gpuperf.kernels.dram:plot_occupancy": [B(dr.plot_occupancy, "r", err=TypeError,
                                              word="res")],
    "gpuperf.kernels.dram:plot_strides": [B(dr.plot_strides, R, word="padded")],
    "gpuperf.kernels.dram:check_copy_in_flight": [rep(dr.check_copy_in_flight, "k",
                                                        word="kernel")],
    "gpuperf.kernels.dram:check_bank_queue": [rep(dr.check_bank_queue, "fn",
                                                    word="function")],
    "gpuperf.kernels.dram:check_loads_needed": [rep(dr.check_loads_needed, 5,
                                                    word="function")],
    "gpuperf.kernels.dram:check_phase_channels": [rep(dr.check_phase_channels, 5,
                                                      word="function")],
    "gpuperf.kernels.dram:check_step_latency": [rep(dr.check_step_latency, 5, word="function")],
    "gpuperf.kernels.dram:check_channel_gbps": [rep(dr.check_channel_gbps, 5, word="function")],
    "gpuperf.kernels.dram:check_copy_loads_needed": [rep(dr.check_copy_loads_needed, 5,
                                                         word="function")],
    "gpuperf.kernels.dram:check_blocks_per_sm": [rep(dr.check_blocks_per_sm, 5,
                                                     word="function")],
    "gpuperf.kernels.dram:verify_prediction": [B(dr.verify_prediction, 1000, 8, word="loads"),
                                               B(dr.verify_prediction, 1, 8, res="r",
                                                 err=TypeError, word="res")],
    # ------------------------------------------------------------------ gdn
    "gpuperf.kernels.gdn:make_fused_tiled": [B(gdn.make_fused_tiled, 12, word="tile")],
    "gpuperf.kernels.gdn:tiled_launch": [B(gdn.tiled_launch, 4, 0, word="n_samples")],
    "gpuperf.kernels.gdn:channel_major": [B(gdn.channel_major, [1], err=TypeError, word="x")],
    "gpuperf.kernels.gdn:reference_forward": [B(gdn.reference_forward, "w", G, BETA,
                                                err=TypeError, word="w")],
    "gpuperf.kernels.gdn:reference_factor": [B(gdn.reference_factor, W, W[:1], W,
                                               word="delta")],
    "gpuperf.kernels.gdn:reference_raw": [B(gdn.reference_raw, W, W, W[:, :1], word="d")],
    "gpuperf.kernels.gdn:reference_backward": [B(gdn.reference_backward, W, W, "g", BETA,
                                                 err=TypeError, word="gamma")],
    "gpuperf.kernels.gdn:reference_input_grad": [B(gdn.reference_input_grad, W, W, G,
                                                   np.ones(3), word="beta")],
    "gpuperf.kernels.gdn:random_problem": [B(gdn.random_problem, 0, 10, word="n_ch")],
    "gpuperf.kernels.gdn:make_forward": [B(gdn.make_forward, 100, word="block")],
    "gpuperf.kernels.gdn:make_replicate": [B(gdn.make_replicate, 0, word="block")],
    "gpuperf.kernels.gdn:make_multiply": [B(gdn.make_multiply, 2048, word="block")],
    "gpuperf.kernels.gdn:make_per_channel": [B(gdn.make_per_channel, "256", err=TypeError,
                                               word="block")],
    "gpuperf.kernels.gdn:make_shared": [B(gdn.make_shared, 0, word="block")],
    "gpuperf.kernels.gdn:make_registers": [B(gdn.make_registers, 0, word="block")],
    "gpuperf.kernels.gdn:make_row_sum": [B(gdn.make_row_sum, 100, word="block")],
    "gpuperf.kernels.gdn:make_beta_grad": [B(gdn.make_beta_grad, 100, word="block")],
    "gpuperf.kernels.gdn:make_fused": [B(gdn.make_fused, 256, 0, word="coarsen")],
    "gpuperf.kernels.gdn:raw_bytes": [B(gdn.raw_bytes, -1, 5, word="n_ch")],
    "gpuperf.kernels.gdn:make_input_grad": [B(gdn.make_input_grad, 100, word="block")],
    "gpuperf.kernels.gdn:make_factor": [B(gdn.make_factor, 0, word="block")],
    "gpuperf.kernels.gdn:input_grad": [
        B(gdn.input_grad, W32, W32, W32, np.ones((3, 3), np.float32), word="gamma"),
        B(gdn.input_grad, W, W32, W32, G, err=TypeError, word="w"),
        B(gdn.input_grad, W32, W32, W32, np.ones((2, 2), np.float32), block=48, word="block")],
    "gpuperf.kernels.gdn:input_grad_bytes": [B(gdn.input_grad_bytes, 0, 5, word="n_ch")],
    "gpuperf.kernels.gdn:determinism_summary": [
        B(gdn.determinism_summary, "det", err=TypeError, word="res"),
        B(gdn.determinism_summary, R, word="method")],
    "gpuperf.kernels.gdn:input_grad_summary": [
        B(gdn.input_grad_summary, None, err=TypeError, word="res"),
        B(gdn.input_grad_summary, R, word="n_ch")],
    "gpuperf.kernels.gdn:forward": [B(gdn.forward, W32, G.astype(np.float32),
                                      BETA.astype(np.float32), block=100, word="block")],
    "gpuperf.kernels.gdn:launch_raw": [B(gdn.launch_raw, "shared", X, X, X, X, err=TypeError,
                                         word="d_delta"),
                                       B(gdn.launch_raw, "magic", W32, W32, W32, W32,
                                         word="algorithm")],
    "gpuperf.kernels.gdn:allocated_bytes": [B(gdn.allocated_bytes, "magic", 4, 4,
                                              word="algorithm")],
    "gpuperf.kernels.gdn:moved_bytes": [B(gdn.moved_bytes, "fused", 0, 4, word="n_ch")],
    "gpuperf.kernels.gdn:raw_contributions": [B(gdn.raw_contributions, W32, W32, W32,
                                                algorithm="magic", word="algorithm")],
    "gpuperf.kernels.gdn:row_sums": [B(gdn.row_sums, X, word="mat")],
    "gpuperf.kernels.gdn:backward": [B(gdn.backward, W32, W32, W32, method="magic",
                                       word="method")],
    "gpuperf.kernels.gdn:plot_headline": [B(gdn.plot_headline, "head", err=TypeError,
                                             word="head"),
                                           B(gdn.plot_headline, R, word="total_ms")],
    "gpuperf.kernels.gdn:show_headline": [B(gdn.show_headline, [], err=TypeError, word="head")],
    "gpuperf.kernels.gdn:plot_scaling": [B(gdn.plot_scaling, R, word="side")],
    "gpuperf.kernels.gdn:draw_organization": [B(gdn.draw_organization, 0, word="n_ch")],
    "gpuperf.kernels.gdn:memory_table": [B(gdn.memory_table, 0, 5, word="n_ch")],
    "gpuperf.kernels.gdn:reduction_rows": [B(gdn.reduction_rows, "r", err=TypeError, word="res")],
    "gpuperf.kernels.gdn:loop_against_batch": [B(gdn.loop_against_batch, "r", 64, "a", "b",
                                                 err=TypeError, word="res")],
    "gpuperf.kernels.gdn:measure_point": [B(gdn.measure_point, 64, 128, method="magic",
                                            word="method")],
    "gpuperf.kernels.gdn:headline_table": [B(gdn.headline_table, "r", err=TypeError,
                                             word="res")],
    "gpuperf.kernels.gdn:check_registers": [rep(gdn.check_registers, "k", word="kernel")],
    "gpuperf.kernels.gdn:check_beta_grad": [rep(gdn.check_beta_grad, None, word="kernel")],
    "gpuperf.kernels.gdn:check_moved_bytes": [rep(gdn.check_moved_bytes, "f", word="")],
    "gpuperf.kernels.gdn:dgamma_launcher": [B(gdn.dgamma_launcher, "magic", 4, word="method"),
                                            B(gdn.dgamma_launcher, "fused_tiled", 4, 12,
                                              word="tile"),
                                            B(gdn.dgamma_launcher, "fused", 0, word="n_ch")],
    # ------------------------------------------------------------------ gridstride
    "gpuperf.kernels.gridstride:copy": [B(gs.copy, X, method="warp", word="method"),
                                        B(gs.copy, X, np.ones(4, np.float32), word="out")],
    "gpuperf.kernels.gridstride:launch_config": [B(gs.launch_config, 0, word="n")],
    "gpuperf.kernels.gridstride:plot_size_sweep": [B(gs.plot_size_sweep, "x", err=TypeError,
                                                     word="result"),
                                                   B(gs.plot_size_sweep, R, word="bytes")],
    "gpuperf.kernels.gridstride:check_saxpy": [rep(gs.check_saxpy, "k", word="kernel")],
    "gpuperf.kernels.gridstride:check_call_time": [rep(gs.check_call_time, "f", word="function")],
    "gpuperf.kernels.gridstride:flush_comparison": [
        B(gs.flush_comparison, "r", err=TypeError, word="res"),
        B(gs.flush_comparison, R, word="gridstride_flush")],
    "gpuperf.kernels.gridstride:compare_call_model": [
        B(gs.compare_call_model, "f", R, err=TypeError, word="fn"),
        B(gs.compare_call_model, print, "sizes", err=TypeError, word="sizes"),
        B(gs.compare_call_model, print, R, word="n")],
    "gpuperf.kernels.gridstride:check_bandwidth_formula": [rep(gs.check_bandwidth_formula,
                                                               "f", word="")],
    "gpuperf.kernels.gridstride:measure_launch": [B(gs.measure_launch, "warp",
                                                    word="method")],
    "gpuperf.kernels.gridstride:draw_grid_stride": [B(gs.draw_grid_stride, 20, 2, 0,
                                                      word="threads")],
    # ------------------------------------------------------------------ matmul
    "gpuperf.kernels.matmul:make_tiled_article": [B(mm.make_tiled_article, 0, word="tile")],
    "gpuperf.kernels.matmul:warp_threads": [B(mm.warp_threads, (64, 32), word="1024"),
                                            B(mm.warp_threads, "ab", err=TypeError, word="block")],
    "gpuperf.kernels.matmul:warp_sectors": [B(mm.warp_sectors, (16, 16), 0, word="n")],
    "gpuperf.kernels.matmul:show_warp_sectors": [B(mm.show_warp_sectors, (16, 16), 0,
                                                   word="n")],
    "gpuperf.kernels.matmul:make_tiled_early_return": [B(mm.make_tiled_early_return, 33,
                                                         word="tile")],
    "gpuperf.kernels.matmul:make_tiled": [B(mm.make_tiled, 33, word="tile")],
    "gpuperf.kernels.matmul:Variant.launch": [B(V.launch, A23, A23, "C", err=TypeError,
                                                word="C")],
    "gpuperf.kernels.matmul:Variant.__init__": [B(mm.Variant, "n", "k", (16, 16),
                                                  lambda m, n: (1, 1), "naive", err=TypeError,
                                                  word="kernel")],
    "gpuperf.kernels.matmul:variant": [B(mm.variant, "tiles", word="tiles")],
    "gpuperf.kernels.matmul:matmul": [B(mm.matmul, A23, A23, word="A")],
    "gpuperf.kernels.matmul:run_variant": [B(mm.run_variant, "v", A23, A23, err=TypeError,
                                             word="v")],
    "gpuperf.kernels.matmul:check_operands": [B(mm.check_operands, X, X, word="A")],
    "gpuperf.kernels.matmul:flops": [B(mm.flops, 0, 1, 1, word="M")],
    "gpuperf.kernels.matmul:traffic_bytes": [B(mm.traffic_bytes, "tiled", 8, 8, 8,
                                               err=TypeError, word="model"),
                                             B(mm.traffic_bytes, "tiled", 8, 8, 8, 0,
                                               word="tile")],
    "gpuperf.kernels.matmul:intensity": [B(mm.intensity, "tild", 8, 8, 8, word="model")],
    "gpuperf.kernels.matmul:roofline_bound": [B(mm.roofline_bound, 1, 0, 1, word="bw_gbps")],
    "gpuperf.kernels.matmul:reference": [B(mm.reference, "A", "B", err=TypeError, word="A")],
    "gpuperf.kernels.matmul:relative_error": [B(mm.relative_error, [1.0, 2.0], [0.0, 0.0],
                                                word="ref")],
    "gpuperf.kernels.matmul:device_operands": [B(mm.device_operands, 4, 4, 0, word="K")],
    "gpuperf.kernels.matmul:verify": [B(mm.verify, V, 0, word="M")],
    "gpuperf.kernels.matmul:table": [B(mm.table, "t", [], err=TypeError, word="rows"),
                                     B(mm.table, 3, [{"a": 1}], err=TypeError, word="name")],
    "gpuperf.kernels.matmul:where_measured": [B(mm.where_measured, "r", err=TypeError, word="res")],
    "gpuperf.kernels.matmul:measure_variant": [B(mm.measure_variant, V, 0, word="n")],
    "gpuperf.kernels.matmul:measure_cublas": [B(mm.measure_cublas, 0, word="n")],
    "gpuperf.kernels.matmul:measure_version": [B(mm.measure_version, "tiled 12", 64,
                                                 word="version"),
                                               B(mm.measure_version, "tiled 16", 0, word="n")],
    "gpuperf.kernels.matmul:roofline_rows": [B(mm.roofline_rows, ["v"], 64, print,
                                               err=TypeError, word="variants[0]")],
    "gpuperf.kernels.matmul:bug_outcome": [B(mm.bug_outcome, V, 0, 1, 1, word="M")],
    "gpuperf.kernels.matmul:source_checks_apply": [B(mm.source_checks_apply, "chk",
                                                      err=TypeError, word="chk")],
    "gpuperf.kernels.matmul:check_matmul_kernel": [B(mm.check_matmul_kernel, "f", "t",
                                                     err=TypeError, word="make_launch")],
    "gpuperf.kernels.matmul:check_tiled": [B(mm.check_tiled, print, tile=0, word="tile")],
    "gpuperf.kernels.matmul:check_intensity": [rep(mm.check_intensity, "f", word="")],
    "gpuperf.kernels.matmul:draw_mappings": [B(mm.draw_mappings, 1, word="n")],
    "gpuperf.kernels.matmul:plot_roofline": [B(mm.plot_roofline, "roof", err=TypeError,
                                               word="roof")],
    "gpuperf.kernels.matmul:draw_tiling": [B(mm.draw_tiling, 8, 3, word="tile")],
    "gpuperf.kernels.matmul:check_tile": [B(mm.check_tile, 33, word="tile")],
    "gpuperf.kernels.matmul:check_variant": [B(mm.check_variant, "v", err=TypeError, word="Variant")],
    "gpuperf.kernels.matmul:repeats": [B(mm.repeats, 0, word="n")],
    "gpuperf.kernels.matmul:speed_bar": [B(mm.speed_bar, "chk", mm.make_tiled(4), 1, (4, 4), "k",
                                           err=TypeError, word="chk")],
    # ------------------------------------------------------------------ privatization
    "gpuperf.kernels.privatization:reference": [B(pv.reference, X, err=TypeError,
                                                  word="data")],
    "gpuperf.kernels.privatization:random_bytes": [B(pv.random_bytes, -1, word="n")],
    "gpuperf.kernels.privatization:make_private": [B(pv.make_private, 100, word="block")],
    "gpuperf.kernels.privatization:launch": [B(pv.launch, "shared", X, X, word="version"),
                                             B(pv.launch, "global", X, X, err=TypeError,
                                               word="d_data")],
    "gpuperf.kernels.privatization:histogram": [B(pv.histogram, X, err=TypeError,
                                                  word="data")],
    "gpuperf.kernels.privatization:check_private_histogram": [
        rep(pv.check_private_histogram, "k", word="kernel")],
    "gpuperf.kernels.privatization:check_attainable": [rep(pv.check_attainable, "f", word="")],
    # ------------------------------------------------------------------ reduce
    "gpuperf.kernels.reduce:reduce_sum": [B(rd.reduce_sum, X, "v9", word="v9"),
                                          B(rd.reduce_sum, X, "v2", block=100, word="block")],
    "gpuperf.kernels.reduce:reduce_single_pass": [
        B(rd.reduce_single_pass, X, block=100, word="block"),
        B(rd.reduce_single_pass, X, blocks=0, word="blocks"),
        B(rd.reduce_single_pass, X.astype(np.float64), err=TypeError, word="x")],
    "gpuperf.kernels.reduce:argmax": [B(rd.argmax, X, block=48, word="block"),
                                      B(rd.argmax, X, width=2, word="width"),
                                      B(rd.argmax, X, width=True, err=TypeError, word="width"),
                                      B(rd.argmax, np.ones(0, np.float32), word="x"),
                                      B(rd.argmax, X.astype(np.int32), err=TypeError, word="x")],
    "gpuperf.kernels.reduce:single_pass_summary": [B(rd.single_pass_summary, "r",
                                                     err=TypeError, word="res")],
    "gpuperf.kernels.reduce:argmax_summary": [
        B(rd.argmax_summary, "r", err=TypeError, word="res"),
        B(rd.argmax_summary, records.Result("reduce_argmax", [{"version": "cupy.argmax",
                                                               "gbps": 1.0, "correct": True}],
                                            {}, "recorded"), word="sum, 4-byte loads")],
    "gpuperf.kernels.reduce:l2_resident_summary": [
        B(rd.l2_resident_summary, "r", err=TypeError, word="res")],
    "gpuperf.kernels.reduce:atomics_ablation_summary": [
        B(rd.atomics_ablation_summary, "r", err=TypeError, word="res")],
    "gpuperf.kernels.reduce:edge_case_failures": [
        B(rd.edge_case_failures, "max", word="kind"),
        B(rd.edge_case_failures, "sum", 3, word="width"),
        B(rd.edge_case_failures, "sum", 4, 100, word="block"),
        B(rd.edge_case_failures, "sum", 4, 32, 0, word="n")],
    "gpuperf.kernels.reduce:one_wave": [
        B(rd.one_wave, rd.make_warp_atomic(32), "void(float32[::1], float32[::1], int64, int64)",
          2048, word="block")],
    "gpuperf.kernels.reduce:plan": [B(rd.plan, "v2", 0, word="n"),
                                   B(rd.plan, "v8", 64, pack="no", err=TypeError, word="pack")],
    "gpuperf.kernels.reduce:tree_sum_f32": [B(rd.tree_sum_f32, [1.0, 2.0], 3, word="block"),
                                            B(rd.tree_sum_f32, [], word="empty")],
    "gpuperf.kernels.reduce:sequential_sum_f32": [B(rd.sequential_sum_f32, [], word="empty")],
    "gpuperf.kernels.reduce:summation_errors": [B(rd.summation_errors, [0], word="sizes"),
                                                B(rd.summation_errors, seed=-1, word="seed")],
    "gpuperf.kernels.reduce:plot_size_sweep": [B(rd.plot_size_sweep, None, ["v8"], err=TypeError,
                                                 word="result")],
    "gpuperf.kernels.reduce:host_bound_limit": [B(rd.host_bound_limit, None, ["v8"], err=TypeError,
                                                  word="result")],
    "gpuperf.kernels.reduce:plot_summation_errors": [B(rd.plot_summation_errors, [{"n": 1}],
                                                       err=TypeError, word="rows")],
    "gpuperf.kernels.reduce:make_v8_ablation": [B(rd.make_v8_ablation, 512, 2, 1, 1, word="width"),
                                                B(rd.make_v8_ablation, 512, 1, 1, 4,
                                                  word="accumulators")],
    "gpuperf.kernels.reduce:ablation_plan": [B(rd.ablation_plan, 100, 4, 3, 4, word="unroll"),
                                             B(rd.ablation_plan, 0, 4, 4, 4, word="n")],
    "gpuperf.kernels.reduce:integer_input": [B(rd.integer_input, 0, word="n"),
                                             B(rd.integer_input, 10, -1, word="seed")],
    "gpuperf.kernels.reduce:atomics_per_call": [B(rd.atomics_per_call, "v8", 1, 1,
                                                  word="version"),
                                                B(rd.atomics_per_call, "grid-atomic", 0, 1,
                                                  word="grid")],
    "gpuperf.kernels.reduce:prologue_grids_summary": [
        B(rd.prologue_grids_summary, "r", err=TypeError, word="res"),
        lazy(rd.prologue_grids_summary, _rec("reduce_ladder"), word="grid")],
    "gpuperf.kernels.reduce:prologue_vs_numpy": [
        B(rd.prologue_vs_numpy, "r", err=TypeError, word="res"),
        lazy(rd.prologue_vs_numpy, _rec("reduce_ladder"), word="numpy")],
    "gpuperf.kernels.reduce:show_host_cost": [B(rd.show_host_cost, "r", err=TypeError,
                                                 word="ladder")],
    "gpuperf.kernels.reduce:timing_methods_summary": [
        B(rd.timing_methods_summary, "r", err=TypeError, word="res"),
        lazy(rd.timing_methods_summary, _rec("reduce_ladder"), word="method")],
    "gpuperf.kernels.reduce:ablation_summary": [
        B(rd.ablation_summary, "r", err=TypeError, word="res"),
        lazy(rd.ablation_summary, _rec("reduce_ladder"), word="width")],
    "gpuperf.kernels.reduce:show_order_effects": [B(rd.show_order_effects, "r", err=TypeError,
                                                    word="res")],
    "gpuperf.kernels.reduce:Plan.__init__": [B(rd.Plan, "v2", 100, 100, None, None,
                                               word="block")],
    "gpuperf.kernels.reduce:Plan.__call__": [lazy(lambda p: p(X), lambda: rd.plan("v2", 100),
                                                  word="d_x")],
    "gpuperf.kernels.reduce:kernel_for": [B(rd.kernel_for, "v2", 100, word="block")],
    "gpuperf.kernels.reduce:signature": [B(rd.signature, "v9", word="version")],
    "gpuperf.kernels.reduce:resident_blocks_per_sm": [B(rd.resident_blocks_per_sm, 0,
                                                        word="block")],
    "gpuperf.kernels.reduce:default_blocks": [B(rd.default_blocks, "v9", 10, 256,
                                                word="version")],
    "gpuperf.kernels.reduce:head_elements": [B(rd.head_elements, X, -1, word="n")],
    "gpuperf.kernels.reduce:draw_rung": [B(rd.draw_rung, "v2", 3, word="width")],
    "gpuperf.kernels.reduce:ptx": [B(rd.ptx, "v9", word="version")],
    "gpuperf.kernels.reduce:ptx_lines": [B(rd.ptx_lines, "v9", word="version"),
                                         B(rd.ptx_lines, "v2", cc=9, err=TypeError,
                                           word="cc")],
    "gpuperf.kernels.reduce:single_thread_ptx": [B(rd.single_thread_ptx, 9, err=TypeError,
                                                   word="cc")],
    "gpuperf.kernels.reduce:ptx_counts": [B(rd.ptx_counts, 5, err=TypeError, word="text")],
    "gpuperf.kernels.reduce:telling_lines": [B(rd.telling_lines, "", ["bad"],
                                               word="names[0]")],
    "gpuperf.kernels.reduce:measure_point": [B(rd.measure_point, "v9", word="version")],
    "gpuperf.kernels.reduce:check_sequential_max": [rep(rd.check_sequential_max, "k",
                                                        word="kernel")],
    "gpuperf.kernels.reduce:check_block_max": [rep(rd.check_block_max, None, word="kernel")],
    "gpuperf.kernels.reduce:check_absmax": [B(rd.check_absmax, print, target=-1,
                                              word="target")],
    # ------------------------------------------------------------------ streams
    "gpuperf.kernels.streams:reference": [B(st.reference, X, X, iters=-1, word="iters")],
    "gpuperf.kernels.streams:pipeline_memory_bound": [B(st.pipeline_memory_bound, 0, 1, 1,
                                                        word="n")],
    "gpuperf.kernels.streams:flops_per_element": [B(st.flops_per_element, -1, word="iters")],
    "gpuperf.kernels.streams:arithmetic_intensity": [B(st.arithmetic_intensity, "1",
                                                       err=TypeError, word="iters")],
    "gpuperf.kernels.streams:launch_chunk": [B(st.launch_chunk, X, X, X, 0, 2000,
                                               word="block")],
    # A predicate: any object gets an answer (only NumPy arrays can be pinned).
    "gpuperf.kernels.streams:is_pinned": [(lambda: st.is_pinned("x"), ANSWER, False),
                                          (lambda: st.is_pinned(None), ANSWER, False)],
    "gpuperf.kernels.streams:pinned_copy": [B(st.pinned_copy, [1.0], err=TypeError,
                                              word="x")],
    "gpuperf.kernels.streams:Chunk.__init__": [B(st.Chunk, 0, 0, 5, 5, word="hi")],
    "gpuperf.kernels.streams:plan_chunks": [B(st.plan_chunks, 0, 1, 1, word="n")],
    "gpuperf.kernels.streams:Run.__init__": [B(st.Run, 0, 0, 1, 1, 1.0, [1.0], [], word="n")],
    "gpuperf.kernels.streams:Pipeline.__init__": [B(st.Pipeline, 16, n_streams=0,
                                                    word="n_streams")],
    "gpuperf.kernels.streams:Pipeline.run": [lazy(lambda p, *a, **k: p.run(*a, **k),
                                                  lambda: st.Pipeline(8), X, X,
                                                  pageable="maybe", word="pageable")],
    "gpuperf.kernels.streams:Pipeline.time": [lazy(lambda p, *a, **k: p.time(*a, **k),
                                                   lambda: st.Pipeline(8), X, X, repeats=0,
                                                   word="repeats")],
    "gpuperf.kernels.streams:pipelined": [B(st.pipelined, X, X, n_streams=0,
                                            word="n_streams")],
    "gpuperf.kernels.streams:serial": [B(st.serial, X, X, iters=-1, word="iters")],
    "gpuperf.kernels.streams:ideal_schedule": [B(st.ideal_schedule, [1], [1], [NAN], 2,
                                                 word="d2h_ms[0]")],
    "gpuperf.kernels.streams:ideal_ms": [B(st.ideal_ms, "12", [1], [1], 2, err=TypeError,
                                           word="h2d_ms")],
    "gpuperf.kernels.streams:overlap_bound_ms": [B(st.overlap_bound_ms, [1], [-1], [1],
                                                   word="kernel_ms[0]")],
    "gpuperf.kernels.streams:article_default_stream": [B(st.article_default_stream, "k", X, X,
                                                         err=TypeError, word="kernel")],
    "gpuperf.kernels.streams:article_five_streams": [B(st.article_five_streams, "k", X, X,
                                                       err=TypeError, word="kernel")],
    "gpuperf.kernels.streams:shared_buffer_pipeline": [B(st.shared_buffer_pipeline, X, X, X,
                                                         n_streams=0, word="n_streams")],
    "gpuperf.kernels.streams:fixed_five_streams": [B(st.fixed_five_streams, X, X,
                                                     np.ones(3, np.float32), word="out")],
    "gpuperf.kernels.streams:explore_measure": [B(st.explore_measure, 0, 1, 0,
                                                  word="n_streams")],
    "gpuperf.kernels.streams:timeline_spans": [lazy(st.timeline_spans,
                                                    _rec("streams_timeline"), "nope", "x",
                                                    word="work")],
    "gpuperf.kernels.streams:busy_ms": [lazy(st.busy_ms, _rec("streams_timeline"), "nope", "x",
                                             word="work")],
    "gpuperf.kernels.streams:article_summary": [B(st.article_summary, "a", err=TypeError,
                                                  word="res")],
    "gpuperf.kernels.streams:show_article_summary": [B(st.show_article_summary, "a",
                                                       err=TypeError, word="res")],
    "gpuperf.kernels.streams:pinned_default_stream": [B(st.pinned_default_stream, X, X,
                                                        np.ones(3, np.float32), word="out")],
    "gpuperf.kernels.streams:pinned_and_streams_summary": [
        lazy(st.pinned_and_streams_summary, _rec("streams_timeline"), word="host_memory")],
    "gpuperf.kernels.streams:show_pinned_and_streams": [
        B(st.show_pinned_and_streams, "r", err=TypeError, word="res")],
    "gpuperf.kernels.streams:pageable_overlap_summary": [
        lazy(st.pageable_overlap_summary, _rec("streams_article"), word="memory")],
    "gpuperf.kernels.streams:show_pageable_overlap": [
        B(st.show_pageable_overlap, 3, err=TypeError, word="res")],
    "gpuperf.kernels.gdn:launch_bound_table": [
        lazy(gdn.launch_bound_table, _rec("streams_pipeline"), word="n_ch")],
    "gpuperf.kernels.gdn:show_launch_bound": [
        B(gdn.show_launch_bound, 3, err=TypeError, word="res")],
    "gpuperf.kernels.streams:sync_calls_summary": [
        lazy(st.sync_calls_summary, _rec("streams_pipeline"), word="call")],
    "gpuperf.kernels.streams:show_sync_calls": [
        B(st.show_sync_calls, 3, err=TypeError, word="res")],
    "gpuperf.kernels.streams:memory_kinds_summary": [
        lazy(st.memory_kinds_summary, _rec("streams_pipeline"), word="method")],
    "gpuperf.kernels.streams:show_memory_kinds": [
        B(st.show_memory_kinds, None, err=TypeError, word="res")],
    "gpuperf.kernels.streams:copy_overhead_summary": [
        lazy(st.copy_overhead_summary, _rec("streams_pipeline"), word="api")],
    "gpuperf.kernels.streams:show_copy_overhead": [
        B(st.show_copy_overhead, None, err=TypeError, word="res")],
    "gpuperf.kernels.streams:plot_timeline": [lazy(st.plot_timeline, _rec("streams_timeline"),
                                                   "nope", word="work")],
    "gpuperf.kernels.streams:plot_default_stream": [B(st.plot_default_stream, R,
                                                      word="case")],
    "gpuperf.kernels.streams:plot_speedup": [B(st.plot_speedup, "r", err=TypeError,
                                               word="res")],
    "gpuperf.kernels.streams:plot_host_bandwidth": [B(st.plot_host_bandwidth, 5,
                                                      err=TypeError, word="res")],
    "gpuperf.kernels.streams:plot_explore": [lazy(st.plot_explore, _rec("streams_explore"),
                                                  chunk_counts=[3],
                                                  word="chunk_counts[0]")],
    "gpuperf.kernels.streams:explore": [B(st.explore, R, word="n_streams")],
    "gpuperf.kernels.streams:check_pipeline": [B(st.check_pipeline, print, sizes=[(1, 2)],
                                                 err=TypeError, word="sizes[0]")],
    "gpuperf.kernels.streams:check_predict": [rep(st.check_predict, "f", word="")],
    "gpuperf.kernels.streams:check_chunks": [rep(st.check_chunks, "f", word="")],
    "gpuperf.kernels.streams:issued_ideal_ms": [B(st.issued_ideal_ms, [1], [1], [1], 1, -1.0,
                                                  word="issue_ms")],
    "gpuperf.kernels.streams:IssuePipeline.__init__": [B(st.IssuePipeline, 16, issue="cupy",
                                                         word="issue")],
    "gpuperf.kernels.streams:IssuePipeline.timed_issue_ms": [
        B(lambda: st.IssuePipeline(16).timed_issue_ms(), word="time(")],
    "gpuperf.kernels.streams:chunked_ideal_ms": [B(st.chunked_ideal_ms, 1.0, 1.0, 1.0, 0, 2,
                                                   word="n_chunks")],
    "gpuperf.kernels.streams:chunking_summary": [
        lazy(st.chunking_summary, _rec("streams_pipeline"), word="issue")],
    "gpuperf.kernels.streams:plot_chunking": [B(st.plot_chunking, 5, err=TypeError,
                                                word="res")],
    "gpuperf.kernels.dram:launch_in_timing": [
        lazy(dr.launch_in_timing, _rec("dram_latency"), word="ilp")],
    "gpuperf.kernels.dram:loaded_latency_reading": [
        lazy(dr.loaded_latency_reading, _rec("dram_littles_law"), None, word="loaded_ns")],
    "gpuperf.kernels.dram:loaded_littles_law": [
        lazy(dr.loaded_littles_law, _rec("dram_littles_law"), None, word="loaded_ns"),
        (lambda: dr.loaded_littles_law(records.run("dram_loaded_latency"),
                                       records.run("dram_littles_law"), within=0.5),
         ValueError, "within")],
    "gpuperf.kernels.dram:loaded_latency_summary": [
        lazy(dr.loaded_latency_summary, _rec("dram_littles_law"), word="loaded_ns")],
    "gpuperf.kernels.dram:show_loaded_latency": [B(dr.show_loaded_latency, 3, err=TypeError,
                                                   word="res")],
    "gpuperf.kernels.dram:plot_loaded_latency": [
        lazy(dr.plot_loaded_latency, _rec("dram_littles_law"), word="loaded_ns")],
    "gpuperf.kernels.streams:launch_cost_rows": [B(ln.launch_cost_rows, launches=0,
                                                  word="launches"),
                                                B(ln.launch_cost_rows, repeats="3",
                                                  err=TypeError, word="repeats")],
    "gpuperf.kernels.streams:launch_cost_summary": [
        lazy(ln.launch_cost_summary, _rec("streams_pipeline"), word="method")],
    "gpuperf.kernels.streams:show_launch_cost": [B(ln.show_launch_cost, 3, err=TypeError,
                                                  word="res")],
    "gpuperf.kernels.streams:queue_model": [B(ln.queue_model, 16, 0, "depth-first",
                                             word="connections"),
                                           B(ln.queue_model, 16, 1, "deep", word="order")],
    "gpuperf.kernels.streams:issue_order": [B(ln.issue_order, 4, "sideways", word="order")],
    "gpuperf.kernels.streams:kernel_params": [B(ln.kernel_params, (), (1,), word="parameters")],
    # Packing needs the driver: here (the simulator) it refuses, and a Plan launches through Numba.
    "gpuperf.kernels.streams:PackedLaunch.__init__": [
        B(ln.PackedLaunch, ln.bump, 1, 32, np.zeros(1, np.int64), word="simulator"),
        B(ln.PackedLaunch, ln.bump, 0, 32, np.zeros(1, np.int64), word="grid"),
        B(ln.PackedLaunch, ln.bump, 1, 2048, np.zeros(1, np.int64), word="block"),
        B(ln.PackedLaunch, "bump", 1, 32, err=TypeError, word="kernel")],
    "gpuperf.kernels.streams:CapturedGraph.__init__": [
        B(ln.CapturedGraph, "issue", err=TypeError, word="issue")],
    "gpuperf.kernels.streams:PackedLaunch.set_argument": [
        lazy(ln.PackedLaunch.set_argument, _packed_stand_in, 3, 0, word="index")],
    "gpuperf.kernels.streams:hardware_queue_rows": [
        B(ln.hardware_queue_rows, connections=[64], word="connections[0]"),
        B(ln.hardware_queue_rows, connections=4, err=TypeError, word="connections")],
    "gpuperf.kernels.streams:show_hardware_queues": [
        B(ln.show_hardware_queues, None, err=TypeError, word="res")],
}


# Every rung's factory refuses a block its tree cannot reduce (e.g. not a power of two).
BAD.update({f"gpuperf.kernels.reduce:{f}": [B(getattr(rd, f), 100, word="block")]
            for f in ("make_shared_atomic", "make_v0", "make_v1", "make_v1_5", "make_v2",
                      "make_v3", "make_v4", "make_v4_1", "make_v4_2", "make_v5", "make_v6")})
BAD.update({f"gpuperf.kernels.reduce:{f}": [B(getattr(rd, f), 2048, word="block")]
            for f in ("make_v7", "make_v8", "make_single_pass", "make_argmax",
                      "make_warp_atomic", "make_per_block_atomic", "make_spread_atomic")})
BAD["gpuperf.kernels.reduce:make_block_sum"] = [B(rd.make_block_sum, 48, word="block"),
                                               B(rd.make_block_sum, 2048, word="block")]
BAD["gpuperf.kernels.reduce:make_spread_atomic"].append(B(rd.make_spread_atomic, 256, 0,
                                                          word="words"))
BAD["gpuperf.kernels.reduce:make_argmax"].append(B(rd.make_argmax, 256, 2, word="width"))
BAD["gpuperf.kernels.reduce:make_single_pass"].append(B(rd.make_single_pass, 256, 2,
                                                        word="width"))

# Prose helpers: they print from a Result (and the device facts behind it).
BAD.update({
    "gpuperf.device:facts": [B(device.facts, "r", err=TypeError, word="res")],
    "gpuperf.device:fact": [B(device.fact, 5, err=TypeError, word="name"),
                            B(device.fact, "sm_cuont", word="sm_count"),
                            B(device.fact, "sm_count", res={}, err=TypeError, word="res")],
    "gpuperf.device:describe_facts": [B(device.describe_facts, "sm_cuont", word="names[0]"),
                                      B(device.describe_facts, 5, err=TypeError, word="names[0]"),
                                      B(device.describe_facts, res="r", err=TypeError,
                                        word="res")],
    "gpuperf.device:show_facts": [B(device.show_facts, "sm_count", "l2", word="names[1]"),
                                  B(device.show_facts, res=[], err=TypeError, word="res")],
    "gpuperf.kernels.coarsening:occupancy_limits": [
        B(cs.occupancy_limits, "r", err=TypeError, word="res"),
        B(cs.occupancy_limits, R, tile=0, word="tile"),
        B(cs.occupancy_limits, R, n="4096", err=TypeError, word="n"),
        B(cs.occupancy_limits, R, word="tile")],
    "gpuperf.kernels.coarsening:vecadd_summary": [
        B(cs.vecadd_summary, None, err=TypeError, word="res"),
        B(cs.vecadd_summary, R, word="factor")],
    "gpuperf.kernels.coarsening:regtile_summary": [
        B(cs.regtile_summary, [], err=TypeError, word="res"),
        B(cs.regtile_summary, R, word="kind")],
    "gpuperf.kernels.dram:one_load_per_thread": [B(dr.one_load_per_thread, "r", err=TypeError,
                                                   word="res")],
    "gpuperf.kernels.dram:occupancy_summary": [
        B(dr.occupancy_summary, None, err=TypeError, word="res"),
        B(dr.occupancy_summary, R, word="ilp")],
    "gpuperf.kernels.matmul:naive_vs_tiled_summary": [
        B(mm.naive_vs_tiled_summary, "r", err=TypeError, word="res"),
        B(mm.naive_vs_tiled_summary, R, small=0, word="small"),
        B(mm.naive_vs_tiled_summary, R, tile=2.5, err=TypeError, word="tile"),
        B(mm.naive_vs_tiled_summary, R, word="'n'")],
    "gpuperf.kernels.reduce:emulate_races": [B(rd.emulate_races, ["v9"], word="versions"),
                                             B(rd.emulate_races, ["v8"], word="versions"),
                                             B(rd.emulate_races, ["v4"], block=48, word="block"),
                                             B(rd.emulate_races, n=0, word="n"),
                                             B(rd.emulate_races, 4, err=TypeError,
                                               word="versions")],
    "gpuperf.kernels.reduce:show_races": [B(rd.show_races, [{"version": "v4"}], err=TypeError,
                                           word="rows"),
                                          B(rd.show_races, 5, err=TypeError, word="rows")],
    "gpuperf.kernels.reduce:versus_v100": [B(rd.versus_v100, {}, err=TypeError, word="res"),
                                           lazy(rd.versus_v100, _rec("dram_occupancy"),
                                                word="version")],
    "gpuperf.kernels.reduce:show_rung": [B(rd.show_rung, {}, "v0", err=TypeError, word="res"),
                                         lazy(rd.show_rung, _rec("reduce_ladder"), "v9",
                                              word="version"),
                                         lazy(rd.show_rung, _rec("dram_occupancy"), "v0",
                                              word="version")],
})

TRACE = co.AccessTrace([])
BAD.update({
    "gpuperf.kernels.coalescing:Request.__init__": [
        B(co.Request, "glob", "load", "x", 1, "", (0,), 0, co.warp_access(), word="space")],
    "gpuperf.kernels.coalescing:AccessTrace.__init__": [B(co.AccessTrace, "x", err=TypeError,
                                                          word="requests")],
    "gpuperf.kernels.coalescing:AccessTrace.select": [B(TRACE.select, space="glob",
                                                        word="space")],
    "gpuperf.kernels.coalescing:AccessTrace.efficiency": [B(TRACE.efficiency, kind="lod",
                                                            word="kind")],
    "gpuperf.kernels.coalescing:AccessTrace.sectors_per_request": [
        B(TRACE.sectors_per_request, arrray="x", word="arrray")],
    "gpuperf.kernels.coalescing:AccessTrace.max_bank_conflict": [
        B(TRACE.max_bank_conflict, kind=1, word="kind")],
    "gpuperf.kernels.coalescing:AccessTrace.first": [B(TRACE.first, array=5, err=TypeError,
                                                       word="array")],
    "gpuperf.kernels.coalescing:AccessTrace.draw": [B(TRACE.draw, space="local",
                                                      word="space")],
    "gpuperf.kernels.coalescing:trace": [B(co.trace, "k", 1, 32, err=TypeError, word="kernel"),
                                         B(co.trace, gs.copy_grid_stride, 0, 32, word="grid")],
    "gpuperf.kernels.coalescing:check_remap": [rep(co.check_remap, "k", word="kernel")],
    "gpuperf.kernels.coalescing:check_layout_bytes": [rep(co.check_layout_bytes, "f",
                                                          word="fn(layout")],
    "gpuperf.kernels.coalescing:check_padded_transpose": [rep(co.check_padded_transpose, "k",
                                                              word="kernel")],
    "gpuperf.kernels.coalescing:check_inplace_transpose": [rep(co.check_inplace_transpose, "k",
                                                               word="kernel")],
})


from gpuperf import emulator as emu  # noqa: E402
from gpuperf import headlines  # noqa: E402
from gpuperf import selfcheck as gp_selfcheck  # noqa: E402

RUN = emu.Run([], (1, 1, 1), (1, 1, 1), [])
BAD.update({
    "gpuperf.emulator:launch": [B(emu.launch, "k", 1, 32, err=TypeError, word="k"),
                                B(emu.launch, gs.copy_grid_stride, 0, 32, word="grid"),
                                B(emu.launch, gs.copy_grid_stride, 1, 32, X, X, 4,
                                  timeout=-1.0, word="timeout"),
                                B(emu.launch, gs.copy_grid_stride, 1, 32, X, X, 4,
                                  thread_order="backwards", word="thread_order")],
    "gpuperf.emulator:emulate": [B(emu.emulate, 42, err=TypeError, word="int")],
    "gpuperf.emulator:source_line": [B(emu.source_line, 3, 1, err=TypeError, word="file"),
                                     B(emu.source_line, "f.py", -1, word="line")],
    "gpuperf.emulator:EmuArray.__init__": [B(emu.EmuArray, [1.0], "x", "global", 0, None, None,
                                             err=TypeError, word="NumPy array"),
                                           B(emu.EmuArray, X, "x", "globl", 0, None, None,
                                             word="space")],
    "gpuperf.emulator:Run.__init__": [B(emu.Run, "e", 1, 1, [], err=TypeError, word="events")],
    "gpuperf.emulator:Run.accesses": [B(RUN.accesses, space="glob", word="space")],
    "gpuperf.emulator:Run.describe_races": [B(RUN.describe_races, -1, word="limit")],
    "gpuperf.emulator:load_float4": [B(emu.load_float4, "x", 0, err=TypeError,
                                       word="load_float4")],
    "gpuperf.emulator:store_float4": [B(emu.store_float4, "x", 0, (1, 2, 3, 4), err=TypeError,
                                        word="store_float4")],
    "gpuperf.emulator:load4": [B(emu.load4, "x", 0, 0, err=TypeError, word="load4")],
    "gpuperf.emulator:store4": [B(emu.store4, "x", 0, 0, 1, 2, 3, 4, err=TypeError,
                                  word="store4")],
    "gpuperf.records:references": [B(records.references, "no_such_experiment", word="no_such"),
                                   B(records.references, "reduce_ladder", besides=3,
                                     err=TypeError, word="besides")],
    "gpuperf.headlines:headline_rows": [B(headlines.headline_rows, "x.json", err=TypeError,
                                          word="paths"),
                                        B(headlines.headline_rows, ["/no/such.json"],
                                          word="paths")],
    "gpuperf.headlines:show": [B(headlines.show, ["/no/such.json"], word="paths")],
    "gpuperf.selfcheck:t4_estimate": [B(gp_selfcheck.t4_estimate, "/no/such/folder",
                                        word="does not exist"),
                                      B(gp_selfcheck.t4_estimate, 42, err=TypeError,
                                        word="folder")],
    "gpuperf.selfcheck:show_t4_estimate": [B(gp_selfcheck.show_t4_estimate, 42, err=TypeError,
                                             word="folder")],
    "gpuperf.selfcheck:gpu_seconds": [B(gp_selfcheck.gpu_seconds, "/no/such/folder",
                                        word="folder"),
                                      B(gp_selfcheck.gpu_seconds, 42, err=TypeError,
                                        word="folder")],
    "gpuperf.selfcheck:show_gpu_seconds": [B(gp_selfcheck.show_gpu_seconds, "/no/such/folder",
                                             word="folder")],
    "gpuperf.selfcheck:row_commit": [B(gp_selfcheck.row_commit, "doc", {}, err=TypeError,
                                       word="doc"),
                                     B(gp_selfcheck.row_commit, {}, ["row"], err=TypeError,
                                       word="row")],
    "gpuperf.selfcheck:changed_files": [B(gp_selfcheck.changed_files, 7, err=TypeError,
                                          word="since"),
                                        B(gp_selfcheck.changed_files, "abc", 7, err=TypeError,
                                          word="until"),
                                        B(gp_selfcheck.changed_files, "abc", "HEAD", 7,
                                          err=TypeError, word="root")],
    "gpuperf.selfcheck:stale_inputs": [B(gp_selfcheck.stale_inputs, 1, [], err=TypeError,
                                         word="notebook"),
                                       B(gp_selfcheck.stale_inputs, "01_a", "x.py",
                                         err=TypeError, word="changed"),
                                       B(gp_selfcheck.stale_inputs, "01_a", [3],
                                         err=TypeError, word="changed[0]")],
    "gpuperf.selfcheck:shipped": [B(gp_selfcheck.shipped, "/no/such/folder", word="folder"),
                                  B(gp_selfcheck.shipped, 3, err=TypeError, word="folder")],
    "gpuperf.selfcheck:show_shipped": [B(gp_selfcheck.show_shipped, "/no/such/folder",
                                         word="folder")],
    "gpuperf.selfcheck:main": [cli(gp_selfcheck.main, ["--budget", "-1"], "--budget"),
                               cli(gp_selfcheck.main, ["--only", "("], "--only"),
                               cli(gp_selfcheck.main, ["--notebooks", "no/such/dir"],
                                   "--notebooks")],
    "gpuperf.exercises:is_stub": [B(ex.is_stub, 42, err=TypeError, word="fn")],
    "gpuperf.exercises:preflight_host": [B(ex.preflight_host, "chk", len, err=TypeError,
                                           word="chk"),
                                         B(ex.preflight_host, ex.Checker("t"), 5,
                                           err=TypeError, word="fn"),
                                         B(ex.preflight_host, ex.Checker("t"), len,
                                           max_blocks=0, word="max_blocks"),
                                         B(ex.preflight_host, ex.Checker("t"), len,
                                           races=1, err=TypeError, word="races")],
    "gpuperf.emulator:run_host": [B(emu.run_host, len, err=TypeError, word="fn"),
                                  B(emu.run_host, lambda: None, max_blocks=0, word="max_blocks"),
                                  B(emu.run_host, lambda: None, timeout=-1, word="timeout"),
                                  B(emu.run_host, lambda: None, runs=(), err=TypeError,
                                    word="runs")],
    "gpuperf.emulator:host_view": [B(emu.host_view, np.zeros(4, np.float32), 9, word="offset"),
                                   B(emu.host_view, np.zeros(4, np.float32), -1, word="offset")],
    "gpuperf.emulator:HostArray.copy_to_device": [
        B(emu.host_view(np.zeros(4, np.float32)).copy_to_device, np.zeros(3), word="ary")],
    "gpuperf.emulator:HostArray.copy_to_host": [
        B(emu.host_view(np.zeros(4, np.float32)).copy_to_host, np.zeros(3), word="ary")],
    "gpuperf.exercises:not_implemented": [B(ex.not_implemented, 3, "answer", "fill it in",
                                            err=TypeError, word="title"),
                                          B(ex.not_implemented, "t", "", "fill it in",
                                            word="what")],
    "gpuperf.exercises:refuses_stubs": [B(ex.refuses_stubs, "check", err=TypeError,
                                          word="check"),
                                        B(ex.refuses_stubs, solved_by="reduce_sum",
                                          err=TypeError, word="solved_by"),
                                        B(ex.refuses_stubs, solved_by=("ok", 3),
                                          err=TypeError, word="solved_by")],
    "gpuperf.exercises:uses": [B(ex.uses, None, "numba.cuda:syncthreads", err=TypeError,
                                 word="fn"),
                               B(ex.uses, print, word="names"),
                               B(ex.uses, print, "syncthreads", word="module:attr")],
    "gpuperf.targets:argument_types": [B(targets.argument_types, X, err=TypeError, word="args"),
                                        B(targets.argument_types, [object()], word="argument 0")],
    "gpuperf.targets:bundle": [B(targets.bundle, print, err=TypeError, word="kernel")],
    "gpuperf.targets:compile_for_targets": [B(targets.compile_for_targets, len, (), err=TypeError,
                                              word="kernel"),
                                            B(targets.compile_for_targets, gs.copy_grid_stride,
                                              (X, X), ccs=(7, 5), word="ccs")],
    "gpuperf.targets:plain_words": [B(targets.plain_words, 5, err=TypeError, word="message")],
    "gpuperf.exercises:check_compiles": [B(ex.check_compiles, "chk", gs.copy_grid_stride, (),
                                         err=TypeError, word="chk"),
                                       B(ex.check_compiles, ex.Checker("t"), len, (),
                                         err=TypeError, word="kernel"),
                                       B(ex.check_compiles, ex.Checker("t"),
                                         gs.copy_grid_stride, (), ccs=[], word="ccs")],
    "gpuperf.exercises:preflight": [B(ex.preflight, "chk", gs.copy_grid_stride, 1, 32,
                                      err=TypeError, word="chk"),
                                    B(ex.preflight, ex.Checker("t"), "k", 1, 32,
                                      err=TypeError, word="kernel"),
                                    B(ex.preflight, ex.Checker("t"), gs.copy_grid_stride, 1, 32,
                                      races="yes", err=TypeError, word="races"),
                                    B(ex.preflight, ex.Checker("t"), gs.copy_grid_stride, 1, 32,
                                      interleavings=1, err=TypeError, word="interleavings")],
    "gpuperf.exercises:Checker.preflight": [B(ex.Checker("t").preflight, "k", 1, 32,
                                              err=TypeError, word="kernel")],
})


def _experiment_entries() -> dict:
    """Every registered experiment takes one argument, ``progress``: a callable."""
    out = {}
    for e in records.experiments().values():
        mod = contract_api.chapter_of(e.fn.__module__)
        out[f"{mod}:{e.fn.__name__}"] = [B(e.fn, 42, err=TypeError, word="progress")]
    return out


# The layers' new homes (gpuperf.store, .nsight, .nbtools, .depgraph) and their helpers.
from gpuperf import book, depgraph, fingerprint, nbtools, nsight  # noqa: E402

BAD_LAYERS = {
    "gpuperf.bench:require_gpu": [B(bench.require_gpu, 7, err=TypeError, word="what")],
    "gpuperf.depgraph:build": [B(depgraph.build, 7, err=TypeError, word="src"),
                               B(depgraph.build, "/no/such/folder", word="src"),
                               B(depgraph.build, None, "not a name", word="package")],
    "gpuperf.depgraph:layer": [B(depgraph.layer, "numpy", word="module"),
                               B(depgraph.layer, 7, word="module")],
    "gpuperf.depgraph:notebook_inputs": [B(depgraph.notebook_inputs, 7, ".", err=TypeError,
                                           word="notebook"),
                                         B(depgraph.notebook_inputs, "01_measuring", 7,
                                           err=TypeError, word="root")],
    "gpuperf.nbtools:checker_name": [B(nbtools.checker_name, 7, err=TypeError, word="source")],
    "gpuperf.nbtools:default_file_mode": [B(nbtools.default_file_mode, -1, word="base"),
                                          B(nbtools.default_file_mode, "0o666", word="base")],
    "gpuperf.nbtools:main_path_words": [B(nbtools.main_path_words, 42, err=TypeError, word="nb"),
                                        B(nbtools.main_path_words, "/no/such.ipynb",
                                          err=TypeError, word="nb")],
    "gpuperf.emulator:poison.__init__": [B(emu.poison, 42, word="kind")],
    "gpuperf.exercises:emulator_param_names": [B(ex.emulator_param_names, 42, err=TypeError,
                                                 word="kernel")],
    "gpuperf.exercises:exercise_title": [B(ex.exercise_title, 42, err=TypeError, word="fallback")],
    "gpuperf.exercises:expect_coalesced": [B(ex.expect_coalesced, 42, None, ["a"], advice="x",
                                             err=TypeError, word="chk")],
    "gpuperf.exercises:expect_few_atomics": [B(ex.expect_few_atomics, 42, [], 8, advice="x",
                                               err=TypeError, word="chk")],
    "gpuperf.exercises:expect_in_flight": [B(ex.expect_in_flight, 42, None, "a", at_least=2,
                                             advice="x", err=TypeError, word="chk")],
    "gpuperf.exercises:expect_loaded_once": [B(ex.expect_loaded_once, 42, None, ["a"],
                                               advice="x", err=TypeError, word="chk")],
    "gpuperf.exercises:expect_tree": [B(ex.expect_tree, 42, None, 256, advice="x",
                                        err=TypeError, word="chk")],
    "gpuperf.exercises:loads_in_flight": [B(ex.loads_in_flight, 42, "a", err=TypeError,
                                            word="run")],
    "gpuperf.exercises:recorded_run": [B(ex.recorded_run, ex.Checker("t"), None, print, 1, 1,
                                         err=TypeError, word="name")],
    "gpuperf.exercises:sector_use": [B(ex.sector_use, 42, "a", err=TypeError, word="run")],
    "gpuperf.exercises:stop_if_slow": [B(ex.stop_if_slow, 42, err=TypeError, word="run")],
    "gpuperf.exercises:titled": [B(ex.titled, 42, err=TypeError, word="check")],
    "gpuperf.exercises:tree_steps": [B(ex.tree_steps, 42, err=TypeError, word="run")],
    "gpuperf.book:glue": [B(book.glue, "copy pct", 1.0, word="name"),
                          B(book.glue, "x", "text", "{:.1f}", word="fmt")],
    "gpuperf.nbtools:notebook_arg": [B(nbtools.notebook_arg, "x.ipynb", err=TypeError, word="nb")],
    "gpuperf.nsight:launch_command": [B(nsight.launch_command, "reduce", word="launch"),
                                      B(nsight.launch_command, 7, err=TypeError, word="launch")],
    "gpuperf.nsight:launch_from_argv": [B(nsight.launch_from_argv, [], word="argv"),
                                        B(nsight.launch_from_argv, ["no-colon"], word="launch"),
                                        B(nsight.launch_from_argv, [3], err=TypeError,
                                          word="argv[0]")],
    "gpuperf.nsight:launch_twice": [B(nsight.launch_twice, "f", err=TypeError, word="launch")],
    "gpuperf.nsight:overlap_ms": [B(nsight.overlap_ms, [(1, 2, 3)], err=TypeError,
                                    word="intervals[0]")],
    "gpuperf.nsight:union_ms": [B(nsight.union_ms, "spans", err=TypeError, word="intervals")],
    "gpuperf.nsight:profile": [B(nsight.profile, "stride", kernel="k", metrics=["m"],
                                 word="launch")],
    "gpuperf.nsight:sanitize": [B(nsight.sanitize, "memcheck", "stride", word="launch"),
                                B(nsight.sanitize, "valgrind", "gpuperf.x:f", word="tool")],
    "gpuperf.nsight:try_profile": [B(nsight.try_profile, "stride", kernel="k", metrics=["m"],
                                     word="launch")],
    "gpuperf.profiling:launch": [B(profiling.launch, "strided", word="name")],
    "gpuperf.exercises:rounded_up": [B(ex.rounded_up, "20", err=TypeError, word="q"),
                                     B(ex.rounded_up, 20.0, rel=-1.0, word="rel")],
    "gpuperf.fingerprint:code_parts": [B(fingerprint.code_parts, 3, err=TypeError, word="fn"),
                                       B(fingerprint.code_parts, print, "", word="prefix")],
    "gpuperf.fingerprint:fingerprint": [B(fingerprint.fingerprint, "f", err=TypeError, word="fn")],
    "gpuperf.records:code_fingerprint": [B(records.code_fingerprint, "no_such_experiment",
                                           word="no_such_experiment")],
    "gpuperf.selfcheck:chapter_status": [B(gp_selfcheck.chapter_status, "/no/such/folder",
                                           word="folder"),
                                         B(gp_selfcheck.chapter_status, None, 7, err=TypeError,
                                           word="root")],
    "gpuperf.selfcheck:show_chapter_status": [B(gp_selfcheck.show_chapter_status,
                                                "/no/such/folder", word="folder")],
    "gpuperf.selfcheck:notebook_inputs": [B(gp_selfcheck.notebook_inputs, 7, err=TypeError,
                                            word="notebook"),
                                          B(gp_selfcheck.notebook_inputs, "no_such_chapter",
                                            word="no_such_chapter")],
    "gpuperf.selfcheck:stale_rows": [B(gp_selfcheck.stale_rows, [], err=TypeError, word="doc"),
                                     B(gp_selfcheck.stale_rows, {}, 7, err=TypeError,
                                       word="root")],
    "gpuperf.targets:check_ccs": [B(targets.check_ccs, "sm_90", word="ccs")],
    "gpuperf.validate:dtype_words": [B(v.dtype_words, "no such dtype", err=TypeError,
                                       word="dtype")],
    "gpuperf.kernels.dram:onchip_reads": [B(gp.dram.onchip_reads, "r", err=TypeError, word="res")],
    "gpuperf.records:add_discovery": [B(records.add_discovery, "chapters", err=TypeError,
                                        word="step")],
    "gpuperf.kernels.gdn:check_energy_terms": [
        B(gp.gdn.check_energy_terms, np.ones((2, 2), np.float32), -np.ones(2, np.float32),
          word="beta"),
        B(gp.gdn.check_energy_terms, -np.ones((2, 2), np.float32), np.ones(2, np.float32),
          word="gamma"),
        B(gp.gdn.check_energy_terms, np.full((2, 2), np.nan, np.float32), np.ones(2, np.float32),
          word="gamma")],
    "gpuperf.nsight:print_result": [B(nsight.print_result, "a", [1.0], err=TypeError,
                                      word="got and want"),
                                    B(nsight.print_result, [1.0], [1.0, 2.0], word="shape")],
    "gpuperf.nsight:per": [B(nsight.per, "m", "a", "b", err=TypeError, word="m")],
    "gpuperf.nsight:issue_columns": [B(nsight.issue_columns, {}, 128, word="ISSUE_METRICS"),
                                     B(nsight.issue_columns, [], 128, err=TypeError, word="m")],
    "gpuperf.emulator:param_names": [B(emu.param_names, len, -1, word="n")],
    "gpuperf.exercises:one_line_failure": [B(ex.one_line_failure, 7, "a", "b", err=TypeError,
                                             word="title")],
    "gpuperf.plots:gpu_label": [B(plots.gpu_label, "H200", err=TypeError, word="res")],
    "gpuperf.validate:is_device_array": [(lambda: v.is_device_array("x"), ANSWER, False),
                                         (lambda: v.is_device_array(None), ANSWER, False)],
    "gpuperf.validate:register_result_type": [B(v.register_result_type, "Result",
                                                err=TypeError, word="cls")],
}


def all_bad() -> dict:
    return {**_experiment_entries(), **BAD, **BAD_LAYERS}


def _cases():
    for name, calls in all_bad().items():
        for i, case in enumerate(calls):
            yield pytest.param(name, case, id=f"{name}#{i}")


def test_every_public_function_has_bad_input_tests():
    api = contract_api.public_api()
    table = all_bad()
    missing = sorted(set(api) - set(table))
    stale = sorted(set(table) - set(api))
    covered = len(set(api) & set(table))
    print(f"\n{len(api)} public functions, methods and constructors take arguments; "
          f"{covered} have bad-input tests.")
    assert not stale, f"the table names functions that are not public API: {stale}"
    assert not missing, (f"{len(missing)} public functions have no bad-input test in "
                         f"tests/test_contract.py BAD: {missing}")


@pytest.mark.parametrize("name,case", list(_cases()))
def test_bad_input_gets_a_clear_error(name, case):
    call, err, word = case
    if err == REPORT:
        with contextlib.redirect_stdout(io.StringIO()):
            report = call()
        assert isinstance(report, ex.Report) and not report, f"{name} accepted a bad submission"
        assert word.lower() in report.text().lower()
        return
    if err == ANSWER:
        assert call() == word
        return
    if err == CLI:
        buf = io.StringIO()
        with contextlib.redirect_stderr(buf), contextlib.redirect_stdout(io.StringIO()):
            assert call() == 2
        assert word in buf.getvalue()
        return
    with pytest.raises((TypeError, ValueError)) as info:
        with contextlib.redirect_stdout(io.StringIO()):
            call()
    assert isinstance(info.value, err), f"{name}: {type(info.value).__name__}: {info.value}"
    assert word in str(info.value), f"{name}: the message does not name {word!r}: {info.value}"
    # Never a bare message from deep inside: the message says what to do, in words.
    assert len(str(info.value)) > 20, str(info.value)


def test_zero_division_never_escapes():
    for call in (lambda: bench.gbps(1, 0), lambda: dr.make_sum_loads(0),
                 lambda: mm.make_tiled(0), lambda: mm.roofline_bound(1, 0, 1),
                 lambda: dr.littles_law_gbps(1, 0)):
        with pytest.raises(ValueError):
            call()


def test_model_functions_refuse_nan_inf_negative_and_strings():
    assert math.isclose(dr.littles_law_gbps(1000, 500), 2.0)
    for bad in (NAN, INF, -1.0):
        with pytest.raises(ValueError):
            dr.loads_per_thread_needed(bad, 600, 32, 132)
        with pytest.raises(ValueError):
            mm.roofline_bound(bad, 3000, 50)
    with pytest.raises(TypeError, match="warps_per_sm"):
        dr.bytes_in_flight("8", 4, 132)
