import pytest

from gpuperf import bench


def test_timing_statistics():
    t = bench.Timing([1.0, 2.0, 3.0, 4.0, 100.0])
    assert t.n == 5 and t.median_ms == 3.0 and t.min_ms == 1.0 and t.max_ms == 100.0
    q = __import__("statistics").quantiles(t.times_ms, n=4)
    assert t.spread == pytest.approx((q[2] - q[0]) / 3.0)
    assert "median=3" in repr(t)


def test_rates():
    assert bench.gbps(2e9, 1000.0) == pytest.approx(2.0)
    assert bench.gbps(8 * 2**28, 0.7) == pytest.approx(8 * 2**28 / 0.7e-3 / 1e9)
    assert bench.tflops(2 * 4096**3, 2.75) == pytest.approx(2 * 4096**3 / 2.75e-3 / 1e12)


def test_sweep_returns_tidy_rows_and_reports_progress():
    seen = []
    rows = bench.sweep(lambda a, b: {"gbps": float(a * b)}, {"a": [1, 2], "b": [10, 20, 30]},
                       label="t", progress=seen.append)
    assert len(rows) == 6 and rows[0] == {"a": 1, "b": 10, "gbps": 10.0}
    assert rows[-1] == {"a": 2, "b": 30, "gbps": 60.0}
    assert len(seen) == 6 and seen[0].startswith("[1/6] t a=1 b=10") and "10 GB/s" in seen[0]


@pytest.mark.parametrize("grid,err", [({}, ValueError), ({"a": 3}, TypeError),
                                      ({"a": "abc"}, TypeError), ([1, 2], ValueError)])
def test_sweep_rejects_bad_grids(grid, err):
    with pytest.raises(err):
        bench.sweep(lambda **k: {}, grid, progress=False)


def test_timing_in_the_simulator_says_what_to_do():
    with pytest.raises(bench.NeedsGPU, match="records.run"):
        bench.time_kernel(lambda: None)
    with pytest.raises(bench.NeedsGPU):
        bench.ceilings()
    with pytest.raises(bench.NeedsGPU):
        bench.hold_gpu(50.0)
    with pytest.raises(bench.NeedsGPU):
        bench.time_kernel(lambda: None, hide_launch=True)



def test_what_needs_a_gpu_says_so_at_once_in_the_simulator():
    """flush_l2 and every experiment refuse before any simulated work, naming what to do."""
    import time

    from gpuperf import bench, records
    from gpuperf.mode import SIMULATOR

    if not SIMULATOR:
        pytest.skip("runs under the simulator")
    with pytest.raises(bench.NeedsGPU, match="flush_l2"):
        bench.flush_l2()
    t0 = time.perf_counter()
    with pytest.raises(bench.NeedsGPU, match="reduce_ladder"):
        records.experiments()["reduce_ladder"].fn(lambda msg: None)
    assert time.perf_counter() - t0 < 5


def test_an_empty_sweep_is_refused():
    from gpuperf import bench

    with pytest.raises(ValueError, match=r"grid\['block'\] is empty"):
        bench.sweep(lambda block: {"ms": 1.0}, {"block": []}, progress=False)
