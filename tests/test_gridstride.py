import numpy as np
import pytest
from conftest import load_wrong

import gpuperf as gp
from gpuperf import exercises as ex

gs = gp.gridstride


@pytest.mark.parametrize("n", [1, 31, 32, 33, 255, 257, 1000])
@pytest.mark.parametrize("method,kw", [("one_per_thread", {}), ("grid_stride", {}),
                                       ("grid_stride", {"blocks": 1, "block": 1}),
                                       ("grid_stride", {"blocks": 2, "block": 4})])
def test_copies_are_exact(n, method, kw):
    x = ex.random_array(n, n)
    out = ex.poisoned(n)
    gs.copy(x, out, method=method, **kw)
    np.testing.assert_array_equal(out, x)


def test_saxpy_reference_kernel_passes_its_checker(course_code_as_answer):
    assert gs.check_saxpy(gs.saxpy_grid_stride)


def test_launch_config():
    assert gs.launch_config(1000, method="one_per_thread", block=256) == (4, 256)
    blocks, block = gs.launch_config(10**9, method="grid_stride", block=256, blocks_per_sm=4)
    assert block == 256 and blocks == 4 * gp.device.sm_count(default=2)
    # never more blocks than the data needs
    assert gs.launch_config(10, method="grid_stride", block=256, blocks_per_sm=8) == (1, 256)


@pytest.mark.parametrize("kwargs,err,words", [
    ({"x": [1.0, 2.0]}, TypeError, "NumPy array"),
    ({"x": np.ones(4)}, TypeError, "float32"),
    ({"x": np.ones(0, np.float32)}, ValueError, "empty"),
    ({"x": np.ones(8, np.float32)[::2]}, ValueError, "contiguous"),
    ({"x": np.ones((2, 2), np.float32)}, ValueError, "ravel"),
    ({"x": np.ones(4, np.float32), "block": 2048}, ValueError, "1024"),
    ({"x": np.ones(4, np.float32), "block": 0}, ValueError, "block"),
    ({"x": np.ones(4, np.float32), "method": "fast"}, ValueError, "one_per_thread"),
    ({"x": np.ones(4, np.float32), "method": "one_per_thread", "blocks": 2}, ValueError, "blocks="),
    ({"x": np.ones(4, np.float32), "out": np.ones(5, np.float32)}, ValueError, "same shape"),
])
def test_bad_input_is_explained(kwargs, err, words):
    with pytest.raises(err, match=words):
        gs.copy(**kwargs)


@pytest.mark.parametrize("name,mod", load_wrong("measuring"), ids=lambda v: v if isinstance(v, str) else "")
def test_checkers_reject_known_wrong_solutions(name, mod, capsys):
    checker = (gs.check_saxpy if name.startswith("saxpy") else
               gs.check_call_time if name.startswith("call") else gs.check_bandwidth_formula)
    report = checker(mod.kernel)
    assert not report, f"{name} should be rejected"
    text = capsys.readouterr().out
    assert "Traceback" not in text and "\u2717" in text


def test_bandwidth_checker_names_the_mistake(capsys):
    gs.check_bandwidth_formula(lambda n, ms: 2 * 4 * n / (ms * 1e-3) / 1e9)
    assert "you counted two arrays" in capsys.readouterr().out


def test_grid_stride_diagram_draws():
    import matplotlib

    matplotlib.use("Agg")
    fig = gs.draw_grid_stride(20, 2, 4)
    assert len(fig.axes[0].patches) == 20
    with pytest.raises(ValueError):
        gs.draw_grid_stride(0, 2, 4)


@pytest.mark.parametrize("wrong,hint", [
    (lambda n, L, B: max(L, 8 * n / (B * 1e3)), "add them"),
    (lambda n, L, B: L + 4 * n / (B * 1e3), "8 bytes per element"),
    (lambda n, L, B: (L + 8 * n / (B * 1e3)) / 1e3, "not milliseconds"),
])
def test_call_time_checker_names_the_mistake(wrong, hint, capsys):
    assert not gs.check_call_time(wrong)
    assert hint in capsys.readouterr().out


def test_the_call_model_is_set_beside_every_recorded_size(capsys):
    from gpuperf import records

    sizes = records.run("gridstride_size_sweep", live=False)
    rows = gs.compare_call_model(lambda n, L, B: L + 8 * n / (B * 1e3), sizes)
    assert [r["n"] for r in rows] == sorted(r["n"] for r in sizes.rows)
    assert rows[0]["ratio"] == pytest.approx(1.0, rel=0.1)  # anchored at the small sizes
    assert rows[-1]["ratio"] == pytest.approx(1.0, rel=1e-9)  # and exactly at the largest
    assert "largest miss" in capsys.readouterr().out


def test_the_read_only_sum_is_right():
    """gridstride_flush's read-only sum (one value per block) adds every element, whatever the
    grid. (bench's flush kernels, like the rest of bench, run on a GPU only.)"""
    from gpuperf.kernels.gridstride.experiments import _SUM_BLOCK, _sum_per_block

    x = np.arange(1, 1001, dtype=np.float32)
    for blocks in (1, 3):
        sums = np.zeros(blocks, np.float32)
        _sum_per_block[blocks, _SUM_BLOCK](x, sums)
        assert sums.sum() == x.sum()



def test_the_flush_comparison_reads_the_write_over_read_ratio():
    rows = [{"kernel": k, "flush": f, "n": n, "bytes": 8 * n, "ms": ms, "gbps": 1.0, "spread": 0.01}
            for k in ("copy", "read-only sum") for n, (w, r) in ((2**22, (2.0, 1.0)), (2**26, (8.0, 8.0)))
            for f, ms in (("write", w), ("read", r))]
    res = gp.records.Result("gridstride_flush", rows, {}, "recorded")
    out = gs.flush_comparison(res)
    assert [round(r["write_over_read"], 2) for r in out if r["kernel"] == "copy"] == [2.0, 1.0]
    with pytest.raises(ValueError, match="gridstride_flush"):
        gs.flush_comparison(gp.records.Result("other", rows, {}, "recorded"))


def test_the_size_sweep_times_the_launch_counted_calls_in_interleaved_rounds(monkeypatch):
    """gridstride_size_sweep (GPU only) with the timer replaced: every size gets its median
    and spread of the launch-counted times pooled over all rounds, and the rounds visit every
    size (each round calls the timer once per size, counted and not)."""
    import inspect

    from gpuperf import bench, device
    from gpuperf.kernels.gridstride import experiments as gx

    calls = []

    def fake_time_kernel(fn, hide_launch=True, **_):
        calls.append(hide_launch)
        return bench.Timing([0.04, 0.05, 0.03, 0.04] if not hide_launch else [0.01])

    class Big:
        def __getitem__(self, _):
            return None

    monkeypatch.setattr(bench, "time_kernel", fake_time_kernel)
    monkeypatch.setattr(bench, "ceilings", lambda: {"copy_gbps": 4000.0, "peak_gbps": 4800.0})
    monkeypatch.setattr(gx, "_cached_vectors", lambda n: (Big(), Big()))
    monkeypatch.setattr(device, "info", lambda: type("I", (), {"l2_bytes": 60 << 20, "sm_count": 132})())
    rows = inspect.unwrap(gx.size_sweep_experiment)(lambda _m: None)
    assert len(rows) == 9
    assert calls.count(True) == 9 and calls.count(False) == 9 * 7
    for r in rows:
        assert r["ms_launch_counted"] == 0.04 and r["rounds_launch_counted"] == 7
        assert r["ms_launch_counted_q1"] <= r["ms_launch_counted"] <= r["ms_launch_counted_q3"]
        assert r["ms_launch_counted_min"] == 0.03 and r["ms_launch_counted_max"] == 0.05
        assert r["spread_launch_counted"] > 0
