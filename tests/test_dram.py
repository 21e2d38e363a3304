"""DRAM chapter: the textbook's model against its hand-worked cases, the kernels in the
simulator, the host wrappers' checks, the experiments' registration, figures, checkers."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from conftest import load_answer
from numba import cuda

import gpuperf as gp  # first: it picks the GPU or the simulator before numba.cuda loads
from gpuperf import records
from gpuperf.kernels import dram
from gpuperf.kernels.dram import checks as dram_checks
from gpuperf.records import Result

WRONG = Path(__file__).parent / "wrong" / "dram"


def _random(n, seed):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-2, 2) + rng.uniform(0.5, 4) * (rng.random(n) - 0.5)).astype(np.float32)


# --------------------------------------------------------------------------- interleaving


def test_textbook_distribution_figure():
    """8-byte bursts, 4 channels, 2 banks: the textbook's Fig. 6.9, element by element."""
    expected = {0: (0, 0), 1: (0, 0), 2: (1, 0), 3: (1, 0), 4: (2, 0), 5: (2, 0), 6: (3, 0),
                7: (3, 0), 8: (0, 1), 9: (0, 1), 10: (1, 1), 11: (1, 1), 12: (2, 1), 13: (2, 1),
                14: (3, 1), 15: (3, 1),
                # "M[16] and M[17] in bank 0 of channel 0, M[18] and M[19] in bank 0 of channel 1"
                16: (0, 0), 17: (0, 0), 18: (1, 0), 19: (1, 0)}
    for i, place in expected.items():
        assert dram.TEXTBOOK.locate_element(i) == place, i


def test_sixteen_elements_reach_every_channel_and_bank():
    rows = dram.TEXTBOOK.table(16)
    assert {(r["channel"], r["bank"]) for r in rows} == {(c, b) for c in range(4) for b in range(2)}
    # "as long as there are at least 16 elements": 14 leave bank 1 of channel 3 empty
    assert (3, 1) not in {(r["channel"], r["bank"]) for r in dram.TEXTBOOK.table(14)}
    assert len({(r["channel"], r["bank"]) for r in dram.TEXTBOOK.table(8)}) == 4


def test_layout_on_byte_addresses_and_other_shapes():
    lay = dram.DramLayout(burst_bytes=64, channels=3, banks_per_channel=5)
    assert lay.locate(0) == (0, 0) and lay.locate(63) == (0, 0)
    assert lay.locate(64) == (1, 0) and lay.locate(3 * 64) == (0, 1)
    assert lay.locate(15 * 64) == (0, 0)  # after 3 x 5 bursts the pattern repeats
    assert lay.locate_element(17, element_bytes=8) == ((17 * 8 // 64) % 3, 0)


def test_layout_rejects_nonsense():
    with pytest.raises(ValueError):
        dram.DramLayout(burst_bytes=0)
    with pytest.raises(TypeError):
        dram.DramLayout(channels=2.5)


# --------------------------------------------------------------------------- bandwidth arithmetic


def test_textbook_channel_and_bank_arithmetic():
    assert dram.ddr_channel_gbps(64, 1.0) == 16.0  # 8 B x 2 x 1 GHz
    assert dram.channels_needed(32) == 2  # "a CPU would need 2 channels"
    assert dram.channels_needed(256) == 16  # "and a GPU 16"
    # "ratio 20:1 -> at most 1/21 = 4.8% of the bus; a 16 GB/s channel delivers 0.76 GB/s"
    u = dram.bus_utilization(20, 1)
    assert u == pytest.approx(1 / 21)
    assert round(100 * u, 1) == 4.8
    assert round(16 * u, 2) == 0.76
    assert dram.banks_needed(20) == 21
    assert dram.bus_utilization(20, 21) == 1.0 and dram.bus_utilization(20, 20) < 1.0
    assert dram.bus_utilization(1, 2) == 1.0  # textbook Fig. 6.8(B)-style: R=1 needs 2 banks


@pytest.mark.parametrize("ratio,banks", [(20, 1), (20, 2), (20, 7), (20, 21), (20, 30), (4, 2),
                                         (4, 5), (0, 1), (3.5, 3)])
def test_simulated_bank_timing_matches_the_formula(ratio, banks):
    assert dram.simulated_utilization(ratio, banks) == pytest.approx(
        dram.bus_utilization(ratio, banks), rel=2e-3)


def test_bank_schedule_respects_banks_and_bus():
    sched = dram.bank_schedule(6, 3, 40)
    spans = sorted((a["bus_start"], a["bus_end"]) for a in sched)
    # one burst on the bus at a time
    assert all(b0 >= a1 - 1e-12 for (_, a1), (b0, _) in zip(spans, spans[1:]))
    for bank in range(3):
        mine = [a for a in sched if a["bank"] == bank]
        for a, b in zip(mine, mine[1:]):
            assert b["start"] >= a["bus_end"]  # a bank serves one access at a time
        assert all(a["bus_start"] >= a["ready"] == a["start"] + 6 for a in mine)


# --------------------------------------------------------------------------- tiled matmul phases


def test_textbook_phase_0_and_phase_1():
    """4x4 matrices, 2x2 blocks and tiles: phase 0 uses both banks of channels 0 and 2,
    phase 1 both banks of channels 1 and 3 (the textbook's Fig. 6.11 discussion)."""
    assert dram.phase_usage(4, 2, 0) == {(0, 0): 1, (0, 1): 1, (2, 0): 1, (2, 1): 1}
    assert dram.phase_usage(4, 2, 1) == {(1, 0): 1, (1, 1): 1, (3, 0): 1, (3, 1): 1}
    loads = dram.tile_loads(4, 2, 0)
    by_block = {}
    for acc in loads:
        by_block.setdefault(acc["block"], []).append(acc)
    assert sorted(by_block) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    for accs in by_block.values():
        assert len(accs) == 2  # "each block makes two coalesced accesses"
        assert all(len(a["bursts"]) == 1 for a in accs)  # each one exactly a burst
    # block(0,0) and block(0,1) load the same M elements (M's tiles depend on the row only)
    assert [a["elements"] for a in by_block[(0, 0)]] == [(0, 1), (4, 5)]
    assert [a["elements"] for a in by_block[(0, 1)]] == [(0, 1), (4, 5)]
    assert [a["elements"] for a in by_block[(1, 0)]] == [(8, 9), (12, 13)]
    assert [a["elements"] for a in dram.tile_loads(4, 2, 1) if a["block"] == (0, 0)] == [
        (2, 3), (6, 7)]


def test_eight_by_eight_reaches_all_four_channels():
    """The textbook's exercise: 8x8 with 2x2 blocks uses all four channels. True of the phase
    as a whole (N's tiles spread over them); M alone reaches one channel per phase."""
    for ph in range(4):
        assert dram.channels_used(8, 2, ph, matrix="M") == [ph]
        assert dram.channels_used(8, 2, ph, matrix="N") == [0, 1, 2, 3]
        assert dram.channels_used(8, 2, ph, matrix="both") == [0, 1, 2, 3]
    # M: 8 rows x 2 columns = 8 bursts, all in channel 0; N: 2 rows x 8 columns = 8 bursts
    assert dram.phase_usage(8, 2, 0, matrix="both") == {
        (0, 0): 5, (0, 1): 5, (1, 0): 1, (1, 1): 1, (2, 0): 1, (2, 1): 1, (3, 0): 1, (3, 1): 1}


def test_phases_with_a_ragged_edge():
    """5x5 with 2x2 tiles: three phases; the last loads only column 4 (bounds test)."""
    loads = dram.tile_loads(5, 2, 2)
    assert all(len(a["elements"]) == 1 for a in loads)
    assert {e % 5 for a in loads for e in a["elements"]} == {4}
    assert {a["block"][0] for a in loads} == {0, 1, 2}
    with pytest.raises(ValueError):
        dram.tile_loads(5, 2, 3)  # there is no phase 3
    with pytest.raises(ValueError):
        dram.tile_loads(4, 2, 0, matrix="P")


def test_wider_bursts_need_larger_matrices():
    """'A larger burst needs a larger matrix to use every channel.'"""
    wide = dram.DramLayout(burst_bytes=32, channels=4, banks_per_channel=2)
    assert len(dram.channels_used(4, 2, 0, matrix="both", layout=wide)) < 4
    assert dram.channels_used(32, 2, 0, matrix="both", layout=wide) == [0, 1, 2, 3]


# --------------------------------------------------------------------------- Little's law


def test_littles_law_helpers():
    assert dram.littles_law_gbps(3_000_000, 600) == pytest.approx(5000.0)
    assert dram.bytes_in_flight(8, 4, 132) == 8 * 4 * 132 * 32 * 4
    need = dram.loads_per_thread_needed(3350, 620, 8, 132)
    assert need == math.ceil(3350 * 620 / (8 * 132 * 32 * 4))
    assert dram.littles_law_gbps(dram.bytes_in_flight(8, need, 132), 620) >= 3350
    assert dram.littles_law_gbps(dram.bytes_in_flight(8, need - 1, 132), 620) < 3350
    assert dram.loads_per_thread_needed(1, 1, 64, 132) == 1


def test_a_copy_loads_only_half_its_bandwidth():
    """Issue 60, finding 1: a copy's bandwidth counts reads and writes; the loads carry the reads."""
    assert dram.copy_loads_per_thread_needed(1696, 356, 4, 132) == 5
    assert dram.loads_per_thread_needed(1696, 356, 4, 132) == 9  # the factor-two error
    assert dram.copy_loads_per_thread_needed(2 * 3350, 620, 8, 132) == dram.loads_per_thread_needed(
        3350, 620, 8, 132)
    # one 4-byte load per thread on 132 SMs of 2048 threads covers 510 ns at a 4,240 GB/s copy
    assert dram.copy_latency_covered_ns(132 * 2048 * 4, 4240) == pytest.approx(510, abs=1)
    with pytest.raises(ValueError):
        dram.littles_law_gbps(1, 0)


def _fake(name, rows, meta=None):
    return records.Result(name, rows, {"gpu": "Test GPU", "ceilings": {"copy_gbps": 3000.0,
                                                                      "peak_gbps": 3350.0},
                                       **(meta or {})}, "recorded")


def _fake_little():
    rows = []
    for ilp in (1, 2, 4, 8):
        round_ns = 600.0 * (1 + 0.1 * np.log2(ilp))
        for warps in (1, 2, 4, 8, 16, 32, 64):
            b = dram.bytes_in_flight(warps, ilp, 132)
            pred = b / round_ns
            rows.append({"warps_per_sm": warps, "ilp": ilp, "bytes_in_flight": b,
                         "gbps": min(0.95 * pred, 3000.0), "predicted_gbps": pred,
                         "textbook_gbps": b / 600.0, "round_ns": round_ns,
                         "latency_ns": 600.0, "latency_random_ns": 700.0})
    return _fake("dram_littles_law", rows)


def test_littles_law_agreement_marks_the_linear_part():
    agree = dram.littles_law_agreement(_fake_little())
    assert len(agree) == 4 * 6  # every point but the last of each curve
    for r in agree:
        # x2 per doubling below the 3000 GB/s cap: linear while the next point grows >= 1.8x.
        assert r["linear"] == (1.8 * r["gbps"] <= 3000.0), r
        assert r["ratio"] == pytest.approx(r["predicted_gbps"] / r["gbps"])
    linear = [r for r in agree if r["linear"]]
    assert linear and all(r["ratio"] == pytest.approx(1 / 0.95) and r["agrees"] for r in linear)
    assert not all(r["agrees"] for r in agree)  # at the cap the prediction runs far ahead
    # Rows work as well as a Result; a capped curve (warps that did not fit) is skipped.
    rows = [dict(r) for r in _fake_little().rows if r["ilp"] == 1]
    rows[-1]["warps_per_sm"] = rows[-2]["warps_per_sm"]
    assert len(dram.littles_law_agreement(rows)) == 5


def test_verify_prediction_reads_the_sweep(capsys):
    out = dram.verify_prediction(3, 8, res=_fake_little())
    assert out["ilp"] == 4  # the measured point at or above 3
    assert "8 warps/SM" in capsys.readouterr().out
    with pytest.raises(ValueError):
        dram.verify_prediction(3, 3, res=_fake_little())


def test_measured_figures_draw_from_results():
    lat = _fake("dram_latency", [
        {"order": o, "kib": k, "latency_ns": 30.0 if k < 256 else (250.0 if k < 50_000 else 650.0),
         "latency_cycles": None, "spread": 0.01} for o in ("random", "sequential")
        for k in dram.LATENCY_SIZES_KIB], {"device": {"l2_bytes": 50 * 2**20}})
    levels = dram.latency_levels(lat)
    assert levels == {"l1_ns": 30.0, "l2_ns": 250.0, "dram_ns": 650.0}
    occ = _fake("dram_occupancy", [{"ilp": i, "block": b, "occupancy": o, "gbps": g}
                                   for i, b, o, g in [(1, 32, 6.25, 300.0), (1, 256, 100.0, 2800.0),
                                                      (4, 32, 6.25, 900.0),
                                                      (4, 256, 100.0, 2900.0)]])
    strides = _fake("dram_strides", [{"stride_bytes": s, "padded": p, "gbps": 2500.0}
                                     for s in dram.STRIDES for p in (False, True)])
    for fig in (dram.plot_latency(lat), dram.plot_littles_law(_fake_little()),
                dram.plot_occupancy(occ), dram.plot_strides(strides)):
        texts = [t.get_text() for ax in fig.axes for t in ax.texts]
        assert any(t.startswith("recorded on Test GPU") for t in texts)


def test_model_figures_draw():
    for fig in (dram.draw_burst(), dram.draw_banks(4, 2), dram.draw_banks(20, 1, accesses=3),
                dram.draw_interleaving(), dram.draw_matmul_phases(4, 2),
                dram.draw_matmul_phases(7, 2, matrix="N",
                                        layout=dram.DramLayout(16, 3, 2))):
        assert fig.axes
    with pytest.raises(ValueError):
        dram.draw_burst(burst_bytes=6)


# --------------------------------------------------------------------------- kernels (simulator)


@pytest.mark.parametrize("order", ["random", "sequential"])
def test_chase_chain_is_one_cycle_and_the_kernel_follows_it(order):
    nxt = dram.chase_chain(37, spacing=4, order=order, seed=9)
    slots = np.flatnonzero(nxt >= 0)
    assert len(slots) == 37 and np.all(slots % 4 == 0)
    j, seen = 0, set()
    for _ in range(37):
        seen.add(j)
        j = int(nxt[j])
    assert j == 0 and len(seen) == 37  # one cycle through every slot
    for steps, start in ((0, 0), (1, 8), (53, 12), (100, 0)):
        j = start
        for _ in range(steps):
            j = int(nxt[j])
        assert dram.chase(nxt, steps, start) == j


def test_the_unsigned_chase_follows_the_same_chain():
    nxt = dram.chase_chain(29, spacing=4, order="random", seed=3)
    d_nxt = cuda.to_device(nxt)
    for kernel in (dram.pointer_chase, dram.pointer_chase_unsigned):
        pos = cuda.to_device(np.array([8], np.int32))
        kernel[1, 1](d_nxt, 41, pos)
        assert int(pos.copy_to_host()[0]) == dram.chase(nxt, 41, 8)


@pytest.mark.parametrize("ilp", [1, 3])
def test_one_warp_with_a_grid_stride_reads_every_stride_th_element(ilp):
    # The latency probe of dram_littles_law: one warp alone, with a full grid's stride.
    x = _random(1000, seed=ilp)
    partial = np.zeros(32, dtype=np.float32)
    dram.make_sum_loads(ilp)[1, 32](x, partial, 96)
    want = [x[lane::96].astype(np.float64).sum() for lane in range(32)]
    assert np.allclose(partial, want, rtol=1e-5)


@pytest.mark.parametrize("ilp", [1, 2, 4, 16])
@pytest.mark.parametrize("n", [1, 31, 33, 65, 300])
def test_sum_loads_partials_add_up(ilp, n):
    x = _random(n, seed=ilp * 1000 + n)
    partial = dram.sum_partials(x, ilp=ilp, blocks=2, block=32)
    assert not np.isnan(partial).any()  # every thread writes its partial, even idle ones
    assert partial.sum(dtype=np.float64) == pytest.approx(x.astype(np.float64).sum(), rel=1e-5,
                                                          abs=1e-4)


def test_sum_loads_reads_each_element_once():
    # A single nonzero element: whichever thread owns it must see it exactly once.
    for pos in (0, 37, 63, 64, 200):
        x = np.zeros(201, dtype=np.float32)
        x[pos] = 1.5
        assert dram.sum_partials(x, ilp=4, blocks=2, block=32).sum() == 1.5


@pytest.mark.parametrize("ilp", [1, 4])
@pytest.mark.parametrize("n", [1, 31, 32, 33, 129, 301])
def test_copy_every_element(ilp, n):
    x = _random(n, seed=n + ilp)
    assert np.array_equal(dram.copy(x, ilp=ilp, block=32), x)


def test_copy_with_shared_memory_reserved():
    x = _random(100, seed=3)
    assert np.array_equal(dram.copy(x, ilp=1, block=64, shared_bytes=4096), x)


@pytest.mark.parametrize("stride,padded", [(128, False), (256, False), (512, True),
                                           (1024, False), (1024, True)])
def test_strided_chunks_read_every_chunk_once(stride, padded):
    x = _random(4096 + 77, seed=stride)
    partial, geo = dram.strided_sum(x, stride, padded=padded, ilp=2, blocks=2, block=32)
    rows, pitch, cols = geo["rows"], geo["pitch"], geo["cols"]
    ref = x[: rows * pitch].reshape(rows, pitch)[:, : cols * 32].astype(np.float64).sum()
    assert not np.isnan(partial).any()
    assert partial.sum(dtype=np.float64) == pytest.approx(ref, rel=1e-5, abs=1e-4)
    assert geo["bytes_read"] == rows * cols * 128


def test_chunk_geometry():
    g = dram.chunk_geometry(1 << 20, 4096)
    assert g == {"rows": (1 << 20) // 1024, "cols": 32, "pitch": 1024, "n_chunks": 1 << 15,
                 "bytes_read": 1 << 22}
    assert dram.chunk_geometry(1 << 20, 4096, padded=True)["pitch"] == 1024 + 32


# --------------------------------------------------------------------------- bad input


def test_wrappers_reject_bad_input():
    x = _random(64, seed=1)
    with pytest.raises(TypeError, match="astype"):
        dram.sum_partials(x.astype(np.float64))
    with pytest.raises(ValueError, match="dimension"):
        dram.copy(x.reshape(8, 8))
    with pytest.raises(ValueError, match="1024"):
        dram.copy(x, block=2048)
    with pytest.raises(ValueError):
        dram.copy(x, shared_bytes=64 * 1024)
    with pytest.raises(ValueError, match="whole warps|multiple of 32"):
        dram.strided_sum(x, 128, block=48)
    with pytest.raises(ValueError, match="multiple of the 128-byte chunk"):
        dram.chunk_geometry(1 << 12, 200)
    with pytest.raises(ValueError, match="no row"):
        dram.chunk_geometry(100, 1 << 20)
    with pytest.raises(ValueError):
        dram.chase(dram.chase_chain(4), 3, start=999)
    with pytest.raises(ValueError):
        dram.chase_chain(1 << 27, spacing=32)  # indices would overflow int32
    with pytest.raises(TypeError):
        dram.chase(list(range(4)), 1)


# --------------------------------------------------------------------------- experiments


def test_experiments_registered():
    exps = {n: e for n, e in records.experiments().items() if e.chapter == "dram"}
    assert set(exps) == {"dram_latency", "dram_littles_law", "dram_occupancy", "dram_strides",
                         "dram_latency_index", "dram_loaded_latency", "dram_loaded_latency_copy"}


def _copy_rows(loaded_ns, pct):
    return Result("dram_loaded_latency_copy", [
        {"threads_per_sm": 512, "gbps": 1200.0, "loaded_ns": 350.0, "in_flight_pct": 99.0,
         "bytes_in_flight": 270336.0, "read_gbps": 600.0},
        {"threads_per_sm": 1792, "gbps": 2900.0, "loaded_ns": loaded_ns, "in_flight_pct": pct,
         "bytes_in_flight": 946176.0, "read_gbps": 1450.0}],
        {"gpu": "test"}, "recorded")


def test_copy_loaded_reading_chooses_the_sentence_from_the_record():
    low = dram.copy_loaded_reading(_copy_rows(430.0, 60.0), 507.0)
    assert not low["limited_by_latency"] and "does not account" in low["text"]
    assert low["threads_per_sm"] == 1792 and "430 ns" in low["text"]
    high = dram.copy_loaded_reading(_copy_rows(650.0, 97.0), 507.0)
    assert high["limited_by_latency"] and "Little's law at the copy's own loaded latency agrees" in high["text"]
    assert not dram.copy_loaded_reading(_copy_rows(650.0, 50.0), 507.0)["limited_by_latency"]
    with pytest.raises((TypeError, ValueError)):
        dram.copy_loaded_reading(_copy_rows(650.0, 97.0), -1.0)
    outside = _copy_rows(650.0, 97.0)
    for r in outside.rows:
        r["covered"] = False
    assert dram.copy_loaded_reading(outside, 507.0)["limited_by_latency"] is None


def test_ptx_targets_cover_every_kernel():
    names = {k.py_func.__name__ for k, _ in dram.PTX_TARGETS}
    assert names == {"pointer_chase", "pointer_chase_unsigned", "sum_loads", "copy",
                     "strided_chunks"}


# --------------------------------------------------------------------------- checkers


# The chapters' own solutions pass their checkers: tests/test_chapter_solutions.py.


def test_checkers_refuse_non_functions(capsys):
    assert not dram.check_bank_queue(None)
    assert not dram.check_loads_needed(3)


WRONG_FILES = sorted(WRONG.glob("*.py"))


@pytest.mark.parametrize("path", WRONG_FILES, ids=lambda p: p.stem)
def test_checker_rejects_known_wrong_solution(path, capsys):
    mod = load_answer(path)
    report = getattr(dram, mod.CHECKER)(mod.student)
    assert not report, f"{path.name} was accepted"
    out = capsys.readouterr().out
    assert "Traceback" not in out


def test_wrong_folder_is_not_empty():
    assert len(WRONG_FILES) >= 10
    assert {load_answer(p).CHECKER for p in WRONG_FILES} == {"check_bank_queue", "check_loads_needed",
                                                             "check_blocks_per_sm",
                                                             "check_copy_loads_needed",
                                                             "check_step_latency",
                                                             "check_channel_gbps",
                                                             "check_phase_channels",
                                                             "check_copy_in_flight"}


def test_gp_attribute_reaches_the_module():
    assert gp.dram is dram


def test_occupancy_agreement_counts_every_recorded_configuration(capsys):
    dram.occupancy_agreement()
    out = capsys.readouterr().out
    n = len(dram_checks._recorded_occupancy_cases())
    assert out.startswith(f"{n} of {n} kernel configurations")


def _paths_with(name):
    return [p for p in records.available() if name in records.load(p)["experiments"]]


@pytest.mark.parametrize("path", _paths_with("dram_latency_index"), ids=lambda p: p.stem)
def test_recorded_index_arithmetic_weighs_most_in_l1(path, capsys):
    # What chapter 3.1 says: a large share of L1's signed figure is index arithmetic, a few
    # percent past it, and past L1 the difference is inside the run's spread.
    res = records.recorded("dram_latency_index", path=path)
    dram.latency_index_summary(res)
    by = {r["level"]: r for r in res.rows}
    share = {k: r["arithmetic_ns"] / r["signed_ns"] for k, r in by.items()}
    assert share["L1"] > 0.25 and share["L1"] > 3 * max(share["L2"], share["DRAM"])
    assert max(share["L2"], share["DRAM"]) < 0.10
    assert "the signed chase" in capsys.readouterr().out


def _fake_loaded():
    rows = []
    for ilp in (1, 16):
        for warps in (1, 8, 32):
            b = dram.bytes_in_flight(warps, ilp, 132)
            loaded = 400.0 + 0.0001 * b  # latency grows with the load
            gbps = min(0.8 * b / loaded, 4000.0)
            rows.append({"ilp": ilp, "warps_per_sm": warps, "bytes_in_flight": b, "gbps": gbps,
                         "idle_ns": 380.0, "loaded_ns": loaded, "little_gbps": b / loaded,
                         "implied_in_flight": gbps * loaded, "covered": True})
    return _fake("dram_loaded_latency", rows)


def test_loaded_latency_summary_and_figure(capsys):
    import matplotlib

    matplotlib.use("Agg")
    rows = dram.show_loaded_latency(_fake_loaded())
    assert "380 ns per step" in capsys.readouterr().out
    for r in rows:
        assert r["measured_over_little"] == pytest.approx(r["gbps"] / r["little_gbps"])
        assert r["in_flight_pct"] == pytest.approx(100 * r["measured_over_little"])
        assert r["x_idle"] > 1
    assert rows[0]["in_flight_pct"] == pytest.approx(80.0)  # below the cap: 0.8 of the bytes
    assert rows[-1]["in_flight_pct"] < 80.0  # at the cap the loads allow more than flows
    fig = dram.plot_loaded_latency(_fake_loaded())
    assert len(fig.axes) == 2


def test_loaded_latency_refuses_other_results():
    with pytest.raises(ValueError, match="loaded_ns"):
        dram.loaded_latency_summary(_fake_little())


def test_loaded_latency_needs_a_gpu():
    with pytest.raises(gp.bench.NeedsGPU):
        dram.dram_loaded_latency(print)


def test_launch_in_timing_reads_both_columns(capsys):
    rows = [dict(r, gbps_launch_counted=0.7 * r["gbps"]) for r in _fake_little().rows]
    text = dram.launch_in_timing(_fake("dram_littles_law", rows))
    assert text.count("(0.70x)") == 2
    slowest = min(r["gbps"] for r in rows)
    assert f"{slowest:.0f} GB/s with the launch left out" in text
    with pytest.raises(ValueError, match="gbps_launch_counted"):
        dram.launch_in_timing(_fake_little())


def test_loaded_latency_reading_ties_the_two_experiments(capsys):
    loaded = _fake_loaded()
    text = dram.loaded_latency_reading(loaded, _fake_little())
    assert "the probe alone: 380 ns" in text
    # lightest point of 16 loads: 80% in flight; the fake's round for 16 loads is 600*(1.4) ns
    assert "1 load per thread, lightest load: 80%" in text  # no padding: not a text table
    assert "16 loads per thread, lightest load: 80% of the allowed bytes in flight" in text
    other = _fake("dram_littles_law", _fake_little().rows, meta={"gpu": "Another GPU"})
    with pytest.raises(ValueError, match="same GPU"):
        dram.loaded_latency_reading(loaded, other)


def test_loaded_littles_law_stretches_the_round(capsys):
    loaded = _fake_loaded()
    little = _fake("dram_littles_law", [{"ilp": 1, "warps_per_sm": 1, "round_ns": 420.0},
                                        {"ilp": 16, "warps_per_sm": 1, "round_ns": 840.0}])
    rows = dram.loaded_littles_law(loaded, little)
    out = capsys.readouterr().out
    rounds = {r["ilp"]: r["round_ns"] for r in little.rows}
    for r, src in zip(rows, sorted(loaded.rows, key=lambda r: (r["ilp"], r["warps_per_sm"]))):
        stretch = src["loaded_ns"] / src["idle_ns"]
        want = min(src["bytes_in_flight"] / (rounds[src["ilp"]] * stretch), 3000.0)
        assert r["predicted_gbps"] == pytest.approx(want)
        assert r["loaded_gbps"] == pytest.approx(min(src["bytes_in_flight"] / src["loaded_ns"],
                                                     3000.0))
        assert r["agrees"] == (1 / 1.2 <= want / src["gbps"] <= 1.2)
    # The fake flows 0.8 of the loaded-latency law, its probe idles at 380 ns: the stretched
    # round predicts 380/420 of that law for one load (within 20% of 0.8) and 380/840 for 16.
    light = {r["ilp"]: r for r in rows if r["warps_per_sm"] == 1}
    assert light[1]["agrees"] and not light[16]["agrees"]
    assert f"{sum(r['agrees'] for r in rows)} of {len(rows)} points agree" in out
    assert not dram.loaded_littles_law(loaded, little, within=1.01)[0]["agrees"]
    other = _fake("dram_littles_law", little.rows, meta={"gpu": "Another GPU"})
    with pytest.raises(ValueError, match="same GPU"):
        dram.loaded_littles_law(loaded, other)
    few = _fake("dram_littles_law", [r for r in little.rows if r["ilp"] == 1])
    with pytest.raises(ValueError, match=r"no round time for \[16\]"):
        dram.loaded_littles_law(loaded, few)


@pytest.mark.parametrize("path", _paths_with("dram_loaded_latency"), ids=lambda p: p.stem)
def test_recorded_loaded_littles_law(path, capsys):
    # What chapter 3.1 says of its records (a consistency check, folded): with the round
    # stretched by the loaded latency, Little's law predicts at least 80% of the points within
    # 20% (the number is glued from the record), and the textbook law with the loaded latency
    # alone misses most of them.
    res = records.recorded("dram_loaded_latency", path=path)
    rows = dram.loaded_littles_law(res, records.recorded("dram_littles_law", path=path))
    assert sum(r["agrees"] for r in rows) >= 0.8 * len(rows)
    plain = sum(1 / 1.2 <= r["loaded_gbps"] / r["gbps"] <= 1.2 for r in rows)
    assert plain < len(rows) / 2


def test_the_copy_exercise_launch_and_bar(capsys):
    # On the simulator the launch is small and the speed bar is only announced.
    assert dram.in_flight_launch() == (2, 32)
    report = dram.check_copy_in_flight(dram.make_copy(4))  # the chapter's own kernel
    assert not report
    out = capsys.readouterr().out
    assert "course's own code" in out and "Traceback" not in out
    mod = load_answer(WRONG / "in_flight_one_pass.py")  # one pass: too few elements covered
    assert not dram.check_copy_in_flight(mod.student)
    out = capsys.readouterr().out
    assert "expected src[" in out and "speed not measured" in out


def test_the_copy_exercise_names_a_missing_tail(capsys):
    mod = load_answer(WRONG / "in_flight_no_tail.py")
    assert not dram.check_copy_in_flight(mod.student)
    assert "left over after the last whole trip" in capsys.readouterr().out


def test_the_copy_exercise_names_writes_past_the_end(capsys):
    mod = load_answer(WRONG / "in_flight_trip_unguarded.py")
    assert not dram.check_copy_in_flight(mod.student)
    out = capsys.readouterr().out
    assert "past the end" in out or "out of bounds" in out.lower(), out


def test_copy_loads_checker_names_the_factor_two(capsys):
    """Issue 60, finding 1: the copy's bandwidth taken for the loads' is named as such."""
    import math

    def doubled(copy_gbps, latency_ns, warps_per_sm, sm_count, bytes_per_load):
        return math.ceil(copy_gbps * latency_ns / (warps_per_sm * sm_count * 32 * bytes_per_load))

    assert not dram.check_copy_loads_needed(doubled)
    assert "only the reads are loads in flight" in capsys.readouterr().out


def test_strides_visible_stops_where_rows_run_out():
    """Issue 60, finding 7: chunks in flight = SMs x warps per SM x ilp; a stride is seen only
    while 1 GiB / stride rows hold them all (H200: 132 x 64 x 16 = 135,168, so up to 4 KiB)."""
    rows = [{"stride_bytes": s, "padded": False, "rows": (1 << 30) // s, "ilp": 16, "gbps": 1.0}
            for s in dram.STRIDES]
    res = _fake("dram_strides", rows, meta={"gpu": "Test GPU",
                                            "device": {"sm_count": 132, "max_threads_per_sm": 2048}})
    vis = dram.strides_visible(res)
    assert vis["chunks_in_flight"] == 132 * 64 * 16
    assert vis["largest_stride_bytes"] == 4096
    t4 = _fake("dram_strides", rows, meta={"gpu": "T4", "device": {"sm_count": 40,
                                                                    "max_threads_per_sm": 1024}})
    assert dram.strides_visible(t4)["chunks_in_flight"] == 40 * 32 * 16


def test_new_checkers_refuse_the_chapters_own_model(capsys):
    """An answer that calls the package's own model is refused, not graded."""

    def borrowed_copy(copy_gbps, latency_ns, warps_per_sm, sm_count, bytes_per_load):
        return dram.copy_loads_per_thread_needed(copy_gbps, latency_ns, warps_per_sm, sm_count,
                                                 bytes_per_load)

    def borrowed_latency(ms_short, ms_long, steps):
        return dram.step_latency_ns(ms_short, ms_long, steps)

    def borrowed_channel(ratio, banks, bus_gbps):
        return bus_gbps * dram.bus_utilization(ratio, banks)

    def borrowed_phase(width, tile, phase, burst_bytes, channels):
        return dram.channels_used(width, tile, phase, matrix="N",
                                  layout=dram.DramLayout(burst_bytes, channels, 1))

    for check, answer in ((dram.check_copy_loads_needed, borrowed_copy),
                          (dram.check_step_latency, borrowed_latency),
                          (dram.check_channel_gbps, borrowed_channel),
                          (dram.check_phase_channels, borrowed_phase)):
        assert not check(answer), check.__name__


def test_the_guard_keeps_the_summing_loop_rolled():
    """03_latency_hiding: without (acc != acc) the compiler unrolls the ilp=1 loop, so its PTX
    holds more global loads than the guarded kernel's (compiled in a fresh process)."""
    counts = dram.unroll_guard_ptx(1)
    assert counts["unguarded"] > counts["guarded"] >= 2  # two loops: whole iterations, the tail


def test_the_signed_chase_computes_more_between_its_loads():
    """03_latency_hiding: between one load of the chase and the next, the signed index's PTX
    wraps a negative index (more instructions) where the unsigned one only scales and adds."""
    steps = dram.chase_step_ptx()
    for label in ("signed", "unsigned"):
        assert steps[label][0].startswith("ld.global") and steps[label][-1].startswith("ld.global")
    assert len(steps["signed"]) > len(steps["unsigned"]) >= 3
