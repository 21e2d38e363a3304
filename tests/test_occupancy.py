"""Occupancy computed by hand (gp.device.occupancy) against the CUDA occupancy API's answers
that the shipped records hold, and its arithmetic shown step by step."""

import pytest

import gpuperf as gp
from gpuperf import records
from gpuperf.kernels import dram
from gpuperf.kernels.dram import checks as dram_checks

# A T4's facts, by NVIDIA's specifications (compute capability 7.5: no reserved shared
# memory, 16 blocks and 1024 threads per SM).
T4 = dram.T4_SPEC_FACTS


def test_occupancy_by_hand_matches_every_recorded_api_answer():
    # every compiled kernel whose resources and occupancy API answer a shipped record holds
    cases = dram_checks._recorded_occupancy_cases()
    assert len(cases) >= 20 and len({c[3]["name"] for c in cases}) == len(records.available())
    for threads, regs, shared, facts, blocks in cases:
        got = gp.device.occupancy(threads, regs, shared, facts)
        assert got["blocks_per_sm"] == blocks, (threads, regs, shared, facts["name"])
    # chapter 3's occupancy sweep: a copy that reaches full occupancy without shared memory, so
    # it needs no more than 32 registers per thread
    for path in records.available():
        occ = records.recorded("dram_occupancy", path=path)
        for r in occ.rows:
            got = gp.device.occupancy(r["block"], 32, r["shared_bytes"], occ.meta["device"])
            assert got["blocks_per_sm"] == r["blocks_per_sm"], r
            assert 100 * got["occupancy"] == pytest.approx(r["occupancy"]), r


def test_occupancy_names_its_limiter_and_refuses_what_cannot_run():
    h200 = records.recorded("matmul_coarsen_sweep").meta["device"]
    assert gp.device.occupancy(256, 48, 2048, h200)["limiter"] == "registers"
    assert gp.device.occupancy(256, 32, 46695, h200)["limiter"] == "shared memory"
    assert gp.device.occupancy(32, 16, 0, h200)["limiter"] == "blocks"
    assert gp.device.occupancy(1024, 32, 0, h200)["limiter"] == "threads"
    # each rule on its edge: registers' unit of 256, the reserved KiB, 128-byte units, warps
    assert gp.device.occupancy(640, 33, 12345, h200)["blocks_per_sm"] == 2
    assert gp.device.occupancy(256, 24, 58000, h200)["blocks_per_sm"] == 3
    assert gp.device.occupancy(256, 32, 45670, h200)["blocks_per_sm"] == 4
    assert gp.device.occupancy(680, 16, 0, h200)["blocks_per_sm"] == 2
    assert gp.device.occupancy(32, 16, 0, T4)["blocks_per_sm"] == 16
    assert gp.device.occupancy(64, 24, 40000, T4)["blocks_per_sm"] == 1
    assert gp.device.occupancy(1024, 32, 0, T4)["occupancy"] == 1.0
    with pytest.raises(ValueError, match="registers"):
        gp.device.occupancy(1024, 128, 0, h200)
    with pytest.raises(ValueError, match="shared_bytes"):
        gp.device.occupancy(64, 32, 300_000, h200)
    with pytest.raises(ValueError, match="threads"):
        gp.device.occupancy(2048, 32, 0, h200)
    with pytest.raises(ValueError, match="compute capability 6.1"):
        gp.device.occupancy(64, 32, 0, {**h200, "compute_capability": (6, 1)})
    with pytest.raises(ValueError, match="lacks"):
        gp.device.occupancy(64, 32, 0, {"name": "x"})


def test_show_occupancy_prints_the_arithmetic(capsys):
    res = records.recorded("matmul_coarsen_sweep")
    o = gp.device.show_occupancy(256, 48, 2048, res=res)
    out = capsys.readouterr().out
    assert "1,536 per warp" in out and "-> 5 blocks (registers set it)" in out
    assert o["blocks_per_sm"] == 5 and o["warps_per_sm"] == 40
