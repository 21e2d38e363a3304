"""GDN case study: references, the four algorithms, the fused kernel, wrappers, checkers."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import load_wrong
from numba import cuda  # after gpuperf: conftest imports it first, which picks the mode

import gpuperf as gp
from gpuperf import records
from gpuperf.kernels import gdn
from gpuperf.kernels.gdn.experiments import _article_cublas_calls


def _rel(got, ref):
    return np.linalg.norm(np.asarray(got, np.float64) - ref) / np.linalg.norm(ref)


# --------------------------------------------------------------------------- the mathematics


def test_reference_gradients_match_finite_differences():
    """The float64 references are the derivatives of L = sum(delta * u), checked numerically."""
    w, delta, gamma, beta = (a.astype(np.float64) for a in gdn.random_problem(3, 11, seed=4))

    def loss(g, b, x):
        u, _ = gdn.reference_forward(x, g, b)
        return float((delta * u).sum())

    dgamma, dbeta = gdn.reference_backward(w, delta, gamma, beta)
    dw = gdn.reference_input_grad(w, delta, gamma, beta)
    h = 1e-6
    for (k, j) in [(0, 0), (1, 2), (2, 1)]:
        e = np.zeros_like(gamma)
        e[k, j] = h
        num = (loss(gamma + e, beta, w) - loss(gamma - e, beta, w)) / (2 * h)
        assert num == pytest.approx(dgamma[k, j], rel=1e-6, abs=1e-9)
    for k in range(3):
        e = np.zeros_like(beta)
        e[k] = h
        num = (loss(gamma, beta + e, w) - loss(gamma, beta - e, w)) / (2 * h)
        assert num == pytest.approx(dbeta[k], rel=1e-6, abs=1e-9)
    for (j, s) in [(0, 0), (2, 7)]:
        e = np.zeros_like(w)
        e[j, s] = h
        num = (loss(gamma, beta, w + e) - loss(gamma, beta, w - e)) / (2 * h)
        assert num == pytest.approx(dw[j, s], rel=1e-6, abs=1e-9)


def test_reference_raw_rows_sum_to_dgamma():
    w, delta, gamma, beta = gdn.random_problem(4, 9, seed=2)
    _, d = gdn.reference_forward(w, gamma, beta)
    dgamma, _ = gdn.reference_backward(w, delta, gamma, beta)
    np.testing.assert_allclose(gdn.reference_raw(w, delta, d).sum(axis=1).reshape(4, 4), dgamma,
                               rtol=1e-12)


def test_channel_major_layout():
    x = np.random.default_rng(0).random((2, 3, 4, 5)).astype(np.float32)
    cm = gdn.channel_major(x)
    assert cm.shape == (3, 40) and cm.flags.c_contiguous
    np.testing.assert_array_equal(cm[1, 20:40], x[1, 1].ravel())
    with pytest.raises(ValueError, match="batch, N, m, n"):
        gdn.channel_major(x[0])


# --------------------------------------------------------------------------- kernels


@pytest.mark.parametrize("n_ch,n_s,block", [(3, 37, 32), (1, 1, 32), (2, 65, 64)])
def test_forward_matches_reference(n_ch, n_s, block):
    w, _, gamma, beta = gdn.random_problem(n_ch, n_s, seed=n_s)
    u, d = gdn.forward(w, gamma, beta, block=block)
    ref_u, ref_d = gdn.reference_forward(w, gamma, beta)
    np.testing.assert_allclose(u, ref_u, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d, ref_d, rtol=1e-5)


@pytest.mark.parametrize("algorithm", gdn.ALGORITHMS)
@pytest.mark.parametrize("n_ch,n_s,block", [(3, 37, 32), (2, 65, 64)])
def test_algorithms_build_the_raw_contributions(algorithm, n_ch, n_s, block):
    """Sizes that are not multiples of the block, channel counts that are not powers of two."""
    w, delta, gamma, beta = gdn.random_problem(n_ch, n_s, seed=7 + n_s)
    _, d = gdn.reference_forward(w, gamma, beta)
    d = d.astype(np.float32)
    raw = gdn.raw_contributions(w, delta, d, algorithm, block=block)
    assert not np.isnan(raw).any()
    np.testing.assert_allclose(raw, gdn.reference_raw(w, delta, d), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("method", ["registers", "shared", "fused", "fused_tiled"])
def test_backward_gives_both_gradients(method):
    # S = 300 with blocks of 32: the fused kernel coarsens by 8 (chunks of 256) and has a tail.
    n_ch, n_s = 3, 300
    w, delta, gamma, beta = gdn.random_problem(n_ch, n_s, seed=3)
    _, d = gdn.forward(w, gamma, beta, block=32)
    dgamma, dbeta = gdn.backward(w, delta, d, method, block=32)
    ref_g, ref_b = gdn.reference_backward(w, delta, gamma, beta)
    assert _rel(dgamma, ref_g) < 1e-5
    assert _rel(dbeta, ref_b) < 1e-5


@pytest.mark.parametrize("tile", [8, 16, 32])
@pytest.mark.parametrize("n_ch,n_s,depth", [(1, 1, 8), (5, 37, 8), (17, 300, 16), (9, 70, 5)])
def test_fused_tiled_every_shape(tile, n_ch, n_s, depth):
    # Channels not a multiple of the tile, samples not a multiple of the step, steps that do
    # not divide the split, a depth unlike the tile: every output once, nothing read past S.
    w, delta, gamma, beta = gdn.random_problem(n_ch, n_s, seed=n_ch + n_s)
    _, d = gdn.reference_forward(w, gamma, beta)
    d = d.astype(np.float32)
    ref_g, ref_b = gdn.reference_backward(w, delta, gamma, beta)
    for blocks_per_sm in (1, 8):   # one split or several: atomics across blocks
        grid, threads, span = gdn.tiled_launch(n_ch, n_s, tile=tile, depth=depth,
                                              blocks_per_sm=blocks_per_sm)
        assert span % depth == 0 and grid[2] * span >= n_s > (grid[2] - 1) * span
        assert grid[0] == grid[1] == -(-n_ch // tile) and threads == (tile, tile)
        dgamma = cuda.to_device(np.zeros((n_ch, n_ch), np.float32))
        dbeta = cuda.to_device(np.zeros(n_ch, np.float32))
        gdn.make_fused_tiled(tile, depth)[grid, threads](
            cuda.to_device(delta), cuda.to_device(w), cuda.to_device(d), dgamma, dbeta, span)
        assert _rel(dgamma.copy_to_host(), ref_g) < 1e-5
        assert _rel(dbeta.copy_to_host(), ref_b) < 1e-5


def test_fused_tiled_refuses_bad_shapes():
    with pytest.raises(ValueError, match="tile"):
        gdn.make_fused_tiled(12)
    with pytest.raises(ValueError, match="depth"):
        gdn.make_fused_tiled(16, 0)
    with pytest.raises(ValueError, match="n_samples"):
        gdn.tiled_launch(4, 0)


def test_row_sums():
    mat = gp.exercises.random_array((5, 77), 3)
    np.testing.assert_allclose(gdn.row_sums(mat, block=32), mat.astype(np.float64).sum(axis=1),
                               rtol=1e-5)


def test_device_arrays_are_accepted():
    w, delta, gamma, beta = gdn.random_problem(2, 40, seed=9)
    _, d = gdn.reference_forward(w, gamma, beta)
    d = d.astype(np.float32)
    raw = gdn.raw_contributions(cuda.to_device(w), cuda.to_device(delta), cuda.to_device(d),
                                "registers", block=32)
    np.testing.assert_allclose(raw, gdn.reference_raw(w, delta, d), rtol=1e-5, atol=1e-7)


# --------------------------------------------------------------------------- bad input


def test_bad_inputs_are_refused_with_the_fix():
    w, delta, gamma, beta = gdn.random_problem(2, 10, seed=1)
    with pytest.raises(TypeError, match="astype"):
        gdn.raw_contributions(w.astype(np.float64), delta, w)
    with pytest.raises(ValueError, match="same shape"):
        gdn.raw_contributions(w, delta[:, :5].copy(), w)
    with pytest.raises(ValueError, match="not one of"):
        gdn.raw_contributions(w, delta, w, "fastest")
    with pytest.raises(ValueError, match="not C-contiguous"):
        gdn.raw_contributions(w.T.copy().T, delta, w)
    with pytest.raises(ValueError, match="gamma must be"):
        gdn.forward(w, gamma[:1], beta)
    with pytest.raises(ValueError, match="beta must be > 0"):
        gdn.forward(w, gamma, -beta)
    with pytest.raises(ValueError, match="1024"):
        gdn.backward(w, delta, w, block=2048)
    with pytest.raises(ValueError, match="power of two"):
        gdn.row_sums(w, block=48)


# --------------------------------------------------------------------------- bookkeeping


def test_bytes_and_memory_order_the_algorithms():
    n_ch, n_s = 64, 4 * 128 * 128
    moved = [gdn.moved_bytes(m, n_ch, n_s) for m in gdn.ALGORITHMS]
    assert moved[0] > moved[1] > moved[2] == moved[3] > gdn.moved_bytes("fused", n_ch, n_s)
    assert gdn.allocated_bytes("replicate", n_ch, n_s) == 5 * gdn.raw_bytes(n_ch, n_s)
    # The GDN article's size (N=256, 128x128, batch 4): algorithm 1 alone needs 86 GB.
    article = gdn.ARTICLE_CONFIG
    need = gdn.allocated_bytes("replicate", article["n_ch"],
                               article["batch"] * article["side"] ** 2)
    assert need > 80e9
    with pytest.raises(ValueError, match="method='magic'"):
        gdn.moved_bytes("magic", 2, 2)


def test_experiments_are_registered():
    names = records.experiments()
    for name in ("gdn_algorithms", "gdn_reduction", "gdn_tiled"):
        assert name in names and names[name].chapter == "gdn"


def test_ptx_targets_listed():
    kernels = [k for k, _ in gdn.PTX_TARGETS]
    assert len(kernels) >= 10 and all(isinstance(sig, str) for _, sig in gdn.PTX_TARGETS)


# --------------------------------------------------------------------------- checkers


def test_the_packaged_model_passes_the_bytes_checker(course_code_as_answer):
    # The chapter's own solutions pass their checkers: tests/test_chapter_solutions.py.
    assert gdn.check_moved_bytes(gdn.moved_bytes)


def test_checkers_refuse_non_kernels():
    assert not gdn.check_registers(lambda *a: None)


# tests/wrong/gdn/ also holds the privatized histogram's wrong answers (test_privatization).
WRONG = [(name, mod) for name, mod in load_wrong("gdn") if hasattr(gdn, mod.CHECKER)]


@pytest.mark.parametrize("name,mod", WRONG, ids=[name for name, _ in WRONG])
def test_checker_rejects_known_wrong_solution(name, mod, capsys):
    report = getattr(gdn, mod.CHECKER)(mod.kernel)
    assert not report, f"{name} passed {mod.CHECKER}"
    assert "Traceback" not in capsys.readouterr().out


def test_every_wrong_file_names_its_checker():
    from gpuperf.kernels import privatization

    for name, mod in load_wrong("gdn"):
        assert hasattr(gdn, mod.CHECKER) or hasattr(privatization, mod.CHECKER), name
    assert len(WRONG) >= 8


@pytest.mark.parametrize("path", records.available(), ids=lambda p: p.stem)
def test_recorded_algorithm_2_is_launch_bound_over_the_sweep(path, capsys):
    # What the chapter says of every shipped record: algorithm 2's time per launch hardly
    # follows the size and is several times its floor per launch; it loses to algorithm 1 at
    # most points, and wins only where replication takes longer than its N launches.
    res = records.recorded("gdn_algorithms", path=path)
    table = gdn.show_launch_bound(res)
    assert len(table) >= 5
    per = [r["us_per_launch"] for r in table]
    floors = [r["floor_us_per_launch"] for r in table]
    assert max(per) / min(per) < 3 < max(floors) / min(floors)
    assert all(r["us_per_launch"] > 2 * r["floor_us_per_launch"] for r in table)
    assert sum(r["faster"] == "replicate" for r in table) > len(table) / 2
    assert all(r["replicate_ms"] * 1e3 > r["launches"] * r["us_per_launch"]
               for r in table if r["faster"] == "per_channel")
    assert f"of {len(table)} points" in capsys.readouterr().out


def test_launch_bound_table_needs_both_algorithms():
    res = records.recorded("gdn_algorithms")
    only = records.Result("gdn_algorithms", [r for r in res.rows if r["method"] != "replicate"],
                          res.meta, "recorded")
    assert gdn.launch_bound_table(only) == []
    with pytest.raises(ValueError, match="both replicate and per_channel"):
        gdn.show_launch_bound(only)


def _paths_with(name):
    return [p for p in records.available() if name in records.load(p)["experiments"]]


def test_input_grad_matches_the_reference_on_awkward_shapes():
    for n_ch, n_s in ((1, 1), (3, 37), (2, 65)):
        w, delta, gamma, beta = gdn.random_problem(n_ch, n_s, seed=n_ch + n_s)
        _, d = gdn.forward(w, gamma, beta, block=32)
        got = gdn.input_grad(w, delta, d, gamma, block=32)
        ref = gdn.reference_input_grad(w, delta, gamma, beta)
        assert np.abs(got - ref).max() <= 1e-5 * np.abs(ref).max() + 1e-7


def test_input_grad_is_the_derivative_of_the_loss():
    # A finite difference of L = sum(delta * u) in float64 against the reference formula.
    w, delta, gamma, beta = (a.astype(np.float64) for a in gdn.random_problem(3, 20, seed=4))
    grad = gdn.reference_input_grad(w, delta, gamma, beta)
    h, (j, s) = 1e-6, (1, 7)
    up, down = w.copy(), w.copy()
    up[j, s] += h
    down[j, s] -= h
    loss = lambda x: float((delta * gdn.reference_forward(x, gamma, beta)[0]).sum())  # noqa: E731
    assert abs((loss(up) - loss(down)) / (2 * h) - grad[j, s]) < 1e-6


@pytest.mark.parametrize("path", _paths_with("gdn_determinism"), ids=lambda p: p.stem)
def test_recorded_fused_atomics_are_not_deterministic(path, capsys):
    # What chapter 8 says: the fused kernel's atomics gave different results run to run, all
    # about equally accurate and of cuBLAS's order; the fixed-order tree gave one result.
    res = records.recorded("gdn_determinism", path=path)
    by = gdn.determinism_summary(res)
    assert by["fused"]["distinct_results"] > 1
    assert by["registers"]["distinct_results"] == 1
    assert by["fused"]["rel_err_max"] < 1.5 * by["fused"]["rel_err"]
    if "cublas" in by:
        assert by["cublas"]["distinct_results"] == 1
        assert 0.1 < by["fused"]["rel_err"] / by["cublas"]["rel_err"] < 10
    assert "distinct result" in capsys.readouterr().out


@pytest.mark.parametrize("path", _paths_with("gdn_input_grad"), ids=lambda p: p.stem)
def test_recorded_input_grad_grows_faster_than_its_bytes(path, capsys):
    res = records.recorded("gdn_input_grad", path=path)
    out = gdn.input_grad_summary(res)
    small, large = min(out), max(out)
    nb_small, nb_large = out[small]["numba"], out[large]["numba"]
    bytes_ratio = gdn.input_grad_bytes(large, nb_large["samples"]) / gdn.input_grad_bytes(
        small, nb_small["samples"])
    assert nb_large["ms"] / nb_small["ms"] > bytes_ratio
    if "cupy" in out[small]:
        ahead = [out[n]["numba"]["ms"] / out[n]["cupy"]["ms"] for n in (small, large)]
        assert 1 < ahead[0] < ahead[1]
    assert all(r["rel_err"] < 1e-5 for r in res.rows)
    assert "N=" in capsys.readouterr().out


@pytest.mark.parametrize("path", _paths_with("gdn_input_grad"), ids=lambda p: p.stem)
def test_recorded_input_grad_launch_counts(path):
    # Numba: the factor kernel and the product kernel. CuPy: the factor kernel, the cuBLAS
    # product and four elementwise operations (delta * D, 2 * w, that times the product, the
    # sum). The experiment's code still writes 4 for CuPy (gdn.experiments._input_grad_rows); the records
    # were corrected by hand on 2026-11-25 and the code changes with the next GPU self-check.
    res = records.recorded("gdn_input_grad", path=path)
    for r in res.rows:
        assert r["launches"] == (2 if r["method"].startswith("numba") else 6), r["method"]


class _FakeCublas:
    """cuBLAS's column-major routines in NumPy, over host memory found by address: a
    stand-in that runs the article's calls exactly as cuBLAS would read their arguments, and
    refuses any read outside the arrays it was given."""

    arrays = ()

    def _view(self, ptr, count, dtype=np.float32):
        for a in self.arrays:
            start = a.ctypes.data
            if start <= ptr and ptr + count * np.dtype(dtype).itemsize <= start + a.nbytes:
                flat = a.reshape(-1).view(dtype)
                first = (ptr - start) // np.dtype(dtype).itemsize
                return flat[first:first + count]
        raise AssertionError(f"cuBLAS would read {count} values at {ptr:#x}, outside every array")

    def _scalar(self, ptr):
        import ctypes
        return np.frombuffer(ctypes.string_at(ptr, 4), np.float32)[0]

    def _times(self, beta, c):
        """beta * c, where beta = 0 leaves c unread (BLAS: it may hold NaN)."""
        return 0 if self._scalar(beta) == 0 else self._scalar(beta) * c

    def _matrix(self, ptr, rows, cols, ld):
        assert ld >= rows, (ld, rows)
        flat = self._view(ptr, ld * (cols - 1) + rows)
        return np.stack([flat[j * ld:j * ld + rows] for j in range(cols)], axis=1)

    def _gemm(self, ta, tb, m, n, k, alpha, pa, lda, pb, ldb, beta, pc, ldc):
        a = self._matrix(pa, k, m, lda).T if ta == 1 else self._matrix(pa, m, k, lda)
        b = self._matrix(pb, n, k, ldb).T if tb == 1 else self._matrix(pb, k, n, ldb)
        c = self._view(pc, ldc * (n - 1) + m)
        result = self._scalar(alpha) * (a @ b)
        for j in range(n):
            c[j * ldc:j * ldc + m] = result[:, j] + self._times(beta, c[j * ldc:j * ldc + m])

    def sgemv(self, handle, trans, m, n, alpha, pa, lda, px, incx, beta, py, incy):
        assert incx == incy == 1
        a = self._matrix(pa, m, n, lda)
        rows, cols = (n, m) if trans == 1 else (m, n)
        x, y = self._view(px, cols), self._view(py, rows)
        y[:] = self._scalar(alpha) * ((a.T if trans == 1 else a) @ x) + self._times(beta, y)

    def sgemmBatched(self, handle, ta, tb, m, n, k, alpha, pa, lda, pb, ldb, beta, pc, ldc,
                     count):
        ptrs = [self._view(p, count, np.uint64) for p in (pa, pb, pc)]
        for i in range(count):
            self._gemm(ta, tb, m, n, k, alpha, int(ptrs[0][i]), lda, int(ptrs[1][i]), ldb,
                       beta, int(ptrs[2][i]), ldc)

    def sgemmStridedBatched(self, handle, ta, tb, m, n, k, alpha, pa, lda, sa, pb, ldb, sb, beta,
                            pc, ldc, sc, count):
        for i in range(count):
            self._gemm(ta, tb, m, n, k, alpha, pa + 4 * i * sa, lda, pb + 4 * i * sb, ldb, beta,
                       pc + 4 * i * sc, ldc)


def test_the_article_cublas_calls_sum_each_row_as_cublas_reads_them():
    """The three cuBLAS rows of gdn_reduction, run by a NumPy stand-in for cuBLAS's column-
    major routines: each sums every row of raw into out. A wrong leading dimension, stride
    or transpose reads other elements or outside the arrays, and this test fails."""
    n_ch, n_s = 3, 5
    raw = np.random.default_rng(1).standard_normal((n_ch * n_ch, n_s)).astype(np.float32)
    ones = np.ones(n_s, np.float32)
    held = []

    class Numpy:  # keeps the pointer arrays alive and visible to the stand-in
        @staticmethod
        def asarray(a):
            held.append(np.ascontiguousarray(a))
            return held[-1]

    out = np.full(n_ch * n_ch, np.nan, np.float32)
    fake = _FakeCublas()
    calls = _article_cublas_calls(fake, 0, raw, ones, out, n_ch, n_s, Numpy)
    fake.arrays = (raw, ones, out, *held)
    assert [c[1] for c in calls] == [n_ch, 1, 1]
    for method, _, run in calls:
        out[:] = np.nan
        run()
        np.testing.assert_allclose(out, raw.sum(axis=1), rtol=1e-5, err_msg=method)


def _records_with_article_cublas():
    from conftest import record_paths_with
    return [p for p in record_paths_with("gdn_reduction")
            if any(r["method"].startswith("cuBLAS sgemmBatched")
                   for r in records.recorded("gdn_reduction", path=p).rows)]


@pytest.mark.parametrize("path", _records_with_article_cublas(), ids=lambda p: p.stem)
def test_the_articles_batched_call_beats_its_loop_on_every_recorded_gpu(path):
    """Chapter 8: on the reference GPUs, at the headline's N, the article's own pair reverses
    its finding: one sgemmBatched call (and one strided batched call) beats the loop of N sgemv
    calls. (At the article's N=256 the chapter states the ratio, whichever way it goes.)"""
    res = records.recorded("gdn_reduction", path=path)
    rows = {r["method"].split(",")[0]: r for r in gdn.reduction_rows(res) if r.get("ms")}
    loop = rows["cuBLAS sgemv"]
    assert loop["launches"] > 1
    assert rows["cuBLAS sgemmBatched"]["ms"] < loop["ms"]
    assert rows["cuBLAS sgemmStridedBatched"]["ms"] < loop["ms"]


def test_dgamma_launcher_zeroes_and_launches_what_the_profiler_runs(monkeypatch):
    """The launches gpuperf.profiling runs under Nsight Compute, at a small size: each run
    zeroes the outputs first (a second run gives the same dgamma), and dgamma is right."""
    monkeypatch.setattr(gdn.experiments, "HEADLINE", {"n_ch": 4, "side": 4})
    for method, tile in (("fused", 0), ("fused_tiled", 8)):
        run, reference = gdn.dgamma_launcher(method, 3, tile)
        first = run().copy_to_host()
        again = run().copy_to_host()
        np.testing.assert_array_equal(first, again)
        np.testing.assert_allclose(again, reference(), rtol=1e-4, atol=1e-5)


def test_the_article_size_and_reduction_experiments_run_small(monkeypatch):
    """gdn_article_size and gdn_reduction at simulator sizes (the GPU runs N=256, 128x128,
    batch 4): every method checked against float64, and the reduction at both N with the
    columns the chapter's claims read (n_ch, launches, floor and time per launch)."""
    from gpuperf import bench

    def one_run(run, **_kw):  # the simulator's time means nothing: run once, call it 1 ms
        run()
        return bench.Timing([1.0])

    monkeypatch.setattr(bench, "ceilings", lambda: {"copy_gbps": 100.0, "peak_gbps": 200.0})
    monkeypatch.setattr(bench, "time_kernel", one_run)
    monkeypatch.setattr(bench, "require_gpu", lambda what: None)
    ex = gdn.experiments
    monkeypatch.setattr(ex, "ARTICLE_CONFIG", {"n_ch": 3, "side": 4, "batch": 4})
    monkeypatch.setattr(ex, "HEADLINE", {"n_ch": 2, "side": 4})
    monkeypatch.setattr(ex, "REDUCTION_CHANNELS", (2, 3))
    monkeypatch.setattr(ex, "LADDER_MAX_CALLS", 4)
    rows = records.experiments()["gdn_article_size"].fn(lambda _m: None)
    by = {r["method"]: r for r in rows}
    assert set(by) == set(gdn.METHODS)
    assert all(r["n_ch"] == 3 and r["side"] == 4 for r in rows)
    for m in ("per_channel", "shared", "registers", "fused"):
        assert by[m]["ms"] > 0, m
    assert by["registers"]["rel_err"] < 1e-4 and by["fused"]["rel_err"] < 1e-4
    red = records.experiments()["gdn_reduction"].fn(lambda _m: None)
    res = records.Result("gdn_reduction", red, {}, "live")
    assert {r["n_ch"] for r in red} == {2, 3}
    for n in (2, 3):
        pair = gdn.loop_against_batch(res, n, "row_sum kernel, a loop", "row_sum kernel, one")
        assert pair["loop"]["launches"] == n and pair["batch"]["launches"] == 1
        assert pair["loop"]["floor_us_per_launch"] == pytest.approx(
            pair["batch"]["floor_us_per_launch"] / n)
    ladder = [r for r in gdn.reduction_rows(res, 3) if r["method"].startswith("reduce ladder")]
    assert ladder and ladder[0]["ms"] is None and "skipped" in ladder[0]["note"]
    with pytest.raises(LookupError, match="record it again"):
        gdn.loop_against_batch(res, 5, "row_sum kernel, a loop", "row_sum kernel, one")


def test_the_bytes_checker_names_a_unit_slip(capsys):
    """An answer in GB (or MiB, bits...) is told it is a unit, not a missing read or write."""
    from conftest import WRONG, load_answer

    mod = load_answer(WRONG / "gdn" / "bytes_in_gigabytes.py")
    assert not gdn.check_moved_bytes(mod.kernel)
    out = capsys.readouterr().out
    assert "the count in GB; return bytes" in out and "written once and read once" not in out
