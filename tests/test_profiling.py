"""Parsing the NVIDIA tools' real output on course kernels (captured on an H100: see
tests/fixtures/profiling/README.md) and the command lines that produce it."""

from pathlib import Path

import pytest

from gpuperf import profiling, records

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


# --------------------------------------------------------------------------- experiments


def test_the_profiler_experiments_replay_from_the_h100_record():
    """Recorded on an H100 with `python -m gpuperf.record --only profiling_`: every rung
    profiled, the derived column consistent with the measured ones."""
    res = records.run("profiling_reduce_shared")
    assert res.gpu.startswith("NVIDIA H100")
    assert [r["version"] for r in res.rows] == list(profiling.PROFILED_RUNGS)
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
    monkeypatch.setattr(profiling.shutil, "which", lambda tool: None)
    with pytest.raises(RuntimeError, match="ncu is not on this machine's PATH"):
        profiling._tool_run(["ncu", "--version"], "reduce v1")


def test_the_strided_copy_and_transposes_replay_with_what_chapter_2_teaches():
    """Recorded on an H100: the loads' sectors per request are the sector model's, and DRAM
    reads grow with the stride; padding removes the tiled transpose's 32-way bank conflict,
    and the tiled transposes store 4 sectors per request where the naive one stores 32."""
    stride = records.run("profiling_stride")
    assert [r["stride"] for r in stride.rows] == list(profiling.PROFILED_STRIDES)
    for r in stride.rows:
        assert r["load_sectors_per_request"] == r["model_sectors_per_request"]
        assert r["dram_read_per_useful"] == round(r["dram_read_bytes"] / (4 * r["n"]), 3)
    reads = [r["dram_read_per_useful"] for r in stride.rows]
    assert reads == sorted(reads) and reads[0] >= 0.99
    tr = {r["version"]: r for r in records.run("profiling_transpose").rows}
    assert [v for v, _ in profiling.PROFILED_TRANSPOSES] == list(tr)
    assert tr["tiled"]["shared_load_wavefronts_per_load"] > 16
    assert tr["tiled + padding"]["shared_load_wavefronts_per_load"] < 1.5
    assert tr["naive"]["store_sectors_per_request"] == 32
    assert tr["tiled"]["store_sectors_per_request"] == tr["tiled + padding"]["store_sectors_per_request"] == 4


def test_a_launch_runs_in_a_process_of_its_own_by_name():
    cmd = profiling.launch_command("matmul", "tiled", 32, 1, 4096)
    assert cmd[1] == "-c" and "_launch_from_argv" in cmd[2]
    assert cmd[3:] == ["matmul", "tiled", "32", "1", "4096"]
    with pytest.raises(ValueError, match="name"):
        profiling.launch_command("transposed", 1)
    # The kernel a matmul row profiles is the one the variant launches.
    for _, version, tile, factor in profiling.PROFILED_MATMULS:
        v = profiling._matmul_variant(version, tile, factor)
        assert v.kernel.py_func.__name__ in {"tiled", "coarsened", "regtile"}


def test_the_launch_functions_run_under_the_simulator(monkeypatch):
    """Each launch function builds its data and launches its kernel (small sizes here)."""
    calls = []
    monkeypatch.setattr(profiling, "_launch_twice", lambda launch: calls.append(launch()))
    profiling._launch_from_argv(["stride", "2", "64"])
    profiling._launch_from_argv(["transpose", "-1", "32"])
    profiling._launch_from_argv(["reduce", "v2", "64", "256"])
    assert len(calls) == 3


def test_the_recorded_metrics_back_what_chapters_2_to_5_now_say():
    """The sentences chapters 2 to 5 print beside these records (H100)."""
    for r in records.run("profiling_stride").rows:  # DRAM never below the sector model
        assert r["dram_read_per_useful"] >= 0.99 * r["model_sectors_per_request"] / 4
    lat = {(r["ilp"], r["warps_per_sm"]): r for r in records.run("profiling_latency").rows}
    assert list(lat) == list(profiling.PROFILED_LOADS)
    assert lat[(1, 8)]["dram_pct"] < lat[(1, 64)]["dram_pct"] < lat[(4, 64)]["dram_pct"]
    assert lat[(16, 64)]["dram_pct"] <= lat[(4, 64)]["dram_pct"] + 2  # no gain past the ceiling
    for r in lat.values():
        assert profiling.top_stalls(r, 1)[0][0] == "long scoreboard"
    mm = {r["version"]: r for r in records.run("profiling_matmul").rows}
    assert list(mm) == [label for label, *_ in profiling.PROFILED_MATMULS]
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
    monkeypatch.setattr(profiling, "_tool_run", lambda cmd, what: seen.append(cmd) or "")
    with pytest.raises(ValueError):  # no CSV in "": only the command line matters here
        profiling.profile("stride", 1, 64, kernel="copy_strided", metrics=["m"])
    assert sys.executable in seen[0] and "python3" not in seen[0]
