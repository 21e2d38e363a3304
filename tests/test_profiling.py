"""Parsing the NVIDIA tools' real output on course kernels (captured on an H100: see
tests/fixtures/profiling/README.md) and the command lines that produce it."""

from pathlib import Path

import matplotlib
import numpy as np
import pytest
from conftest import record_paths_with

import gpuperf as gp
from gpuperf import bench, nsight, profiling, records

FIXTURES = Path(__file__).parent / "fixtures" / "profiling"


def _read(name):
    return (FIXTURES / name).read_text()


def test_ncu_metrics_show_v1s_bank_conflicts_and_v2s_absence():
    v1 = profiling.metrics_by_kernel(profiling.parse_ncu_csv(
        _read("ncu_reduce_v1_block256.csv")))["reduce_v1"]
    v2 = profiling.metrics_by_kernel(profiling.parse_ncu_csv(
        _read("ncu_reduce_v2_block256.csv")))["reduce_v2"]
    loads = "smsp__inst_executed_op_shared_ld.sum"
    waves = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
    conflicts = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
    # The same shared loads; v1's strided index needs several passes per load, v2's one.
    assert v1[loads] == v2[loads] > 0
    assert v1[waves] / v1[loads] > 3 and v2[waves] / v2[loads] < 1.1
    assert v1[conflicts] > 50 * v2[conflicts]
    # Coalesced float32 loads: 4 sectors per request; the thousands separators are gone.
    assert v1["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 4 * v1[
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]
    assert isinstance(v1["gpu__time_duration.sum"], int)


def test_ncu_rows_keep_launch_shape_and_skip_banners_and_rules():
    rows = profiling.parse_ncu_csv(_read("ncu_speed_of_light_reduce_v2.csv"))
    assert {r["kernel"] for r in rows} == {"reduce_v2"}
    assert all(r["metric"] for r in rows)  # the section's advice rows are left out
    assert rows[0]["block"] == "(256, 1, 1)" and rows[0]["section"] == "GPU Speed Of Light Throughput"
    sol = profiling.metrics_by_kernel(rows)["reduce_v2"]
    assert 0 < sol["DRAM Throughput"] <= 100 and 0 < sol["Compute (SM) Throughput"] <= 100


def test_racecheck_counts_v4s_hazards_and_none_for_v2():
    v4 = profiling.parse_racecheck(_read("racecheck_reduce_v4_block64.txt"))
    v2 = profiling.parse_racecheck(_read("racecheck_reduce_v2_block64.txt"))
    assert v4["kernels"] == ["reduce_v4"] and v4["displayed"] == 3 and v4["hazards"] > 1000
    assert v4["warnings"] > 0 and v4["errors"] == 0
    assert v2 == {"displayed": 0, "errors": 0, "warnings": 0, "hazards": 0, "kernels": []}


def test_parsers_say_what_is_missing():
    with pytest.raises(ValueError, match="--csv"):
        profiling.parse_ncu_csv("==PROF== Connected to process 1\n")
    with pytest.raises(ValueError, match="RACECHECK SUMMARY"):
        profiling.parse_racecheck("========= COMPUTE-SANITIZER\n")


def test_ncu_command_picks_the_kernel_by_its_python_name():
    cmd = profiling.ncu_command(["python3", "x.py"], kernel="reduce_v1",
                                metrics=profiling.SHARED_METRICS, launch_skip=1)
    assert cmd[:3] == ["ncu", "--clock-control", "none"]
    assert cmd[cmd.index("-k") + 1] == "regex:^reduce_v1\\[" and cmd[-2:] == ["python3", "x.py"]
    assert "--section" in profiling.ncu_command(["p"], kernel="k", sections=["SpeedOfLight"])
    with pytest.raises(ValueError, match="metrics"):
        profiling.ncu_command(["p"], kernel="k")
    with pytest.raises(ValueError, match="kernel"):
        profiling.ncu_command(["p"], kernel="reduce v1", metrics=["m"])
    lib = profiling.ncu_command(["p"], kernel="gemm", metrics=["m"], library=True)
    assert lib[lib.index("-k") + 1] == "regex:gemm"


@pytest.mark.parametrize("path", record_paths_with("profiling_matmul_issue"), ids=lambda p: p.stem)
def test_recorded_matmuls_run_at_the_rate_their_issue_slots_allow(path):
    """Every profiled matmul, cuBLAS included, runs a few points below the FP32 peak's share
    that its FFMA share and its issue rate allow (the clock and the grid's tail), never above
    it; cuBLAS has a larger FFMA share and a higher issue rate than any of the course's."""
    res = records.recorded("profiling_matmul_issue", path=path)
    rows = {r["version"]: r for r in res.rows}
    for r in res.rows:
        assert r["issue_bound_pct"] - 5 <= r["pct_fp32_peak"] <= r["issue_bound_pct"] + 1, r
    cublas = rows.pop("cuBLAS (CuPy @)")
    assert all(cublas["ffma_share_pct"] > r["ffma_share_pct"] for r in rows.values())
    assert all(cublas["issue_active_pct"] > r["issue_active_pct"] for r in rows.values())


def test_the_issue_experiment_bounds_each_kernel_by_its_ffma_share_and_issue_rate(monkeypatch):
    """The experiment's arithmetic on made-up counters: 3 of 4 instructions FFMAs, issuing in 80%
    of cycles, bound the kernel at 60% of the FP32 peak; cuBLAS is profiled by a name pattern."""
    import dataclasses

    from gpuperf import device
    from gpuperf.kernels import matmul as mm

    seen = []

    def fake_profile(name, *args, kernel, metrics, library=False, launch_count=1):
        seen.append((name, kernel, library))
        m = {k: 0.5 for k in metrics}
        m.update({"smsp__inst_issued.sum": 4000.0,
                  "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 32 * 3000.0,
                  "smsp__issue_active.avg.pct_of_peak_sustained_active": 80.0})
        return m

    monkeypatch.setattr(nsight, "profile", fake_profile)
    monkeypatch.setattr(device, "fp32_peak_tflops", lambda: 50.0)
    hopper = dataclasses.replace(device.info(), compute_capability=(9, 0))
    monkeypatch.setattr(device, "info", lambda: hopper)
    monkeypatch.setattr(mm, "measure_variant", lambda v, n, **kw: {"tflops": 25.0, "spread": 0.01})
    monkeypatch.setattr(mm, "measure_cublas", lambda n: {"tflops": 40.0, "spread": 0.01})
    monkeypatch.setattr(bench, "require_gpu", lambda what: None)  # a GPU, as far as the experiment can tell
    rows = gp.coarsening.matmul_issue_experiment(lambda msg: None)
    assert rows[0]["version"].startswith(gp.coarsening.profiling.ISSUE_FIRST_RUNG)
    assert rows[-1]["version"] == mm.CUBLAS and seen[-1] == (profiling.launch("cublas"), "gemm", True)
    assert not any(lib for _, _, lib in seen[:-1])
    r = rows[0]
    assert r["ffma_share_pct"] == 75.0 and r["issue_bound_pct"] == 60.0
    assert r["pct_fp32_peak"] == 50.0 and r["pct_cublas"] == 62.5
    assert rows[-1]["pct_fp32_peak"] == 80.0
    res = records.Result("profiling_matmul_issue", rows, {"gpu": "Some GPU"}, "live")
    line = gp.coarsening.issue_summary(res)[0]
    assert ("75% of its instructions are FFMAs, a scheduler issues in 80% of cycles: together 60% "
            "of the FP32 peak, measured 50%") in line
    # a 64-lane SM (a T4's, compute capability 7.5) does a warp FFMA every second cycle: the
    # same counters allow twice the share of its (halved) peak
    turing = dataclasses.replace(hopper, compute_capability=(7, 5))
    monkeypatch.setattr(device, "info", lambda: turing)
    monkeypatch.setattr(bench, "require_gpu", lambda what: None)  # a GPU, as far as the experiment can tell
    assert gp.coarsening.matmul_issue_experiment(lambda msg: None)[0]["issue_bound_pct"] == 100.0
    with pytest.raises(TypeError, match="profiling_matmul_issue"):
        gp.coarsening.issue_summary(records.Result("profiling_matmul", rows, {}, "live"))



@pytest.mark.parametrize("path", record_paths_with("profiling_gdn"), ids=lambda p: p.stem)
def test_recorded_gdn_kernels_are_bound_by_issue_not_by_bytes(path):
    """Chapter 8's reading of the fused GDN kernels: each runs within a few points of the FP32
    share its FFMA share and issue rate allow (never above it); tiling raises the FFMA share;
    DRAM serves each at under a tenth of the copy ceiling, so bytes are not what limits them."""
    res = records.recorded("profiling_gdn", path=path)
    copy_gbps = res.ceilings["copy_gbps"]
    assert {r["method"] for r in res.rows} >= {"fused", "fused_tiled 16x16", "fused_tiled 32x32"}
    for r in res.rows:
        measured = 100 * r["tflops"] / r["fp32_peak_tflops"]
        assert r["issue_bound_pct"] - 5 <= measured <= r["issue_bound_pct"] + 1, r
        assert r["dram_bytes"] / r["duration_ns"] < copy_gbps / 10, r
    for n_ch in {r["n_ch"] for r in res.rows}:
        share = {r["method"]: r["ffma_share_pct"] for r in res.rows if r["n_ch"] == n_ch}
        assert share["fused"] < share["fused_tiled 16x16"] < share["fused_tiled 32x32"]
    lines = gp.coarsening.issue_summary(res)
    assert len(lines) == len(res.rows) + 1 and "at N = " in lines[0]


def test_the_gdn_profile_computes_its_columns_from_the_counters(monkeypatch):
    """The GDN experiment's arithmetic on made-up counters: 1 in 10 instructions an FFMA,
    issuing in half the cycles, bound a Hopper SM at 5% of the FP32 peak; the rate comes from
    the profiled duration and the grid from the launch the chapter uses."""
    import dataclasses

    from gpuperf import device
    from gpuperf.kernels import gdn

    seen = []

    def fake_profile(name, *args, kernel, metrics, library=False, launch_count=1):
        seen.append((name, args, kernel))
        m = {k: 0.0 for k in metrics}
        m.update({"smsp__inst_issued.sum": 10000.0,
                  "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 32 * 1000.0,
                  "smsp__issue_active.avg.pct_of_peak_sustained_active": 50.0,
                  "smsp__inst_executed_op_shared_ld.sum": 2000.0,
                  "l1tex__data_pipe_lsu_wavefronts_mem_shared_cmd_read.sum": 2000.0,
                  "gpu__time_duration.sum": 1e6})
        return m

    monkeypatch.setattr(nsight, "profile", fake_profile)
    monkeypatch.setattr(device, "fp32_peak_tflops", lambda: 60.0)
    hopper = dataclasses.replace(device.info(), compute_capability=(9, 0))
    monkeypatch.setattr(device, "info", lambda: hopper)
    monkeypatch.setattr(bench, "require_gpu", lambda what: None)  # a GPU, as far as the experiment can tell
    rows = gp.gdn.gdn_experiment(lambda msg: None)
    assert len(rows) == len(gp.gdn.profiling.GDN_PROFILED) * len(gp.gdn.profiling.GDN_PROFILED_CHANNELS)
    assert seen[0] == (profiling.launch("gdn"), ("fused", 0, gp.gdn.profiling.GDN_PROFILED_CHANNELS[0]), "fused")
    assert seen[1][2] == "fused_tiled"
    r = rows[1]
    n_s = gdn.BATCH * gdn.HEADLINE["side"] ** 2
    assert r["ffma_share_pct"] == 10.0 and r["issue_bound_pct"] == 5.0
    assert r["shared_loads_per_ffma"] == 2.0 and r["wavefronts_per_shared_load"] == 1.0
    assert r["tflops"] == pytest.approx(2 * r["n_ch"] ** 2 * n_s / 1e6 / 1e3)
    grid = gdn.tiled_launch(r["n_ch"], n_s, tile=16, depth=16)[0]
    assert r["grid_blocks"] == grid[0] * grid[1] * grid[2]
    assert rows[0]["wavefronts_per_shared_load"] is not None  # made-up counters: not zero
    res = records.Result("profiling_gdn", rows, {"gpu": "Some GPU",
                                                  "ceilings": {"copy_gbps": 4000.0}}, "live")
    table = gp.gdn.gdn_profile_table(res).rows[1]
    assert table["inst_per_ffma"] == 10.0 and table["pct_fp32_peak"] == pytest.approx(
        100 * r["tflops"] / 60.0)
    assert table["dram_gbps"] == 0.0 and table["dram_pct_copy"] == 0.0
    with pytest.raises(TypeError, match="profiling_gdn"):
        gp.gdn.gdn_profile_table(records.Result("profiling_matmul", rows, {}, "live"))
    line = gp.coarsening.issue_summary(res)[1]
    assert line.startswith("fused_tiled 16x16 at N = ")
    assert "10% of its instructions are FFMAs" in line and "together 5% of the FP32 peak" in line


@pytest.mark.parametrize("path", record_paths_with("profiling_reduce_atomics"),
                         ids=lambda p: p.stem)
def test_recorded_atomics_patterns_differ_in_registers_and_waves_as_chapter_6_says(path):
    """Chapter 6.3's reading: the two one-atomic-per-warp kernels take more registers and
    reach a lower theoretical occupancy than the per-block one, read DRAM more slowly and keep
    the SMs active for less of the kernel at 2^28 floats, while their atomics are as many at
    both sizes."""
    res = records.recorded("profiling_reduce_atomics", path=path)
    sizes = sorted(res.values("n"))
    for n in sizes:
        block = res.one(n=n, version="block atomics")
        for version in ("warp atomics", "spread atomics"):
            r = res.one(n=n, version=version)
            assert r["registers"] > block["registers"], r
            assert r["theoretical_occupancy_pct"] < block["theoretical_occupancy_pct"], r
            assert r["active_pct"] < block["active_pct"], r
            assert r["atomic_inst"] > block["atomic_inst"], r
            assert r["atomic_inst"] == res.one(n=sizes[0], version=version)["atomic_inst"]
    big = sizes[-1]
    block = res.one(n=big, version="block atomics")
    for version in ("warp atomics", "spread atomics"):
        r = res.one(n=big, version=version)
        assert r["dram_gbps"] < block["dram_gbps"] and r["duration_ns"] > block["duration_ns"]
    # the waves the chapter prints: fewer places for the warp kernels' blocks than the grid has
    lines = gp.reduce.atomics_waves(res)
    assert any(line.startswith("block atomics") and line.endswith("1.00 waves")
               for line in lines)
    assert all(float(line.split(": ")[-1].split()[0]) > 1.0 for line in lines
               if not line.startswith("block atomics"))
    # at 2^24, spreading the atomics removes most of the warp atomics' excess
    small = sizes[0]
    warp, spread, block = (res.one(n=small, version=v)["duration_ns"]
                           for v in ("warp atomics", "spread atomics", "block atomics"))
    assert spread - block < (warp - block) / 2


def test_the_atomics_profile_asks_for_each_pattern_at_each_size(monkeypatch):
    seen = []

    def fake_profile(name, *args, kernel, metrics, library=False, launch_count=1):
        seen.append((name, args, kernel))
        m = {k: 1.0 for k in metrics}
        m.update({"gpu__time_duration.sum": 2.0, "dram__bytes_read.sum": 8.0,
                  "sm__cycles_active.avg": 3.0, "sm__cycles_elapsed.avg": 4.0})
        return m

    monkeypatch.setattr(nsight, "profile", fake_profile)
    monkeypatch.setattr(bench, "require_gpu", lambda what: None)  # a GPU, as far as the experiment can tell
    rows = gp.reduce.reduce_atomics_experiment(lambda msg: None)
    assert [(r["version"], r["n"]) for r in rows] == [
        (label, n) for n in gp.reduce.profiling.ATOMICS_SIZES for label, _ in gp.reduce.profiling.ATOMICS_PATTERNS]
    assert seen[0] == (profiling.launch("reduce_atomics"), ("warp atomics", gp.reduce.profiling.ATOMICS_SIZES[0]),
                       "reduce_warp_atomic")
    assert rows[0]["dram_gbps"] == 4.0 and rows[0]["active_pct"] == 75.0

# --------------------------------------------------------------------------- experiments


@pytest.mark.parametrize("path", [p for p in records.available()
                                  if "profiling_reduce_shared" in records.load(p)["experiments"]],
                         ids=lambda p: p.stem)
def test_the_profiler_experiments_replay_from_the_records(path):
    """Recorded with `python -m gpuperf.record --only profiling_`: every rung profiled, the
    derived column consistent with the measured ones, the GPU that of its record file."""
    res = records.recorded("profiling_reduce_shared", path=path)
    assert res.gpu.lower().replace(" ", "-") == path.stem
    versions = [r["version"] for r in res.rows]
    if res.code_status == "same":  # recorded with today's rungs: every one of them
        assert versions == list(gp.reduce.profiling.PROFILED_RUNGS)
    assert set(versions) <= set(gp.reduce.profiling.PROFILED_RUNGS)
    for r in res.rows:
        assert r["wavefronts"] >= r["shared_loads"] > 0  # a conflict-free load is one wavefront
        assert r["wavefronts_per_load"] == round(r["wavefronts"] / r["shared_loads"], 3)


def test_the_recorded_tools_back_the_ladders_claims():
    """What chapter 6 says, as the tools measured it: v1's strided shared loads conflict and
    v2's sequential ones barely do; racecheck (``reduce_racecheck``, counted by
    ``parse_racecheck``) finds v4's unsynchronized last warp and nothing in v4.1."""
    rows = {r["version"]: r for r in records.run("profiling_reduce_shared").rows}
    assert rows["v1"]["wavefronts_per_load"] > 2 * rows["v2"]["wavefronts_per_load"]
    race = {r["version"]: r for r in records.run("reduce_racecheck").rows}
    assert race["v4"]["hazard_errors"] + race["v4"]["hazard_warnings"] > 0
    assert race["v4.1"]["hazard_errors"] + race["v4.1"]["hazard_warnings"] == 0


def test_a_missing_tool_is_said_plainly(monkeypatch):
    monkeypatch.setattr(nsight.shutil, "which", lambda tool: None)
    with pytest.raises(RuntimeError, match="ncu is not on this machine's PATH"):
        nsight._tool_run(["ncu", "--version"], "reduce v1")


def test_the_strided_copy_and_transposes_replay_with_what_chapter_2_teaches():
    """Recorded on an H100: the loads' sectors per request are the sector model's, and DRAM
    reads grow with the stride; padding removes the tiled transpose's 32-way bank conflict,
    and the tiled transposes store 4 sectors per request where the naive one stores 32."""
    stride = records.run("profiling_stride")
    assert [r["stride"] for r in stride.rows] == list(gp.coalescing.profiling.PROFILED_STRIDES)
    for r in stride.rows:
        assert r["load_sectors_per_request"] == r["model_sectors_per_request"]
        assert r["dram_read_per_useful"] == round(r["dram_read_bytes"] / (4 * r["n"]), 3)
    reads = [r["dram_read_per_useful"] for r in stride.rows]
    assert reads == sorted(reads) and reads[0] >= 0.99
    tr = {r["version"]: r for r in records.run("profiling_transpose").rows}
    assert [v for v, _ in gp.coalescing.profiling.PROFILED_TRANSPOSES] == list(tr)
    assert tr["tiled"]["shared_load_wavefronts_per_load"] > 16
    assert tr["tiled + padding"]["shared_load_wavefronts_per_load"] < 1.5
    assert tr["naive"]["store_sectors_per_request"] == 32
    assert tr["tiled"]["store_sectors_per_request"] == tr["tiled + padding"]["store_sectors_per_request"] == 4
    # The 16-byte transpose: 2-way conflicts with padding alone, none (about one pass) with the
    # flip; 512-byte store requests, a quarter as many as the 4-byte kernel's.
    only, flip = (tr[label] for label, pad in gp.coalescing.profiling.PROFILED_TRANSPOSES
                  if pad in ("vec4_noflip", "vec4"))
    assert only["shared_load_wavefronts_per_load"] > 1.8 and only["shared_store_wavefronts_per_store"] > 1.8
    assert flip["shared_load_wavefronts_per_load"] < 1.4 and flip["shared_store_wavefronts_per_store"] < 1.4
    assert only["store_sectors_per_request"] == flip["store_sectors_per_request"] == 16
    assert 4 * flip["global_store_requests"] == tr["tiled + padding"]["global_store_requests"]


def test_a_launch_runs_in_a_process_of_its_own_by_name():
    cmd = profiling.launch_command("matmul", "tiled", 32, 1, 4096)
    assert cmd[1] == "-c" and "launch_from_argv" in cmd[2]
    assert cmd[3:] == [profiling.launch("matmul"), "tiled", "32", "1", "4096"]
    with pytest.raises(ValueError, match="name"):
        profiling.launch_command("transposed", 1)
    # The kernel a matmul row profiles is the one the variant launches.
    for _, version, tile, factor in gp.coarsening.profiling.PROFILED_MATMULS:
        v = gp.coarsening.profiling._matmul_variant(version, tile, factor)
        assert v.kernel.py_func.__name__ in {"tiled", "coarsened", "regtile"}


def test_the_launch_functions_run_under_the_simulator(monkeypatch):
    """Each launch function builds its data and launches its kernel (small sizes here)."""
    calls = []
    monkeypatch.setattr(nsight, "launch_twice", lambda launch: calls.append(launch()))
    nsight.launch_from_argv([profiling.launch("stride"), "2", "64"])
    nsight.launch_from_argv([profiling.launch("transpose"), "-1", "32"])
    nsight.launch_from_argv([profiling.launch("transpose"), "vec4", "64"])
    nsight.launch_from_argv([profiling.launch("transpose"), "vec4_noflip", "64"])
    nsight.launch_from_argv([profiling.launch("transpose"), "tiled64", "64"])
    nsight.launch_from_argv([profiling.launch("reduce"), "v2", "64", "256"])
    nsight.launch_from_argv([profiling.launch("stride_part"), "loads", "2", "64"])
    nsight.launch_from_argv([profiling.launch("stride_part"), "stores", "2", "64"])
    assert len(calls) == 8
    with pytest.raises(ValueError, match="part='both'"):
        gp.coalescing.profiling._stride_part_launch("both", 2, 64)


def test_the_recorded_metrics_back_what_chapters_2_to_5_now_say():
    """The sentences chapters 2 to 5 print beside these records (H100)."""
    for r in records.run("profiling_stride").rows:  # DRAM never below the sector model
        assert r["dram_read_per_useful"] >= 0.99 * r["model_sectors_per_request"] / 4
    lat = {(r["ilp"], r["warps_per_sm"]): r for r in records.run("profiling_latency").rows}
    assert list(lat) == list(gp.dram.profiling.PROFILED_LOADS)
    assert lat[(1, 8)]["dram_pct"] < lat[(1, 64)]["dram_pct"] < lat[(4, 64)]["dram_pct"]
    assert lat[(16, 64)]["dram_pct"] <= lat[(4, 64)]["dram_pct"] + 2  # no gain past the ceiling
    for r in lat.values():
        assert profiling.top_stalls(r, 1)[0][0] == "long scoreboard"
    mm = {r["version"]: r for r in records.run("profiling_matmul").rows}
    assert list(mm) == [label for label, *_ in gp.coarsening.profiling.PROFILED_MATMULS]
    for label in ("tiled 16", "tiled 32"):
        assert 1 <= mm[label]["shared_loads_per_fma"] < 1.5  # not two: sA's loads are merged
        assert mm[label]["dram_bytes"] < mm[label]["model_bytes"]
    coarse = [mm["tiled 32"]] + [mm[f"coarsened 32x{f}"] for f in (2, 4, 8)]
    dram = [r["dram_bytes"] for r in coarse]
    assert dram == sorted(dram, reverse=True)
    assert {r["shared_loads_per_fma"] for r in coarse} == {mm["tiled 32"]["shared_loads_per_fma"]}
    assert mm["coarsened 32x4"]["theoretical_occupancy_pct"] == mm["coarsened 32x2"][
        "theoretical_occupancy_pct"] / 2
    for r in coarse:
        assert abs(r["achieved_occupancy_pct"] - r["theoretical_occupancy_pct"]) < 5
    assert profiling.top_stalls(mm["tiled 32"], 1)[0][0] == "mio throttle"


def test_top_stalls_leaves_out_ready_warps():
    row = {"ilp": 1, "stall_not_selected": 9.0, "stall_barrier": 2.0, "stall_wait": 3.0}
    assert profiling.top_stalls(row) == [("wait", 3.0), ("barrier", 2.0)]


def test_the_printed_command_names_no_path_and_the_tools_run_this_python(monkeypatch):
    import sys

    assert profiling.launch_command("stride", 1, 64)[0] == "python3"  # the book prints it
    seen = []
    monkeypatch.setattr(nsight, "_tool_run", lambda cmd, what: seen.append(cmd) or "")
    with pytest.raises(ValueError):  # no CSV in "": only the command line matters here
        profiling.profile("stride", 1, 64, kernel="copy_strided", metrics=["m"])
    assert sys.executable in seen[0] and "python3" not in seen[0]


# --------------------------------------------------------------------------- CUPTI timeline

def _cupti_fixture():
    import json

    ops = profiling.parse_cupti_trace(_read("cupti_pipeline_compute.json"))
    events = json.loads(_read("cupti_pipeline_compute_events.json"))
    return ops, events


def _cupti_result(rows, events, work="compute-bound (relaxation)"):
    rows = [{"work": work, "iters": events["iters"], "n_streams": 4, "n_chunks": 8, **r,
             "events_total_ms": events["spans_total"]} for r in rows]
    return records.Result("profiling_streams_timeline", rows, {"gpu": "NVIDIA H200"}, "recorded")


def test_cupti_trace_gives_every_copy_and_kernel_in_issue_order():
    ops, _ = _cupti_fixture()
    # Five runs of the 8-chunk pipeline: two copies in, a kernel and a copy out per chunk.
    assert [o["kind"] for o in ops] == list(gp.streams.PIPELINE_OPS) * 40
    assert {o["name"] for o in ops if o["kind"] == "kernel"} == {"relax_kernel"}
    assert all(o["bytes"] == 4 * 2**25 // 8 for o in ops if o["kind"] != "kernel")
    assert [o["correlation"] for o in ops] == sorted(o["correlation"] for o in ops)
    assert all(o["end_us"] > o["start_us"] for o in ops)
    assert len({o["stream"] for o in ops}) == 4


def test_cupti_trace_refuses_what_is_not_one():
    with pytest.raises(ValueError, match="traceEvents"):
        profiling.parse_cupti_trace({"events": []})
    with pytest.raises(ValueError, match="not JSON"):
        profiling.parse_cupti_trace("RACECHECK SUMMARY")
    assert profiling.parse_cupti_trace({"traceEvents": [{"ph": "f", "cat": "ac2g"}]}) == []


def test_cupti_records_fit_inside_their_events_on_one_clock():
    ops, events = _cupti_fixture()
    rows = gp.streams.match_pipeline_run(ops, events["spans"])
    assert len(rows) == 3 * 8
    slack = rows[0]["clock_slack_ms"]
    assert 0 <= slack < 0.05
    for r in rows:  # each stage ran inside the events around it, to within the slack
        assert r["event_start_ms"] - slack - 1e-9 <= r["gpu_start_ms"] <= r["gpu_end_ms"]
        assert r["gpu_end_ms"] <= r["event_end_ms"] + 1e-9
        assert 0 < r["gpu_busy_ms"] <= r["gpu_end_ms"] - r["gpu_start_ms"] + 1e-9
    # a stream's chunks keep their pipeline stream (round-robin over 4)
    assert [r["stream"] for r in rows if r["kind"] == "kernel"] == [c % 4 for c in range(8)]


def test_cupti_records_of_another_run_or_shape_are_refused():
    ops, events = _cupti_fixture()
    shifted = [{**s, "start_ms": s["start_ms"] * 1.5, "end_ms": s["end_ms"] * 1.5}
               for s in events["spans"]]
    with pytest.raises(ValueError, match="not records of the same run"):
        gp.streams.match_pipeline_run(ops, shifted)
    with pytest.raises(ValueError, match="was the whole run profiled"):
        gp.streams.match_pipeline_run(ops[:20], events["spans"])
    with pytest.raises(ValueError, match="not a Pipeline run"):
        gp.streams.match_pipeline_run(ops[:-1], events["spans"])  # the pattern is off by one


def test_interval_union_and_overlap():
    spans = [(0.0, 2.0), (1.0, 3.0), (5.0, 6.0), (5.5, 5.75)]
    assert nsight.union_ms(spans) == pytest.approx(4.0)
    assert nsight.overlap_ms(spans) == pytest.approx(1.0 + 0.25)
    assert nsight.overlap_ms([(0.0, 1.0), (1.0, 2.0)]) == 0.0  # touching is not at once
    assert nsight.union_ms([]) == nsight.overlap_ms([]) == 0.0


def test_cupti_summary_shows_waits_in_the_event_spans_and_kernels_at_once(capsys):
    ops, events = _cupti_fixture()
    res = _cupti_result(gp.streams.match_pipeline_run(ops, events["spans"]), events)
    shown = gp.streams.show_cupti_timeline(res)
    s = shown["compute-bound (relaxation)"]
    # The event spans of the kernels include their waits; the GPU ran some of them at once.
    assert s["kernel"]["events_sum_ms"] > 1.2 * s["kernel"]["gpu_busy_ms"]
    assert s["kernel"]["gpu_overlap_ms"] > 0
    # One copy engine per direction: copies of one direction never ran at the same time.
    assert s["h2d"]["gpu_overlap_ms"] == s["d2h"]["gpu_overlap_ms"] == 0.0
    assert s["gpu_total_ms"] <= s["events_total_ms"]
    out = capsys.readouterr().out
    assert "NVIDIA H200" in out and f"{s['gpu_total_ms']:.2f} ms" in out
    with pytest.raises(TypeError, match="profiling_streams_timeline"):
        gp.streams.cupti_timeline_summary(records.recorded("streams_timeline"))


def test_the_cupti_timeline_needs_pytorch_and_says_so(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_torch(name, *args, **kwargs):
        if name.startswith("torch"):
            raise ImportError("no torch")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_torch)
    with pytest.raises(RuntimeError, match="PyTorch"):
        profiling.cupti_ops(lambda: None)
    with pytest.raises(TypeError, match="fn"):
        profiling.cupti_ops(42)




@pytest.mark.parametrize("path", record_paths_with("profiling_streams_timeline"), ids=lambda p: p.stem)
def test_the_recorded_cupti_timeline_backs_chapter_7(path, capsys):
    # What chapter 7 says of the record: the GPU's records fit the events, the compute-bound
    # pipeline's kernels ran two or more at once, its kernels' event spans include waits, and
    # copies of one direction never overlapped each other.
    res = records.recorded("profiling_streams_timeline", path=path)
    assert all(r["clock_slack_ms"] < 0.05 for r in res.rows)
    shown = gp.streams.show_cupti_timeline(res)
    compute = next(s for w, s in shown.items() if w.startswith("compute"))
    assert compute["kernel"]["gpu_overlap_ms"] > 0
    assert compute["kernel"]["events_sum_ms"] > compute["kernel"]["gpu_busy_ms"]
    in_flight = compute["kernel"]["gpu_in_flight_ms"]
    assert in_flight == pytest.approx(compute["kernel"]["events_in_flight_ms"], rel=0.05)
    for s in shown.values():
        assert s["h2d"]["gpu_overlap_ms"] < 0.01 and s["d2h"]["gpu_overlap_ms"] < 0.01
        assert s["h2d"]["events_sum_ms"] > s["h2d"]["gpu_busy_ms"]
        assert s["kernel"]["events_sum_ms"] > s["kernel"]["gpu_busy_ms"]
    assert res.gpu in capsys.readouterr().out


@pytest.mark.parametrize("path", record_paths_with("profiling_stride_parts"), ids=lambda p: p.stem)
def test_the_strided_copys_dram_reads_are_its_loads_plus_its_stores(path):
    """Chapter 2's ablation, on every GPU recorded: the loads alone read what the sector model
    says up to stride 8 and twice that from stride 16 (sectors fetched in pairs); the stores
    alone make DRAM read about the model's bytes from stride 2 on (partial sectors filled; the
    H100 read 0.91-0.99 of the model, the H200 0.89-0.99), none at stride 1; the copy reads the
    two added up."""
    parts = gp.coalescing.stride_parts_table(records.recorded("profiling_stride_parts", path=path))
    assert [r["stride"] for r in parts.rows] == list(gp.coalescing.profiling.PROFILED_STRIDES)
    for r in parts.rows:
        model, loads, stores = r["sector model"], r["loads only"], r["stores only"]
        assert loads == pytest.approx(model * (2 if r["stride"] >= 16 else 1), rel=0.01)
        if r["stride"] == 1:
            assert stores < 0.01
        else:
            assert 0.85 * model <= stores <= 1.01 * model
        assert r["copy"] == pytest.approx(r["loads + stores"], rel=0.02)
    res = records.run("profiling_stride_parts")
    gap = [r for r in res.rows if not (r["stride"] == 2 and r["kernel"] == "stores only")]
    with pytest.raises(ValueError, match="stride 2 has no row for stores only"):
        gp.coalescing.stride_parts_table(records.Result(res.name, gap, res.meta, res.source))


def _device_like(cc, sms):
    from dataclasses import replace

    return replace(gp.device.info(), compute_capability=cc, sm_count=sms, simulated=False)


def test_fp32_peak_counts_lanes_by_compute_capability():
    # A T4: 40 SMs of 64 FP32 lanes at 1590 MHz is its 8.1 TFLOP/s datasheet figure; an H100
    # SXM: 132 SMs of 128 lanes at 1980 MHz, 66.9 TFLOP/s.
    assert gp.device.fp32_peak_tflops(_device_like((7, 5), 40), 1_590_000) == pytest.approx(8.141, 1e-3)
    assert gp.device.fp32_peak_tflops(_device_like((9, 0), 132), 1_980_000) == pytest.approx(66.9, 1e-3)
    assert gp.device.fp32_peak_tflops(_device_like((1, 0), 4), 1_000_000) is None  # not in the table
    assert gp.device.fp32_peak_tflops() is None  # the simulator: no clock, no SMs
    assert gp.device.sm_clock_khz() is None


@pytest.mark.parametrize("path", [p for p in records.available()
                                  if "profiling_matmul_roofline" in records.load(p)["experiments"]],
                         ids=lambda p: p.stem)
def test_recorded_matmul_roofline_points_sit_under_their_roofs(path):
    res = records.recorded("profiling_matmul_roofline", path=path)
    rows = {r["version"]: r for r in res.rows if r.get("chapter", "tiling") == "tiling"}
    assert set(rows) == {gp.coarsening.profiling._matmul_variant(version, tile, 1).name
                         for version, tile in gp.coarsening.profiling.ROOFLINE_MATMULS}
    # chapter 5's ladder, where recorded: its steps beyond chapter 4's, each once
    ladder = [r["version"] for r in res.rows if r.get("chapter") == "coarsening"]
    if ladder:
        from gpuperf.kernels import coarsening
        assert ladder == [v.name for v in coarsening.ladder_variants() if v.name not in rows]
    n = rows["tiled 32"]["n"]
    for r in res.rows:
        assert r["dram_bytes"] >= 3 * 4 * n * n  # A and B read and C written at least once
        assert r["l2_bytes"] >= r["dram_bytes"] * 0.9  # what DRAM serves passes through the L2
        assert (r["shared_bytes"] > 0) == (not r["version"].startswith("naive"))
        assert r["pct_of_roof"] <= 105, r  # measured bytes: no point above its memory roof
        assert r["tflops"] <= r["fp32_peak_tflops"]
    # the caches serve most of the naive kernels' repeated reads: DRAM moves a small part of
    # what the no-cache model counts, and not even the tiled kernels' modelled bytes all reach it
    for label in ("naive (row from x)", "naive (col from x)"):
        assert rows[label]["model_bytes"] > 10 * rows[label]["dram_bytes"]
    assert all(rows[f"tiled {t}"]["dram_bytes"] < rows[f"tiled {t}"]["model_bytes"]
               for t in (8, 16, 32))
    # chapter 4's reading: the naive kernels far below the memory roof, no version near either
    # roof, tile 8 the nearest to its own
    naive = [rows["naive (row from x)"], rows["naive (col from x)"]]
    tiled = [rows[f"tiled {t}"] for t in (8, 16, 32)]

    def l2_rate(r):
        return r["l2_bytes"] * r["tflops"] * 1e12 / (2 * r["n"] ** 3)

    assert all(r["pct_of_roof"] < 10 for r in naive)  # a few percent of the copy bandwidth
    assert max(map(l2_rate, naive)) < 0.25 * l2_rate(rows["tiled 8"])  # nor is it the L2
    row, col = naive
    assert row["l1_bytes"] > 2 * col["l1_bytes"] and row["tflops"] < col["tflops"]
    assert all(0.35 < r["dram_bytes"] / r["model_bytes"] < 0.65 for r in tiled)  # about half
    assert max(r["pct_of_roof"] for r in rows.values()) == rows["tiled 8"]["pct_of_roof"] < 50
    # tiling raises the intensity DRAM sees, tile by tile
    assert rows["tiled 8"]["ai_measured"] < rows["tiled 16"]["ai_measured"] < rows["tiled 32"][
        "ai_measured"]


def test_dram_roofline_table_and_plot_read_the_record(capsys):
    res = records.run("profiling_matmul_roofline", live=False)
    lines = gp.matmul.dram_roofline_summary(res)
    chapter4 = [r for r in res.rows if r.get("chapter", "tiling") == "tiling"]
    assert len(lines) == len(chapter4) + 1 and "FP32 peak" in lines[-1]
    assert "of the model's" in capsys.readouterr().out
    fig = gp.matmul.plot_dram_roofline(res)
    assert fig.axes[0].get_xlabel().startswith("arithmetic intensity")
    with pytest.raises(TypeError, match="profiling_matmul_roofline"):
        gp.matmul.dram_roofline_summary(records.run("profiling_matmul", live=False))


def test_l2_read_kernel_reads_every_element_each_pass():
    # under the simulator: groups of four passes and leftover passes, shifts that wrap around
    # the buffer, a thread's share from zero quads to several; every element is one, and each
    # thread's sum counts what it read, so the element counts of the passes add up
    import numpy as np
    from numba import cuda

    from gpuperf.kernels.gridstride import read_passes, read_step

    for n, passes, grid, block in ((16 * 7, 3, 2, 4), (16, 1, 1, 8), (16 * 33, 6, 3, 5),
                                   (4 * 97, 9, 2, 3), (4 * 40, 4, 1, 1)):
        quads = n // 4
        for step in {0, 1, quads - 1, read_step(quads)}:
            data = np.arange(n, dtype=np.float32) % 7 + 1
            x = cuda.to_device(data)
            out = cuda.to_device(np.zeros(grid * block, dtype=np.float32))
            read_passes[grid, block](x, passes, step, out)
            assert out.copy_to_host().sum() == data.sum() * passes, (n, passes, grid, block, step)
    assert read_step(10**6) % 32 == 0 and 0 < read_step(10**6) < 10**6
    assert read_step(5) == 0   # too small for a 512-byte-aligned shift: every pass in place
    with pytest.raises(ValueError, match="quads"):
        read_step(0)


def test_l2_read_gbps_takes_the_largest_footprint_that_fits_half_the_l2():
    rows = [{"fraction_of_l2": f, "gbps": g} for f, g in ((0.125, 9000.0), (0.5, 8500.0),
                                                         (1, 12000.0), (8, 3000.0))]
    res = records.Result("profiling_l2_bandwidth", rows, {"gpu": "G", "ceilings": {}}, "recorded")
    assert gp.dram.l2_read_gbps(res) == 8500.0  # not the fastest, nor the whole L2's
    with pytest.raises(ValueError, match="of the L2 with a rate"):
        gp.dram.l2_read_gbps(records.Result("profiling_l2_bandwidth", rows[2:], res.meta,
                                              "recorded"))
    with pytest.raises(TypeError, match="profiling_l2_bandwidth"):
        gp.dram.l2_read_gbps(records.Result("demo", rows, res.meta, "recorded"))


@pytest.mark.parametrize("path", [p for p in records.available()
                                  if "profiling_l2_bandwidth" in records.load(p)["experiments"]],
                         ids=lambda p: p.stem)
def test_recorded_l2_bandwidth_is_served_by_the_l2(path):
    res = records.recorded("profiling_l2_bandwidth", path=path)
    rows = {r["fraction_of_l2"]: r for r in res.rows}
    assert set(rows) == set(gp.dram.profiling.L2_FRACTIONS)
    roof_row = rows[gp.dram.profiling.L2_ROOF_FRACTION]
    assert gp.dram.l2_read_gbps(res) == roof_row["gbps"]
    big = rows[max(gp.dram.profiling.L2_FRACTIONS)]
    # where the bytes came from: every footprint up to the roof's from the L2 (DRAM served almost
    # none of it), the largest from DRAM. The L1 served almost none of the roof's footprint (each
    # pass moves along); of the smallest footprint, an eighth of the L2, the H200's L1 hit 9.6%
    # (the SMs then read 88% of the bytes from the L2).
    profiled = [r for f, r in rows.items() if f <= gp.dram.profiling.L2_ROOF_FRACTION]
    assert roof_row in profiled
    for r in profiled:
        # after Nsight Compute's flush the first pass comes from DRAM (1/passes of the bytes);
        # at half the L2 some lines are evicted and fetched again (2.6% on the H100)
        assert r["dram_bytes"] < 0.05 * r["bytes_read"] and r["l2_hit_pct"] > 90, r
        assert r["l1_hit_pct"] < (5 if r is roof_row else 15), r
        if "l2_read_bytes" in r:   # the SMs read from the L2 about what the kernel read
            # (the H100 record's smallest footprint counted 91%, unexplained; the roof's 99%)
            assert 0.85 < r["l2_read_bytes"] / r["bytes_read"] < 1.03, r
    assert big["dram_bytes"] > 0.8 * big["bytes_read"]
    # the L2 read is faster than DRAM's copy, and than the read DRAM must serve
    assert gp.dram.l2_read_gbps(res) > 1.5 * res.ceilings["copy_gbps"]
    assert gp.dram.l2_read_gbps(res) > 1.5 * big["gbps"]


def test_course_roofline_takes_every_point_and_roof_from_one_gpu(capsys):
    roof = profiling.course_roofline()
    where = profiling._course_roofline_record()
    assert roof["gpu"] == records.load(where)["gpu"]
    mm = records.recorded("profiling_matmul_roofline", path=where)
    assert roof["copy_gbps"] == mm.ceilings["copy_gbps"]
    matmuls = [p for p in roof["points"] if p["name"].startswith("matmul ")]
    assert [p["intensity"] for p in matmuls] == [r["ai_measured"] for r in
                                                 profiling._course_matmuls(mm.rows)]
    # with the bytes DRAM moved, no point sits far above the memory roof
    lines = profiling.course_roofline_summary(roof)
    assert "far above the memory roof, so their bytes are overcounted: none" in lines
    assert "ridge at" in capsys.readouterr().out
    ridge = roof["cublas_tflops"] * 1e3 / roof["copy_gbps"]
    right = [p["name"] for p in roof["points"] if p["intensity"] > ridge]
    assert "right of that ridge: " + ", ".join(right) in lines and right
    fig = profiling.plot_course_roofline(roof)
    legend = [t.get_text() for leg in fig.axes[0].get_children()
              if isinstance(leg, matplotlib.legend.Legend) for t in leg.get_texts()]
    assert any("FP32 peak" in t for t in legend) and any("L2 read" in t for t in legend)
    if "profiling_onchip_roofs" in records.load(where)["experiments"]:
        sm = gp.dram.onchip_roof_gbps(records.recorded("profiling_onchip_roofs", path=where))
        assert roof["sm_read_gbps"] == sm
        assert any("128 B/clock/SM" in t and f"{sm:,.0f}" in t for t in legend)
        assert any(line.startswith("The SMs' read roof") and f"{sm:,.0f} GB/s" in line
                   for line in lines)
    with pytest.raises(ValueError, match=r"more_roofs\[0\]"):
        gp.plots.roofline(roof["points"], bw_gbps=1000, peak_tflops=10,
                          more_roofs=[("L2", 5000, "GB")])


def test_course_roofline_draws_each_matmul_again_at_its_l2_intensity():
    # The hierarchical reading: every profiled matmul point with the L2's bytes recorded comes
    # back as an open marker at 2 n^3 / (bytes through the L2), at the same TFLOP/s, joined to
    # its filled marker; no point's name is written over an open marker or its join.
    roof = profiling.course_roofline()
    rows = {f"matmul {r['version']}": r for r in roof["matmul"]}
    matmuls = [p for p in roof["points"] if p["name"] in rows and profiling._l2_served(rows[p["name"]])]
    assert matmuls and [p["name"] for p in roof["l2_points"]] == [p["name"] for p in matmuls]
    for p, q in zip(matmuls, roof["l2_points"]):
        r = rows[p["name"]]
        assert q["tflops"] == p["tflops"]
        assert q["intensity"] == pytest.approx(2 * r["n"] ** 3 / profiling._l2_served(r))
    fig = profiling.plot_course_roofline(roof)
    ax = fig.axes[0]
    hollow = [c for c in ax.collections if len(c.get_facecolors()) == 0]
    assert len(hollow) == len(roof["l2_points"])
    legend_texts = [t.get_text() for leg in ax.get_children()
                    if isinstance(leg, matplotlib.legend.Legend) for t in leg.get_texts()]
    assert any(t.startswith("open: ") and "L2" in t for t in legend_texts)
    renderer = fig.canvas.get_renderer()
    # the names' own text, without their leader lines (an Annotation's extent includes them)
    for t in ax.texts:
        t.update_positions(renderer)  # places the text where the drawing puts it
    names = [matplotlib.text.Text.get_window_extent(t, renderer) for t in ax.texts]
    assert all(b.x1 > 0 and b.y1 > 0 for b in names)  # display coordinates, not offsets
    for q in roof["l2_points"]:
        x, y = ax.transData.transform((q["intensity"], q["tflops"]))
        marker = matplotlib.transforms.Bbox([[x - 3, y - 3], [x + 3, y + 3]])
        assert not any(b.overlaps(marker) for b in names), q["name"]
    # without the L2 roof there is nothing to read the open markers against: none drawn
    bare = {**roof, "l2_gbps": None}
    ax = profiling.plot_course_roofline(bare).axes[0]
    assert not [c for c in ax.collections if len(c.get_facecolors()) == 0]


def test_matmul_words_names_every_profiled_matmul_in_words():
    # Review rev13f, finding 6: no "regtile", "cap128", "warp64x32" or "unroll2" on the page.
    assert profiling.matmul_words("regtile double-buffered 128x128x8 8x8 warp64x32 unroll2") == (
        "register tile 8x8 per thread (double-buffered), 128x128 block, k-tiles of 8, "
        "warp tiles of 64x32, 2 steps of k per loop pass")
    assert profiling.matmul_words("regtile 1d 64x64x8 16x1", short=True) == (
        "register tile, 16x1 per thread, one column")
    assert profiling.matmul_words("coarsened 32x4") == "coarsened x4, 32-wide tiles"
    assert profiling.matmul_words("naive (row from x)") == "naive (row from x)"
    roof = profiling.course_roofline()
    for r in roof["matmul"]:
        for short in (False, True):
            words = profiling.matmul_words(r["version"], short=short)
            assert not any(w in words for w in ("regtile", "cap1", "warp6", "unroll", "1d")), words
    ax = profiling.plot_course_roofline(roof).axes[0]
    assert not any("regtile" in t.get_text() for t in ax.texts)


def test_roofline_refuses_a_second_intensity_it_cannot_draw():
    pts = [{"name": "a", "intensity": 1.0, "tflops": 1.0}]
    with pytest.raises(TypeError, match="second_intensity"):
        gp.plots.roofline(pts, bw_gbps=1000, peak_tflops=10, second_intensity="L2")
    with pytest.raises(ValueError, match=r"not in points: \['b'\]"):
        gp.plots.roofline(pts, bw_gbps=1000, peak_tflops=10,
                          second_intensity=("L2 bytes", [{"name": "b", "intensity": 0.5,
                                                          "tflops": 1.0}]))


def test_chapter_10_reading_of_the_course_roofline_holds():
    # "the matrix products from chapter 5's coarsening on and the streams chapter's
    # arithmetic-heavy kernel lie to [the ridge's] right, and on some GPUs chapter 4's tile 32";
    # "no point sits far above the memory roof"; "none [of the matmuls] reaches two thirds of
    # the lower of its L2 roof and the FP32 peak"
    roof = profiling.course_roofline()
    ridge = roof["cublas_tflops"] * 1e3 / roof["copy_gbps"]
    right = {p["name"] for p in roof["points"] if p["intensity"] > ridge}
    ladder = {f"matmul {r['version']}" for r in profiling._course_matmuls(roof["matmul"])
              if r.get("chapter") == "coarsening"}
    expected = ladder | {p["name"] for p in roof["points"]
                         if p["name"].startswith("streams relaxation")}
    # ... "and, on some GPUs, chapter 4's tile 32": nothing else
    assert ladder and expected <= right and right - expected <= {"matmul tiled 32"}
    assert all(p["tflops"] <= 1.1 * p["intensity"] * roof["copy_gbps"] / 1e3
               for p in roof["points"])
    # the record the chapter shows has an L2 roof and the matmuls' L2 bytes: not vacuous
    assert roof["l2_gbps"] and roof["matmul"]
    for r in roof["matmul"]:
        bound = min(roof["l2_gbps"] * 2 * r["n"] ** 3 / profiling._l2_served(r) / 1e3,
                    roof["fp32_peak_tflops"])
        assert r["tflops"] < 2 / 3 * bound, r["version"]


def test_course_roofline_says_what_is_missing_and_survives_old_records(tmp_path):
    import json

    src = json.loads(profiling._course_roofline_record().read_text())
    exps = src["experiments"]
    # a record without the L2 experiment, and with matmul rows from before the L2 columns
    old = {k: v for k, v in exps.items() if k != "profiling_l2_bandwidth"}
    mm = json.loads(json.dumps(old["profiling_matmul_roofline"]))
    for r in mm["rows"]:
        for k in ("l2_bytes", "l2_sm_bytes", "chapter"):
            r.pop(k, None)
    old["profiling_matmul_roofline"] = mm
    path = tmp_path / "old.json"
    path.write_text(json.dumps({**src, "experiments": old}))
    roof = profiling.course_roofline(path)
    assert roof["l2_gbps"] is None
    assert ("profiling_l2_bandwidth", "no L2 roof: not in this GPU's record") in roof["missing"]
    lines = profiling.course_roofline_summary(roof)
    assert not any("FLOP per L2 byte" in line for line in lines)
    profiling.plot_course_roofline(roof)
    # an L2 record with no footprint small enough: said, not raised
    l2 = json.loads(json.dumps(exps["profiling_l2_bandwidth"]))
    l2["rows"] = [r for r in l2["rows"] if r["fraction_of_l2"] > gp.dram.profiling.L2_ROOF_FRACTION]
    path.write_text(json.dumps({**src, "experiments": {**exps, "profiling_l2_bandwidth": l2}}))
    roof = profiling.course_roofline(path)
    assert roof["l2_gbps"] is None and "record profiling_l2_bandwidth again" in roof["missing"][-1][1]
    # chapter 4's table refuses a result with none of its rows
    only5 = records.Result("profiling_matmul_roofline",
                           [{**r, "chapter": "coarsening"} for r in mm["rows"]], {}, "recorded")
    with pytest.raises(ValueError, match="chapter 4"):
        gp.matmul.dram_roofline_summary(only5)


def test_onchip_read_kernels_sum_what_numpy_says():
    # under the simulator: every kernel of the SM's read roofs, blocks of a partial warp, of
    # more than one warp and of several blocks, read counts of one trip and several, and
    # steps that wrap around the buffer; each thread's sum must match NumPy's from the same
    # addresses (small whole numbers: float32 adds them exactly)
    import numpy as np
    from numba import cuda

    from gpuperf.kernels import gridstride as gs

    src = cuda.to_device(gs.onchip_values())
    for name, (kernel, _, _, slots) in gs.ONCHIP_READS.items():
        for reads, block, blocks, step in ((8, 4, 1, gs.ONCHIP_STEP), (16, 33, 2, 1),
                                           (24, 64, 1, slots - 5)):
            out = cuda.to_device(np.zeros(block * blocks, np.float32))
            kernel[blocks, block](src, reads, step, out)
            want = gs.onchip_expected(name, reads, block, blocks, step)
            assert np.array_equal(out.copy_to_host(), want), (name, reads, block, blocks, step)
        # a thread's sum differs from its neighbour's: the addresses depend on the thread
        assert len(set(want[:block])) > 1, name
    # the 16-byte kernels read four floats a load, so their sums are about four times larger
    assert (gs.onchip_expected("shared16", 8, 32, 1).sum()
            > 3 * gs.onchip_expected("shared4", 8, 32, 1).sum())


def _onchip_records():
    return [p for p in records.available()
            if "profiling_onchip_roofs" in records.load(p)["experiments"]]


@pytest.mark.parametrize("path", _onchip_records(), ids=lambda p: p.stem)
def test_recorded_onchip_roofs_count_every_load(path):
    res = records.recorded("profiling_onchip_roofs", path=path)
    from gpuperf.kernels import gridstride as gs

    assert [r["kernel"] for r in res.rows] == list(gs.ONCHIP_READS)
    for r in res.rows:
        # every warp-level load was executed (none merged by the compiler), a 16-byte warp load
        # took four wavefronts, a 4-byte one one (no bank conflict), and the L1 reads hit
        assert r["warp_loads"] == r["blocks"] * r["block"] // 32 * r["reads_per_thread"], r
        assert r["wavefronts_per_load"] == pytest.approx(r["bytes_per_load"] / 4, rel=0.01), r
        if r["source"] == "L1":
            assert r["l1_hit_pct"] > 99, r
        assert r["gbps"] <= r["bank_roof_gbps"], r
    wide = [r for r in res.rows if r["bytes_per_load"] == 16]
    # the 16-byte reads reach most of 128 bytes per clock per SM (a roof that can be reached);
    # the 4-byte ones are slower, with the schedulers issuing in most cycles
    assert all(r["pct_bank_roof"] > 85 for r in wide)
    for r in res.rows:
        if r["bytes_per_load"] == 4:
            twin = next(w for w in wide if w["source"] == r["source"])
            assert r["gbps"] < twin["gbps"] and r["issue_active_pct"] > twin["issue_active_pct"]
    assert gp.dram.onchip_roof_gbps(res) == wide[0]["bank_roof_gbps"]
    # shared memory and the L1 share one data pipe: half of each reads no faster than either
    mixed = next(r for r in res.rows if r["kernel"] == "mixed16")
    assert mixed["gbps"] < 1.05 * max(r["gbps"] for r in wide if r is not mixed)


def test_onchip_roof_falls_back_to_the_fastest_read_without_a_clock(capsys):
    rows = [{"kernel": "shared16", "source": "shared", "bytes_per_load": 16, "gbps": 900.0,
             "spread": 0.01, "bank_roof_gbps": None},
            {"kernel": "l1_16", "source": "L1", "bytes_per_load": 16, "gbps": 950.0,
             "spread": 0.01, "bank_roof_gbps": None},
            {"kernel": "l1_4", "source": "L1", "bytes_per_load": 4, "gbps": 990.0,
             "spread": 0.01, "bank_roof_gbps": None}]
    res = records.Result("profiling_onchip_roofs", rows, {"gpu": "G", "ceilings": {}}, "recorded")
    assert gp.dram.onchip_roof_gbps(res) == 950.0   # a 16-byte read's, not the 4-byte one's
    lines = gp.dram.onchip_roofs_summary(res)
    assert len(lines) == 4 and "no theoretical roof" in lines[-1]
    with pytest.raises(ValueError, match="16-byte read"):
        gp.dram.onchip_roof_gbps(records.Result(res.name, rows[2:], res.meta, res.source))


def test_onchip_roofline_places_each_version_at_its_pipe_bytes(capsys):
    if not _onchip_records():
        pytest.skip("no record has profiling_onchip_roofs")
    onchip = records.recorded("profiling_onchip_roofs", path=_onchip_records()[0])
    dram = records.recorded("profiling_matmul_roofline", path=_onchip_records()[0])
    chapter4 = [r for r in dram.rows if r.get("chapter", "tiling") == "tiling"]
    lines = gp.matmul.onchip_roofline_summary(dram, onchip)
    assert len(lines) == len(chapter4) + 2
    assert lines[-1].startswith(f"At {gp.matmul.profiling.BOUND_PCT}% or more of a roof")
    roof = gp.dram.onchip_roof_gbps(onchip)
    for r, line in zip(chapter4, lines):
        # the pipe's bytes include the shared ones; the % printed is the rate over the roof
        # at the version's FLOP per pipe byte
        assert r["pipe_bytes"] >= r["shared_pipe_bytes"] > 0 or r["version"].startswith("naive")
        pct = 100 * r["tflops"] / (roof * 2 * r["n"] ** 3 / r["pipe_bytes"] / 1e3)
        assert f"{pct:4.1f}% of the SM's read roof" in line and 0 < pct <= 100.5, line
    fig = gp.matmul.plot_onchip_roofline(dram, onchip)
    from matplotlib.legend import Legend

    legend = " ".join(t.get_text() for ax in fig.axes for child in ax.get_children()
                      if isinstance(child, Legend) for t in child.get_texts())
    assert "SM's read roof" in legend and "data pipe" in legend
    # a record made before the pipe's wavefronts were counted, and two GPUs, are refused
    old = records.Result(dram.name, [{k: v for k, v in r.items() if k != "pipe_bytes"}
                                     for r in dram.rows], dram.meta, dram.source)
    with pytest.raises(ValueError, match="record it again"):
        gp.matmul.onchip_roofline_summary(old, onchip)
    other = records.Result(onchip.name, onchip.rows, {**onchip.meta, "gpu": "Other GPU"},
                           onchip.source)
    with pytest.raises(ValueError, match="one GPU"):
        gp.matmul.plot_onchip_roofline(dram, other)


def test_nearest_roof_names_the_roof_a_version_is_closest_to():
    base = {"n": 1024, "tflops": 1.0, "fp32_peak_tflops": 60.0, "memory_roof_tflops": 10.0}
    flops = 2 * 1024 ** 3
    # at 1 TFLOP/s: 10% of a 10 TFLOP/s DRAM roof; the pipe bound is 1000 GB/s x flops/bytes
    near_pipe = {**base, "pct_of_roof": 10.0, "pipe_bytes": flops / 1.25}   # bound 1.25
    assert gp.matmul.profiling._nearest_roof(near_pipe, 1000.0) == (10.0, 80.0, "nearer the SM's read roof")
    near_dram = {**base, "pct_of_roof": 90.0, "pipe_bytes": flops / 100}     # bound 100
    assert gp.matmul.profiling._nearest_roof(near_dram, 1000.0)[2] == "nearer the DRAM roof"
    past_ridge = {**near_dram, "memory_roof_tflops": 80.0}
    assert gp.matmul.profiling._nearest_roof(past_ridge, 1000.0)[2] == "nearer the FP32 peak"
    # shares within ALIKE_RATIO of each other: both roofs are named; 2% and 6.9% are not alike
    small = {**near_dram, "pct_of_roof": 2.0, "tflops": 0.069, "pipe_bytes": flops / 1.0}
    assert gp.matmul.profiling._nearest_roof(small, 1000.0)[2] == "nearer the SM's read roof"
    alike = {**past_ridge, "pct_of_roof": 50.0, "pipe_bytes": flops / 2.06}   # 48.5% of 2.06
    assert gp.matmul.profiling._nearest_roof(alike, 1000.0)[2] == "as near the SM's read roof as the FP32 peak"


def test_stride_wavefronts_follow_lines():
    # What chapter 2 says of its record: about one data-stage wavefront per 128-byte line a
    # request touches, and the data stage far from the SM's read roof.
    hw = records.run("profiling_stride", live=False)
    onchip = records.run("profiling_onchip_roofs", live=False)
    if "load_wavefronts_per_request" not in hw.rows[0] or onchip.gpu != hw.gpu:
        pytest.skip("the reference record has no wavefront counts or no roof of its GPU")
    table = gp.coalescing.stride_wavefronts(hw, onchip)
    for r in table.rows:
        assert r["model_lines"] <= r["load_wavefronts"] < 1.25 * r["model_lines"]
        assert r["model_lines"] <= r["store_wavefronts"] < 1.25 * r["model_lines"]
        assert 0 < r["pipe_pct_of_roof"] < 50
    assert "pipe_pct_of_roof" not in gp.coalescing.stride_wavefronts(hw).rows[0]
    with pytest.raises(TypeError, match="profiling_stride"):
        gp.coalescing.stride_wavefronts(onchip)
    with pytest.raises(TypeError, match="onchip"):
        gp.coalescing.stride_wavefronts(hw, hw)
    other = records.Result(onchip.name, onchip.rows, {**onchip.meta, "gpu": "Another GPU"},
                           "recorded")
    with pytest.raises(ValueError, match="same GPU"):
        gp.coalescing.stride_wavefronts(hw, other)
    old = records.Result(hw.name, [{k: v for k, v in r.items() if "wavefronts" not in k}
                                   for r in hw.rows], hw.meta, "recorded")
    with pytest.raises(ValueError, match="record it again"):
        gp.coalescing.stride_wavefronts(old)


def test_the_rungs_stall_experiment_reads_its_metrics(monkeypatch):
    """``profiling_reduce_rungs`` (chapter 6.2's v5 against v6, chapter 9's v1): one Nsight
    Compute run per rung, launched as the ladder launches it, its columns from the metrics."""
    seen = []

    def fake_profile(name, *args, kernel, metrics, library=False, launch_count=1):
        seen.append((args, kernel))
        m = {k: 2.0 for k in metrics}
        m["smsp__issue_active.avg.pct_of_peak_sustained_elapsed"] = 40.0
        m["l1tex__data_pipe_lsu_wavefronts.sum.pct_of_peak_sustained_elapsed"] = 80.0
        return m

    monkeypatch.setattr(nsight, "profile", fake_profile)
    monkeypatch.setattr(bench, "require_gpu", lambda what: None)
    rows = gp.reduce.profiling.reduce_rungs_experiment(lambda msg: None)
    assert [r["version"] for r in rows] == ["v1", "v5", "v6"]
    assert [k for _, k in seen] == ["reduce_v1", "reduce_v5", "reduce_v6"]
    assert seen[1][0] == ("v5", 256, 2**28)
    r = rows[0]
    assert r["issue_active_pct"] == 40.0 and r["lsu_pipe_pct"] == 80.0
    assert r["stall_barrier"] == 2.0 and r["sm_pct"] == 2.0
    assert "profiling_reduce_rungs" in records._REGISTRY


def test_course_roofline_tells_every_kernel_apart_and_names_none_over_a_point():
    # Review 610_4, finding 13: no two kernels share both colour and marker, and no name
    # (its text, without its leader line) is written over a filled or open marker or another name.
    roof = profiling.course_roofline()
    fig = profiling.plot_course_roofline(roof)
    ax = fig.axes[0]
    filled = [c for c in ax.collections if len(c.get_facecolors())]
    looks = {(tuple(c.get_facecolors()[0]), c.get_paths()[0].vertices.tobytes()) for c in filled}
    assert len(filled) == len(roof["points"]) == len(looks)
    renderer = fig.canvas.get_renderer()
    for t in ax.texts:
        t.update_positions(renderer)
    names = [matplotlib.text.Text.get_window_extent(t, renderer) for t in ax.texts]
    for i, b in enumerate(names):
        assert not any(b.overlaps(o) for o in names[i + 1:]), ax.texts[i].get_text()
    for p in list(roof["points"]) + list(roof.get("l2_points") or []):
        x, y = ax.transData.transform((p["intensity"], p["tflops"]))
        marker = matplotlib.transforms.Bbox([[x - 3, y - 3], [x + 3, y + 3]])
        assert not any(b.overlaps(marker) for b in names), p["name"]


def test_sass_opcodes_read_every_instruction_and_drop_predicates():
    ops = nsight.sass_opcodes(_read("sass_copy_grid_stride_sm90.txt"))
    assert ops[0].startswith("LDC") and "EXIT" in ops and "BRA" in ops  # `@P0 EXIT`, `@!P0 BRA`
    assert [op.split(".")[0] for op in ops].count("LDG") == 2  # the loop's load and the tail's
    assert not any(op.startswith(("@", "/*")) for op in ops)
    assert nsight.sass_opcodes("") == []


def test_loads_before_store_counts_the_loads_a_thread_issues_before_it_waits():
    assert nsight.loads_before_store(nsight.sass_opcodes(
        _read("sass_copy_grid_stride_sm90.txt"))) == 1
    # the unchecked rung: ptxas moved the interior tile's four loads above their shared stores
    assert nsight.loads_before_store(nsight.sass_opcodes(
        _read("sass_transpose_unchecked_sm90.txt"))) == 4
    assert nsight.loads_before_store(["LDG.E", "IADD3", "LDG.E.128", "STG.E", "LDG.E"]) == 2
    assert nsight.loads_before_store(["LDG.E", "STS", "LDG.E", "STS"]) == 1
    assert nsight.loads_before_store(["LDS", "LDS", "STG"]) == 0
    assert nsight.loads_before_store(["LDS", "LDS", "STG"], loads=("LDS",)) == 2
    assert nsight.loads_before_store([]) == 0


@pytest.mark.parametrize("path", record_paths_with("coalescing_sass_order"), ids=lambda p: p.stem)
def test_recorded_sass_order_backs_chapter_2(path):
    """Rung 4 keeps one load before each shared store; without its bounds tests the compiler
    issues the interior tile's four loads first, as staging does; chapter 1's copy loop keeps
    one load before each store, the ILP copy four."""
    from gpuperf.kernels.coalescing.experiments import TRANSPOSE_SWEEP, UNCHECKED

    rows = {r["kernel"]: r for r in records.recorded("coalescing_sass_order", path=path).rows}
    assert rows[TRANSPOSE_SWEEP[3][0]]["loads_before_store"] == 1
    assert rows[UNCHECKED]["loads_before_store"] == 4
    assert rows[TRANSPOSE_SWEEP[5][0]]["loads_before_store"] == 4
    assert rows["grid-stride copy, 1 load in flight"]["loads_before_store"] == 1
    assert rows["grid-stride copy, 4 loads in flight"]["loads_before_store"] == 4
    for r in rows.values():
        assert r["order"].split().count("LDG") == r["global_loads"]


@pytest.mark.parametrize("path", record_paths_with("matmul_sass_counts"), ids=lambda p: p.stem)
def test_recorded_sass_counts_match_the_profiled_shared_loads(path):
    """The tiled kernel's shared-load instructions per FFMA in its SASS equal what Nsight
    Compute counted when it ran (profiling_matmul), and uint32 indices take fewer instructions
    than int64 with the same FFMAs."""
    rows = {r["kernel"]: r for r in records.recorded("matmul_sass_counts", path=path).rows}
    profiled = ({r["version"]: r for r in records.recorded("profiling_matmul", path=path).rows}
                if "profiling_matmul" in records.load(path)["experiments"] else {})
    for label in ("tiled 16", "tiled 32"):
        tiled = rows[label]
        assert tiled["lds_4_bytes"] + tiled["lds_8_bytes"] + tiled["lds_16_bytes"] == (
            tiled["shared_loads_per_ffma"] * tiled["ffma"])
        if label in profiled:
            assert abs(profiled[label]["shared_loads_per_fma"]
                       - tiled["shared_loads_per_ffma"]) < 0.01
    fast64, fast32 = rows["fast path only, int64"], rows["fast path only, uint32"]
    assert fast32["ffma"] == fast64["ffma"] and fast32["instructions"] < fast64["instructions"]


def test_the_launch_occupancy_launch_copies_and_the_experiment_reads_its_counters(monkeypatch):
    """Chapter 1's profiled launch copies its array (small here, under the simulator), and the
    experiment turns Nsight Compute's counters into its columns for every profiled launch."""
    from numba import cuda

    from gpuperf.kernels.gridstride import profiling as gsp

    launched, keep = [], []

    def vectors(n, count):
        x = cuda.to_device(np.arange(n, dtype=np.float32))
        keep.extend([x, cuda.device_array_like(x)])
        return keep[-2:]

    monkeypatch.setattr(nsight, "launch_twice", lambda launch: launched.append(launch()))
    monkeypatch.setattr(gsp, "_device_vectors", vectors)
    gsp._copy_launch("one_per_thread", 64, 1, 1000)
    gsp._copy_launch("grid_stride", 32, 2, 1000)
    assert len(launched) == 2
    for x, out in (keep[0:2], keep[2:4]):
        assert np.array_equal(out.copy_to_host(), x.copy_to_host())

    asked = []

    def fake_profile(launch, *args, kernel, metrics):
        asked.append((args, kernel))
        return {"sm__warps_active.avg.pct_of_peak_sustained_active": 80.0,
                "sm__maximum_warps_per_active_cycle_pct": 100.0,
                "dram__bytes_read.sum": 1e9, "dram__bytes_write.sum": 1e9,
                "gpu__time_duration.sum": 1e6}

    monkeypatch.setattr(nsight, "profile", fake_profile)
    rows = gsp.launch_occupancy_experiment.__wrapped__(lambda s: None)
    assert [(a[:3], k) for a, k in asked] == [
        ((m, b, p), "copy_one_per_thread" if m == "one_per_thread" else "copy_grid_stride")
        for m, b, p in gsp.PROFILED_LAUNCHES]
    assert all(a[3] == gsp.N_BIG for a, _ in asked)
    assert rows[0]["achieved_pct"] == 80.0 and rows[0]["dram_gbps"] == 2000.0
    assert rows[0]["blocks"] == gsp.N_BIG // 64 and rows[-1]["blocks_per_sm"] == 8


@pytest.mark.parametrize("path", record_paths_with("profiling_launch_occupancy"), ids=lambda p: p.stem)
def test_recorded_launch_occupancy_backs_chapter_1(path):
    """Every launch could fill the SMs (theoretical 100%), but the one-element-per-thread copy
    keeps fewer warps resident than the grid-stride copy at every block size, and its speed
    ranks with the warps it keeps."""
    rows = records.recorded("profiling_launch_occupancy", path=path).rows
    one = [r for r in rows if r["method"] == "one_per_thread"]
    stride = next(r for r in rows if r["method"] == "grid_stride")
    assert all(r["theoretical_pct"] == 100 for r in rows)
    assert all(r["achieved_pct"] < stride["achieved_pct"] - 10 for r in one)
    by_occupancy = sorted(one, key=lambda r: r["achieved_pct"])
    assert by_occupancy == sorted(one, key=lambda r: r["dram_gbps"])
